"""The fleet publisher: this hub's sessions, as JSON with ``host``, into the shared bucket.

It runs on its own thread with its own asyncio loop (nats-py is asyncio). The hub thread's
whole share is lock-free and makes no system call that lets go of the GIL (which would hand it
to the publisher for up to the 5 ms switch interval): it keeps a reference to the newest fleet,
appends the changed ids to a deque and sets a ``threading.Event`` that a waiter thread passes
on to the loop. A slow or dead broker therefore costs hooks nothing. Bursts coalesce: each
batch publishes every id queued since the last one, once, at its newest state. After every
(re)connection the whole current fleet is written again and keys of this host that name no
known session are deleted, so the bucket converges on the hub's state whatever was lost
while the broker was away. A heartbeat under ``<host>._host`` tells subscribers the host is
alive; a clean stop writes a last one with ``"online": false``. Actions on
``pmux.<host>.actions`` are answered here (see :func:`handle_action`).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import json
import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.kv import KeyValue

from pmux_widget._version import __version__
from pmux_widget.core.contract import counts
from pmux_widget.core.model import Change, Session
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.system.clock import now_ms

from .common import (
    BUCKET,
    HEARTBEAT_KEY,
    actions_subject,
    close_quietly,
    connect,
    default_heartbeat,
    ensure_bucket,
    host_name,
    session_key,
    split_key,
)

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

__all__ = ["REDACTED_FIELDS", "Publisher", "handle_action", "publish_json", "start_publisher"]

log = logging.getLogger(__name__)

#: What ``--redact`` blanks: the prompt, the answer and the tool input (its summary).
REDACTED_FIELDS = ("last_prompt", "last_assistant", "tool_summary")
#: Seconds a batch waits after the first change for the ones that follow it.
BATCH_WINDOW = 0.02


def publish_json(session: Session, host: str, redact: bool = False) -> dict[str, Any]:
    """The session JSON as published: the contract's fields plus ``host``, then ``ended``
    (the contract's JSON leaves it out: the hub lists live sessions only, but the bucket holds
    the ended ones too, and a reader must tell them apart); redacted on ask."""
    data = session.to_json()
    data["host"] = host
    data["ended"] = session.ended  # additive: readers of old records take it as False
    if redact:
        for name in REDACTED_FIELDS:
            data[name] = None
        # a background agent's description is the tool input it was started with
        data["background_tasks"] = [
            {**task, "description": ""} for task in data.get("background_tasks", [])
        ]
    return data


#: What a view tells a host's hub besides actions: a look at a row (ends its review), and a
#: dismiss (the ✓ button).
LOOKS = frozenset({"seen", "dismiss"})


def handle_action(
    request: dict[str, Any], host: str, hub: Hub | None = None
) -> tuple[int, dict[str, Any]]:
    """The answer to an action request from another host: (HTTP-like code, body), from the
    very function a local action runs (``runtime.actions.act``), with the same checks: 202
    delivered, 404 unknown session, 409 refused (with the reason), 400 a bad request.
    Blocking (tmux, /proc): call it off the publisher's loop."""
    session_id, action = request.get("session_id"), request.get("action")
    text, token, mode = request.get("text"), request.get("token"), request.get("mode")
    options = request.get("options")
    if not isinstance(session_id, str) or not isinstance(action, str):
        return 400, {"error": 'a request needs "session_id" and "action" strings', "host": host}
    if not all(v is None or isinstance(v, str) for v in (text, token, mode)):
        return 400, {"error": '"text", "token" and "mode" must be strings', "host": host}
    if options is not None and not (
        isinstance(options, list) and all(isinstance(o, str) for o in options)
    ):
        return 400, {"error": '"options" must be a list of labels', "host": host}
    if hub is None:
        return 409, {"error": "this host's hub is not running", "host": host}
    if action in LOOKS:
        # a look or a dismiss from another host's view: as from a page of this machine
        if session_id not in hub.fleet:
            return 404, {"error": f"no session {session_id}", "host": host}
        if action == "seen":
            hub.seen(session_id)
        else:
            hub.dismiss(session_id)
        return 202, {"session_id": session_id, "action": action, "queued": False, "host": host}
    try:
        result = act(
            hub,
            session_id,
            action,
            text=text,
            options=options,
            mode=mode,
            token=token,
            record=hub.record_action,
        )
    except ActionError as refused:
        return (404 if refused.unknown else 409), {"error": refused.reason, "host": host}
    except Exception as exc:  # tmux vanished mid-way, an OS error: refused, said why
        return 409, {"error": f"the action failed: {exc}", "host": host}
    return 202, {
        "session_id": result.session_id,
        "action": result.action,
        "queued": result.queued,
        "host": host,
    }


