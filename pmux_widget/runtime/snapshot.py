"""What a hub would show, computed from the files alone: for ``pmux-widget status`` when no
hub runs. It runs the hub's boot sequence (:mod:`.boot`) on a fleet of its own, reading the
store, the spool, the PID files and transcripts, and locating each running session's tmux
pane; it writes nothing (the spool stays for the next hub to replay).

Each step is the hub's own code: the spooled hooks named as the hub names them (the pid of
their Claude process too), the transcripts read by the same tailer and turned into the same
signals (:func:`.boot.transcript_signals`: tokens, context, the last answer, the current
tool), the pane found as the hub's locator finds it. Only the order differs where the hub
runs steps side by side (the pane is located once every transcript was read).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sqlite3
from pathlib import Path
from typing import Any

from pmux_widget.claude.paths import ClaudeHome
from pmux_widget.claude.transcript import TranscriptTailer
from pmux_widget.core.model import Session, TranscriptEnding
from pmux_widget.core.signals import HookSignal, SessionStart, Signal
from pmux_widget.core.tracker import reduce
from pmux_widget.system import processes
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from .boot import (
    named_hook,
    own_pane,
    pane_signal,
    recover_from_files,
    replay_spool,
    restore,
    scan_pids,
    transcript_path,
    transcript_signals,
    wants_pane,
)
from .ordering import fleet_json
from .sources.terminals import in_terminal_signals
from .store import Store

__all__ = ["compute_snapshot", "file_fleet"]


class _Fleet:
    """The snapshot's fleet and its transcript tailers (one thread, no hub)."""

    def __init__(self, claude: ClaudeHome, store: Store | None) -> None:
        self.claude = claude
        self.store = store
        self.sessions: dict[str, Session] = {}
        self.tailers: dict[str, TranscriptTailer] = {}
        self.pids: dict[str, int] = {}

    def apply(self, signal: Signal) -> None:
        self.sessions = reduce(self.sessions, signal, now_ms()).sessions

    def accept(self, signal: HookSignal, ppid: int) -> None:
        """A spooled hook, with its Claude process's pid as the hub finds it (the walk up
        from the hook's parent, once per session; anew at a SessionStart)."""
        pid = None if isinstance(signal, SessionStart) else self.pids.get(signal.session_id)
        if pid is None and ppid:
            pid = processes.claude_ancestor(ppid)
            if pid is not None:
                self.pids[signal.session_id] = pid
        self.apply(named_hook(signal, pid))

    def read(self, session_id: str, path: str, tailer: TranscriptTailer) -> TranscriptEnding | None:
        """Read ``path`` with ``tailer`` and apply what it tells, as the hub's follower does."""
        self.tailers[path] = tailer
        result = tailer.poll()
        for signal in transcript_signals(session_id, path, result):
            self.apply(signal)
        return result.facts.ending

    async def read_ending(self, session: Session, path: str) -> TranscriptEnding | None:
        """Recovery's read (the hub's follower reads it with a fresh tailer, then applies)."""
        tailer = self.tailers.get(path) or TranscriptTailer(path)
        return self.read(session.session_id, path, tailer) if Path(path).is_file() else None

    def read_transcripts(self, include_ended: bool) -> None:
        """Every session's transcript, resumed from the store's cursor as the hub's first
        read is (an ended session's only when it is shown)."""
        for session in list(self.sessions.values()):
            if session.ended and not include_ended:
                continue
            path = transcript_path(self.claude, session)
            if path is None or not Path(path).is_file():
                continue
            tailer = self.tailers.get(path)
            if tailer is None:
                cursor = self._cursor(path)
                tailer = TranscriptTailer.from_cursor(path, cursor) if cursor else None
            self.read(session.session_id, path, tailer or TranscriptTailer(path))

    def locate(self) -> None:
        """Each running session's tmux pane, from its own process (the hub's locator)."""
        for session in list(self.sessions.values()):
            if session.pid is None or not wants_pane(session):
                continue
            pane = own_pane(session)
            current = self.sessions.get(session.session_id)
            if pane is not None and current is not None:
                signal = pane_signal(current, session.pid, pane)
                if signal is not None:
                    self.apply(signal)

    def in_terminals(self, home: PmuxHome) -> None:
        """Each running session's JupyterLab terminal (the hubs' terminals source)."""
        pids = [
            (s.session_id, s.pid) for s in self.sessions.values() if s.pid is not None and s.running
        ]
        for signal in in_terminal_signals(pids, home, self.sessions):
            self.apply(signal)

    def _cursor(self, path: str) -> dict[str, Any] | None:
        if self.store is None:
            return None
        try:
            return self.store.load_cursor(path)
        except sqlite3.Error:
            return None


def file_fleet(
    home: PmuxHome, claude_dir: str | os.PathLike[str], *, include_ended: bool = False
) -> dict[str, Session]:
    """The sessions a hub would hold, from the files alone (``include_ended``: the ended
    sessions' transcripts are read too)."""
    claude = ClaudeHome.resolve(claude_dir)
    store: Store | None = None
    if home.db_path.exists():
        try:
            store = Store(home.db_path, readonly=True)
        except sqlite3.Error:
            store = None  # corrupt or locked: the next hub sets it aside; the files still tell
    fleet = _Fleet(claude, store)
    try:
        if store is not None:
            with contextlib.suppress(sqlite3.Error):  # locked or corrupt: the files still tell
                restore(store.load_sessions(), fleet.apply)
        replay_spool(home, fleet.accept, consume=False)
        scans = scan_pids(claude)
        current = lambda: fleet.sessions  # noqa: E731
        asyncio.run(recover_from_files(claude, scans, current, fleet.apply, fleet.read_ending))
        fleet.read_transcripts(include_ended)
        fleet.locate()
        fleet.in_terminals(home)
    finally:
        if store is not None:
            with contextlib.suppress(sqlite3.Error):
                store.close()
    return fleet.sessions


def compute_snapshot(
    home: PmuxHome, claude_dir: str | os.PathLike[str], *, include_ended: bool = False
) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` like ``GET /api/sessions`` would answer
    (``include_ended``: like ``GET /api/sessions?ended=1``)."""
    sessions = file_fleet(home, claude_dir, include_ended=include_ended)
    return fleet_json(sessions.values(), include_ended=include_ended, host=socket.gethostname())
