"""Acting on a session: approve, deny, interrupt, send — keys typed into its tmux pane or
its JupyterLab terminal.

Keys reach a terminal, so nothing is typed until each check passes, in this order:
1. the session is known and in a state the action answers (approve/deny: needs-input;
   interrupt: busy or needs-input; send: idle, review, or busy — then the CLI queues it);
2. its Claude process runs, and its PID file (``sessions/<pid>.json``, identity by
   ``procStart``) names this very session — after ``/clear`` the same process runs another;
3. a tmux pane's process tree holds that process, or a JupyterLab terminal's does (its shell
   is an ancestor; sessions in neither cannot be acted on) — or its PID file says it is a
   Claude Code background worker (``kind: "bg"``): then the keys go to ``claude attach <job>``
   on a pane of ours (``runtime.background_actions``), never to a pane its environment names;
4. the pane (the terminal's screen, read by the server extension's emulator) shows what the
   action answers: a permission dialog with a plain "Yes"/"No"
   choice (never "Yes, and don't ask again"; the same dialog the caller saw, when it names
   one), the busy footer or a dialog for Esc, an empty prompt box for a prompt.
A refused action raises :class:`ActionError` with the reason and types nothing. Choices are
chosen by label (2.1.332's auto-mode dialog lists "No" first): arrows move the selection onto
the choice, and Enter comes only once the screen shows it there. A digit would be one key less
but answers at once on 2.1.197 and only moves the selection on 2.1.332 (then a settle, 300 ms,
to tell which): it is used only when the screen shows no selection.

Runs on the caller's thread (tmux and /proc reads block for milliseconds): never on the hub's.

A JupyterLab terminal's PTY is held by the Jupyter server's process. There the server
extension registered its terminals (``system.keys.serve_terminals``) and the keys are typed
here; in any other process (a kernel, the CLI) the action goes to the hub of the server that
publishes that terminal (``system.jupyter_terminals``), whose own ``act`` runs every check
again on its side: nothing is typed from here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from pmux_widget.agents.claude.pidfiles import is_alive, read_pid_file
from pmux_widget.agents.claude.screen import (
    Dialog,
    Screen,
    keys_for_choice,
    last_lines,
    parse_screen,
)
from pmux_widget.core.agents import FACTS, AgentFacts
from pmux_widget.core.model import ACTION_NAMES, ActionName, Session, State
from pmux_widget.core.signals import Invalid
from pmux_widget.system import keys
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.keys import Target

from . import background_actions, codex_actions, decisions, warm_attach
from .action_forward import InAnotherProcess, forward
from .action_outcome import ActionError, ActionResult
from .answering import Order, answer_plan, answer_question, order_for
from .pane_screen import holder_of, in_another_server, screen_showing, shown_dialog

__all__ = [
    "ACTIONS",
    "ActionError",
    "ActionName",
    "ActionResult",
    "Peek",
    "SessionsView",
    "act",
    "dialog_token",
    "peek",
]

ACTIONS = ACTION_NAMES

#: How long to wait for the screen to show typed text or a moved selection.
ECHO_TIMEOUT_S = 2.0
_POLL_S = 0.01
#: A prompt longer than this is refused (it is typed key by key into a terminal).
MAX_TEXT = 10_000


class SessionsView(Protocol):
    """What actions read from a hub: its sessions and Claude's config dir."""

    @property
    def fleet(self) -> Mapping[str, Session]: ...

    @property
    def claude_dir(self) -> Path: ...


#: Agents acted on by a module of their own (the proof of their pane, their screen, their keys).
_OWN_ACTIONS = {"codex": codex_actions.act}
#: ... and read by one (a peek: the same proof, nothing typed).
_OWN_PEEKS = {"codex": codex_actions.read_screen}

#: Which states each action answers.
_ALLOWED: dict[ActionName, frozenset[State]] = {
    "approve": frozenset({State.NEEDS_INPUT}),
    "deny": frozenset({State.NEEDS_INPUT}),
    "interrupt": frozenset({State.BUSY, State.NEEDS_INPUT}),
    "send": frozenset({State.IDLE, State.REVIEW, State.BUSY}),
    "answer": frozenset({State.NEEDS_INPUT}),
    "stop": frozenset(State),
    "remove": frozenset(State),
}


