"""``pmux-widget install`` into a real Codex's home: Codex (``hooks/list``) calls every entry
of ours trusted, runs them without asking (no "Hooks need review" screen), and the hook
script reaches our home with the agent named (spooled: no hub runs here)."""

from __future__ import annotations

import json
from pathlib import Path

from pmux_widget import hooks
from pmux_widget.agents.codex.hooks_config import OUR_HOOKS
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import TmuxCodex
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.demo.scripted_responses import HELLO
from pmux_widget.system.home import PmuxHome


def _ours(listed: list[dict[str, object]]) -> list[dict[str, object]]:
    return [h for h in listed if hooks.is_our_command(h["command"])]


def test_installed_hooks_are_trusted_by_codex(
    codex_cli: Path, codex_env: CodexEnv, tmp_path: Path
) -> None:
    home = PmuxHome(tmp_path / "pmux")
    before = codex_env.listed_hooks(codex_cli)
    hooks.install_codex(codex_env.codex_home, home)
    listed = codex_env.listed_hooks(codex_cli)
    assert len(_ours(listed)) == len(OUR_HOOKS)
    assert {h["trustStatus"] for h in listed} == {"trusted"}  # ours and the recorder's
    hooks.uninstall_codex(codex_env.codex_home, home)
    assert codex_env.listed_hooks(codex_cli) == before


def test_codex_runs_them_and_names_itself(
    codex_cli: Path, codex_env: CodexEnv, tmp_path: Path
) -> None:
    home = PmuxHome(tmp_path / "pmux")
    hooks.install_codex(codex_env.codex_home, home)
    with TmuxCodex(codex_env, codex_cli) as tc:
        tc.type_prompt("hello there")
        tc.wait_for_screen(HELLO)
        wait_until(lambda: len(hooks.read_spool(home)) >= 3, 15, what="three spooled hooks")
        assert "Hooks need review" not in tc.screen()
    spooled = hooks.read_spool(home)
    events = [json.loads(e.payload_bytes)["hook_event_name"] for e in spooled]
    assert events == ["SessionStart", "UserPromptSubmit", "Stop"]
    assert {e.agent for e in spooled} == {"codex"}
    assert events == codex_env.hook_events()  # what the recorder saw
