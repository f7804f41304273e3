"""``POST {base}pmux/api/sessions/new``: start a Claude Code session in a new JupyterLab
terminal (or tmux window) of this server's machine, or in the background (``claude --bg``).

Body ``{"cwd", "prompt"?, "permission_mode"?, "name"?, "where": "terminal" | "tmux" |
"background"}`` → 201 ``{"terminal": name}``, ``{"tmux": pane}`` or ``{"background": job}``;
400 with the reason for a bad body (a background session needs a prompt); 409 when it cannot
be done here (terminals off: ``ServerApp.terminals_enabled = False``; no tmux; ``claude --bg``
failed). The session's row comes with its first hook or PID file, as any session's does.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from pmux_widget.core.agents import DEFAULT_AGENT, agent_of
from pmux_widget.system.launch import (
    LaunchError,
    agent_command,
    check_request,
    start_in_background,
    start_in_tmux,
)

from .handlers import AUTH_RESOURCE, _Base
from .terminals import TERMINALS_KEY, Terminals, TerminalsUnavailable

__all__ = ["ForgetScreenHandler", "NewSessionHandler", "ScreenHandler", "TerminalsHandler"]


class NewSessionHandler(_Base):
    """Start a session (it types into a terminal it opens: "execute", like an action)."""

    auth_resource = AUTH_RESOURCE

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        ok, body = self.json_body("body is not valid JSON")
        if not ok:
            return
        if not isinstance(body, dict):
            self.fail(400, 'body must be {"cwd", "prompt"?, "permission_mode"?, "where"}')
            return
        where = body.get("where", "terminal")
        cwd, prompt, mode = body.get("cwd"), body.get("prompt"), body.get("permission_mode")
        agent = body.get("agent", DEFAULT_AGENT)
        reason = check_request(cwd, prompt, mode, where, agent)
        label = body.get("name")
        if not reason and label is not None and not (isinstance(label, str) and len(label) < 200):
            reason = '"name" must be a short text'
        if reason:
            self.fail(400, reason)
            return
        folder = str(Path(str(cwd)).expanduser().resolve())
        argv = agent_command(agent_of(agent) or DEFAULT_AGENT, prompt or None, mode)
        terminals: Terminals = self.settings[TERMINALS_KEY]

        def start() -> dict[str, Any]:
            if where == "background":
                return {"background": start_in_background(folder, str(prompt), mode, label)}
            if where == "tmux":
                return {"tmux": start_in_tmux(folder, argv)}
            return {"terminal": terminals.create(folder, shlex.join(argv))}

        try:
            answer = await self.service.run(start)
        except (TerminalsUnavailable, LaunchError) as exc:
            self.fail(409, exc.reason)
            return
        except Exception as exc:  # tmux or the PTY failed: say so
            self.log.exception("pmux-widget | a new session failed")
            self.fail(409, f"the session could not be started: {exc}")
            return
        self.set_status(201)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer))


class TerminalsHandler(_Base):
    """``GET pmux/api/terminals``: whether sessions can be started and answered in this
    server's terminals, and which terminals it has: ``{"available": bool, "reason": str |
    null, "terminals": ["1", ...]}`` (the panel says why when they cannot)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        terminals: Terminals = self.settings[TERMINALS_KEY]
        reason = terminals.unavailable()
        self.set_header("Content-Type", "application/json")
        self.finish(
            json.dumps(
                {
                    "available": reason is None,
                    "reason": reason,
                    "terminals": sorted(terminals.names()),
                }
            )
        )


class ForgetScreenHandler(_Base):
    """Tests only (``PMUX_WIDGET_TEST_ROUTES=1``): ``?terminal=N`` forgets that terminal's
    screen, as if its output had been cut, so the next action must get a repaint."""

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        terminals: Terminals = self.settings[TERMINALS_KEY]
        name = self.get_query_argument("terminal", "")
        found = await self.service.run(lambda: terminals.forget_screen(name))
        self.set_status(202 if found else 404)
        self.finish("{}")


class ScreenHandler(_Base):
    """Tests only (``PMUX_WIDGET_TEST_ROUTES=1``): ``?terminal=N`` reads that terminal's
    screen as an action would (asking for a repaint when it is not known): ``{"text"}``, or
    409 with the reason it cannot be read."""

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def get(self) -> None:
        terminals: Terminals = self.settings[TERMINALS_KEY]
        name = self.get_query_argument("terminal", "")
        try:
            text = await self.service.run(lambda: terminals.read_screen(name))
        except OSError as exc:
            self.set_status(409)
            self.finish(json.dumps({"error": str(exc)}))
            return
        self.set_status(404 if text is None else 200)
        self.finish(json.dumps({} if text is None else {"text": text}))