def act(
    view: SessionsView,
    session_id: str,
    action: str,
    *,
    text: str | None = None,
    options: Sequence[str] | None = None,
    mode: str | None = None,
    dialog: str | None = None,
    token: str | None = None,
    record: Callable[[str, ActionName], None] | None = None,
    answers: Mapping[str, Sequence[str]] | None = None,
) -> ActionResult:
    """Check, then type.

    ``options``, ``answers``, ``text`` (``answer``): labels, question → labels, the free-text
    "Other" answer (``core.question.resolve_answer``); ``text`` is a plan's feedback on
    ``deny``; ``mode``: the permission mode a plan's ``approve`` switches to (None: the
    choice that keeps asking for each edit).
    ``dialog``: the fingerprint of the dialog the caller answers (from :func:`peek`);
    ``token``: the :func:`dialog_token` of the state the caller saw (a widget click names the
    needs-input entry it showed; a newer one refuses it). ``record(session_id, action)`` is
    called once the keys are delivered (the history's ``action:<name>`` source)."""
    name = next((known for known in ACTIONS if known == action), None)
    if name is None:
        raise ActionError(f"unknown action {action!r} (one of {', '.join(ACTIONS)})")
    session = view.fleet.get(session_id)
    if session is None:
        raise ActionError(f"no session {session_id}", unknown=True)
    if name == "stop" or name == "remove":
        facts = FACTS[session.agent]
        if not facts.background_sessions:  # nothing of Claude Code's CLI to ask about it
            raise ActionError(
                f"{session.name} is a {facts.title} session: {name} works on Claude Code's "
                "background sessions only"
            )
        background_actions.run_cli_action(view.claude_dir, session, name, record)
        return ActionResult(session_id, name, ())
    # An Agent SDK run whose permission call waits on our handler: no keys, the call is
    # resolved (runtime.decisions); None when no call of ours waits for this session.
    decided = decisions.answer(
        view,
        session,
        name,
        text=text,
        options=options,
        answers=answers,
        mode=mode,
        token=token,
        shown=dialog_token(session),
        dialog=dialog,
        record=record,
    )
    if decided is not None:
        return decided
    if name == "send":
        text = _check_text(text, FACTS[session.agent])
    if session.state not in _ALLOWED[name]:
        raise ActionError(_wrong_state(name, session))
    if token is not None and token != dialog_token(session):
        raise ActionError(f"{session.name} has moved on since it was shown; look again")
    order = order_for(session, name, text, options, answers, mode)
    try:
        if session.agent in _OWN_ACTIONS:
            own = _OWN_ACTIONS[session.agent]
            return own(view.fleet, _home_of(view), session, order, dialog, record)
        pane = _pane_of(view, session)
    except InAnotherProcess as elsewhere:
        # Over HTTP a mapping travels as its labels ("options"), placed by label again there.
        labels = [
            *(options or ()),
            *(label for chosen in (answers or {}).values() for label in chosen),
        ]
        result = forward(
            view, elsewhere, session, name, text, dialog, token, options=labels, mode=mode
        )
        if record is not None:
            record(session_id, name)
        return result
    except background_actions.InBackground as background:
        # The CLI's own host, on a pane of ours: the one a hub holds while a dialog waits
        # (runtime.warm_attach), else one started now (it draws a moment after it starts).
        with warm_attach.held(_home_of(view).root, background.worker.job) as warm:
            if warm is not None:
                result = _deliver(warm, session, order, dialog, record, ATTACH_GRACE_S)
                background_actions.until_reacted(warm, name)
                return result
        with background_actions.attached(view.claude_dir, background.worker) as attached:
            result = _deliver(attached, session, order, dialog, record, ATTACH_GRACE_S)
            background_actions.until_reacted(attached, name)
            return result
    return _deliver(pane, session, order, dialog, record, SCREEN_GRACE_S)


def _deliver(
    pane: Target,
    session: Session,
    order: Order,
    dialog: str | None,
    record: Callable[[str, ActionName], None] | None,
    grace: float,
) -> ActionResult:
    """Checks 4 on, then the keys (see the module doc)."""
    name, text = order.name, order.text
    # The state can be ahead of the screen: PermissionRequest arrives 40-90 ms before the
    # dialog is drawn (measured), and a prompt's busy footer a moment after its hook.
    shows = _SHOWS_PLAN if order.plan else _SHOWS[name]
    screen = _screen_showing(pane, shows, grace)
    session_id = session.session_id

    def deciding() -> None:
        # Recorded just before the key the CLI acts on: its reaction (a PID status, a hook)
        # can come within milliseconds, and must find the action already in the history.
        if record is not None:
            record(session_id, name)

    if order.answer is not None:
        return answer_question(
            pane, session, screen, order.answer, dialog, _grace_for(session), deciding
        )
    if order.plan:
        return answer_plan(pane, session, screen, order, dialog, _grace_for(session), deciding)
    if name in ("approve", "deny"):
        answer: Literal["yes", "no"] = "yes" if name == "approve" else "no"
        return _answer(pane, session, screen, answer, dialog, deciding)
    if name == "interrupt":
        if not (screen.busy or screen.asking):
            raise ActionError("the pane shows neither a running turn nor a dialog: nothing to stop")
        if screen.asking and session.state is State.NEEDS_INPUT:
            _let_a_fresh_dialog_take_keys(session)
        deciding()
        keys.send_keys(pane, "Escape")
        return ActionResult(session_id, name, ("Escape",))
    assert text is not None
    return _send(pane, session, screen, text, deciding)


