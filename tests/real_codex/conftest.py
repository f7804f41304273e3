"""Fixtures for tests that drive the real Codex CLI (``@openai/codex`` at the pinned
:data:`~pmux_widget.demo.codex_env.CODEX_VERSION`) against the scripted Responses API.

* ``codex_cli``: the native binary, installed once into the cache by ``ensure_codex``
  (``make clis``). Without npm/network the tests are skipped with the reason, unless ``CI``
  is set or ``PMUX_REQUIRE_CODEX=1``: then they fail loudly, so CI never goes green by
  skipping (``tests/skip_summary.py`` lists them at the end of the run with the fix).
* ``responses``: a :class:`ScriptedResponses` on an ephemeral port (per test).
* ``codex_env``: a sealed :class:`CodexEnv` under ``tmp_path`` recording every hook (trusted
  as Codex records it), never the real ``~/.codex``.
* ``hub_place``: a pmux home with our hooks installed into ``codex_env`` (and an empty Claude
  config dir): ``start()`` starts a hub there (again, for a restart); ``hub``: one started.
* ``tmux_codex``: the TUI at its prompt in a private tmux server. At the end every process the
  env started is ended by pid (the TUI, the shared app-server daemon of ``daemon.pid`` and its
  pid-update-loop), its socket under ``/tmp/codex-daemon-<uid>/`` removed, and none may be
  left; the daemon's 315 MB copy of the binary (``$CODEX_HOME/packages``) is removed too.

Every test that uses ``codex_cli`` is marked ``real_codex``.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pmux_widget import hooks
from pmux_widget.demo.claude_env import CliUnavailable
from pmux_widget.demo.codex_cli import TmuxCodex, codex_processes, daemon_socket_dirs
from pmux_widget.demo.codex_env import CODEX_VERSION, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import ScriptedResponses
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome


def _must_have_codex() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("PMUX_REQUIRE_CODEX") == "1"


def unavailable(reason: str) -> None:
    """Skip (fail under CI) a test whose part cannot be had here."""
    if _must_have_codex():
        pytest.fail(f"real Codex CLI required (CI / PMUX_REQUIRE_CODEX): {reason}", pytrace=False)
    pytest.skip(f"real Codex CLI unavailable: {reason}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "codex_cli" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real_codex)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    """The pinned Codex binary (skip or fail when it cannot be had, see the module doc)."""
    try:
        return ensure_codex(CODEX_VERSION)
    except CliUnavailable as exc:
        unavailable(str(exc))
        raise  # unreachable


@pytest.fixture
def responses() -> Iterator[ScriptedResponses]:
    server = ScriptedResponses()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def codex_env(tmp_path: Path, responses: ScriptedResponses) -> CodexEnv:
    env = CodexEnv(responses.base_url, root=tmp_path / "codex")
    env.add_recorder_hooks()
    env.server = responses  # type: ignore[attr-defined]  # the requests, for the tests
    return env


@dataclass
class HubPlace:
    """Where a test's hubs run: a pmux home with our Codex hooks, an empty Claude dir."""

    home: PmuxHome
    claude: Path

    def start(self) -> Hub:
        return make_hub(home=self.home.root, claude_home=self.claude).start()


@pytest.fixture
def hub_place(tmp_path: Path, codex_env: CodexEnv) -> HubPlace:
    home = PmuxHome(tmp_path / "pmux")
    hooks.install_codex(codex_env.codex_home, home)
    claude = tmp_path / "claude"
    claude.mkdir()
    return HubPlace(home, claude)


@pytest.fixture
def hub(hub_place: HubPlace) -> Iterator[Hub]:
    started = hub_place.start()
    yield started
    started.stop()
    assert started.errors == 0


@pytest.fixture
def tmux_codex(
    request: pytest.FixtureRequest, codex_cli: Path, codex_env: CodexEnv
) -> Iterator[TmuxCodex]:
    """The TUI at its prompt in a private tmux server; everything it started ended by pid."""
    if shutil.which("tmux") is None:
        unavailable("tmux is not installed")
    tc = TmuxCodex(codex_env, codex_cli)
    try:
        tc.start(timeout=90)
        yield tc
    finally:
        rep = getattr(request.node, "rep_call", None)
        if rep is not None and rep.failed:
            for pane in tc.panes:
                print(f"--- last screen of {pane} ---\n" + tc.screen(pane))
            print("--- hooks ---\n" + "\n".join(codex_env.hook_events()))
        sockets = daemon_socket_dirs(codex_env)
        tc.close()
        assert [p.pid for p in codex_processes(codex_env)] == [], "Codex processes left"
        assert [s for s in sockets if s.exists()] == [], "daemon socket left under /tmp"
