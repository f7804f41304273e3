"""Real Codex in a real JupyterLab terminal (issue 36): a Jupyter server with the extension, a
terminal created through its REST API and typed into through its websocket (as the browser
does), the Codex TUI running in it against the scripted Responses API with our hooks.

Checked: the row belongs to that terminal (the server's ``pmux/api/sessions``, a kernel-like
hub of another process), never to the shared daemon; approve through the server's route,
send and deny from the kernel's hub (handed to the server's hub, which checks everything
again and types into the PTY); peek through the panel's stream shows the terminal's screen,
and from the kernel's hub says which terminal to open.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest
import websocket

from pmux_widget import hooks
from pmux_widget.agents.codex.screen import parse_screen
from pmux_widget.core.model import State, TerminalLocation
from pmux_widget.demo.codex_cli import APPROVAL, READY, codex_processes, end_codex_processes
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.runtime.actions import ActionError, act, peek
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until
from ..jupyter_ext import LabServer
from ..lab_terminal import LabTerminal, close_terminal


@dataclass
class LabCodex:
    server: LabServer
    env: CodexEnv
    term: LabTerminal
    kernel_hub: Hub  # a hub of another process's kind (a kernel's): it holds no PTY

    def sessions(self) -> list[dict[str, Any]]:
        answer = self.server.get("pmux/api/sessions?ended=1")
        assert answer.status_code == 200, answer.text
        return [s for s in answer.json()["sessions"] if s["agent"] == "codex"]

    def row(self, state: str | None = None) -> dict[str, Any] | None:
        rows = self.sessions()
        row = rows[0] if len(rows) == 1 else None
        return row if row is not None and (state is None or row["state"] == state) else None

    def wait_state(self, state: str, timeout: float = 60.0) -> dict[str, Any]:
        return wait_until(
            lambda: self.row(state) or {}, timeout, what=lambda: f"{state}: {self.sessions()}"
        )

    def prompt(self, text: str) -> None:
        """Text, its echo in the composer, then Enter apart (Codex takes an Enter that comes
        with the text for part of a paste)."""
        self.term.type(text)
        self.term.wait_screen(
            lambda s: text in (parse_screen(s).prompt_text or ""), 20, f"{text!r} echoed"
        )
        time.sleep(0.4)  # Codex's paste-burst window: shows nothing on screen
        self.term.type("\r")


def _daemon_up(env: CodexEnv) -> bool:
    pid = (env.daemon_info() or {}).get("pid")
    with contextlib.suppress(psutil.Error, TypeError):
        return isinstance(pid, int) and "--managed-daemon" in psutil.Process(pid).cmdline()
    return False


@pytest.fixture
def lab_codex(
    request: pytest.FixtureRequest, tmp_path: Path, codex_cli: Path, codex_env: CodexEnv
) -> Iterator[LabCodex]:
    pmux = PmuxHome(tmp_path / "pmux")
    hooks.install_codex(codex_env.codex_home, pmux)
    server = LabServer(tmp_path, pmux=pmux.root).start()
    kernel_hub = make_hub(home=pmux.root, claude_home=server.claude).start()
    term: LabTerminal | None = None
    try:
        term = LabTerminal(server, cwd=codex_env.cwd)
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in codex_env.env().items())
        term.type(f"cd {shlex.quote(str(codex_env.cwd))} && env -i {assigns} {codex_cli}\r")
        wait_until(lambda: _daemon_up(codex_env), 90, what="the shared daemon")
        term.wait_for(READY, 90)
        yield LabCodex(server, codex_env, term, kernel_hub)
    finally:
        rep = getattr(request.node, "rep_call", None)
        close_terminal(term, request)
        kernel_hub.stop()
        server.stop()
        end_codex_processes(codex_env)
        shutil.rmtree(codex_env.codex_home.root / "packages", ignore_errors=True)
        assert [p.pid for p in codex_processes(codex_env)] == [], "Codex processes left"
        if rep is not None and rep.failed:
            print(f"--- server log ---\n{server.log()}")


def _peek_through_the_stream(lc: LabCodex, sid: str) -> dict[str, Any]:
    ws = websocket.create_connection(
        lc.server.url("pmux/api/stream", "ws"),
        header=[f"{k}: {v}" for k, v in lc.server.headers().items()],
        timeout=15,
    )
    try:
        ws.send(json.dumps({"type": "msg", "content": {"type": "peek", "session_id": sid}}))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            content = json.loads(ws.recv()).get("content") or {}
            if content.get("type") == "peek_result":
                return dict(content)
        raise AssertionError("no peek_result")
    finally:
        ws.close()


def test_codex_in_a_lab_terminal_is_its_row_answered_and_peeked(lab_codex: LabCodex) -> None:
    lc = lab_codex
    lc.prompt("please SHELL now")
    asked = lc.wait_state("needs-input")
    sid = asked["session_id"]
    row = wait_until(
        lambda: (r := lc.row("needs-input")) and r.get("terminal") and r,
        30,
        what=lambda: f"the row in its terminal: {lc.sessions()}",
    )
    assert row["terminal"] == {"name": lc.term.name}
    assert row["tmux"] is None  # the daemon's TMUX_PANE (none here) is never the session's
    # a hub of another process (a kernel's) learns the terminal too
    wait_until(
        lambda: (
            (s := lc.kernel_hub.fleet.get(sid)) is not None
            and s.terminal == TerminalLocation(lc.term.name)
        ),
        30,
        what=lambda: f"the kernel's hub sees the terminal: {lc.kernel_hub.fleet.get(sid)}",
    )
    lc.term.wait_for(APPROVAL, 30)

    # peek: the panel's stream reads the terminal's screen; a kernel's hub holds no PTY
    seen = _peek_through_the_stream(lc, sid)
    assert seen["ok"] is True, seen
    assert seen["dialog"] == "Would you like to run the following command?"
    assert any("$ touch approved.txt" in line for line in seen["lines"])
    with pytest.raises(ActionError, match=f"JupyterLab terminal {lc.term.name}"):
        peek(lc.kernel_hub, sid)

    answer = lc.server.post("pmux/api/actions", {"action": "approve", "session_id": sid})
    assert answer.status_code == 202, answer.text
    done = lc.wait_state("review")
    assert done["last_assistant"].startswith("Done.")
    assert (lc.env.cwd / "approved.txt").exists()  # the command ran: the dialog was answered

    # from the kernel's hub: handed to the server's hub, which checks and types
    wait_until(lambda: lc.kernel_hub.fleet[sid].state is State.REVIEW, 30, what="kernel review")
    act(lc.kernel_hub, sid, "send", text="again SHELL please", record=lc.kernel_hub.record_action)
    lc.wait_state("needs-input")
    lc.term.wait_for(APPROVAL, 30)
    wait_until(lambda: lc.kernel_hub.fleet[sid].state is State.NEEDS_INPUT, 30, what="kernel")
    assert act(lc.kernel_hub, sid, "deny").action == "deny"
    idle = lc.wait_state("idle")
    assert idle["source"] in ("hook:Interrupt", "action:deny")
    lc.term.wait_for("Conversation interrupted", 30)
