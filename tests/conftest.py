"""Shared fixtures. Every test runs with its own Claude config dir and pmux-widget home.

The session-wide guard points ``CLAUDE_CONFIG_DIR`` and ``PMUX_WIDGET_HOME`` at a temp dir
before any test runs, so code that falls back to the defaults can never touch the real
``~/.claude`` or ``~/.pmux_widget``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from pmux_widget.system.home import PmuxHome

# One line per part the run could not have, with its fix; CI fails on them (never a silent skip).
from .helpers import wait_until
from .skip_summary import pytest_sessionfinish, pytest_terminal_summary  # noqa: F401

_GUARD = Path(os.environ.get("TMPDIR", "/tmp")) / f"pmux-test-guard-{os.getpid()}"
os.environ["CLAUDE_CONFIG_DIR"] = str(_GUARD / "claude")
os.environ["PMUX_WIDGET_HOME"] = str(_GUARD / "pmux")
os.environ["CODEX_HOME"] = str(_GUARD / "codex")  # never the real ~/.codex
os.environ.setdefault("PMUX_WIDGET_POLL_SECONDS", "3600")  # tests poll explicitly

# Every test process runs as on a machine booted a moment ago: time.monotonic() counts from
# the boot, and a rule that compared it with a zero start (the widget's first flush waited
# for the coalescing interval past the boot) passed only on machines up for long enough.
# Shifted, never frozen: it advances as the real clock does, and asyncio's loop.time() (which
# calls time.monotonic) follows it. PMUX_TEST_REAL_MONOTONIC=1 turns it off.
if os.environ.get("PMUX_TEST_REAL_MONOTONIC") != "1":
    _real_monotonic = time.monotonic
    _BOOT = _real_monotonic() - 0.001

    def _since_boot() -> float:
        return _real_monotonic() - _BOOT

    time.monotonic = _since_boot


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Keep each phase's report on the item, so fixtures can tell whether the test failed."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


@dataclass
class Homes:
    """A test's own Claude config dir and pmux-widget home (both set in the environment)."""

    claude: Path
    pmux: PmuxHome

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Homes]:
    claude = tmp_path / "claude"
    claude.mkdir()
    pmux = PmuxHome(tmp_path / "pmux")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("PMUX_WIDGET_HOME", str(pmux.root))
    yield Homes(claude, pmux)


@pytest.fixture
def claude_in_a_pane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, Path]]:
    """A process named ``claude`` (a copy of ``sleep``, as the native CLI is named) as the
    command of a pane of a private tmux server, session ``claude-pane``: (its pid, its
    folder)."""
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    shutil.copy("/bin/sleep", fake)
    work = (tmp_path / "work").resolve()
    work.mkdir()
    socket = tmp_path / "tmux.sock"
    monkeypatch.setenv("PMUX_WIDGET_TMUX_SOCKETS", str(socket))
    base = ["tmux", "-S", str(socket), "-f", "/dev/null"]
    subprocess.run(
        [*base, "new-session", "-d", "-s", "claude-pane", "-c", str(work), f"exec {fake} 300"],
        check=True,
    )
    try:
        out = subprocess.run(
            [*base, "display-message", "-p", "-t", "claude-pane", "#{pane_pid}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        pid = int(out)
        wait_until(lambda: psutil.Process(pid).name() == "claude", what="the exec")
        yield pid, work
    finally:
        subprocess.run([*base, "kill-server"], check=False)