def dialog_token(session: Session) -> str:
    """What a caller saw of a session's state: its entry time, state and what it asked.
    A second permission request while already needs-input changes the ask, not the time."""
    return f"{session.state.value}:{session.state_since}:{session.tool_summary or ''}"


#: How long a background session's peek is reused while its state stays the same.
BG_PEEK_TTL_S = 15.0
_bg_peeks: dict[str, tuple[tuple[str, str, int], float, Peek]] = {}


@dataclass(frozen=True, slots=True)
class Peek:
    """The last lines of a session's pane (read-only) and the dialog on it, if any."""

    lines: tuple[str, ...]
    #: the title of the dialog on it (its first line, or what it asks), None when none
    dialog: str | None


def peek(view: SessionsView, session_id: str, lines: int = 20) -> Peek:
    """Read the session's pane: the same proof as for an action (its Claude, in that pane),
    nothing typed."""
    session = view.fleet.get(session_id)
    if session is None:
        raise ActionError(f"no session {session_id}", unknown=True)
    try:
        if session.agent in _OWN_PEEKS:
            text, title = _OWN_PEEKS[session.agent](view.fleet, _home_of(view), session)
            return Peek(last_lines(text, lines), title)
        target = _pane_of(view, session)
    except InAnotherProcess as elsewhere:
        raise ActionError(
            f"{session.name} runs in JupyterLab terminal {elsewhere.terminal}: "
            "open that terminal to see it"
        ) from None
    except background_actions.InBackground as background:
        # Each read is a `claude attach` (a CLI start): an open peek, re-read every 2 s, reads
        # a background session again only once its state moved or BG_PEEK_TTL_S passed.
        key = (session_id, dialog_token(session), lines)
        kept = _bg_peeks.get(session_id)
        if kept is not None and kept[0] == key and time.monotonic() - kept[1] < BG_PEEK_TTL_S:
            return kept[2]
        text = _read_background(view, background.worker)
        seen = Peek(last_lines(text, lines), _title(parse_screen(text).dialog))
        if len(_bg_peeks) > 256:  # ended sessions' entries: never read again
            _bg_peeks.clear()
        _bg_peeks[session_id] = (key, time.monotonic(), seen)
        return seen
    text = keys.capture(target)
    return Peek(last_lines(text, lines), _title(parse_screen(text).dialog))


def _title(dialog: Dialog | None) -> str | None:
    return dialog.title if dialog is not None else None


def _read_background(view: SessionsView, worker: background_actions.Worker) -> str:
    """A background session's screen: through its warm attach, else a cold one."""

    def drawn(s: Screen) -> bool:
        return s.busy or s.dialog is not None or s.prompt_text is not None

    with warm_attach.held(_home_of(view).root, worker.job) as warm:
        if warm is not None:
            _screen_showing(warm, drawn, ATTACH_GRACE_S)
            return keys.capture(warm)
    with background_actions.attached(view.claude_dir, worker) as attached:
        _screen_showing(attached, drawn, ATTACH_GRACE_S)
        return keys.capture(attached)


# ---------------------------------------------------------------------------- checks


def _check_text(text: str | None, facts: AgentFacts) -> str:
    if text is None or not text.strip():
        raise ActionError("send needs a prompt text")
    if facts.multi_line_prompts:
        text = text.replace("\r\n", "\n")
    elif "\n" in text or "\r" in text:
        raise ActionError(
            f"the prompt has a line break: {facts.title}'s prompt box would submit at it"
        )
    if any(ord(ch) < 32 and ch != "\n" for ch in text):
        raise ActionError("the prompt has control characters")
    if len(text) > MAX_TEXT:
        raise ActionError(f"the prompt is longer than {MAX_TEXT} characters")
    return text


def _wrong_state(action: ActionName, session: Session) -> str:
    state = session.state.value
    if action in ("approve", "deny"):
        return f"{session.name} is {state}: there is no permission prompt to {action}"
    if action == "interrupt":
        return f"{session.name} is {state}: nothing runs to interrupt"
    if action == "answer":
        return f"{session.name} is {state}: there is no question to answer"
    return f"{session.name} is {state}: a prompt can be sent only when it is idle or in review"


