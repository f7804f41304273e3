"""Warm attaches (``runtime.warm_attach``) on both pinned CLIs: while a background session
waits on a dialog, a hub holds ``claude attach <job>`` in a private tmux server, one per job
even with two hubs on one ``PMUX_WIDGET_HOME``; an action uses it (a cold attach would fail
these tests), a refused one types nothing into it, and it goes when the session leaves
needs-input (LINGER_S after an action through it) and when its hub stops — no client or
server left.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from pmux_widget.core.model import State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.runtime import background_actions
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.warm_attach import LINGER_S, claim_of
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until
from .test_bg_actions import _attach_left

pytestmark = pytest.mark.all_versions


class Two:
    """One sealed env with our hooks and two hubs on one PMUX_WIDGET_HOME (two kernels)."""

    def __init__(self, bg: BgClaude, home: PmuxHome, hubs: list[Hub]) -> None:
        self.bg, self.home, self.hubs = bg, home, hubs

    def start(self, prompt: str, name: str) -> tuple[str, str]:
        job = self.bg.start(prompt, name)
        # The CLI's own start first (2.1.197 took over 60 s to start a job's worker at load
        # 15-35): what is ours to check is that the hub knows the job once its worker runs.
        wait_until(lambda: self.bg.worker(job), 180, interval=0.2, what=f"the worker of job {job}")
        sid = wait_until(
            lambda: next((s for s in self.hubs[0].fleet if s.startswith(job)), None),
            60,
            what=lambda: f"the hub knows job {job} (worker: {self.bg.worker(job)})",
        )
        return job, str(sid)

    def waiting(self, job: str, sid: str) -> None:
        for hub in self.hubs:
            wait_until(
                lambda hub=hub: (
                    hub.fleet.get(sid) is not None and hub.fleet[sid].state is State.NEEDS_INPUT
                ),
                60,
                what=f"{job} needs-input in hub {hub.hub_id}",
            )
        self.bg.wait_status(job, "waiting", 30)

    def warm(self, job: str) -> dict[str, Any]:
        """The claim, once its attach draws the dialog."""

        def drawn() -> dict[str, Any] | None:
            claim = claim_of(self.home.root, job)
            return claim if claim and psutil.pid_exists(claim["client_pid"]) else None

        return wait_until(drawn, 30, what=f"a warm attach of {job}")

    def status(self, job: str) -> str | None:
        found = self.bg.worker(job)
        return str(found[1].get("status")) if found else None


def _attach_clients(bg: BgClaude) -> list[str]:
    return [line for line in _attach_left(bg) if "pmux-attach-" not in line]


@pytest.fixture
def two(
    make_bg: Callable[..., BgClaude],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Two]:
    home = PmuxHome(tmp_path_factory.mktemp("pmux-warm"))
    bg = make_bg(pmux_home=home)
    hubs = [make_hub(home=home.root, claude_home=bg.env.config_dir).start() for _ in range(2)]

    def cold(*_: object, **__: object) -> None:
        raise AssertionError("a cold `claude attach` was started: the warm one was not used")

    # an action or peek must go through the warm attach: a cold one fails the test
    monkeypatch.setattr(background_actions, "attached", cold)
    try:
        yield Two(bg, home, hubs)
    finally:
        for hub in hubs:
            hub.stop()
    assert [hub.errors for hub in hubs] == [0, 0]
    wait_until(lambda: not _attach_left(bg), 10, what=lambda: f"left: {_attach_left(bg)}")


def test_an_action_uses_the_warm_attach_shared_by_two_hubs(two: Two) -> None:
    job, sid = two.start("run the command", "warm")
    two.waiting(job, sid)
    claim = two.warm(job)
    assert claim["holder_hub"] in {hub.hub_id for hub in two.hubs}
    assert Path(claim["socket"]).parent.stat().st_mode & 0o077 == 0
    assert (two.home.root / "attach").stat().st_mode & 0o777 == 0o700
    # one attach client for the job machine-wide, though two hubs want one
    assert len(_attach_clients(two.bg)) == 1, _attach_left(two.bg)

    # approve from the hub that does not hold it: the held attach answers, no cold one starts
    other = next(hub for hub in two.hubs if hub.hub_id != claim["holder_hub"])
    act(other, sid, "approve", record=other.record_action)
    wait_until(lambda: list(two.bg.env.cwd.glob("sim-*.txt")), 30, what="the approved marker")

    # a follow-up prompt goes through it too while it lingers after the approval
    claim_used = claim_of(two.home.root, job)
    assert claim_used is not None and claim_used["client_pid"] == claim["client_pid"]
    assert "used_at" in claim_used
    wait_until(lambda: two.status(job) == "idle", 30, what="the worker idle")
    wait_until(lambda: other.fleet[sid].state in (State.IDLE, State.REVIEW), 30, what="idle row")
    act(other, sid, "send", text="hello there", record=other.record_action)
    wait_until(
        lambda: any(h["payload"].get("prompt") == "hello there" for h in two.bg.env.hooks()),
        30,
        what="UserPromptSubmit of the sent prompt",
    )

    # then it is released (detached, the session runs on)
    wait_until(
        lambda: claim_of(two.home.root, job) is None, LINGER_S + 20, what="the claim released"
    )
    wait_until(lambda: not _attach_left(two.bg), 10, what=lambda: f"{_attach_left(two.bg)}")
    assert not psutil.pid_exists(claim["client_pid"]) or (
        psutil.Process(claim["client_pid"]).status() == psutil.STATUS_ZOMBIE
    )
    assert two.bg.worker(job) is not None


def test_a_refused_action_types_nothing_and_hub_stop_releases(two: Two) -> None:
    job, sid = two.start("run the command", "refused")
    two.waiting(job, sid)
    claim = two.warm(job)
    hooks = len(two.bg.env.hooks())
    with pytest.raises(ActionError, match="dialog changed"):
        act(two.hubs[0], sid, "approve", dialog="000000000000")
    time.sleep(0.5)  # any key typed would have brought a hook or a new status
    assert two.status(job) == "waiting"
    assert len(two.bg.env.hooks()) == hooks
    still = claim_of(two.home.root, job)  # the same attach, held on
    assert still is not None and still["client_pid"] == claim["client_pid"]
    assert psutil.pid_exists(claim["client_pid"])

    # its holder stops: the attach goes with it (the other hub does not take it over while
    # the session waits on; an action from it would attach cold)
    holder = next(hub for hub in two.hubs if hub.hub_id == claim["holder_hub"])
    holder.stop()
    assert claim_of(two.home.root, job) is None
    wait_until(lambda: not _attach_left(two.bg), 10, what=lambda: f"{_attach_left(two.bg)}")
    assert two.status(job) == "waiting"
