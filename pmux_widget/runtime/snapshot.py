"""What a hub would show, computed from the files alone: for ``pmux-widget status`` when no
hub runs. It runs the hub's boot sequence (:mod:`.boot`) on a fleet of its own, reading the
store, the spool, the PID files and transcripts; it writes nothing (the spool stays for the
next hub to replay).
"""

from __future__ import annotations

import asyncio
import os
import socket
import sqlite3
from pathlib import Path
from typing import Any

from pmux_widget.claude.paths import ClaudeHome
from pmux_widget.claude.transcript import scan_transcript
from pmux_widget.core.model import Session, TranscriptEnding
from pmux_widget.core.signals import HookSignal, Signal
from pmux_widget.core.tracker import reduce
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from .boot import named_hook, recover_from_files, replay_spool, restore, scan_pids
from .ordering import fleet_json
from .store import Store

__all__ = ["compute_snapshot"]


def compute_snapshot(
    home: PmuxHome, claude_dir: str | os.PathLike[str], *, include_ended: bool = False
) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` like ``GET /api/sessions`` would answer
    (``include_ended``: like ``GET /api/sessions?ended=1``)."""
    claude = ClaudeHome.resolve(claude_dir)
    fleet: dict[str, Session] = {}

    def apply(signal: Signal) -> None:
        nonlocal fleet
        fleet = reduce(fleet, signal, now_ms()).sessions

    def accept(signal: HookSignal, ppid: int) -> None:
        apply(named_hook(signal))  # named as the hub names it

    async def read_ending(session: Session, path: str) -> TranscriptEnding | None:
        return scan_transcript(path).ending if Path(path).is_file() else None

    if home.db_path.exists():
        try:
            store = Store(home.db_path, readonly=True)
            try:
                restore(store.load_sessions(), apply)
            finally:
                store.close()
        except sqlite3.Error:
            pass  # corrupt or locked: the next hub sets it aside; the files still tell
    replay_spool(home, accept, consume=False)
    scans = scan_pids(claude)
    asyncio.run(recover_from_files(claude, scans, lambda: fleet, apply, read_ending))
    return fleet_json(fleet.values(), include_ended=include_ended, host=socket.gethostname())
