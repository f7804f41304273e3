"""Sending, off the hub thread: one queue and one thread per destination (a channel or a
browser), each send with a timeout and a bounded number of tries; what failed is kept in
``$PMUX_WIDGET_HOME/notify-health.json`` (0600; masked names only) for the panel and doctor.

A queue per destination because Apprise throttles some services per object (ntfy and
Pushover: one send per 5.5 s, blocking) and a slow or dead service must not hold up the
others. Nothing here ever waits on the hub's thread: a hook is never delayed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmux_widget.system.clock import now_ms
from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

__all__ = ["Delivery", "Gone", "MaybeSent", "Outbox", "failing", "health_path", "read_health"]

log = logging.getLogger(__name__)

#: tries per message, and the pause before each retry (seconds)
TRIES = 3
BACKOFF = (0.5, 2.0)


class Gone(Exception):
    """The destination no longer exists (a push subscription answered 404/410): no retry."""


class MaybeSent(Exception):
    """The request went but no answer came in time (a read timeout): the service may well have
    the message, so it is not tried again (a second try could deliver it twice)."""


@dataclass(frozen=True)
class Delivery:
    dest: str
    #: the masked name shown in the panel and doctor
    label: str
    send: Callable[[], None]
    #: called once when ``send`` raised Gone
    on_gone: Callable[[], None] | None = None
    #: called after the send succeeded (tests and the bench observe deliveries)
    on_sent: Callable[[], None] | None = None


def health_path(home: PmuxHome) -> Path:
    return home.root / "notify-health.json"


def read_health(home: PmuxHome) -> dict[str, dict[str, Any]]:
    """Per destination: ``label``, ``last_ok_at``, ``last_error_at``, ``last_error``,
    ``failures`` (consecutive)."""
    try:
        data = json.loads(health_path(home).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def failing(home: PmuxHome) -> list[dict[str, Any]]:
    """The destinations whose last send failed (every try)."""
    return [
        {"dest": dest, **entry}
        for dest, entry in read_health(home).items()
        if isinstance(entry, dict) and entry.get("failures", 0) > 0
    ]


class Outbox:
    """The senders. ``submit`` never blocks; ``stop`` lets queued sends finish (briefly)."""

    def __init__(
        self,
        home: PmuxHome,
        *,
        tries: int = TRIES,
        backoff: tuple[float, ...] = BACKOFF,
    ) -> None:
        self.home = home
        self.tries = max(1, tries)
        self.backoff = backoff
        self._queues: dict[str, queue.SimpleQueue[Delivery | None]] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._pending = 0
        self._idle = threading.Condition()

    def submit(self, delivery: Delivery) -> None:
        with self._lock:
            if self._stopping.is_set():
                return
            q = self._queues.get(delivery.dest)
            if q is None:
                q = self._queues[delivery.dest] = queue.SimpleQueue()
                thread = threading.Thread(
                    target=self._run, args=(q,), name=f"pmux-notify-{delivery.dest}", daemon=True
                )
                self._threads[delivery.dest] = thread
                thread.start()
        with self._idle:
            self._pending += 1
        q.put(delivery)

    def wait_idle(self, timeout: float) -> bool:
        """Until every submitted send finished (tests, ``notify test``)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

    def stop(self, timeout: float = 2.0) -> None:
        with self._lock:
            self._stopping.set()
            queues = list(self._queues.values())
            threads = list(self._threads.values())
        for q in queues:
            q.put(None)
        for thread in threads:
            thread.join(timeout / max(1, len(threads)))

    def _run(self, q: queue.SimpleQueue[Delivery | None]) -> None:
        while True:
            item = q.get()
            if item is None:
                return
            try:
                self._deliver(item)
            finally:
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def _deliver(self, d: Delivery) -> None:
        error = ""
        for attempt in range(self.tries):
            if attempt:
                pause = self.backoff[min(attempt - 1, len(self.backoff) - 1)]
                if self._stopping.wait(pause):
                    break
            try:
                d.send()
            except Gone as exc:
                log.info("notification destination %s is gone (%s): removed", d.label, exc)
                if d.on_gone is not None:
                    with contextlib.suppress(Exception):
                        d.on_gone()
                self._record(d, f"gone: {exc}", ok=False, gone=True)
                return
            except MaybeSent as exc:
                log.warning("notification to %s: %s (not sent again)", d.label, exc)
                self._record(d, f"{exc} (may have been delivered; not sent again)", ok=False)
                return
            except Exception as exc:
                error = str(exc) or type(exc).__name__
                continue
            self._record(d, "", ok=True)
            if d.on_sent is not None:
                with contextlib.suppress(Exception):
                    d.on_sent()
            return
        log.warning("notification to %s failed after %d tries: %s", d.label, self.tries, error)
        self._record(d, error, ok=False)

    def _record(self, d: Delivery, error: str, *, ok: bool, gone: bool = False) -> None:
        """Keep the destination's health; only a change of it is written (a healthy channel
        costs no write per message)."""
        path = health_path(self.home)
        try:
            fd = os.open(self.home.root / ".notify-health.lock", os.O_CREAT | os.O_RDWR, 0o600)
        except OSError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = read_health(self.home)
            entry = data.get(d.dest) if isinstance(data.get(d.dest), dict) else None
            if gone:
                data.pop(d.dest, None)
            elif ok:
                if entry is not None and not entry.get("failures"):
                    return
                data[d.dest] = {"label": d.label, "last_ok_at": now_ms(), "failures": 0,
                                "last_error": "", "last_error_at": 0}  # fmt: skip
            else:
                entry = dict(entry or {"label": d.label, "last_ok_at": 0})
                entry.update(label=d.label, last_error=error[:300], last_error_at=now_ms(),
                             failures=int(entry.get("failures", 0)) + 1)  # fmt: skip
                data[d.dest] = entry
            atomic_write(path, (json.dumps(data, indent=2) + "\n").encode(), 0o600)
        except OSError:
            log.exception("could not record the notification health")
        finally:
            os.close(fd)
