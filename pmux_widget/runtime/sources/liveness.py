"""Liveness of running sessions' processes: a kill -9 leaves the PID file behind, so each
running Claude process gets a pidfd on the hub loop (the kernel wakes us when it exits: no
polling); where there are none, the pids are checked every :data:`LIVENESS_S`.

At the hub's start (:meth:`ExitWatcher.check_at_start`) every running session is watched or
found gone at once: the sessions restored from the store and the spool's were applied before
this listener existed, and a Claude killed before the hub started left its spooled hooks
(a running session whose process could not be resolved: no pid) and its PID file behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable

from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import ProcessGone
from pmux_widget.system.clock import now_ms

from ..boot import PidScan, process_runs
from ..protocols import HubView
from .runner import Runner

__all__ = ["LIVENESS_S", "ExitWatcher"]

#: How often live sessions' pids are checked where no pidfd watches them.
LIVENESS_S = 2.0
#: After an exit, check and report it again this much later until the tracker agrees (it
#: believes two reports): the kernel told us the process exited, the second look only
#: re-reads /proc, so it can come soon (kill -9 -> running false: budget 2 s p95).
GONE_RECHECK_S = 0.4
#: Reports of one exit before giving up (the tracker ends a session on the second).
GONE_REPORTS = 6


class ExitWatcher:
    """pidfds of the running sessions' processes, and the fallback loop (hub thread)."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.pidfds: dict[int, int] = {}  # pid → pidfd on the hub loop
        self.reporting: set[tuple[str, int]] = set()  # (session id, pid) being reported gone

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        """Listener: watch the process of every running session (its own process: a pid
        reused by another one is left to the loop, which reports it gone)."""
        for change in changes:
            after = change.after
            if after.pid is not None and not after.ended and after.running:
                self.watch_exit(after)

    async def loop(self) -> None:
        """Every few seconds, a pid check of the running sessions no pidfd watches."""
        while not self.runner.stopped:
            await self.runner.sleep(LIVENESS_S)
            for session in list(self.hub.fleet.values()):
                if session.pid is None or session.ended or not session.running:
                    continue
                if self.watch_exit(session):
                    continue  # the kernel tells us when it exits
                if not process_runs(session):
                    self.report(session.session_id, session.pid)

    def watch_exit(self, session: Session) -> bool:
        """Be woken when the session's process exits (a pidfd on the hub loop: no cost while
        it runs). False where pidfds are not available, or when the pid is not (or no longer)
        the session's own process: then the liveness loop checks it."""
        pid = session.pid
        if pid is None:
            return False
        if pid in self.pidfds:
            return True
        if not hasattr(os, "pidfd_open") or not process_runs(session):
            return False
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return False  # already gone, or no pidfd support: the loop will see it
        self.pidfds[pid] = fd
        asyncio.get_running_loop().add_reader(fd, self._on_exit, pid)
        return True

    def _unwatch(self, pid: int) -> None:
        fd = self.pidfds.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def close(self) -> None:
        for pid in list(self.pidfds):
            self._unwatch(pid)

    def check_at_start(self, scans: Iterable[PidScan]) -> None:
        """Once, when the sources start: watch every running session's process, or report
        it gone; a running session with no pid whose PID file's process is dead (and no live
        PID file names it) is reported gone with that file's pid."""
        scans = list(scans)
        live_ids = {scan.record.session_id for scan in scans if scan.alive}
        for session in list(self.hub.fleet.values()):
            if session.ended or not session.running or session.pid is None:
                continue
            if not self.watch_exit(session) and not process_runs(session):
                self.report(session.session_id, session.pid)
        for scan in scans:
            record = scan.record
            known = self.hub.fleet.get(record.session_id)
            if (
                scan.alive
                or record.session_id in live_ids
                or known is None
                or known.pid is not None
                or known.ended
                or not known.running
            ):
                continue
            self.report(record.session_id, record.pid)

    def _on_exit(self, pid: int) -> None:
        self._unwatch(pid)
        for session in list(self.hub.fleet.values()):
            if session.pid == pid and not session.ended and session.running:
                self.report(session.session_id, pid)

    def report(self, session_id: str, pid: int) -> None:
        """Report the session's process gone (:meth:`report_gone`), once at a time."""
        key = (session_id, pid)
        if key not in self.reporting:
            self.reporting.add(key)
            self.runner.spawn(self.report_gone(session_id, pid))

    async def report_gone(self, session_id: str, pid: int) -> None:
        """The session's process exited: report it, then check again and report it again,
        until the tracker agrees (it ends the session on the second report). Stops when the
        session ended, moved to another pid, or its process is found running after all."""
        try:
            await self._report_gone(session_id, pid)
        finally:
            self.reporting.discard((session_id, pid))

    async def _report_gone(self, session_id: str, pid: int) -> None:
        for attempt in range(GONE_REPORTS):
            session = self.hub.fleet.get(session_id)
            if session is None or session.ended or not session.running:
                return
            if session.pid is not None and session.pid != pid:
                return
            if attempt and process_runs(session.replace(pid=pid)):
                return  # (the first report is the kernel's or the scan's own finding)
            self.hub.apply(ProcessGone(at=now_ms(), session_id=session_id, pid=pid))
            await self.runner.sleep(GONE_RECHECK_S)
