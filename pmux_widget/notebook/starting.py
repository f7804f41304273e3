"""``pmux_widget.new_session``: start a Claude Code session in a new JupyterLab terminal (or
tmux window) and get its :class:`Session` once the hub knows it.

A terminal belongs to a Jupyter server, so ``where="terminal"`` asks that server
(``POST {base}pmux/api/sessions/new``, with the token of its runtime file in Jupyter's runtime
dir): the server this kernel runs under when there is one, else the one whose extension
publishes terminals. ``where="tmux"`` opens the window here (``system.launch``), and
``where="background"`` runs ``claude --bg`` here: a session of the CLI's own daemon, in no
terminal (answered through ``claude attach``, see ``runtime.background_actions``).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pmux_widget.core.agents import DEFAULT_AGENT, agent_of
from pmux_widget.core.model import Session, State
from pmux_widget.runtime.hub import Hub
from pmux_widget.system import jupyter_terminals
from pmux_widget.system.json_post import HttpRefused, post_json
from pmux_widget.system.jupyter_terminals import ancestors
from pmux_widget.system.launch import (
    LaunchError,
    agent_command,
    check_request,
    start_in_background,
    start_in_tmux,
)

__all__ = ["LaunchError", "jupyter_servers", "new_session"]

#: How long new_session waits for the session's first hook or PID file.
START_TIMEOUT_S = 90.0


def jupyter_servers() -> list[dict[str, Any]]:
    """The running Jupyter servers' runtime files (``jpserver-<pid>.json``: url, token, pid),
    the one this process runs under first."""
    from jupyter_core.paths import jupyter_runtime_dir

    found: list[dict[str, Any]] = []
    for path in sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and isinstance(info.get("url"), str):
            found.append(info)
    mine = set(ancestors(os.getpid()))
    published = {s.pid for s in jupyter_terminals.read_servers(_home())}
    found.sort(key=lambda i: (i.get("pid") not in mine, i.get("pid") not in published))
    return found


def _home() -> Any:
    from pmux_widget.system.home import PmuxHome

    return PmuxHome.resolve()


def _ask_server(body: dict[str, Any]) -> dict[str, Any]:
    servers = jupyter_servers()
    if not servers:
        raise LaunchError("no Jupyter server runs here: a terminal needs one (or where='tmux')")
    info = servers[0]
    request = urllib.request.Request(
        f"{info['url'].rstrip('/')}/pmux/api/sessions/new",
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Authorization": f"token {info.get('token', '')}",
            "Content-Type": "application/json",
        },
    )
    try:
        answer = post_json(request, timeout=30)
    except HttpRefused as refused:
        reason = refused.reason or f"the Jupyter server answered HTTP {refused.code}"
        raise LaunchError(str(reason)) from None
    except (OSError, ValueError) as exc:
        raise LaunchError(f"the Jupyter server at {info['url']} did not answer ({exc})") from None
    if not isinstance(answer, dict):
        raise LaunchError("the Jupyter server's answer is not a JSON object")
    return answer


def new_session(
    hub: Hub,
    cwd: str | os.PathLike[str],
    prompt: str | None = None,
    where: Literal["terminal", "tmux", "background"] = "terminal",
    permission_mode: str | None = None,
    timeout: float = START_TIMEOUT_S,
    name: str | None = None,
    agent: str = DEFAULT_AGENT,
) -> Session:
    """Open a new terminal (or tmux window) in ``cwd`` running ``claude`` (with ``prompt`` as
    its first prompt), or with ``where="background"`` a Claude Code background session
    (``claude --bg``, named ``name``; a prompt is required), and return its Session once
    ``hub`` knows it (with a prompt: once that prompt's turn began, so ``await session.ask()``
    waits for its answer); LaunchError with the reason when it cannot start, TimeoutError when
    no hook or PID file came in time. ``agent="codex"``: a Codex TUI (in a terminal or tmux),
    known once its TUI is matched to its first thread (so with a prompt)."""
    folder = str(Path(cwd).expanduser().resolve())
    reason = check_request(folder, prompt, permission_mode, where, agent)
    known = agent_of(agent)
    if reason or known is None:
        raise LaunchError(reason)
    matches: Callable[[Session], bool]
    if where == "tmux":
        pane = start_in_tmux(folder, agent_command(known, prompt, permission_mode))

        def matches(s: Session) -> bool:
            return (s.tmux is not None and s.tmux.pane == pane) or s.tracking.pane == pane

        what = f"tmux pane {pane}"
    elif where == "background":
        assert prompt is not None  # check_request refuses a background session without one
        job = start_in_background(folder, prompt, permission_mode, name)

        def matches(s: Session) -> bool:
            background = s.background
            if background is not None:
                return background.job == job
            return s.session_id.startswith(job)

        what = f"background job {job}"
    else:
        body = {"cwd": folder, "prompt": prompt, "permission_mode": permission_mode}
        if known != DEFAULT_AGENT:  # a server from before Codex would refuse the field
            body["agent"] = agent
        name = str(_ask_server({**body, "where": "terminal"})["terminal"])

        def matches(s: Session) -> bool:
            return s.terminal is not None and s.terminal.name == name

        what = f"JupyterLab terminal {name}"

    def started(s: Session) -> bool:
        # with a first prompt, once its turn began: an ask() right after must wait for it
        return prompt is None or s.state is not State.IDLE or s.last_prompt is not None

    deadline = time.monotonic() + timeout
    while True:
        found = [
            s
            for s in hub.fleet.values()
            if not s.ended and s.running and s.agent == agent and matches(s) and started(s)
        ]
        if found:
            return max(found, key=lambda s: s.state_since)
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {agent} session showed in {what} within {timeout:g} s")
        time.sleep(0.05)
