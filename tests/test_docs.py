"""The examples of docs/usage.md run as written: shell lines via the installed CLI, Python
blocks in one namespace (top-level ``await`` allowed, as in a notebook cell)."""

from __future__ import annotations

import ast
import asyncio
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import pmux_widget

from .helpers import post_hook

USAGE = Path(__file__).parent.parent / "docs" / "usage.md"
LONG_RUNNING = ("--watch", " serve")
#: A block whose first line says so needs a real Claude session in tmux (run elsewhere).
NEEDS_CLAUDE = "needs a real Claude session"


def blocks(kind: str) -> list[str]:
    found = re.findall(rf"```{kind}\n(.*?)```", USAGE.read_text(), flags=re.S)
    return [b for b in found if NEEDS_CLAUDE not in b.split("\n", 1)[0]]


def shell_commands() -> list[str]:
    commands = []
    for block in blocks("sh"):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command and not any(flag in command for flag in LONG_RUNNING):
                commands.append(command)
    return commands


def test_usage_has_examples():
    assert len(blocks("python")) >= 5 and len(shell_commands()) >= 5


@pytest.mark.parametrize("command", shell_commands())
def test_shell_example_runs(homes, command):
    argv = shlex.split(command)
    assert argv[0] == "pmux-widget"
    env = {
        **os.environ,
        "PMUX_WIDGET_HOME": str(homes.pmux.root),
        "CLAUDE_CONFIG_DIR": str(homes.claude),
    }
    result = subprocess.run(
        [sys.executable, "-m", "pmux_widget", *argv[1:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    allowed = {0, 1} if argv[1] == "doctor" else {0}  # doctor: 1 = something to fix
    assert result.returncode in allowed, result.stderr
    assert result.stdout.strip()


@pytest.fixture
def started(homes):
    hub = pmux_widget.start()
    base = {"cwd": "/home/dev/projects/acme-api", "transcript_path": "/nonexistent/x.jsonl"}
    post_hook(
        hub.port,
        hub.token,
        {**base, "session_id": "s-busy", "hook_event_name": "UserPromptSubmit", "prompt": "go"},
    )
    post_hook(
        hub.port,
        hub.token,
        {
            **base,
            "session_id": "s-done",
            "hook_event_name": "Stop",
            "last_assistant_message": "All green.",
        },
    )
    yield hub
    pmux_widget.stop()


def test_python_examples_run_in_order(started, capsys):
    namespace: dict[str, object] = {}
    for source in blocks("python"):
        code = compile(source, str(USAGE), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)
        if asyncio.iscoroutine(result):
            asyncio.run(result)
    printed = capsys.readouterr().out
    assert "review" in printed and "All green." in printed
    assert pmux_widget.session("s-done").state.value == "idle"  # dismissed by the example
    assert namespace["df"] is not None and len(namespace["rows"]) >= 2
