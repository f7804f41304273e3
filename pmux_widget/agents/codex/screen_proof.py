"""Whether a Codex TUI's screen shows a given session, for a row whose TUI process facts do
not prove (``core/codex_tui.py``: a ``/new`` in a TUI of a shared home and folder makes the
mapping ambiguous). Pure: a parsed :class:`~.screen.Screen`, the session and the other
sessions its TUI could show (its rivals) in; the reason it is not proved out, or None.

What the screen shows of a thread, and what the session knows of it:

* an approval dialog: its ``$ <command>`` against the command the session waits on (its
  PermissionRequest, as the row's ``tool_summary`` says it: ``$ <first line>``);
* a Plan-mode question: its question against the row's question;
* else the last prompt sent on screen against the session's last prompt.

A rival showing the same evidence (the same command pending, the same last prompt) leaves
the screen unable to tell them apart: not proved either.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pmux_widget.core.model import Session, State

from .screen import Screen

__all__ = ["same_text", "screen_shows", "shown_session"]

_ELLIPSIS = "…"


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def same_text(shown: str | None, known: str | None, continues: bool = False) -> bool:
    """The screen's ``shown`` is the session's ``known`` (whitespace collapsed): equal, or
    starting with it where ``known`` was clipped (its ellipsis) or ``shown`` may go on after
    it (``continues``: a command's first line, then its other lines), at a word's end."""
    a, b = _norm(shown), _norm(known)
    clipped = b.endswith(_ELLIPSIS)
    b = b.removesuffix(_ELLIPSIS).rstrip()
    if not (a and b):
        return False
    if a == b:
        return True
    if clipped:
        return a.startswith(b)
    return continues and a.startswith(b + " ")


def _pending_command(session: Session) -> str | None:
    summary = session.tool_summary or ""
    if session.state is not State.NEEDS_INPUT or not summary.startswith("$ "):
        return None
    return summary[2:]


def _asked(session: Session) -> tuple[str, ...]:
    q = session.question
    if session.state is not State.NEEDS_INPUT or q is None:
        return ()
    return tuple(a.question for a in q.questions)


def _evidence(screen: Screen, session: Session) -> tuple[str, str | None, bool]:
    """What the screen shows of a thread, what ``session`` knows of it, and whether they
    agree."""
    dialog = screen.dialog
    if dialog is not None and dialog.kind == "permission":
        pending = _pending_command(session)
        shown = dialog.command
        return "the command its dialog asks for", pending, same_text(shown, pending, True)
    if dialog is not None:
        asked = _asked(session)
        return "the question it asks", " / ".join(asked) or None, dialog.question in asked
    return "the last prompt sent", session.last_prompt, same_text(screen.sent, session.last_prompt)


def screen_shows(screen: Screen, session: Session, rivals: Iterable[Session]) -> str | None:
    """None when ``screen`` shows ``session`` (and none of ``rivals`` would show the same),
    else why not, in words for the refusal."""
    what, known, agrees = _evidence(screen, session)
    if known is None:
        return f"{session.name}: no {what} is known for it to look for on its screen"
    if not agrees:
        return f"{session.name}: its screen does not show {what} of this session ({known!r})"
    alike = [r for r in rivals if r.session_id != session.session_id and _evidence(screen, r)[2]]
    if alike:
        return (
            f"{session.name}: its screen shows {what} of this session, and of "
            f"{', '.join(r.name for r in alike)} too: cannot tell which it shows"
        )
    return None


def shown_session(screen: Screen, sessions: Sequence[Session]) -> str | None:
    """The one session of ``sessions`` (the live rows a TUI may show: its home's and
    folder's) that ``screen`` provably shows, each judged against all the others as
    :func:`screen_shows` judges an action's; None when it shows none, or cannot tell."""
    shown = [s.session_id for s in sessions if screen_shows(screen, s, sessions) is None]
    return shown[0] if len(shown) == 1 else None
