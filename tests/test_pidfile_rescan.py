"""The PID-file watcher's periodic rescan against the watcher's own events: a scan reads the
files on a worker thread (seconds on a loaded machine); a write the watcher applied while it
ran must not be undone by the scan's older read. Seen on 2.1.197 after a kill -9: the
respawned worker's boot record (a fresh session id) was applied after the job's session,
retiring it (tests/real_claude/test_background_sessions.py, the kill -9 test)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.pidfiles import process_start_ticks, read_pid_file
from pmux_widget.core.signals import PidFile, PidRecord, Signal
from pmux_widget.runtime.sources.pidfiles import PidFileWatcher
from pmux_widget.runtime.sources.runner import Runner

JOB = "a934fa37"
JOB_SID = JOB + "-28f7-45f2-87d0-e682d7b40065"
BOOT_SID = "4519e9f7-ae8e-4c7d-9d26-0780806d15f9"


class Applied:
    """The hub side the watcher needs: what it applied, and an empty fleet."""

    def __init__(self) -> None:
        self.signals: list[Signal] = []
        self.fleet: dict[str, Any] = {}

    def apply(self, signal: Signal) -> list[Any]:
        self.signals.append(signal)
        return []


def _write(path: Path, session_id: str, updated_at: int, **more: object) -> None:
    pid = os.getpid()  # a live process: the scan checks it runs
    record = {
        "pid": pid,
        "sessionId": session_id,
        "cwd": "/tmp",
        "startedAt": 1,
        "procStart": process_start_ticks(pid),
        "kind": "bg",
        "jobId": JOB,
        "name": "busy-c",
        "updatedAt": updated_at,
        **more,
    }
    path.write_text(json.dumps(record))


class WatcherWritesDuringTheScan(Runner):
    """The scan's thread reads the files, then (before the scan is applied) the worker
    rewrites its file and the watcher applies that, as its event would."""

    def __init__(self, watcher_side: list[PidFileWatcher], path: Path) -> None:
        super().__init__()
        self.watcher_side, self.path = watcher_side, path

    async def probe(self, fn: Any, *args: Any) -> Any:
        result = fn(*args)
        _write(self.path, JOB_SID, 2_000, status="busy", statusUpdatedAt=2_000)
        record = read_pid_file(self.path)
        assert isinstance(record, PidRecord)
        watcher = self.watcher_side[0]
        watcher.remember(str(self.path), record)
        watcher.hub.apply(PidFile(at=record.event_time, live=True, record=record))
        return result


def test_a_scan_read_before_the_watchers_newer_record_does_not_apply(tmp_path: Path) -> None:
    claude = ClaudeHome(tmp_path)
    claude.sessions_dir.mkdir(parents=True)
    path = claude.sessions_dir / f"{os.getpid()}.json"
    _write(path, BOOT_SID, 1_000)  # the respawned worker's boot record
    hub = Applied()
    side: list[PidFileWatcher] = []
    runner = WatcherWritesDuringTheScan(side, path)
    watcher = PidFileWatcher(hub, claude, runner, follower=None)  # type: ignore[arg-type]
    side.append(watcher)
    try:
        asyncio.run(watcher.rescan())
    finally:
        runner.close()
    applied = [s.record.session_id for s in hub.signals if isinstance(s, PidFile)]
    assert applied == [JOB_SID]  # the boot record, read first but older, never applied
    assert watcher.pid_files[str(path)].session_id == JOB_SID
