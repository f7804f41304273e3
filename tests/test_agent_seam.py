"""The agent seam (agents/seam.py, core/agents.py): each agent's home, its own processes (real
ones, started here and ended by pid), its screen (recorded ones), and what starting one may
ask, looked up by the agent rather than branched on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget.agents.seam import SEAMS, seam_of
from pmux_widget.core.agents import AGENTS, FACTS
from pmux_widget.system.launch import agent_command, check_request

FIXTURES = Path(__file__).parent / "fixtures"


def test_every_agent_has_one_seam_carrying_its_facts() -> None:
    assert set(SEAMS) == set(AGENTS)
    for agent in AGENTS:
        assert seam_of(agent).agent == agent
        assert seam_of(agent).facts is FACTS[agent]


@pytest.mark.parametrize(
    ("agent", "variable"), [("claude", "CLAUDE_CONFIG_DIR"), ("codex", "CODEX_HOME")]
)
def test_an_agents_home_is_its_variable_else_the_path_given(
    agent: str, variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seam = SEAMS[agent]
    monkeypatch.setenv(variable, str(tmp_path / "from-env"))
    assert seam.home(None).root == tmp_path / "from-env"
    assert not seam.home(None).installed
    (tmp_path / "given").mkdir()
    given = seam.home(tmp_path / "given")
    assert given.root == tmp_path / "given" and given.installed


@pytest.fixture
def named(tmp_path: Path) -> Iterator[dict[str, int]]:
    """Real processes named ``claude`` and ``codex`` (copies of sleep), ended by pid."""
    sleep = shutil.which("sleep")
    assert sleep is not None
    started: dict[str, subprocess.Popen[bytes]] = {}
    for name in ("claude", "codex"):
        shutil.copy(sleep, tmp_path / name)
        started[name] = subprocess.Popen([str(tmp_path / name), "30"])
    try:
        yield {name: p.pid for name, p in started.items()}
    finally:
        for p in started.values():
            p.kill()
            p.wait()


def test_each_agent_knows_its_own_processes_and_not_the_others(named: dict[str, int]) -> None:
    claude, codex = seam_of("claude"), seam_of("codex")
    assert claude.is_own_process(named["claude"])
    assert not claude.is_own_process(named["codex"])
    assert codex.is_own_process(named["codex"])
    assert not codex.is_own_process(named["claude"])
    assert not claude.is_own_process(os.getpid()) and not codex.is_own_process(os.getpid())


def test_each_agent_reads_its_own_recorded_dialog() -> None:
    claude_text = (FIXTURES / "screens" / "2.1.332-manual" / "bash-dialog.txt").read_text()
    codex_text = (FIXTURES / "codex_screens" / "approval.txt").read_text()
    for agent, text in (("claude", claude_text), ("codex", codex_text)):
        shown = SEAMS[agent].parse_screen(text)
        assert shown.dialog is not None and shown.dialog.kind == "permission", agent
        assert any(c.label.startswith("Yes") for c in shown.dialog.choices), agent
        assert shown.dialog.fingerprint and not shown.busy, agent
    idle = SEAMS["codex"].parse_screen((FIXTURES / "codex_screens" / "empty.txt").read_text())
    assert idle.dialog is None and idle.prompt_text == ""


def test_starting_an_agent_asks_only_what_it_takes(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert check_request(folder, "hi", None, "background", "claude") == ""
    assert check_request(folder, "hi", "plan", "tmux", "claude") == ""
    no_bg = check_request(folder, "hi", None, "background", "codex")
    assert no_bg == "Codex has no background sessions: start it in a terminal or tmux"
    assert "Codex takes its own" in check_request(folder, None, "plan", "tmux", "codex")
    assert check_request(folder, None, None, "tmux", "codex") == ""
    assert check_request(folder, None, None, "tmux", "gemini").startswith('"agent" must be')


def test_an_agents_command_is_its_program_or_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PMUX_WIDGET_CLAUDE", raising=False)
    monkeypatch.delenv("PMUX_WIDGET_CODEX", raising=False)
    assert agent_command("claude", "hi", "plan") == ["claude", "--permission-mode", "plan", "hi"]
    assert agent_command("codex", "hi") == ["codex", "hi"]
    monkeypatch.setenv("PMUX_WIDGET_CODEX", f"{sys.executable} -m 'a codex'")
    assert agent_command("codex", None, "plan") == [sys.executable, "-m", "a codex"]
    monkeypatch.setenv("PMUX_WIDGET_CLAUDE", "/opt/cli/claude --debug")
    assert agent_command("claude") == ["/opt/cli/claude", "--debug"]


def test_every_agent_has_its_hooks_and_only_codex_is_optional() -> None:
    from pmux_widget.hooks import AGENT_HOOKS

    assert set(AGENT_HOOKS) == set(AGENTS)
    assert {a for a, h in AGENT_HOOKS.items() if h.optional} == {"codex"}
    assert all(h.agent == a for a, h in AGENT_HOOKS.items())


def test_stop_and_remove_refuse_an_agent_without_background_sessions_running_no_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Codex row is no Claude Code background job: refused before any CLI runs (a
    ``claude`` on PATH that would leave a mark is never started)."""
    from dataclasses import dataclass

    from pmux_widget.core.model import Session, State
    from pmux_widget.runtime.actions import ActionError, act

    bin_dir, mark = tmp_path / "bin", tmp_path / "ran"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text(f"#!/bin/sh\ntouch {mark}\necho '[]'\n")
    (bin_dir / "claude").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    @dataclass
    class View:
        fleet: dict[str, Session]
        claude_dir: Path

    sid = "c0dec0de-aaaa-4bbb-8ccc-000000000001"
    view = View({sid: Session(sid, state=State.BUSY, agent="codex")}, tmp_path / "claude")
    for action in ("stop", "remove"):
        with pytest.raises(ActionError, match="is a Codex session"):
            act(view, sid, action)
    assert not mark.exists()
    # the same row as Claude Code's asks its CLI for the job (and is refused: none listed)
    view.fleet[sid] = Session(sid, state=State.BUSY)
    with pytest.raises(ActionError, match="not a Claude Code background session"):
        act(view, sid, "remove")
    assert mark.exists()
