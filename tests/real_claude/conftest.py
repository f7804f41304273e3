"""Fixtures for tests that drive the real Claude Code CLI against the scripted model.

* ``cli_version``: every test that drives the CLI runs once per pinned version it applies to:
  the whole suite on :data:`NEWEST`, and the tests marked ``all_versions`` (the core: smoke,
  permission approve/deny, Esc, /clear, zero-install) on the older pins too.
  ``PMUX_CLI_MATRIX=full`` runs every test on every pin; ``PMUX_CLI_MATRIX=2.1.197`` (a
  comma-separated list) only on those. ``@pytest.mark.cli_versions("2.1.332", reason=…)``
  limits a test to the versions where the behaviour it checks exists.
* ``claude_cli``: the pinned CLI binary of ``cli_version`` (installed once into the cache by
  ``ensure_cli``).
  Without npm/network the tests are skipped with the reason, unless ``CI`` is set or
  ``PMUX_REQUIRE_CLAUDE=1``: then they fail loudly, so CI never goes green by skipping.
* ``scripted_model``: a :class:`ScriptedModel` on an ephemeral port (per test).
* ``claude_env``: a sealed :class:`ClaudeEnv` under ``tmp_path`` with the recorder hook on all
  events (never the real ``~/.claude``).
* ``tmux_claude``: the CLI running in a private tmux server, at its prompt; torn down (tmux
  server and CLI processes killed) after the test, with the last screen printed on failure.
* ``make_tracked(hooks=True)`` / ``tracked_claude``: end-to-end setups (see ``tracking.py``):
  our hooks installed into the env's ``settings.json`` (with ``hooks=False``: no hooks at all),
  ``PMUX_WIDGET_HOME`` passed to the CLI, a real :class:`Hub` with its sources watching the
  env's config dir, and one CLI started whose session the hub already knows.
* ``make_bg`` (module-scoped): Claude Code's own background sessions (``claude --bg``, the
  agent view) in a sealed env, through :class:`~pmux_widget.demo.claude_bg.BgClaude`; every
  daemon process ended by pid at the module's end.
* ``timings``: latencies a test measured; printed at the end of the run and merged into
  ``test-output/real_claude_timings.json``.

Every test that uses ``claude_cli`` (directly or through the fixtures above) is marked
``real_claude`` automatically.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks as pmux_hooks
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    CLI_VERSIONS,
    NEWEST,
    ClaudeEnv,
    CliUnavailable,
    ensure_cli,
)
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.assemble import make_hub as Hub  # a Hub with its file sources
from pmux_widget.system.home import PmuxHome

from .tracking import TIMINGS, TIMINGS_FILE, Timings, Tracked


def _must_have_claude() -> bool:
    return bool(os.environ.get("CI")) or os.environ.get("PMUX_REQUIRE_CLAUDE") == "1"


def _unavailable(reason: str) -> None:
    if _must_have_claude():
        pytest.fail(
            f"real Claude Code CLI required (CI / PMUX_REQUIRE_CLAUDE): {reason}", pytrace=False
        )
    pytest.skip(f"real Claude Code CLI unavailable: {reason}")


def _matrix_versions(all_versions: bool) -> list[str]:
    """The pinned versions a test runs on (see the module doc)."""
    choice = os.environ.get("PMUX_CLI_MATRIX", "").strip()
    if choice == "full":
        return list(CLI_VERSIONS)
    if choice:
        return [v.strip() for v in choice.split(",") if v.strip()]
    return list(CLI_VERSIONS) if all_versions else [NEWEST]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize every test that drives the CLI by ``cli_version``."""
    if "cli_version" not in metafunc.fixturenames:
        return
    versions = _matrix_versions(metafunc.definition.get_closest_marker("all_versions") is not None)
    only = metafunc.definition.get_closest_marker("cli_versions")
    params = []
    for v in versions:
        marks = []
        if only is not None and v not in only.args:
            reason = only.kwargs.get("reason", "does not apply to this CLI version")
            marks.append(pytest.mark.skip(reason=f"CLI {v}: {reason}"))
        params.append(pytest.param(v, id=v, marks=marks))
    metafunc.parametrize("cli_version", params, scope="session")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs the CLI as ``real_claude``."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        if "claude_cli" in names or "sdk_cli" in names:
            item.add_marker(pytest.mark.real_claude)


