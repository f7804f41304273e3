"""Liveness of running sessions' processes: a kill -9 leaves the PID file behind, so each
running Claude process gets a pidfd on the hub loop (the kernel wakes us when it exits: no
polling); where there are none, the pids are checked every :data:`LIVENESS_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import ProcessGone
from pmux_widget.system.clock import now_ms

from ..boot import process_runs
from ..protocols import HubView
from .runner import Runner

__all__ = ["LIVENESS_S", "ExitWatcher"]

#: How often live sessions' pids are checked where no pidfd watches them.
LIVENESS_S = 2.0
#: After an exit, report it again this much later until the tracker agrees.
GONE_RECHECK_S = 1.5


class ExitWatcher:
    """pidfds of the running sessions' processes, and the fallback loop (hub thread)."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.pidfds: dict[int, int] = {}  # pid → pidfd on the hub loop

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
                    self.hub.apply(
                        ProcessGone(at=now_ms(), session_id=session.session_id, pid=session.pid)
                    )

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

    def _on_exit(self, pid: int) -> None:
        self._unwatch(pid)
        self.runner.spawn(self._report_exit(pid))

    async def _report_exit(self, pid: int) -> None:
        """The process exited: report it until the tracker agrees (two checks, and not
        within the session's boot window)."""
        for _ in range(12):
            pending = [
                s for s in self.hub.fleet.values() if s.pid == pid and not s.ended and s.running
            ]
            if not pending:
                return
            for session in pending:
                self.hub.apply(ProcessGone(at=now_ms(), session_id=session.session_id, pid=pid))
            await self.runner.sleep(GONE_RECHECK_S)