def _pane_of(view: SessionsView, session: Session) -> Target:
    """The pane (or terminal) that provably holds this session's Claude (checks 2 and 3)."""
    pid = session.pid
    if session.ended or not session.running or pid is None:
        raise ActionError(f"{session.name}: its Claude process is not running")
    record = read_pid_file(view.claude_dir / "sessions" / f"{pid}.json")
    if isinstance(record, Invalid):
        raise ActionError(
            f"{session.name}: no readable PID file for its Claude process {pid}, so nothing "
            f"proves that process runs this session ({record.reason})"
        )
    if record.session_id != session.session_id:
        raise ActionError(
            f"{session.name}: its Claude process {pid} runs another session now "
            f"({record.session_id})"
        )
    if not is_alive(record):
        raise ActionError(f"{session.name}: its Claude process {pid} has exited")
    if record.kind == "bg":
        # Whatever pane its environment names, a background worker runs under the CLI's
        # daemon: never type into that pane (it is the agent view's, or a shell's).
        worker = background_actions.worker_from_pid_file(
            view.claude_dir / "sessions" / f"{pid}.json"
        )
        if worker is None or worker.pid != pid:
            raise ActionError(f"{session.name}: its PID file names no background job")
        raise background_actions.InBackground(worker)
    holder = holder_of(pid)
    if holder is not None:
        return holder
    in_another_server(pid, _home_of(view))
    raise ActionError(
        f"{session.name} does not run in tmux nor in a JupyterLab terminal: actions type into "
        "the session's tmux pane or terminal, and none holds its Claude process"
    )


def _home_of(view: SessionsView) -> PmuxHome:
    home = getattr(view, "home", None)
    return home if isinstance(home, PmuxHome) else PmuxHome.resolve()


# ---------------------------------------------------------------------------- delivery


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
    if shown.kind == "notice":
        raise ActionError(
            f"{session.name} shows a notice, not a permission prompt ({shown.title}): "
            "answer it in the terminal"
        )
    target = shown.choice(answer)
    if target is None:
        labels = ", ".join(c.label for c in shown.choices)
        raise ActionError(f"{session.name}: the dialog has no plain {answer!r} ({labels})")
    typed = keys_for_choice(shown, target)
    if typed and typed[0].isdigit():
        deciding()
        keys.send_keys(pane, *typed)
        # 2.1.197 acts on the digit alone; 2.1.332 may only move the selection onto it (seen
        # under load): then Enter, once the screen shows the selection on that very choice.
        after = _settled_after_digit(pane, shown.fingerprint)
        if after is not None and _selected(after.dialog, shown.fingerprint) == target.label:
            keys.send_keys(pane, "Enter")
            typed = [*typed, "Enter"]
        return ActionResult(session.session_id, action, tuple(typed), dialog=shown.fingerprint)
    _let_a_fresh_dialog_take_keys(session)
    if typed:
        keys.send_keys(pane, *typed)
        _wait_screen(
            pane,
            lambda s: _selected(s.dialog, shown.fingerprint) == target.label,
            f"{session.name}: the selection did not reach {target.label!r}; pressed no Enter",
        )
    deciding()
    keys.send_keys(pane, "Enter")
    typed = [*typed, "Enter"]
    if _still_asking(pane, shown.fingerprint, target.label):
        # Dropped (the CLI was still in its input grace): the same dialog, the selection on
        # the same choice, a second later — the one case a key is sent again.
        keys.send_keys(pane, "Enter")
        typed.append("Enter")
    return ActionResult(session.session_id, action, tuple(typed), dialog=shown.fingerprint)


#: 2.1.332 ignores keys for a moment after it draws a dialog (measured: an Enter sent 0 ms
#: after the dialog was first captured was lost 4 times in 4, at 100 ms 2 in 4, from 200 ms
#: never in 12); 2.1.197 takes them at once. A dialog that asks since less than a second
#: (a script acting at once) gets this long before its first key; a person's click does not.
DIALOG_INPUT_GRACE_S = 0.3
#: After Enter, how long the dialog may stay before the Enter counts as dropped.
ENTER_TAKEN_S = 1.0


def _grace_for(session: Session) -> Callable[[], None]:
    return lambda: _let_a_fresh_dialog_take_keys(session)


def _let_a_fresh_dialog_take_keys(session: Session) -> None:
    asked_for = time.time() - session.state_since / 1000
    if asked_for < 1.0:
        time.sleep(DIALOG_INPUT_GRACE_S)


