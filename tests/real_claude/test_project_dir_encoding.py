"""The one ``encode_project_dir`` against the directories the real CLI creates, for cwds with
non-ASCII characters (an accent: one UTF-16 code unit; an emoji: two) and for a long one
(cut at 200 and suffixed with the hash of the original path).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pmux_widget.agents.claude.paths import encode_project_dir
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until

CWDS = {
    "accent and emoji": ["caf\u00e9 \u00fc-\U0001f600 x"],
    "long, non-ASCII": ["\u00e9t\u00e9-" + "a" * 60, "\U0001f600" * 20, "b" * 80, "\u00fc" * 40],
}


@pytest.mark.parametrize("parts", CWDS.values(), ids=CWDS.keys())
def test_real_cli_project_dir_matches_encode_project_dir(
    claude_cli: Path, scripted_model: ScriptedModel, tmp_path: Path, parts: list[str]
) -> None:
    env = ClaudeEnv(scripted_model.base_url, root=tmp_path / "claude")
    cwd = env.home.joinpath(*parts)
    cwd.mkdir(parents=True)
    env.cwd = cwd.resolve()
    env.trust(env.cwd)
    projects = env.config_dir / "projects"
    result = env.run_print(claude_cli, "say hi")
    made = wait_until(
        lambda: [p.name for p in projects.iterdir()] if projects.is_dir() else [],
        15,
        what=lambda: f"a project dir (CLI exit {result.returncode}: {result.stderr[-500:]})",
    )
    expected = encode_project_dir(os.path.realpath(env.cwd))
    assert made == [expected]
    assert len(str(env.cwd)) <= 200 or len(expected) > 201  # the long case took the hash path
