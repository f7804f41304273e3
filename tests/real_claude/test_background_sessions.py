"""Claude Code's own background sessions against the real CLI (issue 26, items 1, 2 and 5's
data): the agent view open in a tmux pane, two ``claude --bg --permission-mode default``
sessions each waiting on a permission dialog, one busy one, our hooks installed and a hub
watching. Then the file snapshot with no hub and no hooks, kill -9 and the daemon's respawn,
``claude stop`` and ``claude rm``.

One daemon and one scenario per module and CLI version (starting them costs ~15 s): the tests
run in file order on the same sessions, each leaving them as the next expects.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.snapshot import compute_snapshot
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

pytestmark = [pytest.mark.all_versions, pytest.mark.timeout(300)]

#: the hub's poll (liveness safety net, job removal) every second, not every 30 s
POLL_SECONDS = "1"


@dataclass
class Scene:
    bg: BgClaude
    hub: Hub
    home: PmuxHome
    jobs: dict[str, str]  # name → job

    def live(self) -> dict[str, Session]:
        return {sid: s for sid, s in self.hub.fleet.items() if not s.ended}

    def row(self, name: str) -> Session | None:
        job = self.jobs[name]
        return next(
            (s for s in self.hub.fleet.values() if s.background and s.background.job == job),
            None,
        )


@pytest.fixture(scope="module")
def scene(
    make_bg: Callable[..., BgClaude], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scene]:
    old = os.environ.get("PMUX_WIDGET_POLL_SECONDS")
    os.environ["PMUX_WIDGET_POLL_SECONDS"] = POLL_SECONDS
    home = PmuxHome(tmp_path_factory.mktemp("pmux"))
    bg = make_bg(home)
    hub = make_hub(home=home.root, claude_home=bg.env.config_dir).start()
    try:
        bg.view()
        bg.wait_ready()
        pane = bg.pane_env()  # typed in the view's pane: the daemon inherits TMUX_PANE
        jobs = {
            "late-a": bg.start("please ask later", "late-a", **pane),
            "late-b": bg.start("please ask later", "late-b", **pane),
            "busy-c": bg.start("please keep busy", "busy-c", **pane),
        }
        for name in ("late-a", "late-b"):
            bg.wait_status(jobs[name], "waiting", timeout=90)
        bg.wait_status(jobs["busy-c"], "busy", timeout=60)
        yield Scene(bg, hub, home, jobs)
    finally:
        hub.stop()
        if old is None:
            os.environ.pop("PMUX_WIDGET_POLL_SECONDS", None)
        else:
            os.environ["PMUX_WIDGET_POLL_SECONDS"] = old
    assert hub.errors == 0, "hub errors (see the log)"


def _states(scene: Scene) -> dict[str, tuple[State, bool]] | None:
    rows = {name: scene.row(name) for name in scene.jobs}
    if any(r is None for r in rows.values()):
        return None
    return {name: (r.state, r.running) for name, r in rows.items() if r is not None}


def test_two_on_a_dialog_and_one_busy_show_as_such_and_nothing_else(scene: Scene) -> None:
    want = {
        "late-a": (State.NEEDS_INPUT, True),
        "late-b": (State.NEEDS_INPUT, True),
        "busy-c": (State.BUSY, True),
    }
    wait_until(lambda: _states(scene) == want, timeout=30, what=f"rows {want}")
    agents = {a["sessionId"]: a for a in scene.bg.agents()}
    live = scene.live()
    # no spare, no agent view: every row is a session `claude agents --json` lists
    extra = {sid: (s.source, s.pid, s.state, s.background) for sid, s in live.items()}
    assert set(live) == set(agents), (extra, scene.bg.env.pid_files())
    blocked = sum(1 for a in agents.values() if a["state"] == "blocked")
    working = sum(1 for a in agents.values() if a["state"] == "working")
    counted = [s.state for s in live.values()]
    assert (counted.count(State.NEEDS_INPUT), counted.count(State.BUSY)) == (blocked, working)
    assert (blocked, working) == (2, 1)
    view_pid = scene.bg.view_pid()
    for sid, session in live.items():
        agent = agents[sid]
        assert session.pid == agent["pid"] != view_pid  # the worker's, not the view's
        assert session.background is not None
        assert (session.background.job, session.background.name) == (agent["id"], agent["name"])
        assert session.tmux is None and session.terminal is None
        assert session.to_json()["background"] == {"job": agent["id"], "name": agent["name"]}


def test_the_file_snapshot_with_no_hub_and_no_hooks_shows_them_too(
    scene: Scene, tmp_path: Path
) -> None:
    """A fresh home: no store, no spool (as if no hooks were installed): PID files and
    transcripts alone."""
    snap = compute_snapshot(PmuxHome(tmp_path / "nohooks"), scene.bg.env.config_dir)
    agents = {a["sessionId"]: a for a in scene.bg.agents()}
    rows = {row["session_id"]: row for row in snap["sessions"]}
    assert set(rows) == set(agents)
    by_name = {row["background"]["name"]: row for row in rows.values()}
    states = {name: by_name[name]["state"] for name in scene.jobs}
    assert states == {"late-a": "needs-input", "late-b": "needs-input", "busy-c": "busy"}
    assert (snap["counts"]["needs-input"], snap["counts"]["busy"]) == (2, 1)
    assert all(row["tmux"] is None for row in rows.values())


def _dump(scene: Scene, agents: list[dict[str, Any]]) -> str:
    """What a failure needs: the rows, the agents, the PID files, every hook's session."""
    rows = {
        sid: (s.pid, s.state, s.running, s.ended, s.background, s.transcript_path)
        for sid, s in scene.hub.fleet.items()
    }
    hooks = [
        (
            h["payload"].get("hook_event_name"),
            h["payload"].get("source"),
            h["payload"].get("session_id"),
            h.get("ppid"),
            h["payload"].get("transcript_path"),
        )
        for h in scene.bg.env.hooks()
        if h["payload"]
    ]
    return f"rows={rows}\nagents={agents}\npids={scene.bg.env.pid_files()}\nhooks={hooks}"