def _still_asking(pane: Target, fingerprint: str, label: str) -> bool:
    """The dialog ``fingerprint`` still shows, its selection on ``label``, ENTER_TAKEN_S after
    Enter (False as soon as it is gone or changed)."""
    deadline = time.monotonic() + ENTER_TAKEN_S
    while time.monotonic() < deadline:
        screen = parse_screen(keys.capture(pane))
        if screen.dialog is None or screen.dialog.fingerprint != fingerprint:
            return False
        time.sleep(_POLL_S * 2)
    return _selected(parse_screen(keys.capture(pane)).dialog, fingerprint) == label


#: How long a dialog may stay on screen after a digit before it counts as "still asking".
DIGIT_SETTLE_S = 0.3


def _settled_after_digit(pane: Target, fingerprint: str) -> Screen | None:
    """The screen once the digit took effect: None when the dialog is gone (answered);
    else the screen that still shows it after a short settle."""
    deadline = time.monotonic() + DIGIT_SETTLE_S
    while True:
        screen = parse_screen(keys.capture(pane))
        if screen.dialog is None or screen.dialog.fingerprint != fingerprint:
            return None
        if time.monotonic() >= deadline:
            return screen
        time.sleep(_POLL_S * 2)


def _selected(dialog: Dialog | None, fingerprint: str) -> str | None:
    if dialog is None or dialog.fingerprint != fingerprint or dialog.selected is None:
        return None
    return dialog.selected.label


def _send(
    pane: Target, session: Session, screen: Screen, text: str, deciding: Callable[[], None]
) -> ActionResult:
    if screen.asking:
        raise ActionError(f"{session.name} shows a dialog: answer it before sending a prompt")
    if screen.prompt_text is None:
        raise ActionError(f"{session.name}: its screen shows no prompt box")
    if screen.prompt_text:
        raise ActionError(
            f"{session.name}: its prompt box holds unsent text ({screen.prompt_text[:40]!r})"
        )
    keys.send_keys(pane, text, literal=True)
    tail = text.strip()[-20:]
    # Enter before the echo would be taken as part of a paste: wait until the box shows it.
    _wait_screen(
        pane,
        lambda s: s.prompt_text is not None and tail in s.prompt_text.replace("\n", ""),
        f"{session.name}: the typed prompt did not appear in its prompt box; pressed no Enter",
    )
    deciding()
    keys.send_keys(pane, "Enter")
    return ActionResult(
        session.session_id, "send", ("<text>", "Enter"), queued=session.state is State.BUSY
    )


#: What the screen must show before an action is even considered (then checked in full).
#: What shows that the screen has caught up with the state, for each action: any dialog for
#: those that answer one (which dialog it is, the action's own checks then say: a question
#: refuses approve at once, with no wait for a permission dialog that will not come).
_SHOWS: dict[ActionName, Callable[[Screen], bool]] = {
    "approve": lambda s: s.asking,
    "deny": lambda s: s.asking,
    "interrupt": lambda s: s.busy or s.asking,
    "send": lambda s: s.asking or s.prompt_text is not None,
    "answer": lambda s: s.asking,
    "stop": lambda s: True,
    "remove": lambda s: True,
}
_SHOWS_PLAN: Callable[[Screen], bool] = lambda s: s.asking  # noqa: E731
#: How long the screen may take to catch up with the state. A PermissionRequest comes 40-90
#: ms before its dialog is drawn on a quiet machine; with both test shards running, 2.1.197
#: had not drawn a question 1 s after it (its prompt still in the prompt box: ci8).
SCREEN_GRACE_S = 3.0
#: How long ``claude attach`` may take to draw a background session's screen (a CLI start:
#: ~0.5 s on an idle machine, 2 s and more on a loaded one).
ATTACH_GRACE_S = 10.0


def _screen_showing(
    pane: Target, shows: Callable[[Screen], bool], grace: float = SCREEN_GRACE_S
) -> Screen:
    """The pane's screen once it shows what is expected, or as it is after the grace."""
    return screen_showing(pane, parse_screen, shows, grace, _POLL_S * 2)


def _wait_screen(pane: Target, ok: Callable[[Screen], bool], failure: str) -> None:
    deadline = time.monotonic() + ECHO_TIMEOUT_S
    while True:
        mark = keys.output_mark(pane)
        if ok(parse_screen(keys.capture(pane))):
            return
        if time.monotonic() >= deadline:
            raise ActionError(failure)
        keys.wait_output(pane, mark, _POLL_S if mark is None else 5 * _POLL_S)
