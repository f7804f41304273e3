"""A real hub applies every hook once, however it comes: POSTed, spooled while the hub ran (a
POST that took over a second), or left by a script killed mid-POST (Codex's ``exec``
SIGKILLs its async hooks when it exits) and adopted at the hub's sweep — and a hook that came
two ways (the POST reached the hub, then the script was killed) counts once."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator

import pytest

from pmux_widget.core.model import State
from pmux_widget.core.signals import Signal
from pmux_widget.hooks import spool
from pmux_widget.hooks.spool import write_spool_entry
from pmux_widget.runtime import hub as hub_module
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub

from .conftest import Homes
from .helpers import post_hook, wait_until

SID = "7a0c3e51-1b2d-4c5e-8f90-0000000000a1"


@pytest.fixture
def hub(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    monkeypatch.setattr(hub_module, "SWEEP_SECONDS", 0.2)
    monkeypatch.setattr(spool, "ORPHAN_AGE_S", 0.0)
    started = make_hub().start()
    yield started
    started.stop()
    assert started.errors == 0


@pytest.fixture
def applied(hub: Hub) -> list[str]:
    """The hook events the hub applied for ``SID``, in order."""
    seen: list[str] = []
    apply = hub.apply

    def counting(signal: Signal, *args: object, **kwargs: object) -> object:
        if getattr(signal, "session_id", None) == SID and hasattr(signal, "event_name"):
            seen.append(signal.event_name)  # type: ignore[attr-defined]
        return apply(signal, *args, **kwargs)  # type: ignore[arg-type]

    hub.apply = counting  # type: ignore[method-assign]
    return seen


def _payload(event: str) -> bytes:
    return json.dumps({"session_id": SID, "hook_event_name": event, "cwd": "/tmp"}).encode()


def _killed_script(homes: Homes, pid: int, sent: int, event: str) -> None:
    """What the script leaves when SIGKILLed mid-POST: the payload and its envelope."""
    homes.pmux.spool_dir.mkdir(parents=True, exist_ok=True)
    (homes.pmux.spool_dir / f".in-{pid}").write_bytes(_payload(event) + b"\n")
    (homes.pmux.spool_dir / f".in-{pid}.t").write_text(f"{sent} {os.getpid()} p= a=codex\n")


def _ms() -> int:
    return time.time_ns() // 1_000_000


def _spool_empty(homes: Homes) -> bool:
    return not os.listdir(homes.pmux.spool_dir)


def test_a_killed_scripts_hook_reaches_the_running_hub_once(
    homes: Homes, hub: Hub, applied: list[str]
) -> None:
    sent = _ms()
    _killed_script(homes, 4242, sent, "UserPromptSubmit")
    wait_until(lambda: SID in hub.fleet, what="the sweep to adopt and apply the hook")
    assert hub.fleet[SID].state is State.BUSY and hub.fleet[SID].agent == "codex"
    wait_until(lambda: _spool_empty(homes), what="the leftovers removed")
    # the same hook POSTed after all (its script was only stopped, then went on): dropped
    assert post_hook(
        hub.port,
        hub.token,
        _payload("UserPromptSubmit"),
        **{"X-Pmux-Hook": "4242", "X-Pmux-Sent": str(sent), "X-Pmux-Agent": "codex"},
    )
    assert post_hook(
        hub.port,
        hub.token,
        _payload("Stop"),
        **{"X-Pmux-Hook": "4243", "X-Pmux-Sent": str(sent + 5), "X-Pmux-Agent": "codex"},
    )
    assert hub.fleet[SID].state is State.REVIEW
    assert applied == ["UserPromptSubmit", "Stop"]


def test_a_hook_that_reached_the_hub_and_was_left_too_counts_once(
    homes: Homes, hub: Hub, applied: list[str]
) -> None:
    sent = _ms()
    headers = {"X-Pmux-Hook": "5151", "X-Pmux-Sent": str(sent), "X-Pmux-Agent": "codex"}
    assert post_hook(hub.port, hub.token, _payload("UserPromptSubmit"), **headers)
    _killed_script(homes, 5151, sent, "UserPromptSubmit")  # killed before its `rm` ran
    write_spool_entry(  # and a twin spooled while the POST was still on its way
        homes.pmux, _payload("UserPromptSubmit"), sent=sent, ppid=os.getpid(), hook_pid=5151
    )
    wait_until(lambda: _spool_empty(homes), what="the sweep to take both")
    stop_sent = _ms() + 1
    write_spool_entry(homes.pmux, _payload("Stop"), sent=stop_sent, hook_pid=5152)
    wait_until(lambda: hub.fleet[SID].state is State.REVIEW, what="a spooled Stop replayed")
    assert applied == ["UserPromptSubmit", "Stop"]


def test_a_young_leftover_waits_for_its_script(
    homes: Homes, hub: Hub, applied: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A script still running owns its temp files: not taken before ORPHAN_AGE_S."""
    monkeypatch.setattr(spool, "ORPHAN_AGE_S", 3600.0)
    _killed_script(homes, 6161, _ms(), "UserPromptSubmit")
    other = "7a0c3e51-1b2d-4c5e-8f90-0000000000b2"
    write_spool_entry(  # a sweep that replays this one looked at the leftover too
        homes.pmux,
        json.dumps({"session_id": other, "hook_event_name": "UserPromptSubmit"}).encode(),
        sent=_ms(),
    )
    wait_until(lambda: other in hub.fleet, what="a sweep")
    assert applied == [] and sorted(os.listdir(homes.pmux.spool_dir)) == [
        ".in-6161",
        ".in-6161.t",
    ]
    monkeypatch.setattr(spool, "ORPHAN_AGE_S", 0.0)
    wait_until(lambda: applied == ["UserPromptSubmit"], what="adopted once old enough")


def test_the_boot_replay_adopts_too(homes: Homes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "ORPHAN_AGE_S", 0.0)
    _killed_script(homes, 7171, _ms() - 100, "UserPromptSubmit")
    started = make_hub().start()
    try:
        assert started.fleet[SID].state is State.BUSY  # before the hub serves anything
    finally:
        started.stop()
    assert _spool_empty(homes)
