""" "Attach in a terminal" outside JupyterLab: a window in the user's tmux running ``claude
attach <job>`` for a Claude Code background session (``system.launch.attach_in_tmux``).

In JupyterLab the server extension opens a JupyterLab terminal instead
(``pmux_widget.jupyter.attach_terminal``). Either way the attach is the user's own from then
on: pmux-widget never types into it (its actions attach on a private server of their own,
``runtime.background_actions``).
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path

from pmux_widget.core.model import Session, TmuxWindow
from pmux_widget.system import launch

from . import background_actions
from .action_outcome import ActionError

__all__ = ["attach_here", "attach_in_tmux", "attach_job", "attach_session"]


def attach_job(claude_dir: Path, session: Session) -> str:
    """The job ``claude attach`` takes for ``session``; refused (ActionError) for a session
    that is not a live background one of this machine (a fleet shows other hosts' rows)."""
    if session.host is not None and session.host != socket.gethostname():
        # a fleet's row: its daemon, and its job, are on that machine
        raise ActionError(
            f"{session.name} runs on {session.host}: attach it there "
            f"(pmux-widget attach {session.session_id[:12]})"
        )
    job = background_actions.job_of(session, claude_dir)
    if job is None:
        raise ActionError(
            f"{session.name} is not a Claude Code background session: only those can be "
            "attached in a terminal (claude attach works on background jobs)"
        )
    if session.ended:
        raise ActionError(f"{session.name} has ended: there is nothing to attach to")
    return job


def attach_here(claude_dir: Path, session: Session) -> tuple[list[str], dict[str, str]]:
    """``claude attach <job>`` to run in this very terminal: its argv and environment."""
    job = attach_job(claude_dir, session)
    binary = background_actions.claude_for(claude_dir, session.pid)
    return [binary, "attach", job], background_actions.env_for(claude_dir, session.pid)


def attach_session(claude_dir: Path, session: Session) -> TmuxWindow:
    """Open (or bring to the front) the tmux window attaching ``session``'s job. Refused
    (ActionError) for a session that is not a live background one, or when tmux cannot."""
    job = attach_job(claude_dir, session)
    binary = background_actions.claude_for(claude_dir, session.pid)
    home = background_actions.env_for(claude_dir, session.pid).get("HOME")
    cwd = session.cwd if session.cwd and Path(session.cwd).is_dir() else str(Path.home())
    argv = launch.attach_command(binary, job, claude_dir, home)
    label = session.background.name if session.background and session.background.name else job
    try:
        return launch.attach_in_tmux(job, argv, cwd, label)
    except launch.LaunchError as error:
        raise ActionError(error.reason) from None


def attach_in_tmux(
    sessions: Mapping[str, Session], claude_dir: Path, session_id: str
) -> TmuxWindow:
    """:func:`attach_session` by id (ActionError ``unknown`` for no such session)."""
    session = sessions.get(session_id)
    if session is None:
        raise ActionError(f"no session {session_id}", unknown=True)
    return attach_session(claude_dir, session)
