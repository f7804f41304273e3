"""``make demo DEMO_ARGS=--real``'s Codex session (issue 36, part 6): the real Codex TUI
against the scripted Responses API, our hooks in its sealed home, posting into the demo's
pmux home. A hub over that home shows it as a Codex row of its TUI (pid, pane) that asks for
approval; its stop ends every process of its home (the TUI, the shared daemon, its helper)."""

from __future__ import annotations

from pathlib import Path

from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import codex_processes
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.demo.real_codex import RealCodex
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.system.home import PmuxHome


def test_the_real_demos_codex_asks_and_stops_clean(tmp_path: Path, codex_cli: Path) -> None:
    home = PmuxHome(tmp_path / "pmux").ensure()
    (tmp_path / "claude").mkdir()
    hub = make_hub(home=home.root, claude_home=tmp_path / "claude").start()
    codex = RealCodex(home.root, tmp_path / "projects")
    try:
        codex.start()
        assert "real codex in tmux" in codex.describe()

        def asking() -> Session | None:
            rows = [s for s in hub.sessions() if s.agent == "codex"]
            ok = rows and rows[0].state is State.NEEDS_INPUT and rows[0].tmux is not None
            return rows[0] if ok else None

        row = wait_until(asking, 240, what="the Codex row asking, in its pane")
        assert row.pid is not None
    finally:
        env = codex.env
        codex.stop()
        hub.stop()
    assert isinstance(env, CodexEnv)
    assert codex_processes(env) == [], "a process of the demo's Codex was left"