@pytest.fixture(scope="session")
def claude_cli(cli_version: str) -> Path:
    """The pinned Claude Code binary of ``cli_version`` (skip or fail when it cannot be had,
    see module doc)."""
    try:
        return ensure_cli(cli_version)
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
def claude_env(tmp_path: Path, scripted_model: ScriptedModel, cli_version: str) -> ClaudeEnv:
    """A sealed HOME/CLAUDE_CONFIG_DIR/project under tmp_path for ``cli_version`` (manual
    permission mode), recording every hook."""
    env = ClaudeEnv(scripted_model.base_url, root=tmp_path / "claude", version=cli_version)
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


# --------------------------------------------------------------------------- tracked sessions
#
# The end-to-end fixtures: the real CLI in tmux with OUR hooks installed (or none at all), and a
# real Hub with its sources (PID-file and transcript watchers, liveness loop) in this process.


@pytest.fixture
def timings(request: pytest.FixtureRequest) -> Iterator[Timings]:
    """Record latencies; kept (for the summary and the JSON file) even if the test fails."""
    t = Timings(request.node.name)
    yield t
    if t.rows:
        TIMINGS[request.node.name] = t.rows


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the measured latencies and merge them into test-output/real_claude_timings.json."""
    if not TIMINGS:
        return
    terminalreporter.section("real Claude Code: measured latencies")
    for test, rows in TIMINGS.items():
        for row in rows:
            budget = f" (budget {row['budget_ms']:.0f} ms)" if row.get("budget_ms") else ""
            terminalreporter.write_line(f"{test}: {row['what']}: {row['ms']:.0f} ms{budget}")
    data: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(TIMINGS_FILE.read_text())
    tests = data.get("tests") if isinstance(data.get("tests"), dict) else {}
    tests.update(TIMINGS)
    data = {
        "cli_versions": list(CLI_VERSIONS),
        "cpus": os.cpu_count(),
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "tests": dict(sorted(tests.items())),
    }
    TIMINGS_FILE.parent.mkdir(parents=True, exist_ok=True)
    TIMINGS_FILE.write_text(json.dumps(data, indent=2) + "\n")
    terminalreporter.write_line(f"written to {TIMINGS_FILE}")


@pytest.fixture
def make_tracked(
    request: pytest.FixtureRequest,
    claude_cli: Path,
    cli_version: str,
    scripted_model: ScriptedModel,
    tmp_path: Path,
) -> Iterator[Callable[..., Tracked]]:
    """``make_tracked(hooks=True, auto_mode=False, args=())``: a Tracked with one CLI of
    ``cli_version`` started (in manual permission mode unless ``auto_mode``; ``args`` such as
    ``--permission-mode plan``); everything torn down."""
    if shutil.which("tmux") is None:
        _unavailable("tmux is not installed")
    made: list[Tracked] = []

    def make(hooks: bool = True, auto_mode: bool = False, args: Sequence[str] = ()) -> Tracked:
        pmux_home = PmuxHome(tmp_path / "pmux")
        env = ClaudeEnv(
            scripted_model.base_url,
            root=tmp_path / "claude",
            extra_env={"PMUX_WIDGET_HOME": str(pmux_home.root)},
            version=cli_version,
            auto_mode=auto_mode,
        )
        if hooks:
            pmux_hooks.install(env.settings_file, pmux_home)
            env.add_recorder_hooks()  # ground truth: which hooks really fired
        hub = Hub(home=pmux_home.root, claude_home=env.config_dir).start()
        tracked = Tracked(env, hub, scripted_model, claude_cli, hooks)
        made.append(tracked)
        tracked.spawn(args)
        return tracked

    yield make
    rep = getattr(request.node, "rep_call", None)
    for tracked in made:
        if rep is not None and rep.failed:
            for tc in tracked.claudes:
                with contextlib.suppress(Exception):
                    print(f"--- last screen of pid {tc._pid} ---\n" + tc.screen())
            print("--- hooks ---\n" + "\n".join(tracked.env.hook_events()))
            print(f"--- PID files ---\n{tracked.env.pid_files()}")
            for source in tracked.hub._sources:
                if not hasattr(source, "tasks"):  # the warm attaches watch nothing
                    continue
                tasks = [(t.get_coro().__qualname__, t.done()) for t in source.tasks]
                print(f"--- sources: tasks {tasks}, roots {source.watched_roots}")
            print("--- hub changes (t, sid, state, source, tool, subagents) ---")
            for s in tracked.log.seen:
                a = s.after
                print(
                    f"{s.t:.3f} {a.session_id[:8]} {a.state.value} {a.source} "
                    f"{a.tool_summary!r} sub={a.subagents} running={a.running}"
                )
        tracked.close()
    # The tracker, the store and the listeners never failed on what the real CLI did.
    assert [t.hub.errors for t in made] == [0] * len(made), "hub errors (see the log)"


@pytest.fixture
def tracked_claude(make_tracked: Callable[..., Tracked]) -> Tracked:
    """One CLI with our hooks installed, a hub watching it (see :class:`Tracked`)."""
    return make_tracked(hooks=True)


# --------------------------------------------------------------------------- background sessions
#
# Claude Code's own background sessions (``claude --bg``, the agent view): a daemon outside any
# temp dir runs them, so the harness (pmux_widget.demo.claude_bg) ends every process of the env
# by pid. Starting a daemon costs seconds: a module shares one model and its envs.


@pytest.fixture(scope="module")
def bg_model() -> Iterator[ScriptedModel]:
    """A scripted model for one module's background sessions."""
    model = ScriptedModel()
    model.start()
    yield model
    model.stop()


