"""Our Python computation of a hook's trust key and hash (``agents/codex/trust.py``) against
what the real binary computes (``codex app-server``'s ``hooks/list``), for ordinary and odd
hooks.json entries: if Codex changes its rule, install's trust would silently stop working,
so this fails first."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pmux_widget.agents.codex import CodexHome, hook_key, trust_hash
from pmux_widget.agents.codex.app_server import hooks_list
from pmux_widget.demo.codex_env import CODEX_EVENTS, CodexEnv

ODD_HOOKS: list[dict[str, Any]] = [
    {"type": "command", "command": "echo plain"},
    {"type": "command", "command": "echo 'é ü \\\\ \" \t'", "timeout": 7, "async": True},
    {"type": "command", "command": "echo status", "timeout": 0, "statusMessage": "Checking…"},
    {"type": "command", "command": "echo long", "timeout": 900},
]


def _listed(codex_cli: Path, env: CodexEnv) -> dict[str, dict[str, Any]]:
    return {h["key"]: h for h in env.listed_hooks(codex_cli)}


@pytest.mark.parametrize("matcher", [None, "^request_user_input$", ""])
def test_our_hash_is_codexs(codex_cli: Path, codex_env: CodexEnv, matcher: str | None) -> None:
    hooks = {
        event: [{**({"matcher": matcher} if matcher is not None else {}), "hooks": ODD_HOOKS}]
        for event in CODEX_EVENTS
    }
    codex_env.hooks_file.write_text(json.dumps({"hooks": hooks}))
    listed = _listed(codex_cli, codex_env)
    assert len(listed) == len(CODEX_EVENTS) * len(ODD_HOOKS)
    for event in CODEX_EVENTS:
        for index, hook in enumerate(ODD_HOOKS):
            key = hook_key(str(codex_env.hooks_file), event, 0, index)
            assert key in listed, (key, sorted(listed))
            assert trust_hash(event, hook, matcher) == listed[key]["currentHash"], (event, hook)


def test_the_key_holds_the_resolved_home(codex_cli: Path, codex_env: CodexEnv) -> None:
    link = codex_env.root / "codex-link"
    link.symlink_to(codex_env.codex_home.root)
    hook = {"type": "command", "command": "echo hi", "timeout": 5}
    codex_env.hooks_file.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    env = {**codex_env.env(), "CODEX_HOME": str(link)}
    [listed] = hooks_list(codex_cli, link, codex_env.cwd, env=env)
    home = CodexHome.resolve(link)
    assert home.root == codex_env.codex_home.root
    assert listed["key"] == hook_key(str(home.hooks_file), "Stop", 0, 0)
    assert os.path.realpath(listed["sourcePath"]) == str(home.hooks_file)


def test_recorded_trust_makes_them_trusted(codex_cli: Path, codex_env: CodexEnv) -> None:
    # codex_env trusted its recorder hooks as install does: the key and hash in config.toml
    statuses = {h["eventName"]: h["trustStatus"] for h in codex_env.listed_hooks(codex_cli)}
    assert len(statuses) == len(CODEX_EVENTS)
    assert set(statuses.values()) == {"trusted"}
