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
import functools
import os
import socket
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.pidfiles import own_pid_file, spare_session
from pmux_widget.agents.claude.transcript import TailResult, TranscriptFacts, TranscriptTailer
from pmux_widget.agents.codex.rollout import RolloutTailer
from pmux_widget.agents.seam import seam_of
from pmux_widget.core.model import Session, TranscriptEnding
from pmux_widget.core.signals import HookSignal, SessionStart, Signal
from pmux_widget.core.spare_hooks import spare_verdict
from pmux_widget.core.tracker import reduce
from pmux_widget.system import processes
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from .boot import (
    gone_jobs,
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
from .sources.codex_rollouts import pid_of, rollout_signals, shown_threads, to_follow
from .sources.terminals import in_terminal_signals
from .store import Store

__all__ = ["TranscriptReads", "compute_snapshot", "file_fleet"]


@dataclass
class _Followed:
    """One transcript's tailer across snapshots, and what a first read from its start tells
    besides the facts: the facts it started from, every interrupt marker read since."""

    tailer: TranscriptTailer
    start: TranscriptFacts
    interrupts: list[int] = field(default_factory=list)
    rescans: int = 0


class TranscriptReads:
    """The transcript tailers of the snapshots one process takes in a row (``status --watch``
    with no hub): each refresh reads only what was appended since the last (a 1 GB transcript
    is read once, not every second), yet tells what a first read from the same start would,
    which a hub's first read tells too."""

    def __init__(self) -> None:
        self._followed: dict[str, _Followed] = {}

    def read(self, path: str, make: Callable[[], TranscriptTailer], first: bool) -> TailResult:
        """Poll ``path`` (its tailer made by ``make`` the first time). ``first``: its first
        read in this snapshot, answered as a read from the tailer's start; later reads in the
        same snapshot answer what they read, as a hub's follower's do."""
        followed = self._followed.get(path)
        if followed is None:
            tailer = make()
            followed = _Followed(tailer, tailer.facts, rescans=tailer.stats.rescans)
            self._followed[path] = followed
        result = followed.tailer.poll()
        if followed.tailer.stats.rescans != followed.rescans:  # replaced or truncated
            followed.start, followed.interrupts = TranscriptFacts(), []
            followed.rescans = followed.tailer.stats.rescans
        followed.interrupts.extend(result.interrupts)
        if not first:
            return result
        facts = result.facts
        return TailResult(
            facts != followed.start, list(followed.interrupts), facts, result.bytes_read
        )


class _Fleet:
    """The snapshot's fleet and its transcript reads (one thread, no hub)."""

    def __init__(self, claude: ClaudeHome, store: Store | None, reads: TranscriptReads) -> None:
        self.claude = claude
        self.store = store
        self.reads = reads
        self.sessions: dict[str, Session] = {}
        self.read_paths: set[str] = set()
        self.pids: dict[str, int] = {}

    def apply(self, signal: Signal) -> None:
        self.sessions = reduce(self.sessions, signal, now_ms()).sessions

    def accept(self, signal: HookSignal, ppid: int, hook_id: tuple[int, int] | None = None) -> None:
        """A spooled hook, with its Claude process's pid as the hub finds it (the walk up
        from the hook's parent, once per session; anew at a SessionStart)."""
        pid = None if isinstance(signal, SessionStart) else self.pids.get(signal.session_id)
        if pid is None and ppid:
            pid = processes.claude_ancestor(ppid)
            if pid is not None:
                self.pids[signal.session_id] = pid
                known = self.sessions.get(signal.session_id)
                if known is None and spare_session(self.claude.root, pid, signal.session_id):
                    return  # a pre-warmed background worker's placeholder: never a row
        if (
            pid is not None
            and signal.session_id not in self.sessions
            and processes.claude_role(pid) == "spare"
            and spare_verdict(own_pid_file(self.claude.root, pid), signal.session_id) != "session"
        ):
            return  # a spare's: a job's session is its PID file's row (read after the spool)
        self.apply(named_hook(signal, pid))

    def read(
        self, session_id: str, path: str, make: Callable[[], TranscriptTailer]
    ) -> TranscriptEnding | None:
        """Read ``path`` and apply what it tells, as the hub's follower does."""
        result = self.reads.read(path, make, first=path not in self.read_paths)
        self.read_paths.add(path)
        for signal in transcript_signals(session_id, path, result):
            self.apply(signal)
        return result.facts.ending

    async def read_ending(self, session: Session, path: str) -> TranscriptEnding | None:
        """Recovery's read (the hub's follower reads it with a fresh tailer, then applies)."""
        if not Path(path).is_file():
            return None
        return self.read(session.session_id, path, lambda: TranscriptTailer(path))

    def read_transcripts(self, include_ended: bool) -> None:
        """Every session's transcript, resumed from the store's cursor as the hub's first
        read is (an ended session's only when it is shown)."""
        for session in list(self.sessions.values()):
            if session.ended and not include_ended:
                continue
            if not seam_of(session.agent).facts.claude_transcript:
                continue  # a Codex rollout: codex_rollouts() reads it
            path = transcript_path(self.claude, session)
            if path is None or not Path(path).is_file():
                continue
            self.read(session.session_id, path, functools.partial(self._tailer, path))

    def _tailer(self, path: str) -> TranscriptTailer:
        cursor = self._cursor(path)
        return TranscriptTailer.from_cursor(path, cursor) if cursor else TranscriptTailer(path)

    def jobs(self) -> None:
        """End each background session whose job is gone (``claude rm``), as the poller does."""
        for signal in gone_jobs(self.claude, list(self.sessions.values())):
            self.apply(signal)

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

    def codex_rollouts(self) -> None:
        """The Codex rows' rollouts and the threads the live Codex TUIs show, read once (the
        hub's codex_rollouts source: rows without hooks too)."""
        shown = shown_threads(self.sessions.values())
        for path, session_id in to_follow(self.sessions.values(), shown).items():
            tailer = RolloutTailer(path)
            tailer.poll()
            pid = pid_of(self.sessions, shown, path, session_id)
            for signal in rollout_signals(session_id, path, tailer.facts, pid, live=False):
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
    home: PmuxHome,
    claude_dir: str | os.PathLike[str],
    *,
    include_ended: bool = False,
    reads: TranscriptReads | None = None,
) -> dict[str, Session]:
    """The sessions a hub would hold, from the files alone (``include_ended``: the ended
    sessions' transcripts are read too; ``reads``: the tailers of the snapshot before, to
    read only what was appended since)."""
    claude = ClaudeHome.resolve(claude_dir)
    store: Store | None = None
    if home.db_path.exists():
        try:
            store = Store(home.db_path, readonly=True)
        except sqlite3.Error:
            store = None  # corrupt or locked: the next hub sets it aside; the files still tell
    fleet = _Fleet(claude, store, reads if reads is not None else TranscriptReads())
    try:
        if store is not None:
            with contextlib.suppress(sqlite3.Error):  # locked or corrupt: the files still tell
                restore(store.load_sessions(), fleet.apply)
        replay_spool(home, fleet.accept, consume=False)
        scans = scan_pids(claude)
        current = lambda: fleet.sessions  # noqa: E731
        asyncio.run(recover_from_files(claude, scans, current, fleet.apply, fleet.read_ending))
        fleet.read_transcripts(include_ended)
        fleet.codex_rollouts()
        fleet.jobs()
        fleet.locate()
        fleet.in_terminals(home)
    finally:
        if store is not None:
            with contextlib.suppress(sqlite3.Error):
                store.close()
    return fleet.sessions


def compute_snapshot(
    home: PmuxHome,
    claude_dir: str | os.PathLike[str],
    *,
    include_ended: bool = False,
    as_sessions: bool = False,
    reads: TranscriptReads | None = None,
) -> dict[str, Any]:
    """``{"sessions": [...], "counts": {...}}`` like ``GET /api/sessions`` would answer
    (``include_ended``: like ``GET /api/sessions?ended=1``). ``as_sessions``: the sessions as
    :class:`Session` values, in the same order, with the bookkeeping the JSON leaves out (the
    table words them as the widget does: which answer is the latest turn's). ``reads``: see
    :func:`file_fleet`."""
    sessions = file_fleet(home, claude_dir, include_ended=include_ended, reads=reads)
    host = socket.gethostname()
    answer = fleet_json(sessions.values(), include_ended=include_ended, host=host)
    if as_sessions:
        answer["sessions"] = [
            sessions[row["session_id"]].replace(host=row["host"]) for row in answer["sessions"]
        ]
    return answer
