"""Exactly once across machines: a notification's claim in the fleet's JetStream.

On one machine the hubs' notifiers claim each (transition, destination) in ``notify.db``. With
a fleet, a fleet-wide notifier (``pmux-widget notify --fleet URL``) and the hosts' own
notifiers may see the same transition; each also creates the key
``c-<sha256(transition, destination)>`` in the bucket ``pmux_notify`` (create-only: JetStream
refuses a second create), and only the creator sends. Keys expire after two days.

When the broker cannot be reached in time the claim is granted (a message may then go twice
rather than never): the local claim already stopped this machine's other hubs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from typing import Any

from nats.aio.client import Client
from nats.js.errors import BadRequestError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from .common import close_quietly, connect

__all__ = ["NOTIFY_BUCKET", "FleetClaims", "attach_fleet_claims"]

log = logging.getLogger(__name__)

NOTIFY_BUCKET = "pmux_notify"
TTL_S = 2 * 86400


class FleetClaims:
    """Create-only keys in ``pmux_notify``; :meth:`claim` blocks its caller (the notifier's
    thread, never a hub's) for at most ``timeout``."""

    def __init__(self, url: str, *, creds: str | None = None, timeout: float = 3.0) -> None:
        self.url = url
        self.creds = creds
        self.timeout = timeout
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._nc: Client | None = None
        self._kv: KeyValue | None = None
        self._ready = threading.Event()

    def start(self, timeout: float = 10.0) -> FleetClaims:
        self._thread = threading.Thread(target=self._run, name="pmux-notify-fleet", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._connect())
        except Exception:
            log.exception("fleet notification claims: no connection yet")
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(close_quietly(self._nc))
        loop.close()

    async def _connect(self) -> None:
        self._nc = await connect(self.url, name="pmux-widget notify claims", creds=self.creds)
        await self._bucket()

    async def _bucket(self) -> KeyValue:
        if self._kv is not None:
            return self._kv
        assert self._nc is not None
        js = self._nc.jetstream()
        try:
            self._kv = await js.key_value(NOTIFY_BUCKET)
        except Exception:
            try:
                self._kv = await js.create_key_value(
                    bucket=NOTIFY_BUCKET,
                    history=1,
                    ttl=TTL_S,
                    description="pmux-widget: who sent which notification",
                )
            except BadRequestError:
                self._kv = await js.key_value(NOTIFY_BUCKET)
        return self._kv

    async def _claim(self, key: str, dests: list[str]) -> list[str]:
        kv = await self._bucket()
        won = []
        for dest in dests:
            name = "c-" + hashlib.sha256(f"{key}\0{dest}".encode()).hexdigest()
            try:
                await kv.create(name, b"1")
            except KeyWrongLastSequenceError:
                continue
            won.append(dest)
        return won

    def claim(self, key: str, dests: list[str]) -> list[str]:
        """The destinations of ``key`` this process may send to (all, if the broker does not
        answer in time)."""
        if not dests:
            return []
        if self._loop is None or not self._loop.is_running():
            return dests
        future = asyncio.run_coroutine_threadsafe(self._claim(key, dests), self._loop)
        try:
            return future.result(self.timeout)
        except Exception as exc:
            future.cancel()
            log.warning("fleet notification claim failed (%s): sending anyway", exc)
            return dests

    def stop(self) -> None:
        loop = self._loop
        if loop is not None and loop.is_running():
            loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)


def attach_fleet_claims(
    hub: Any, url: str, *, creds: str | None = None, host: str | None = None
) -> FleetClaims | None:
    """Make ``hub``'s notifier (if it runs one) claim in the fleet too, under the fleet's name
    for this host; None when the hub has no notifier."""
    from pmux_widget.notify.notifier import find

    notifier = find(hub)
    if notifier is None:
        return None
    claims = FleetClaims(url, creds=creds).start()
    if host:
        notifier.host = host
    notifier.fleet = True  # titles name the host: the same channels may hear of other hosts
    notifier.remote_claim = claims.claim
    notifier.on_stop.append(claims.stop)
    return claims
