"""The fleet: several machines' hubs in one view, through a NATS JetStream key-value bucket.

:func:`start_publisher` makes a hub write its sessions (and a heartbeat) to the bucket;
:class:`Subscriber` reads every host's sessions back; :func:`request_action` sends an action
to another host's hub; :func:`forget` removes a host that is gone for good. See
docs/fleet.md for running it for a team.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from .common import (
    BUCKET,
    DEFAULT_HEARTBEAT,
    MISSED_BEATS,
    actions_subject,
    close_quietly,
    connect,
    ensure_bucket,
    host_name,
)
from .publisher import Publisher, publish_json, start_publisher
from .subscriber import Subscriber, count_json, is_ended, sort_fleet

__all__ = [
    "BUCKET",
    "DEFAULT_HEARTBEAT",
    "MISSED_BEATS",
    "Publisher",
    "Subscriber",
    "count_json",
    "forget",
    "host_name",
    "is_ended",
    "publish_json",
    "request_action",
    "sort_fleet",
    "start_publisher",
]


async def _request_action(
    url: str, host: str, request: dict[str, Any], creds: str | None, timeout: float
) -> dict[str, Any]:
    nc = await connect(url, name="pmux-widget action", creds=creds, reconnect_forever=False)
    try:
        reply = await nc.request(
            actions_subject(host_name(host)), json.dumps(request).encode(), timeout=timeout
        )
    finally:
        await close_quietly(nc)
    answer = json.loads(reply.data)
    if not isinstance(answer, dict):
        raise ValueError(f"host {host!r} answered with something other than a JSON object")
    return answer


def request_action(
    url: str,
    host: str,
    request: dict[str, Any],
    *,
    creds: str | os.PathLike[str] | None = None,
    timeout: float = 5.0,
) -> dict[str, Any]:
    """Send an action (e.g. ``{"action": "approve", "session_id": ...}``) to ``host``'s hub
    and return its answer: ``{"code": <HTTP-like status>, ...}``, the same result a local
    call there gives. Raises ``nats.errors.NoRespondersError`` when that host's hub is not
    connected, ``nats.errors.TimeoutError`` when it does not answer in time."""
    path = os.fspath(creds) if creds is not None else None
    return asyncio.run(_request_action(url, host, request, path, timeout))


async def _forget(url: str, host: str, creds: str | None) -> int:
    nc = await connect(url, name="pmux-widget forget", creds=creds, reconnect_forever=False)
    try:
        kv = await ensure_bucket(nc.jetstream())
        watcher: Any = await kv.watch(f"{host_name(host)}.*", meta_only=True, ignore_deletes=True)
        keys = []
        while True:
            entry = await watcher.updates(timeout=5)
            if entry is None:
                break
            keys.append(entry.key)
        await watcher.stop()
        for key in keys:
            await kv.purge(key)
        return len(keys)
    finally:
        await close_quietly(nc)


def forget(url: str, host: str, *, creds: str | os.PathLike[str] | None = None) -> int:
    """Remove every key of ``host`` (its sessions and heartbeat) from the bucket: for a host
    that is gone for good. Returns how many keys were removed. A host that is still running
    writes its sessions again on its next reconnection."""
    path = os.fspath(creds) if creds is not None else None
    return asyncio.run(_forget(url, host, path))
