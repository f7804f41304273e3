"""``new_session(agent="codex", where="tmux")`` on the real Codex (issue 36, part 5): a Codex
TUI in a new tmux window of the server ``PMUX_WIDGET_TMUX_SOCKET`` names, known by its own
pane once its first prompt's thread is matched to it (never the daemon's pane)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from pmux_widget.core.model import State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import TmuxCodex, codex_processes
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.notebook.starting import new_session
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.launch import LaunchError


def test_new_codex_session_in_tmux(
    hub: Hub, codex_env: CodexEnv, codex_cli: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    socket = f"pmux-codex-new-{uuid.uuid4().hex[:8]}"
    # the tmux server new_session starts inherits this process's environment: the sealed one
    for key, value in codex_env.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKET", socket)
    monkeypatch.setenv("PMUX_WIDGET_CODEX", str(codex_cli))
    # what closes it: the same server, every process of the env ended by pid
    owner = TmuxCodex(codex_env, codex_cli, socket_name=socket)
    try:
        with pytest.raises(LaunchError, match="no background sessions"):
            new_session(hub, codex_env.cwd, "hi", where="background", agent="codex")
        session = new_session(
            hub, codex_env.cwd, "hello from new_session", where="tmux", agent="codex", timeout=120
        )
        assert session.agent == "codex" and session.tmux is not None
        panes = owner.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}").split()
        assert [session.tmux.pane, str(session.pid)] == panes[:2]
        done = wait_until(
            lambda: ((s := hub.fleet[session.session_id]).state is State.REVIEW and s) or None,
            60,
            what="its first turn answered",
        )
        assert done.last_prompt == "hello from new_session"
    finally:
        owner.close()
    assert codex_processes(codex_env) == []
