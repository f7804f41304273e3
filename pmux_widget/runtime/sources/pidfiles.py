"""The PID-file watcher: ``<config>/sessions/<pid>.json`` as watchfiles sees it change. A live
process's file becomes a ``PidFile`` signal; a removed one, once its process is confirmed
gone, a ``ProcessGone``.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import watchfiles

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.pidfiles import is_alive, read_pid_file
from pmux_widget.core.model import State
from pmux_widget.core.signals import Invalid, PidRecord, ProcessGone
from pmux_widget.system.clock import now_ms

from ..boot import live_pid_file, scan_pids
from ..protocols import HubView
from .runner import PID_WATCH_OPTIONS, Runner
from .transcripts import TranscriptFollower

__all__ = ["GONE_RECHECK_S", "HOOKED_IDLE_SETTLE_S", "PID_IDLE_SETTLE_S", "PidFileWatcher"]

log = logging.getLogger(__name__)

#: After a PID file disappears, check the pid again this much later (confirms "gone").
GONE_RECHECK_S = 1.5
#: Wait this long after a hookless PID ``idle`` for the transcript to catch up.
PID_IDLE_SETTLE_S = 0.35
#: Wait this long after a hooked session's PID ``idle`` while it is busy: its Stop hook (or
#: the Esc marker) normally lands within it, and then the idle is old news to the tracker.
HOOKED_IDLE_SETTLE_S = 1.0
#: While ``sessions/`` does not exist yet (the first Claude ever run here creates it), look
#: for it this often.
DIR_RETRY_S = 0.25


class PidFileWatcher:
    """The PID files of one hub's config dir, as last read (hub thread)."""

    def __init__(
        self, hub: HubView, claude: ClaudeHome, runner: Runner, follower: TranscriptFollower
    ) -> None:
        self.hub = hub
        self.claude = claude
        self.runner = runner
        self.follower = follower
        self.pid_files: dict[str, PidRecord] = {}  # PID-file path → last record

    def remember(self, path: str, record: PidRecord) -> None:
        self.pid_files[path] = record

    async def watch(self) -> None:
        directory = self.claude.sessions_dir
        runner = self.runner
        while not runner.stopped:
            if not directory.is_dir():
                await runner.sleep(DIR_RETRY_S)
                continue
            await self.rescan()
            # A PID file written between that scan and the watch being in place raises no
            # event: scan once more when it is.
            runner.spawn(runner.after_watch_start(self.rescan))
            try:
                async for changes in watchfiles.awatch(
                    directory, stop_event=runner.stop_event, recursive=False, **PID_WATCH_OPTIONS
                ):
                    await self._on_changes(changes)
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                log.debug("PID-file watcher restarting: %s", exc)
                await runner.sleep(1.0)

    async def rescan(self) -> None:
        scans = await self.runner.probe(scan_pids, self.claude)
        seen = set()
        for scan in scans:
            seen.add(scan.path)
            known = self.pid_files.get(scan.path)
            if known is not None and _older(scan.record, known):
                # read before a write the watcher applied while this scan ran (the scan
                # runs in a thread, seconds under load): a stale record would undo it
                continue
            self.pid_files[scan.path] = scan.record
            if scan.alive and known != scan.record:
                self.hub.apply(live_pid_file(scan.record))
        for path in set(self.pid_files) - seen:
            await self._removed(path)

    async def _on_changes(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        for change, path in sorted(changes, key=lambda c: c[1]):
            if not Path(path).name.removesuffix(".json").isdigit():
                continue
            if change is watchfiles.Change.deleted:
                await self._removed(path)
                continue
            record = read_pid_file(Path(path))
            if isinstance(record, Invalid):
                continue  # torn write or garbage: the next write event brings the real one
            self.pid_files[path] = record
            # Linux: two small /proc reads, done here; queued behind a /proc walk on the probe
            # thread, a short busy was applied after the Stop that ended it (hooked dialogs).
            quick = record.proc_start is not None and sys.platform.startswith("linux")
            alive = is_alive(record) if quick else await self.runner.probe(is_alive, record)
            if alive:
                self.runner.spawn(self._apply(record, path))

    async def _apply(self, record: PidRecord, file: str | None = None) -> None:
        """Apply a live PID file; a hookless ``idle`` first lets the transcript settle.

        Measured: the PID file turns idle 85-185 ms before the Esc marker (or the /clear and
        /compact records) reach the transcript, and the PID-only rule needs them to tell a
        finished turn (review) from an interrupted one (idle). Leaving a dialog too: its busy
        moment can be too short to see, and only the transcript tells an approval that ran to
        its end from a dismissal. A newer PID file applied in the meantime wins: the tracker
        orders by ``statusUpdatedAt``; and a record of ``path`` that a newer one replaced
        while this one settled is dropped (the idle before a /clear, read by the fast watch,
        came after the new session's record and retired it).
        """
        session = self.hub.fleet.get(record.session_id)
        settle = 0.0
        if record.status == "idle" and session is not None:
            if not session.hooked and session.state in (
                State.BUSY,
                State.UNKNOWN,
                State.NEEDS_INPUT,
            ):
                settle = PID_IDLE_SETTLE_S
            elif session.hooked and session.state in (State.BUSY, State.NEEDS_INPUT):
                # a dialog left for idle: the Stop of an approval whose busy went unseen
                # may be on its way (no PostToolUse since issue 28)
                settle = HOOKED_IDLE_SETTLE_S
        if settle and session is not None:
            await self.runner.sleep(settle)
            path = self.follower.path_of(session, record)
            if path is not None:
                self.follower.path_owner.setdefault(path, record.session_id)
                await self.follower.tail([path])
            if file is not None and self.pid_files.get(file) != record:
                return  # replaced while it settled: the newer record is applied instead
        self.hub.apply(live_pid_file(record))

    async def _removed(self, path: str) -> None:
        record = self.pid_files.pop(path, None)
        if record is None:
            return
        for _ in range(2):  # confirmed twice (the tracker counts the strikes)
            if await self.runner.probe(is_alive, record):  # its own process (procStart)
                return
            self.hub.apply(ProcessGone(at=now_ms(), session_id=record.session_id, pid=record.pid))
            await self.runner.sleep(GONE_RECHECK_S)


def _older(record: PidRecord, known: PidRecord) -> bool:
    """``record`` was written before ``known``, by the same process."""
    return (
        record.pid == known.pid
        and record.updated_at is not None
        and known.updated_at is not None
        and record.updated_at < known.updated_at
    )
