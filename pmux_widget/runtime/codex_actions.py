"""Acting on a Codex session: the checks and keys of ``runtime/actions.py``, with Codex's facts.

* Its pane: the session's pid is a Codex TUI that may show its thread (``core/codex_tui.py``,
  matched again now), and a tmux pane or JupyterLab terminal holds it (another server's
  terminal: the action goes to that server's hub). Under the shared daemon process facts
  never prove which thread a TUI shows now (``/new``, ``/resume``), so its screen must
  (``agents/codex/screen_proof.py``: the dialog's command or question, else the last prompt
  sent, is this session's and no other's), or nothing is typed.
* Its screen (``agents/codex/screen.py``): approve and deny answer an approval dialog, by the
  choice's label with the key the dialog prints for it (``y``; ``esc`` for "No, and tell Codex
  what to do differently"); interrupt needs a running turn or a dialog (Esc); send an empty
  composer, then the text as a bracketed paste (as a terminal pastes it: Codex turns the mode
  on), then — once the composer shows it — Enter in a call of its own. Typed keys would not
  do: Codex takes an Enter that follows typed text within its paste-burst window (~0.4 s) for
  part of a paste and leaves it in the composer (recorded: 0 of 8 submitted), while after a
  bracketed paste an Enter at once submits (8 of 8, ~50 ms).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from pmux_widget.agents.codex.screen import Screen, composer_holds, parse_screen
from pmux_widget.agents.codex.screen_proof import screen_shows
from pmux_widget.agents.codex.tui import shown_by
from pmux_widget.core.model import ActionName, Session, State
from pmux_widget.system import keys
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.keys import Target
from pmux_widget.system.processes import pid_alive

from .action_outcome import ActionError, ActionResult
from .answering import Order
from .pane_screen import holder_of, in_another_server, screen_showing, shown_dialog

__all__ = ["PASTE_END", "PASTE_START", "deliver", "pane_of", "read_screen", "tui_screen"]

#: Bracketed paste's frame (xterm's mode 2004, which Codex's TUI turns on).
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
#: How long the screen may take to catch up with the state (a PermissionRequest comes
#: ~0.2 s before its dialog is drawn), or to echo typed text.
SCREEN_GRACE_S = 2.0
_POLL_S = 0.02
#: Key names of the dialog's printed keys, for ``send-keys``.
_KEY_NAMES = {"esc": "Escape", "enter": "Enter"}


#: Raises ActionError unless the screen shows the session (a no-op when process facts prove it).
Proof = Callable[[Screen], None]


def _proved(_screen: Screen) -> None:
    return None


def pane_of(fleet: Mapping[str, Session], session: Session, home: PmuxHome) -> tuple[Target, Proof]:
    """The pane (or terminal) holding the session's Codex TUI — one that may show its thread
    (matched again now, with the other Codex sessions of ``fleet``) — and what its screen
    must show before a key is typed: nothing more when process facts prove that TUI shows
    this thread, else this thread (see the module doc)."""
    pid = session.pid
    if session.ended or not session.running or pid is None:
        raise ActionError(f"{session.name}: no Codex TUI is known to show it")
    if not pid_alive(pid):
        raise ActionError(f"{session.name}: its Codex TUI {pid} has exited")
    if session.transcript_path is None:
        raise ActionError(f"{session.name}: no rollout names its thread")
    threads = [
        (s.session_id, s.transcript_path)
        for s in fleet.values()
        if s.agent == "codex" and not s.ended and s.transcript_path
    ]
    shown = shown_by(threads)
    sid = session.session_id
    if shown.placed.get(sid) != pid and pid not in shown.may_show.get(sid, ()):
        raise ActionError(f"{session.name}: its Codex TUI {pid} cannot be showing this thread")
    holder = holder_of(pid)
    if holder is not None:
        if shown.proved.get(sid) == pid:
            return holder, _proved
        return holder, _screen_must_show(fleet, session)
    in_another_server(pid, home)  # that server's hub checks everything again, and types
    raise ActionError(
        f"{session.name} does not run in tmux nor in a JupyterLab terminal of this server: "
        "none holds its Codex TUI"
    )


def _screen_must_show(fleet: Mapping[str, Session], session: Session) -> Proof:
    rivals = [
        s
        for s in fleet.values()
        if s.agent == "codex" and not s.ended and s.cwd == session.cwd and s is not session
    ]

    def prove(screen: Screen) -> None:
        refused = screen_shows(screen, session, rivals)
        if refused is not None:
            raise ActionError(
                f"{refused}; its TUI may show another thread (/new, /resume): nothing was typed"
            )

    return prove


_SHOWS: dict[str, Callable[[Screen], bool]] = {
    "approve": lambda s: s.dialog is not None,
    "deny": lambda s: s.dialog is not None,
    "interrupt": lambda s: s.busy or s.dialog is not None,
    "send": lambda s: s.dialog is not None or s.prompt_text is not None,
}


def deliver(
    pane: Target,
    session: Session,
    name: ActionName,
    text: str | None,
    dialog: str | None,
    deciding: Callable[[], None],
    prove: Proof = _proved,
) -> ActionResult:
    """Check the screen (what the action answers, and ``prove``: that it shows this session),
    then type (``deciding()`` just before the key Codex acts on)."""
    shows = _SHOWS.get(name)
    if shows is None:
        raise ActionError(f"{session.name}: {name} is not an action on a Codex session")
    screen = _screen(pane, shows)
    if shows(screen):
        prove(screen)
    if name in ("approve", "deny"):
        return _answer(
            pane, session, screen, "yes" if name == "approve" else "no", dialog, deciding
        )
    if name == "interrupt":
        if not (screen.busy or screen.dialog is not None):
            raise ActionError("the pane shows neither a running turn nor a dialog: nothing to stop")
        deciding()
        keys.send_keys(pane, "Escape")
        return ActionResult(session.session_id, name, ("Escape",))
    assert text is not None
    return _send(pane, session, screen, text, deciding)


def _answer(
    pane: Target,
    session: Session,
    screen: Screen,
    answer: Literal["yes", "no"],
    seen: str | None,
    deciding: Callable[[], None],
) -> ActionResult:
    action: ActionName = "approve" if answer == "yes" else "deny"
    shown = shown_dialog(session, screen.dialog, seen)
    target = shown.choice(answer)
    if target is None or target.key is None:
        labels = ", ".join(c.label for c in shown.choices)
        raise ActionError(f"{session.name}: the dialog has no plain {answer!r} ({labels})")
    key = _KEY_NAMES.get(target.key, target.key)
    deciding()
    keys.send_keys(pane, key)
    return ActionResult(session.session_id, action, (key,), dialog=shown.fingerprint)


def _send(
    pane: Target, session: Session, screen: Screen, text: str, deciding: Callable[[], None]
) -> ActionResult:
    if screen.dialog is not None:
        raise ActionError(f"{session.name} shows a dialog: answer it before sending a prompt")
    if screen.prompt_text is None:
        raise ActionError(f"{session.name}: its screen shows no composer")
    if screen.prompt_text:
        raise ActionError(
            f"{session.name}: its composer holds unsent text ({screen.prompt_text[:40]!r})"
        )
    keys.send_keys(pane, f"{PASTE_START}{text}{PASTE_END}", literal=True)
    echoed = _screen(pane, lambda s: composer_holds(s.prompt_text, text))
    if not composer_holds(echoed.prompt_text, text):
        raise ActionError(
            f"{session.name}: the pasted prompt did not appear in its composer; pressed no Enter"
        )
    deciding()
    keys.send_keys(pane, "Enter")
    return ActionResult(
        session.session_id, "send", ("<text>", "Enter"), queued=session.state is State.BUSY
    )


def _screen(pane: Target, shows: Callable[[Screen], bool]) -> Screen:
    return screen_showing(pane, parse_screen, shows, SCREEN_GRACE_S, _POLL_S)


def tui_screen(pid: int) -> Screen | None:
    """The screen of the Codex TUI ``pid`` now, as an action reads it (its tmux pane, else
    its JupyterLab terminal of this server); None when neither holds it or it cannot be
    read (the pane closed meanwhile)."""
    holder = holder_of(pid)
    if holder is None:
        return None
    try:
        return parse_screen(keys.capture(holder))
    except Exception:  # a pane or terminal gone since it was found, a tmux server that died
        return None


def read_screen(
    fleet: Mapping[str, Session], home: PmuxHome, session: Session
) -> tuple[str, str | None]:
    """A peek: the screen of the session's TUI, and what its dialog asks (None: no dialog),
    after the same proof as an action's (a screen that does not show the session is not
    shown as its)."""
    pane, prove = pane_of(fleet, session, home)
    text = keys.capture(pane)
    screen = parse_screen(text)
    prove(screen)
    return text, screen.dialog.question if screen.dialog is not None else None


def act(
    fleet: Mapping[str, Session],
    home: PmuxHome,
    session: Session,
    order: Order,
    dialog: str | None,
    record: Callable[[str, ActionName], None] | None,
) -> ActionResult:
    """Checks 2 on (``runtime.actions.act`` made the first, and fitted the ``order`` to what
    the session asks: an answer's labels are its question's), then the keys."""
    name = order.name
    if order.plan:
        raise ActionError(f"{session.name}: Codex asks no plan approval; answer it in the terminal")
    answer = order.answer
    if name == "answer" and (answer is None or answer.other is not None):
        raise ActionError(
            f"{session.name}: Codex takes a free-text answer in its notes field: type it there"
        )
    pane, prove = pane_of(fleet, session, home)

    def deciding() -> None:
        if record is not None:
            record(session.session_id, name)

    if answer is not None:
        typed = answer_keys(pane, session, answer.choices, deciding, prove)
        return ActionResult(session.session_id, name, typed)
    return deliver(pane, session, name, order.text, dialog, deciding, prove)


def answer_keys(
    pane: Target,
    session: Session,
    choices: Sequence[tuple[str, Sequence[str]]],
    deciding: Callable[[], None],
    prove: Proof = _proved,
) -> tuple[str, ...]:
    """Answer a Plan-mode question by its options' labels: each question (``Question i/n``,
    one page at a time) must be on screen, with the one label chosen for it among its
    options; the selection is moved onto it (arrows, checked on screen) and Enter pressed.
    Nothing is typed unless the first page shows its question; returns the keys typed."""
    typed: list[str] = []
    for question, labels in choices:
        screen = _screen(pane, lambda s: s.dialog is not None and s.dialog.kind == "question")
        shown = screen.dialog
        if shown is None or shown.kind != "question" or shown.question != question:
            seen = shown.question if shown is not None else "no question"
            raise ActionError(
                f"{session.name}: its screen shows {seen!r}, not {question!r}"
                + ("; the answers before it were typed" if typed else "")
            )
        if not typed:
            prove(screen)
        target = shown.option(labels[0]) if len(labels) == 1 else None
        if target is None:
            options = " / ".join(c.label for c in shown.choices)
            raise ActionError(
                f"{session.name} asks {question!r} ({options}): one of its options, "
                f"not {list(labels)}"
            )
        current = shown.selected.index if shown.selected is not None else 0
        steps = ["Down" if target.index > current else "Up"] * abs(target.index - current)
        if steps:
            keys.send_keys(pane, *steps)
            moved = _screen(pane, _selection_on(shown.fingerprint, target.label))
            now_on = moved.dialog.selected if moved.dialog is not None else None
            if now_on is None or now_on.label != target.label:
                raise ActionError(
                    f"{session.name}: the selection did not reach {target.label!r}; "
                    "pressed no Enter"
                )
        deciding()
        keys.send_keys(pane, "Enter")
        typed += [*steps, "Enter"]
        _screen(pane, _gone(shown.fingerprint))
    return tuple(typed)


def _selection_on(fingerprint: str, label: str) -> Callable[[Screen], bool]:
    def on(s: Screen) -> bool:
        d = s.dialog
        on_it = d is not None and d.selected is not None and d.selected.label == label
        return on_it and d is not None and d.fingerprint == fingerprint

    return on


def _gone(fingerprint: str) -> Callable[[Screen], bool]:
    return lambda s: s.dialog is None or s.dialog.fingerprint != fingerprint
