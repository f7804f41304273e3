"""The hub's signal sources besides HTTP, read from files and processes: PID files
(:mod:`.pidfiles`), transcripts (:mod:`.transcripts`), process exits (:mod:`.liveness`),
JupyterLab terminals (:mod:`.terminals`), attached tmux clients (:mod:`.seen`), Codex's
TUIs and rollouts (:mod:`.codex_tuis`, :mod:`.codex_rollouts`) and the poller
(:mod:`.poller`). Each turns a part
of the world into signals for the hub; none decides a state. :class:`FileSources` starts them
together after the boot sequence's file steps
(:func:`pmux_widget.runtime.boot.recover_from_files`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.tailer import TranscriptTailer
from pmux_widget.system.home import PmuxHome

from ..boot import recover_from_files, scan_pids
from ..protocols import HubView
from .codex_rollouts import CodexRollouts
from .codex_tuis import CodexTuis
from .liveness import ExitWatcher
from .pidfiles import PidFileWatcher
from .poller import Locator, next_poll_s, poll_interval, poll_once
from .runner import Runner
from .seen import SeenWatcher
from .terminals import TerminalFinder
from .transcripts import TranscriptFollower, followed

__all__ = ["FileSources", "followed", "poll_interval"]

log = logging.getLogger(__name__)


class FileSources:
    """The file and process sources of one hub (a :class:`~..protocols.SourceFactory`):
    :meth:`start` recovers and starts watching, :meth:`stop` cancels everything."""

    def __init__(self, hub: HubView) -> None:
        self.hub = hub
        self.claude = ClaudeHome.resolve(hub.claude_dir)
        self.runner = Runner()
        self.follower = TranscriptFollower(hub, self.claude, self.runner)
        self.pid_files = PidFileWatcher(hub, self.claude, self.runner, self.follower)
        self.exits = ExitWatcher(hub, self.runner)
        self.locator = Locator(hub, self.runner)
        self.codex_tuis = CodexTuis(hub, self.runner)
        self.codex_rollouts = CodexRollouts(hub, self.runner)
        home = getattr(hub, "home", None)
        self.terminals = TerminalFinder(
            hub, self.runner, home if isinstance(home, PmuxHome) else PmuxHome.resolve()
        )
        self.seen = SeenWatcher(hub, self.runner)
        self.tasks: list[asyncio.Task[Any]] = []
        self._unlisten = [
            hub.add_listener(self.seen.on_changes),
            hub.add_listener(self.exits.on_changes),
            hub.add_listener(self.locator.on_changes),
            hub.add_listener(self.codex_tuis.on_changes),
            hub.add_listener(self.terminals.on_changes),
            hub.add_listener(self.follower.on_changes),
        ]

    # what tests and the harness look at
    @property
    def tailers(self) -> dict[str, TranscriptTailer]:
        return self.follower.tailers

    @property
    def watched_roots(self) -> list[Path]:
        return self.follower.watched_roots

    async def start(self) -> None:
        scans = await self.runner.probe(scan_pids, self.claude)
        for scan in scans:
            self.pid_files.remember(scan.path, scan.record)
        await recover_from_files(
            self.claude, scans, lambda: self.hub.fleet, self.hub.apply, self.follower.read_ending
        )
        self.exits.check_at_start(scans)
        for session in list(self.hub.fleet.values()):
            self.follower.track(session)
        await self.follower.tail_all(first_read=True)
        self.tasks = [
            asyncio.ensure_future(self.pid_files.watch()),
            asyncio.ensure_future(self.follower.watch()),
            asyncio.ensure_future(self._poll_loop()),
            asyncio.ensure_future(self.exits.loop()),
            asyncio.ensure_future(self.terminals.watch()),
            asyncio.ensure_future(self.seen.watch()),
            asyncio.ensure_future(self.codex_rollouts.watch()),
        ]

    async def stop(self) -> None:
        for unlisten in self._unlisten:
            unlisten()
        self.runner.stop_event.set()
        self.seen.wake.set()
        self.follower.wake()
        tasks = [*self.tasks, *self.runner.background]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.follower.save_cursors()
        self.exits.close()
        self.runner.close()

    async def _poll_loop(self) -> None:
        while True:
            await self.runner.sleep(next_poll_s(self.hub.fleet))
            if self.runner.stopped:  # (sleep wakes at once when the hub stops)
                return
            try:
                await self.poll_once()  # an attribute lookup: the benchmarks time it
            except Exception:
                log.exception("poll failed")

    async def poll_once(self) -> None:
        """Re-read the PID files, discover panes, processes and ports, run the safety net,
        then read the followed transcripts."""
        await self.pid_files.rescan()
        await poll_once(self.hub, self.runner, self.claude)
        await self.follower.tail_all()
