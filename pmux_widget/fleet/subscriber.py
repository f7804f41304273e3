"""The fleet subscriber: every host's sessions, read from the shared bucket and kept current.

A watch over the whole bucket delivers the last value of every key (the snapshot), then each
new one; after a reconnection the watch is started again, which re-reads the snapshot, so the
view converges whatever happened while the broker was away. State: ``{host: {key: session
JSON}}`` plus each host's last heartbeat. A host is online while its last beat is younger than
three of its own beat periods (and it did not say goodbye); an offline host's sessions stay
listed. Reads are thread-safe; listeners run on the subscriber's thread.

Times: a beat received live counts from the moment it arrived (this machine's clock); a beat
read in the snapshot counts from when the broker stored it (the broker's clock, never later
than now), so a host that died before we started is offline at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from nats.aio.client import Client
from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from pmux_widget.core.model import Session, count_states, priority_rank
from pmux_widget.system.clock import now_ms

from .common import (
    DEFAULT_HEARTBEAT,
    HEARTBEAT_KEY,
    MISSED_BEATS,
    actions_subject,
    close_quietly,
    connect,
    ensure_bucket,
    session_key,
    split_key,
)

__all__ = ["FleetListener", "Subscriber", "count_json", "is_ended", "sort_fleet"]

log = logging.getLogger(__name__)

#: ``listener(changed, subscriber)`` on the subscriber's thread after each update: ``changed``
#: holds ``(host, session_id)`` pairs, ``(host, None)`` for the host itself (beat, online flip).
FleetListener = Callable[[list[tuple[str, str | None]], "Subscriber"], None]


def is_ended(data: dict[str, Any]) -> bool:
    """Whether a published session is over: its ``"ended"`` is ``true``. A publisher older
    than the field leaves it out, and anything but ``true`` is not a yes: both read as live."""
    return data.get("ended") is True


def count_json(sessions: list[dict[str, Any]]) -> dict[str, int]:
    """The contract's counts of session JSONs, by the hub's own rule: its live sessions only
    (``core.contract.counts``), whatever the list holds."""
    return count_states(Session.from_record(s) for s in sessions if not is_ended(s))


def _state_rank(state: Any) -> int:
    from pmux_widget.core.model import State

    try:
        return priority_rank(State(state))
    except ValueError:
        return len(State)


def sort_fleet(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Grouped by host, then workspace; most urgent first inside a workspace."""
    return sorted(
        sessions,
        key=lambda s: (
            str(s.get("host") or ""),
            str(s.get("workspace") or s.get("project") or ""),
            _state_rank(s.get("state")),
            str(s.get("project") or ""),
            str(s.get("session_id") or ""),
        ),
    )


class _Host:
    __slots__ = ("beat", "last_seen", "sessions")

    def __init__(self) -> None:
        self.sessions: dict[str, dict[str, Any]] = {}
        self.beat: dict[str, Any] = {}
        self.last_seen = 0


