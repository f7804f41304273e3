"""The Jupyter server's kernels and the notebooks they run, published for pmux-widget's hubs
(``system.programs``): an Agent SDK run started from a notebook cell has that notebook's
kernel as its CLI's parent, and only this server knows which notebook that kernel runs.

Every 2 s on the server's loop: ``session_manager.list_sessions()`` (async, a small SQLite
read); the file is written off the loop, and only when the map changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Mapping
from typing import Any

from tornado.ioloop import IOLoop, PeriodicCallback

from pmux_widget.system.home import PmuxHome
from pmux_widget.system.programs import remove_kernels_file, write_kernels_file

__all__ = ["POLL_MS", "KernelNotebooks"]

POLL_MS = 2000


class KernelNotebooks:
    """Publishes ``kernels/<server pid>.json`` while the server runs."""

    def __init__(self, settings: Mapping[str, Any], url: str, log: logging.Logger) -> None:
        self.settings = settings
        self.url = url
        self.log = log
        self.home = PmuxHome.resolve()
        self._last: dict[str, str] | None = None
        self._periodic: PeriodicCallback | None = None
        self._busy = False

    def start(self) -> None:
        self._periodic = PeriodicCallback(self._tick, POLL_MS)
        self._periodic.start()
        IOLoop.current().add_callback(self._tick)

    def stop(self) -> None:
        if self._periodic is not None:
            self._periodic.stop()
        remove_kernels_file(self.home, os.getpid())

    async def _tick(self) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            await self._poll()
        except Exception:  # never the server's problem
            self.log.debug("pmux-widget: listing the kernels' notebooks failed", exc_info=True)
        finally:
            self._busy = False

    async def _poll(self) -> None:
        manager = self.settings.get("session_manager")
        if manager is None:
            return
        kernels: dict[str, str] = {}
        for session in await manager.list_sessions():
            kernel = session.get("kernel") or {}
            path = session.get("path")
            if isinstance(kernel, dict) and isinstance(kernel.get("id"), str) and path:
                kernels[kernel["id"]] = str(path)
        if kernels == self._last:
            return
        self._last = kernels
        with contextlib.suppress(OSError):
            await asyncio.get_running_loop().run_in_executor(
                None, write_kernels_file, self.home, os.getpid(), self.url, kernels
            )
