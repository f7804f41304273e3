"""What every agent's actions check before typing, whatever the agent: the pane or terminal
that holds its process, the pane's screen once it shows what is expected, and the dialog an
answer is for. The agents' own rules (which screen, which keys) stay in ``runtime/actions.py``
(Claude Code) and ``runtime/codex_actions.py`` (Codex)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from pmux_widget.agents.seam import DialogView
from pmux_widget.core.model import Session
from pmux_widget.system import jupyter_terminals, keys
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.keys import Target

from .action_forward import InAnotherProcess
from .action_outcome import ActionError

__all__ = ["holder_of", "in_another_server", "screen_showing", "shown_dialog"]

S = TypeVar("S")


#: the agent's own dialog type (agents/claude/screen.py's, agents/codex/screen.py's)
D = TypeVar("D", bound=DialogView)


def holder_of(pid: int) -> Target | None:
    """The tmux pane running ``pid``, else the JupyterLab terminal of this server that does."""
    pane = keys.find_pane(pid)
    return pane if pane is not None else keys.find_terminal(pid)


def in_another_server(pid: int, home: PmuxHome) -> None:
    """Raise :class:`InAnotherProcess` when a JupyterLab terminal of another process's server
    holds ``pid`` (only that server can type into it: the action goes to its hub)."""
    if keys.serves_terminals():
        return
    found = jupyter_terminals.find_terminal(pid, jupyter_terminals.read_servers(home))
    if found is not None:
        raise InAnotherProcess(*found)


def screen_showing(
    pane: Target, parse: Callable[[str], S], shows: Callable[[S], bool], grace: float, poll: float
) -> S:
    """The pane's screen (read by ``parse``) once it ``shows`` what is expected, or as it is
    after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        screen = parse(keys.capture(pane))
        if shows(screen) or time.monotonic() >= deadline:
            return screen
        time.sleep(poll)


def shown_dialog(session: Session, shown: D | None, seen: str | None) -> D:
    """The dialog on screen that an answer is for: refused when there is none, or when the
    caller saw another one (``seen``, its fingerprint)."""
    if shown is None:
        raise ActionError(f"{session.name}: no dialog on its screen (answered already?)")
    if seen is not None and shown.fingerprint != seen:
        raise ActionError(f"{session.name}: the dialog changed since it was shown; look again")
    return shown
