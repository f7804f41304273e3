"""``ServerHub``: the hub the Jupyter server runs, on its own thread, and the routes' way to it.

The hub is an ordinary one (``runtime.assemble.make_hub``): its own thread and asyncio loop,
its runtime file in ``$PMUX_WIDGET_HOME/runtime/`` (so hooks fan out to it like to any hub),
the shared store (two hubs that record one change write one row). Nothing here runs on the
server's loop: the hub starts on a thread of its own, and the routes reach it through
:meth:`ServerHub.run` (a small pool of our own: a hung hub never takes the server's executor)
with a timeout, after which they answer 503.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

    from .stream import Stream

__all__ = ["SERVICE_KEY", "ServerHub", "Unavailable"]

T = TypeVar("T")

#: Where the service is kept in the server's settings.
SERVICE_KEY = "pmux_widget_service"
#: How long a route waits for a hub that is still starting.
START_WAIT_SECONDS = 30.0
#: Threads that reach the hub for the routes (actions take up to seconds each).
WORKERS = 4


class Unavailable(Exception):
    """The hub cannot answer (off, starting too long, failed, hung): a 503 with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ServerHub:
    """The server's hub (or its absence) and the threads the routes reach it from."""

    def __init__(
        self, *, enabled: bool, call_timeout: float, log: logging.Logger, page: str = "/lab"
    ) -> None:
        self.enabled = enabled
        #: the page a notification's click opens (``push.page_url``)
        self.page = page
        self.call_timeout = call_timeout
        self.log = log
        self.hub: Hub | None = None
        self.stream: Stream | None = None
        self.error: str | None = None
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._stopping = False
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=WORKERS, thread_name_prefix="pmux-jupyter"
        )

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the hub on a thread of its own (returns at once)."""
        if not self.enabled:
            self.log.info("pmux-widget | the server's hub is off")
            self._ready.set()
            return
        threading.Thread(target=self._start, name="pmux-jupyter-start", daemon=True).start()

    def _start(self) -> None:
        try:
            from pmux_widget.notify.config import env_wants_notifier
            from pmux_widget.runtime.assemble import make_hub

            # always a notifier (a browser may subscribe later), unless PMUX_WIDGET_NOTIFY=0
            hub = make_hub(notify=env_wants_notifier() is not False).start()
            self._link_notifications(hub)
            try:
                from .stream import Stream

                stream = Stream(hub)
            except BaseException:
                hub.stop()
                raise
            with self._lock:
                if self._stopping:  # the server stopped while the hub was starting
                    stream.close()
                    hub.stop()
                    return
                self.hub, self.stream = hub, stream
            self.log.info(
                "pmux-widget | hub %s listens on 127.0.0.1:%d (Claude's dir: %s)",
                hub.hub_id,
                hub.port,
                hub.claude_dir,
            )
        except Exception as exc:
            self.error = f"the pmux-widget hub failed to start: {exc}"
            self.log.exception("pmux-widget | %s", self.error)
        finally:
            self._ready.set()

    def _link_notifications(self, hub: Hub) -> None:
        """What a click on a notification opens: this server's page, on the session's row."""
        from urllib.parse import quote

        from pmux_widget.notify.notifier import find

        notifier = find(hub)
        if notifier is not None:
            page = self.page
            notifier.url_for = lambda sid: f"{page}?pmux-session={quote(sid, safe='')}"

    def stop(self) -> None:
        """Stop the hub (its runtime file goes) and the route threads. Safe to call twice."""
        with self._lock:
            self._stopping = True
            hub, stream = self.hub, self.stream
            self.hub = self.stream = None
        if stream is not None:
            stream.close()
        if hub is not None:
            hub.stop()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ for the routes

    def ready(self) -> tuple[Hub, Stream]:
        """The running hub and its stream (from a worker thread: may wait while it starts)."""
        if not self.enabled:
            raise Unavailable(
                "the Jupyter server runs no pmux-widget hub "
                "(c.PmuxWidget.hub = False or PMUX_WIDGET_SERVER_HUB=0)"
            )
        if not self._ready.wait(START_WAIT_SECONDS):
            raise Unavailable("the pmux-widget hub is still starting")
        hub, stream = self.hub, self.stream
        if hub is None or stream is None or not hub.running:
            raise Unavailable(self.error or "the pmux-widget hub is not running")
        return hub, stream

    def submit(self, fn: Callable[[], T]) -> concurrent.futures.Future[T]:
        """``fn()`` on one of our threads (from any thread; a failure is logged)."""
        future = self._executor.submit(fn)
        future.add_done_callback(self._log_failure)
        return future

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on one of our threads, awaited from the server's loop."""
        return await asyncio.wrap_future(self._executor.submit(fn))

    def _log_failure(self, future: concurrent.futures.Future[Any]) -> None:
        if not future.cancelled() and future.exception() is not None:
            self.log.error("pmux-widget | %s", future.exception())

    async def call(self, fn: Callable[[Hub], T]) -> T:
        """``fn(hub)`` on the hub's thread (for a consistent read), awaited from the server's
        loop; :class:`Unavailable` when the hub is off, not started or does not answer within
        ``call_timeout`` seconds."""

        def on_hub() -> T:
            hub, _ = self.ready()
            try:
                result: T = hub.call(lambda: fn(hub), timeout=self.call_timeout)
            except (TimeoutError, concurrent.futures.TimeoutError):
                raise Unavailable(
                    f"the pmux-widget hub did not answer within {self.call_timeout:g} s"
                ) from None
            except RuntimeError as exc:  # stopped meanwhile
                raise Unavailable(str(exc)) from None
            return result

        return await self.run(on_hub)

    def hang(self, seconds: float) -> None:
        """Tests only (``PMUX_WIDGET_TEST_ROUTES=1``): hold the hub's thread busy."""
        import time

        hub, _ = self.ready()
        hub.loop.call_soon_threadsafe(time.sleep, seconds)

    def status(self) -> dict[str, Any]:
        """For doctor and the logs: on, started, its id and port, or why not."""
        hub = self.hub
        return {
            "enabled": self.enabled,
            "running": bool(hub is not None and hub.running),
            "hub_id": hub.hub_id if hub is not None else None,
            "port": hub.port if hub is not None else None,
            "error": self.error,
        }
