"""What a hub would show, computed from the files alone: for ``pmux-widget status`` when no
hub runs. Reads the store, the spool, the PID files and transcripts; writes nothing (the
spool stays for the next hub to replay).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pmux_widget.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.claude.pidfiles import is_alive, scan_pid_files
from pmux_widget.claude.transcript import scan_transcript
from pmux_widget.core.model import Session, State, count_states
from pmux_widget.core.signals import HubRestart, Invalid, PidFile, Signal, parse_hook
from pmux_widget.core.tracker import reduce
from pmux_widget.hooks import read_spool
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.projects import project_name

from .hub import _sort_key
from .sources import recovery_signal
from .store import Store

__all__ = ["compute_snapshot"]


def compute_snapshot(home: PmuxHome, claude_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` like ``GET /api/sessions`` would answer."""
    claude = ClaudeHome.resolve(claude_dir)
    fleet: dict[str, Session] = {}

    def apply(signal: Signal) -> None:
        nonlocal fleet
        fleet = reduce(fleet, signal, now_ms()).sessions

    if home.db_path.exists():
        store = Store(home.db_path, readonly=True)
        try:
            apply(HubRestart(at=now_ms(), live=False, sessions=tuple(store.load_sessions())))
        finally:
            store.close()
    for entry in read_spool(home):
        if entry.error:
            continue
        signal = parse_hook(entry.payload_bytes, at=entry.sent, live=False, pane=entry.pane)
        if not isinstance(signal, Invalid):
            apply(signal)
    records = {}
    for _, record in scan_pid_files(claude):
        if not isinstance(record, Invalid):
            records[record.session_id] = (record, is_alive(record))
    for session in [s for s in fleet.values() if s.state is State.UNKNOWN]:
        record, alive = records.get(session.session_id, (None, False))
        ending = None
        path = session.transcript_path or (
            str(transcript_path_for(claude, record.cwd, session.session_id))
            if record is not None and record.cwd
            else None
        )
        if path and Path(path).is_file():
            ending = scan_transcript(path).ending
        apply(recovery_signal(session, record, alive, ending))
    for record, alive in records.values():
        if alive:
            apply(
                PidFile(
                    at=record.event_time or now_ms(),
                    live=False,
                    record=record,
                    project=project_name(record.cwd),
                )
            )
    sessions = sorted(fleet.values(), key=_sort_key)
    return {"sessions": [s.to_json() for s in sessions], "counts": count_states(sessions)}
