"""Fixtures for tests that drive the real Claude Code CLI against the scripted model.

* ``claude_cli``: the pinned CLI binary (installed once into the cache by ``ensure_cli``).
  Without npm/network the tests are skipped with the reason, unless ``CI`` is set or
  ``PMUX_REQUIRE_CLAUDE=1``: then they fail loudly, so CI never goes green by skipping.
* ``scripted_model``: a :class:`ScriptedModel` on an ephemeral port (per test).
* ``claude_env``: a sealed :class:`ClaudeEnv` under ``tmp_path`` with the recorder hook on all
  events (never the real ``~/.claude``).
* ``tmux_claude``: the CLI running in a private tmux server, at its prompt; torn down (tmux
  server and CLI processes killed) after the test, with the last screen printed on failure.

Every test that uses ``claude_cli`` (directly or through the fixtures above) is marked
``real_claude`` automatically.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget.simulate.claude import ClaudeEnv, CliUnavailable, TmuxClaude, ensure_cli
from pmux_widget.simulate.model import ScriptedModel


def _must_have_claude() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("PMUX_REQUIRE_CLAUDE") == "1"


def _unavailable(reason: str) -> None:
    if _must_have_claude():
        pytest.fail(
            f"real Claude Code CLI required (CI / PMUX_REQUIRE_CLAUDE): {reason}", pytrace=False
        )
    pytest.skip(f"real Claude Code CLI unavailable: {reason}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the CLI as ``real_claude``."""
    for item in items:
        if "claude_cli" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real_claude)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Keep each phase's report on the item, so fixtures can tell whether the test failed."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    """The pinned Claude Code binary (skip or fail when it cannot be had, see module doc)."""
    try:
        return ensure_cli()
    except CliUnavailable as exc:
        _unavailable(str(exc))
        raise  # unreachable: skip/fail raise


@pytest.fixture
def scripted_model() -> Iterator[ScriptedModel]:
    """The scripted Messages API server, started on an ephemeral port."""
    model = ScriptedModel()
    model.start()
    yield model
    model.stop()


@pytest.fixture
def claude_env(tmp_path: Path, scripted_model: ScriptedModel) -> ClaudeEnv:
    """A sealed HOME/CLAUDE_CONFIG_DIR/project under tmp_path, recording every hook."""
    env = ClaudeEnv(scripted_model.base_url, root=tmp_path / "claude")
    env.add_recorder_hooks()
    return env


@pytest.fixture
def tmux_claude(
    request: pytest.FixtureRequest, claude_cli: Path, claude_env: ClaudeEnv
) -> Iterator[TmuxClaude]:
    """The CLI at its prompt in a private tmux server; everything killed afterwards."""
    if shutil.which("tmux") is None:
        _unavailable("tmux is not installed")
    tc = TmuxClaude(claude_env, claude_cli)
    try:
        tc.start(timeout=90)
    except Exception:
        tc.close()
        raise
    yield tc
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print("--- last screen ---\n" + tc.screen())
        print("--- hooks ---\n" + "\n".join(claude_env.hook_events()))
    tc.close()