class Publisher:
    """Publishes one hub's sessions to the fleet. Create with :func:`start_publisher`."""

    def __init__(
        self,
        hub: Hub,
        url: str,
        *,
        host: str | None = None,
        creds: str | os.PathLike[str] | None = None,
        redact: bool = False,
        heartbeat: float | None = None,
    ) -> None:
        self.hub = hub
        self.url = url
        self.host = host_name(host)
        self.creds = creds
        self.redact = redact
        self.heartbeat = heartbeat if heartbeat and heartbeat > 0 else default_heartbeat()
        self.connected = threading.Event()
        #: counters, for tests, the bench and ``repr``
        self.puts = 0
        self.batches = 0
        self.failures = 0
        self.resyncs = 0
        # Shared with the hub thread without a lock: a reference swap, deque appends and an
        # Event are each atomic under the GIL; the hub's fleet dicts are never mutated.
        self._queue: collections.deque[str] = collections.deque()
        self._fleet: dict[str, Session] = {}
        self._signal = threading.Event()
        self._resync = True
        self._waiter: concurrent.futures.ThreadPoolExecutor | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._nc: Client | None = None
        self._kv: KeyValue | None = None
        self._thread: threading.Thread | None = None
        self._unlisten: Callable[[], None] | None = None
        self._started = threading.Event()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> Publisher:
        """Attach to the hub and start the publishing thread; never waits for the broker."""
        self._thread = threading.Thread(target=self._run, name="pmux-fleet", daemon=True)
        self._thread.start()
        self._started.wait(10)
        attached = threading.Event()
        self.hub.loop.call_soon_threadsafe(self._attach, attached)
        if not attached.wait(10):
            raise TimeoutError("the hub did not take the fleet publisher's listener in time")
        return self

    def _attach(self, attached: threading.Event) -> None:
        """Hub thread: take the current fleet and listen, atomically (nothing slips between)."""
        self._fleet = self.hub.fleet
        self._unlisten = self.hub.add_listener(self._on_changes)
        self._request_resync()
        attached.set()

    def stop(self, timeout: float = 5.0) -> None:
        """Detach from the hub, write a last heartbeat saying offline, close. Safe twice."""
        if self._unlisten is not None:
            with contextlib.suppress(Exception):  # the hub may be stopped already
                self.hub.loop.call_soon_threadsafe(self._unlisten)
            self._unlisten = None
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        self._signal.set()  # release the waiter thread
        if self._thread is not None:
            self._thread.join(timeout)

    # ------------------------------------------------------------------ hub thread

    def _on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        """Hub thread, after every step: note what changed, wake the publisher. Cheap."""
        self._fleet = fleet
        for change in changes:
            self._queue.append(change.session_id)
        if not self._signal.is_set():
            self._signal.set()

    def _request_resync(self) -> None:
        """Write the whole fleet again at the next batch (any thread)."""
        self._resync = True
        self._signal.set()

    # ------------------------------------------------------------------ publisher thread

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        self._stop = asyncio.Event()
        self._waiter = concurrent.futures.ThreadPoolExecutor(1, "pmux-fleet-wait")
        self._started.set()
        try:
            loop.run_until_complete(self._main())
        except Exception:
            log.exception("fleet publisher failed")
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._waiter.shutdown(wait=False)

    async def _main(self) -> None:
        assert self._stop is not None
        connecting = asyncio.ensure_future(self._connect())
        drain = asyncio.ensure_future(self._drain())
        beat = asyncio.ensure_future(self._beat())
        await self._stop.wait()
        for task in (connecting, drain, beat):
            task.cancel()
        for task in (connecting, drain, beat):
            with contextlib.suppress(BaseException):
                await task
        if self._kv is not None and self.connected.is_set():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._put_heartbeat(online=False), 2)
        await close_quietly(self._nc)

    async def _connect(self) -> None:
        async def disconnected() -> None:
            self.connected.clear()

        async def reconnected() -> None:
            log.info("fleet: reconnected to %s", self.url)
            self.connected.set()
            self._request_resync()

        self._nc = await connect(
            self.url,
            name=f"pmux-widget hub {self.host}",
            creds=self.creds,
            disconnected_cb=disconnected,
            reconnected_cb=reconnected,
        )
        await self._nc.subscribe(actions_subject(self.host), cb=self._on_action)
        self.connected.set()
        self._request_resync()

    async def _on_action(self, msg: Msg) -> None:
        try:
            request = json.loads(msg.data)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            code, body = 400, {"error": f"bad action request: {exc}", "host": self.host}
        else:
            code, body = await asyncio.get_running_loop().run_in_executor(
                None, handle_action, request, self.host, self.hub
            )
        if msg.reply:
            await msg.respond(json.dumps({"code": code, **body}).encode())

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            # a thread of our own waits for the hub's signal: the hub thread never wakes this
            # loop itself (that write to the loop's self-pipe would release the GIL)
            while not await loop.run_in_executor(self._waiter, self._signal.wait, 1.0):
                pass
            # gather what else comes in the next moment: one wake-up and one socket write per
            # batch instead of per change (system calls cost 50-300 µs each on a busy VM);
            # changes in the window find the signal still set and skip setting it
            await asyncio.sleep(BATCH_WINDOW)
            self._signal.clear()
            if not self.connected.is_set() or self._nc is None:
                self._queue.clear()  # the reconnection rewrites everything anyway
                continue
            try:
                await self._publish_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # the broker went away mid-batch (or the bucket did): write everything again
                # once the connection is back; meanwhile, retry after a short pause
                self.failures += 1
                log.debug("fleet publish failed: %s", exc)
                await asyncio.sleep(0.5)
                self._request_resync()

    async def _publish_once(self) -> None:
        assert self._nc is not None
        ids: set[str] = set()
        with contextlib.suppress(IndexError):
            while True:
                ids.add(self._queue.popleft())
        fleet = self._fleet
        resync, self._resync = self._resync, False
        batch: dict[str, Session | None]
        batch = dict(fleet) if resync else {sid: fleet.get(sid) for sid in ids}
        if not batch and not resync:
            return
        try:
            if resync or self._kv is None:
                self._kv = await ensure_bucket(self._nc.jetstream())
                self.resyncs += 1
            kv = self._kv
            if resync:  # the beat first: subscribers see the host online with its sessions
                await self._put_heartbeat(online=True)
                await self._delete_stale(kv, set(batch))
            items = list(batch.items())
            # Plain publishes to the bucket's subjects, not acknowledged puts: an ack cost ~250
            # µs of CPU per value on this machine, a publish ~5 µs. What an ack would catch is
            # caught anyway: a lost connection triggers a full resync on reconnecting, and the
            # heartbeat is an acknowledged put (a missing bucket fails it, which resyncs).
            for sid, session in items:
                await self._put(kv, sid, session)
            self.batches += 1
        except BaseException:
            self._resync = True  # whatever failed is written again, with everything else
            raise

    async def _put(self, kv: KeyValue, session_id: str, session: Session | None) -> None:
        assert self._nc is not None
        key = session_key(self.host, session_id)
        if session is None:  # the hub forgot it (rare: always acknowledged)
            await kv.delete(key)
        else:
            data = publish_json(session, self.host, self.redact)
            value = json.dumps(data, separators=(",", ":")).encode()
            await self._nc.publish(f"$KV.{BUCKET}.{key}", value)
        self.puts += 1

    async def _delete_stale(self, kv: KeyValue, known: set[str]) -> None:
        """Delete this host's keys that name no session of the hub (forgotten while away)."""
        wanted = {session_key(self.host, sid) for sid in known}
        # nats-py leaves the watcher untyped
        watcher: Any = await kv.watch(f"{self.host}.*", meta_only=True, ignore_deletes=True)
        stale = []
        try:
            while True:
                entry = await watcher.updates(timeout=5)
                if entry is None:
                    break
                parts = split_key(entry.key)
                if parts and parts[1] != HEARTBEAT_KEY and entry.key not in wanted:
                    stale.append(entry.key)
        finally:
            await watcher.stop()
        for key in stale:
            await kv.delete(key)

    async def _put_heartbeat(self, online: bool) -> None:
        kv = self._kv
        if kv is None:
            return
        # the live sessions, as every count is (the bucket also holds the ended ones)
        live = [s for s in self._fleet.values() if not s.ended]
        beat = {
            "host": self.host,
            "online": online,
            "at": now_ms(),
            "interval": self.heartbeat,
            "sessions": len(live),
            "counts": counts(live),
            "redacted": self.redact,
            "version": __version__,
        }
        await kv.put(f"{self.host}.{HEARTBEAT_KEY}", json.dumps(beat).encode())

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            if self.connected.is_set() and self._kv is not None:
                try:
                    await asyncio.wait_for(self._put_heartbeat(online=True), self.heartbeat)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    # the bucket may be gone (deleted, a broker without its store): the
                    # resync creates it again and rewrites every session
                    log.debug("fleet heartbeat failed: %s; resyncing", exc)
                    self._request_resync()

    def __repr__(self) -> str:
        state = "connected" if self.connected.is_set() else "waiting for the broker"
        return (
            f"<fleet Publisher {self.host} → {self.url}: {state}, {self.puts} puts, "
            f"{self.batches} batches>"
        )


def start_publisher(
    hub: Hub,
    url: str,
    *,
    host: str | None = None,
    creds: str | os.PathLike[str] | None = None,
    redact: bool = False,
    heartbeat: float | None = None,
) -> Publisher:
    """Publish ``hub``'s sessions to the fleet at ``url`` (returns at once; it connects, and
    reconnects, in the background). ``host`` defaults to the machine's name."""
    return Publisher(hub, url, host=host, creds=creds, redact=redact, heartbeat=heartbeat).start()