def _worker(scene: Scene, name: str) -> tuple[int, dict[str, Any]] | None:
    return scene.bg.worker(scene.jobs[name])


def test_kill_9_is_not_running_and_the_respawn_is_followed(scene: Scene) -> None:
    found = _worker(scene, "busy-c")
    assert found is not None
    old_pid = found[0]
    os.kill(old_pid, signal.SIGKILL)
    wait_until(
        lambda: (r := scene.row("busy-c")) is not None and not r.running and not r.ended,
        timeout=15,
        what="busy-c not running (and still a row)",
    )
    # the daemon respawns it (~10 s) as `claude --resume`: same session, a new pid
    new = wait_until(
        lambda: (w := _worker(scene, "busy-c")) is not None and w[0] != old_pid and w,
        timeout=60,
        what="the respawned worker",
    )
    wait_until(
        lambda: (r := scene.row("busy-c")) is not None and r.running and r.pid == new[0],
        timeout=20,
        what="the row follows the new pid",
    )

    def consistent() -> bool:
        """The row says what the respawned worker's PID file says (busy, or idle once the
        resumed turn is over: observed both ways, see docs/claude-code-behaviour.md)."""
        row, worker = scene.row("busy-c"), _worker(scene, "busy-c")
        if row is None or worker is None or row.ended or row.pid != worker[0]:
            return False
        status = worker[1].get("status")
        want = {"busy": {State.BUSY}, "idle": {State.IDLE, State.REVIEW}}.get(status or "")
        return want is not None and row.state in want

    wait_until(consistent, timeout=30, what="busy-c's row agrees with its PID file")
    agents = scene.bg.agents()
    assert scene.live().keys() == {a["sessionId"] for a in agents}, _dump(scene, agents)
    assert not psutil.pid_exists(old_pid) or psutil.Process(old_pid).status() == "zombie"


def test_claude_stop_is_not_running_and_claude_rm_ends_it(scene: Scene) -> None:
    job = scene.jobs["late-a"]
    assert scene.bg.stop(job).returncode == 0
    wait_until(
        lambda: (r := scene.row("late-a")) is not None and not r.running and not r.ended,
        timeout=15,
        what="late-a stopped: not running, still a row",
    )
    row = scene.row("late-a")
    assert row is not None and row.state is State.IDLE
    assert scene.bg.agent(job)["state"] == "stopped"  # type: ignore[index]
    late_b = scene.row("late-b")
    assert late_b is not None and late_b.state is State.NEEDS_INPUT  # the others untouched
    assert scene.bg.rm(job).returncode == 0
    wait_until(
        lambda: (r := scene.row("late-a")) is not None and r.ended,
        timeout=15,
        what="late-a ended once removed",
    )
    assert scene.bg.agent(job) is None
