"""``POST {base}pmux/api/sessions/attach``: "Attach in a terminal" for a Claude Code background
session — a JupyterLab terminal running ``claude attach <job>``, the one already open when
there is one.

Body ``{"session_id"}`` → 201 ``{"terminal": name, "opened": bool}`` (``opened`` false: a
terminal of this server already runs the attach, and the page brings it to the front); 404
unknown session; 409 not a background session, or no terminals here; 503 no hub. The attach
is the user's own terminal from then on: pmux-widget never types into it (its actions attach
on a pane of their own, ``runtime.background_actions``).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import psutil
from jupyter_server.auth.decorator import authorized
from tornado import web

from pmux_widget.system import processes

from .handlers import _Base
from .terminals import TERMINALS_KEY, Terminals, TerminalsUnavailable

__all__ = ["AttachHandler", "attach_command", "terminal_attached"]


def attach_command(binary: str, job: str, claude_dir: Path) -> str:
    """The line typed into the new terminal's shell (the config dir named: the terminal's
    shell may not have the hub's ``CLAUDE_CONFIG_DIR``)."""
    return shlex.join(["env", f"CLAUDE_CONFIG_DIR={claude_dir}", binary, "attach", job])


def terminal_attached(shells: dict[str, int], job: str) -> str | None:
    """The terminal (by name) whose shell runs ``claude attach <job>`` now, if any."""
    tree = processes.children_map()
    for name, shell in sorted(shells.items()):
        for pid in processes.descendants(shell, tree, depth=3):
            try:
                argv = psutil.Process(pid).cmdline()
            except (psutil.Error, OSError):
                continue
            if "attach" in argv and argv[-1] == job:
                return name
    return None


class AttachHandler(_Base):
    """Open (or find) the terminal; it types a command into a new terminal: "execute"."""

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        bad_body = 'body must be {"session_id": "..."}'
        ok, body = self.json_body(bad_body)
        if not ok:
            return
        sid = body.get("session_id") if isinstance(body, dict) else None
        if not (isinstance(sid, str) and sid):
            self.fail(400, bad_body)
            return
        from pmux_widget.runtime import background_actions
        from pmux_widget.runtime.action_outcome import ActionError

        terminals: Terminals = self.settings[TERMINALS_KEY]
        service = self.service

        def open_it() -> dict[str, Any]:
            hub, _ = service.ready()
            session = hub.fleet.get(sid)
            if session is None:
                raise ActionError(f"no session {sid}", unknown=True)
            job = background_actions.job_of(session, hub.claude_dir)
            if job is None:
                raise ActionError(f"{session.name} is not a Claude Code background session")
            try:
                found = terminal_attached(terminals.names(), job)
                if found is not None:
                    return {"terminal": found, "opened": False}
                binary = background_actions.claude_for(hub.claude_dir, session.pid)
                home = str(Path.home())
                cwd = session.cwd if session.cwd and Path(session.cwd).is_dir() else home
                command = attach_command(binary, job, hub.claude_dir)
                return {"terminal": terminals.create(cwd, command), "opened": True}
            except TerminalsUnavailable as exc:  # a refusal: 409 with the reason
                raise ActionError(exc.reason) from exc

        await self.act_and_answer(
            open_it, 201, "the terminal could not be opened", "attach in a terminal failed"
        )
