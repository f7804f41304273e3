"""What the file sources share: the stop event, the two worker threads (a cold read of a
1 GB transcript or a walk of /proc must not stall hooks on the hub loop), background tasks,
and sleeps that wake at once when the hub stops.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["PID_WATCH_OPTIONS", "WATCH_CATCH_UP_S", "WATCH_OPTIONS", "Runner"]

T = TypeVar("T")

#: After (re)starting a watch, scan its files once more this much later: what was written
#: between the scan and the watch being in place raises no event.
WATCH_CATCH_UP_S = 0.1
#: watchfiles wakes every ``step`` ms while idle (taking the GIL): 100 ms keeps two watchers
#: near 0.2 % of a core (measured: 0.7 % at 20 ms) and adds ~100 ms to a file's signal.
WATCH_OPTIONS: dict[str, Any] = {"debounce": 200, "step": 100, "rust_timeout": 5000}
#: The PID-file folder's: since issue 28 its ``busy`` is how a hooked session's answered
#: dialog shows (no PostToolUse), and a CLI's busy after an approval can last 300 ms; the
#: folder holds a few small files, so a faster step costs little.
PID_WATCH_OPTIONS: dict[str, Any] = {"debounce": 60, "step": 30, "rust_timeout": 5000}


class Runner:
    """Created on the hub loop; :meth:`close` after the tasks using it were cancelled."""

    def __init__(self) -> None:
        self.tail_pool = ThreadPoolExecutor(1, thread_name_prefix="pmux-tail")
        self.probe_pool = ThreadPoolExecutor(1, thread_name_prefix="pmux-probe")
        self.stop_event = asyncio.Event()
        self.background: set[asyncio.Future[Any]] = set()

    @property
    def stopped(self) -> bool:
        return self.stop_event.is_set()

    async def tail(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the transcript worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.tail_pool, fn, *args)

    async def probe(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn`` on the process / tmux worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self.probe_pool, fn, *args)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run ``coro`` in the background; :meth:`cancel_background` cancels it at stop."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def sleep(self, seconds: float, event: asyncio.Event | None = None) -> None:
        """Sleep, but wake at once when the hub stops (or ``event`` is set)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for((event or self.stop_event).wait(), seconds)

    async def after_watch_start(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Run ``fn`` once a watch just started is in place (awatch sets it up on its first
        step, right after the caller spawned this)."""
        await self.sleep(WATCH_CATCH_UP_S)
        if not self.stopped:
            with contextlib.suppress(RuntimeError):  # pools shut down by a concurrent stop
                await fn()

    def close(self) -> None:
        self.tail_pool.shutdown(wait=False, cancel_futures=True)
        self.probe_pool.shutdown(wait=False, cancel_futures=True)