class Subscriber:
    """Reads the fleet at ``url``. ``start()`` it, then read :meth:`snapshot_json`."""

    def __init__(
        self,
        url: str,
        *,
        creds: str | os.PathLike[str] | None = None,
        reconnect_forever: bool = True,
    ) -> None:
        self.url = url
        self.creds = creds
        self.reconnect_forever = reconnect_forever
        #: set once the first snapshot is complete (and again after each re-read)
        self.synced = threading.Event()
        self.updates = 0
        self._hosts: dict[str, _Host] = {}
        self._lock = threading.Lock()
        self._listeners: list[FleetListener] = []
        self._online: dict[str, bool] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._restart: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._started = threading.Event()
        self._error: BaseException | None = None
        self._nc: Client | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self, timeout: float | None = None) -> Subscriber:
        """Start reading; with ``timeout``, wait that long for the first snapshot and raise
        ``TimeoutError`` (broker unreachable, or slow) if it did not come."""
        self._thread = threading.Thread(target=self._run, name="pmux-fleet-sub", daemon=True)
        self._thread.start()
        self._started.wait(10)
        if timeout is not None and not self._wait_first(timeout):
            self.stop()
            reason = f": {self._error}" if self._error else ""
            raise TimeoutError(f"no fleet snapshot from {self.url} within {timeout:g} s{reason}")
        return self

    def _wait_first(self, timeout: float) -> bool:
        """Wait for the first snapshot; False at once if the thread gave up (no broker)."""
        deadline = time.monotonic() + timeout
        while not self.synced.wait(0.05):
            if self._thread is None or not self._thread.is_alive():
                return False
            if time.monotonic() > deadline:
                return False
        return True

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    def stop(self, timeout: float = 5.0) -> None:
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def request(
        self, host: str, request: dict[str, Any], timeout: float = 5.0
    ) -> concurrent.futures.Future[dict[str, Any]]:
        """Send ``request`` to ``host``'s hub on ``pmux.<host>.actions`` over this subscriber's
        connection (any thread); the future holds its answer (``{"code": ..., ...}``), or
        raises ``nats.errors.NoRespondersError`` (that hub is not connected), a timeout, or
        ``ConnectionError`` (this subscriber is not connected)."""
        loop, nc = self._loop, self._nc
        if loop is None or nc is None or loop.is_closed():
            failed: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
            failed.set_exception(ConnectionError(f"not connected to the fleet at {self.url}"))
            return failed

        async def ask() -> dict[str, Any]:
            reply = await nc.request(
                actions_subject(host), json.dumps(request).encode(), timeout=timeout
            )
            answer = json.loads(reply.data)
            if not isinstance(answer, dict):
                raise ValueError(f"host {host!r} answered with something other than an object")
            return answer

        return asyncio.run_coroutine_threadsafe(ask(), loop)

    def __enter__(self) -> Subscriber:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ reading

    def add_listener(self, listener: FleetListener) -> Callable[[], None]:
        """``listener(changed, subscriber)`` after each update and each host going online or
        offline, ``changed`` a list of ``(host, session_id)`` (``(host, None)``: the host
        itself); on the subscriber's thread: keep it quick."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def online(self, host: str, now: int | None = None) -> bool:
        with self._lock:
            entry = self._hosts.get(host)
            return entry is not None and self._is_online(entry, now_ms() if now is None else now)

    @staticmethod
    def _is_online(entry: _Host, now: int) -> bool:
        if not entry.beat or entry.beat.get("online") is False:
            return False
        interval = entry.beat.get("interval")
        period = float(interval) if isinstance(interval, int | float) and interval > 0 else 0
        period = period or DEFAULT_HEARTBEAT
        return now - entry.last_seen <= MISSED_BEATS * period * 1000

    def hosts(self) -> dict[str, dict[str, Any]]:
        """``{host: {"online": bool, "last_seen": ms}}`` (last_seen 0: never beat)."""
        now = now_ms()
        with self._lock:
            return {
                host: {"online": self._is_online(entry, now), "last_seen": entry.last_seen}
                for host, entry in sorted(self._hosts.items())
            }

    def sessions(self, include_ended: bool = False) -> list[dict[str, Any]]:
        """Every host's live session JSONs (each with ``host`` and ``ended``), grouped by host
        then workspace; the ended ones too with ``include_ended`` (as ``pmux_widget.sessions``)."""
        with self._lock:
            found = [
                s
                for entry in self._hosts.values()
                for s in entry.sessions.values()
                if include_ended or not is_ended(s)
            ]
        return sort_fleet(found)

    def snapshot_json(self, include_ended: bool = False) -> dict[str, Any]:
        """``{"sessions", "counts", "hosts"}``: what ``status --json --fleet`` prints (the
        ended sessions too with ``include_ended``, as ``status --all``; the counts are always
        the live ones')."""
        sessions = self.sessions(include_ended)
        return {"sessions": sessions, "counts": count_json(sessions), "hosts": self.hosts()}

    # ------------------------------------------------------------------ thread

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._stop = asyncio.Event()
        self._restart = asyncio.Event()
        self._started.set()
        try:
            loop.run_until_complete(self._main())
        except Exception as exc:
            self._error = exc
            log.debug("fleet subscriber stopped: %s", exc)
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(self) -> None:
        assert self._stop is not None and self._restart is not None
        restart = self._restart

        async def reconnected() -> None:
            restart.set()

        nc: Client | None = None
        watching: asyncio.Future[None] | None = None
        liveness = asyncio.ensure_future(self._watch_liveness())
        try:
            connecting = asyncio.ensure_future(
                connect(
                    self.url,
                    name="pmux-widget fleet subscriber",
                    creds=self.creds,
                    reconnect_forever=self.reconnect_forever,
                    reconnected_cb=reconnected,
                )
            )
            stopping = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait({connecting, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not connecting.done():
                connecting.cancel()
                return
            nc = self._nc = connecting.result()
            while not self._stop.is_set():
                restart.clear()
                watching = asyncio.ensure_future(self._watch(nc))
                restarting = asyncio.ensure_future(restart.wait())
                await asyncio.wait(
                    {watching, restarting, stopping}, return_when=asyncio.FIRST_COMPLETED
                )
                restarting.cancel()
                if watching.done() and not watching.cancelled() and watching.exception():
                    log.debug("fleet watch failed: %s", watching.exception())
                    await asyncio.sleep(0.5)  # then watch again (the broker may be back)
                watching.cancel()
                with contextlib.suppress(BaseException):
                    await watching
        finally:
            liveness.cancel()
            await close_quietly(nc)

    async def _watch(self, nc: Client) -> None:
        kv: KeyValue = await ensure_bucket(nc.jetstream())
        watcher: Any = await kv.watchall()  # untyped in nats-py
        seen: dict[str, set[str]] = {}
        synced = False
        try:
            while True:
                entry = await watcher.updates(timeout=None)
                if entry is None:  # the end of the snapshot
                    self._drop_unseen(seen)
                    synced = True
                    self.synced.set()
                    continue
                parts = split_key(entry.key)
                if parts is None:
                    continue
                host, rest = parts
                if not synced:
                    seen.setdefault(host, set()).add(rest)
                self._apply(host, rest, entry.value, entry.operation, entry.created, synced)
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()

    def _drop_unseen(self, seen: dict[str, set[str]]) -> None:
        """After a re-read: forget what the bucket no longer holds (deleted while away)."""
        changed: list[tuple[str, str | None]] = []
        with self._lock:
            for host, entry in list(self._hosts.items()):
                keep = seen.get(host, set())
                gone = [k for k in entry.sessions if k not in keep]
                for key in gone:
                    changed.append((host, entry.sessions.pop(key).get("session_id")))
                if HEARTBEAT_KEY not in keep and not entry.sessions:
                    del self._hosts[host]
                    changed.append((host, None))
        if changed:
            self._notify(changed)

    def _apply(
        self, host: str, rest: str, value: bytes | None, op: str | None, created: Any, live: bool
    ) -> None:
        now = now_ms()
        session_id: str | None = None
        with self._lock:
            entry = self._hosts.get(host)
            if op in (KV_DEL, KV_PURGE):
                if entry is not None:
                    if rest == HEARTBEAT_KEY:
                        entry.beat = {}
                    gone = entry.sessions.pop(rest, None)
                    session_id = None if gone is None else gone.get("session_id")
                    if not entry.sessions and not entry.beat:
                        del self._hosts[host]
            else:
                try:
                    data = json.loads(value or b"")
                except ValueError:
                    data = None
                if not isinstance(data, dict):
                    log.warning("fleet: %s.%s holds no JSON object: ignored", host, rest)
                    return
                if entry is None:
                    entry = self._hosts[host] = _Host()
                if rest == HEARTBEAT_KEY:
                    entry.beat = data
                    entry.last_seen = now if live else min(now, _stored_ms(created, now))
                else:
                    data.setdefault("host", host)
                    # one shape for every reader: an old publisher's record (no "ended") or
                    # a stray value says live, as False
                    data["ended"] = is_ended(data)
                    entry.sessions[rest] = data
                    session_id = str(data.get("session_id") or rest)
            self.updates += 1
        self._notify([(host, session_id)])

    def get(self, host: str, session_id: str) -> dict[str, Any] | None:
        """One session's JSON as last published by ``host``, or None."""
        rest = session_key(host, session_id).partition(".")[2]
        with self._lock:
            entry = self._hosts.get(host)
            return None if entry is None else entry.sessions.get(rest)

    def _notify(self, changed: list[tuple[str, str | None]]) -> None:
        for host in {host for host, _ in changed}:
            self._online[host] = self.online(host)
        for listener in list(self._listeners):
            try:
                listener(changed, self)
            except Exception:
                log.exception("fleet listener %r failed", listener)

    async def _watch_liveness(self) -> None:
        """Tell listeners when a host goes offline (no update arrives to say so)."""
        while True:
            await asyncio.sleep(0.2)
            with self._lock:
                hosts = list(self._hosts)
            flipped = {h for h in hosts if self._online.get(h) != self.online(h)}
            if flipped:
                self._notify([(host, None) for host in sorted(flipped)])

    def __repr__(self) -> str:
        hosts = self.hosts()
        online = sum(1 for h in hosts.values() if h["online"])
        return (
            f"<fleet Subscriber {self.url}: {len(hosts)} hosts ({online} online), "
            f"{len(self.sessions())} sessions>"
        )


def _stored_ms(created: Any, default: int) -> int:
    """The broker's store time of an entry (nats-py gives a datetime) in ms epoch."""
    if isinstance(created, datetime.datetime):
        return int(created.timestamp() * 1000)
    if isinstance(created, int | float) and created > 0:
        return int(created / 1_000_000) if created > 1e14 else int(created)
    return default
