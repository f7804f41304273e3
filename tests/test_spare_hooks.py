"""A pre-warmed spare worker's hooks never make a row, whichever of its ``SessionStart`` and
its PID file's verdict (``spare: true``, or a ``bg`` file with no job) reaches the hub first
(issue 37 part 4). The hub holds the hooks of a process started as a spare (argv
``--bg-spare``) for a session its PID file does not name as a job's (``core.spare_hooks``);
its next PID file releases a job's hooks and drops the placeholder's. Pure: what the hub
applies is fed to the tracker here, in both orders; ``test_a_spare_process_s_hooks_...``
drives a real hub with a real process named ``claude`` started with ``--bg-spare``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmux_widget.core import signals as s
from pmux_widget.core.model import State
from pmux_widget.core.spare_hooks import Released, SpareHooks
from pmux_widget.runtime.assemble import make_hub

from .helpers import post_hook, wait_until
from .test_tracker import Run
from .test_tracker_background import SID_A, bg_record, hook, live

PID = 100
SPARE_SID = "4728c581-0000-4000-8000-000000000000"


def _hook(event: str, sid: str, at: int, **fields: object) -> s.HookSignal:
    payload = {"session_id": sid, "hook_event_name": event, "cwd": "/work/acme-api", **fields}
    signal = s.parse_hook(payload, at=at, live=True, pid=PID, pane="%0")
    assert not isinstance(signal, s.Invalid)
    return signal


def _spare_record(at: int) -> s.PidRecord:
    return bg_record(SPARE_SID, PID, "idle", at, job=SPARE_SID[:8], spare=True)


class Hub:
    """What the hub does with a process started as a spare (runtime.hub.accept_hook and
    apply), over the pure tracker: ``file`` is that process's PID file as it reads now."""

    def __init__(self) -> None:
        self.run = Run(now=200_000)
        self.spares = SpareHooks()
        self.not_sessions: set[str] = set()
        self.file: s.PidRecord | None = None

    def hook(self, signal: s.HookSignal) -> None:
        if signal.session_id in self.not_sessions and signal.session_id not in self.run.fleet:
            return
        if signal.session_id in self.run.fleet:
            self.run(signal)
        else:
            self.settle(self.spares.on_hook(PID, signal, self.file))

    def settle(self, released: Released) -> None:
        self.not_sessions.update(released.not_sessions)
        for signal in released.apply:
            self.run(signal)

    def pid_file(self, record: s.PidRecord) -> None:
        """The watcher read the process's file (it was written just before)."""
        self.file = record
        self.settle(self.spares.on_record(record))
        self.run(s.PidFile(at=record.event_time, live=True, record=record))

    def write_only(self, record: s.PidRecord) -> None:
        """The file was written; the watcher has not applied it yet."""
        self.file = record


def test_the_spares_session_start_before_its_pid_file_makes_no_row():
    hub = Hub()
    hub.hook(_hook("SessionStart", SPARE_SID, 1_000, source="startup"))
    assert hub.run.fleet == {}
    hub.pid_file(_spare_record(1_010))
    hub.hook(_hook("Notification", SPARE_SID, 61_000, notification_type="idle_prompt"))
    assert hub.run.fleet == {} and hub.run.changes == []


def test_the_spares_pid_file_before_its_session_start_makes_no_row():
    hub = Hub()
    hub.pid_file(_spare_record(1_000))
    hub.hook(_hook("SessionStart", SPARE_SID, 1_010, source="startup"))
    hub.hook(_hook("SessionEnd", SPARE_SID, 9_000, reason="other"))
    assert hub.run.fleet == {} and hub.run.changes == []


def test_a_claimed_spares_job_hooks_before_its_pid_file_names_the_job_are_kept():
    """The job's hooks came before the file named the job: held, then applied in order, so
    the row is the job's with its prompt and dialog (not a row made from the file alone)."""
    hub = Hub()
    hub.hook(_hook("SessionStart", SPARE_SID, 1_000, source="startup"))
    hub.pid_file(_spare_record(1_010))
    hub.hook(_hook("SessionStart", SID_A, 2_000, source="startup"))
    hub.hook(_hook("UserPromptSubmit", SID_A, 2_010, prompt="please ask later"))
    assert hub.run.fleet == {}
    hub.write_only(bg_record(SID_A, PID, "busy", 2_020))
    hub.hook(_hook("PermissionRequest", SID_A, 2_050, tool_name="Bash", tool_input={}))
    assert hub.run.fleet[SID_A].last_prompt == "please ask later"  # released in order
    hub.pid_file(bg_record(SID_A, PID, "waiting", 2_060))
    a = hub.run.fleet[SID_A]
    assert (a.state, a.pid, a.background is not None) == (State.NEEDS_INPUT, PID, True)
    assert a.tracking.hooked
    assert live(hub.run).keys() == {SID_A} and SPARE_SID not in hub.run.fleet


def test_a_spare_claimed_before_its_file_said_spare_drops_the_placeholder():
    hub = Hub()
    hub.hook(_hook("SessionStart", SPARE_SID, 1_000, source="startup"))
    hub.hook(_hook("SessionStart", SID_A, 2_000, source="startup"))
    hub.pid_file(bg_record(SID_A, PID, "busy", 2_020))
    assert set(hub.run.fleet) == {SID_A}
    hub.hook(_hook("Stop", SPARE_SID, 3_000))
    assert set(hub.run.fleet) == {SID_A}