@pytest.fixture(scope="module")
def make_bg(
    claude_cli: Path,
    cli_version: str,
    bg_model: ScriptedModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., BgClaude]]:
    """``make_bg(pmux_home=None)``: a :class:`BgClaude` in a fresh sealed env of
    ``cli_version`` (manual permission mode, every hook recorded; with ``pmux_home``, our hooks
    installed too and ``PMUX_WIDGET_HOME`` set). Every daemon, pty host, worker, spare and view
    it started is ended by pid at the end of the module, and none may outlive that."""
    made: list[BgClaude] = []

    def make(pmux_home: PmuxHome | None = None) -> BgClaude:
        root = tmp_path_factory.mktemp(f"bg-{cli_version}")
        extra = {"PMUX_WIDGET_HOME": str(pmux_home.root)} if pmux_home else {}
        env = ClaudeEnv(
            bg_model.base_url, root=root / "claude", extra_env=extra, version=cli_version
        )
        if pmux_home is not None:
            pmux_hooks.install(env.settings_file, pmux_home)
        env.add_recorder_hooks()
        bg = BgClaude(env, claude_cli)
        made.append(bg)
        return bg

    yield make
    for bg in made:
        bg.close()
    assert [p.pid for bg in made for p in bg.processes()] == [], "background processes left"


# --------------------------------------------------------------------------- Agent SDK runs
#
# claude-agent-sdk (pinned in the test extras) with the CLI it bundles, in a sealed env with
# our hooks installed (the SDK loads user settings by default), PMUX_WIDGET_HOME passed on.


@pytest.fixture(scope="session")
def sdk_cli() -> Path:
    """The CLI claude-agent-sdk bundles (skip or fail as for the pinned CLIs)."""
    from .sdk_runs import bundled_cli

    cli = bundled_cli()
    if cli is None:
        _unavailable("claude-agent-sdk with its bundled CLI is not installed (make install)")
        raise AssertionError  # unreachable: skip/fail raise
    return cli


@pytest.fixture
def sdk_env(
    sdk_cli: Path, scripted_model: ScriptedModel, tmp_path: Path
) -> tuple[ClaudeEnv, PmuxHome]:
    """A sealed env for the SDK's bundled CLI, our hooks installed; and our home."""
    from .sdk_runs import SDK_CLI_VERSION

    pmux_home = PmuxHome(tmp_path / "pmux").ensure()
    env = ClaudeEnv(
        scripted_model.base_url,
        root=tmp_path / "claude",
        extra_env={"PMUX_WIDGET_HOME": str(pmux_home.root)},
        version=SDK_CLI_VERSION,
    )
    pmux_hooks.install(env.settings_file, pmux_home)
    return env, pmux_home