_STEPS = st.permutations(["start", "file", "notify", "end"])


@settings(max_examples=100, deadline=None)
@given(order=_STEPS)
def test_whatever_the_order_a_spares_hooks_and_file_make_no_row(order):
    hub = Hub()
    at = 1_000
    for step in order:
        at += 10
        match step:
            case "start":
                hub.hook(_hook("SessionStart", SPARE_SID, at, source="startup"))
            case "file":
                hub.pid_file(_spare_record(at))
            case "notify":
                hub.hook(_hook("Notification", SPARE_SID, at, notification_type="idle_prompt"))
            case "end":
                hub.hook(_hook("SessionEnd", SPARE_SID, at, reason="other"))
    assert hub.run.fleet == {}


def test_without_the_hubs_hold_the_tracker_still_ends_a_spares_row_silently():
    """The tracker's own fallback (a hub that could not read the argv): the row its hooks
    made ends silently when the file says spare, and its hooks change nothing after."""
    run = Run()
    hook(run, SPARE_SID, "SessionStart", 1_000, PID, source="startup")
    run(s.PidFile(at=1_010, live=True, record=_spare_record(1_010)))
    spare = run.fleet[SPARE_SID]
    assert spare.ended and spare.source == "pid:spare" and spare.tracking.spare


# ------------------------------------------------------------------ a real hub, real files


@pytest.fixture(params=["argv", "roster"])
def spare_process(request, tmp_path):
    """A process named ``claude`` (a copy of this Python) started as a spare: with
    ``--bg-spare`` (both pins' spares), or without it but named by the daemon's roster as
    dispatched as a spare (2.1.197's first worker)."""
    exe = tmp_path / "bin" / "claude"
    exe.parent.mkdir()
    shutil.copy(os.path.realpath(sys.executable), exe)
    flag = ["--bg-spare"] if request.param == "argv" else []
    proc = subprocess.Popen([str(exe), "-c", "import time; time.sleep(300)", *flag])
    if request.param == "roster":
        roster = tmp_path / "claude" / "daemon" / "roster.json"
        roster.parent.mkdir(parents=True)
        worker = {"replPid": proc.pid, "dispatch": {"source": "spare"}}
        roster.write_text(json.dumps({"workers": {SPARE_SID[:8]: worker}}))
    wait_until(lambda: psutil.Process(proc.pid).name() == "claude", what="the process")
    yield proc.pid
    proc.kill()
    proc.wait()


def _write_pid_file(config: Path, pid: int, **fields: object) -> None:
    sessions = config / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    record = {
        "pid": pid,
        "sessionId": SPARE_SID,
        "cwd": str(config.parent),
        "startedAt": int(psutil.Process(pid).create_time() * 1000),
        "kind": "bg",
        "agent": "claude",
        "name": SPARE_SID,
        "status": "idle",
        **fields,
    }
    tmp = sessions / f".{pid}.tmp"
    tmp.write_text(json.dumps(record))
    tmp.replace(sessions / f"{pid}.json")


@pytest.mark.parametrize("file_first", [False, True], ids=["hook first", "file first"])
def test_a_spare_process_s_hooks_make_no_row_in_a_real_hub(
    tmp_path, monkeypatch, spare_process, file_first
):
    config = tmp_path / "claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    (config / "sessions").mkdir(parents=True, exist_ok=True)
    hub = make_hub(home=tmp_path / "pmux", claude_home=config).start()
    seen: list[str] = []
    hub.add_listener(lambda changes, fleet: seen.extend(c.session_id for c in changes))
    try:
        if file_first:
            _write_pid_file(config, spare_process, spare=True)
        body = {"session_id": SPARE_SID, "hook_event_name": "SessionStart", "source": "startup"}
        body["cwd"] = str(tmp_path)
        headers = {"X-Pmux-Ppid": str(spare_process)}
        assert post_hook(hub.port, hub.token, body, **headers) == 204
        if not file_first:
            _write_pid_file(config, spare_process, spare=True)
        # the watcher applied the file (its record is the one it holds)
        wait_until(
            lambda: hub.call(lambda: any(r.pid == spare_process for r in hub_pid_records(hub))),
            timeout=10,
            what="the PID file read by the hub",
        )
        body = {"session_id": SPARE_SID, "hook_event_name": "SessionEnd", "reason": "other"}
        body["cwd"] = str(tmp_path)
        assert post_hook(hub.port, hub.token, body, **headers) == 204
        assert hub.call(lambda: dict(hub.fleet)) == {}
        assert hub.call(lambda: list(seen)) == []
    finally:
        hub.stop()


def hub_pid_records(hub) -> list[s.PidRecord]:
    """The PID files the hub's watcher has read (its sources' own record of them)."""
    records: list[s.PidRecord] = []
    for source in hub._sources:
        watcher = getattr(source, "pid_files", None)
        records.extend(getattr(watcher, "pid_files", {}).values())
    return records
