"""What the fleet's publisher and subscriber agree on: the bucket, its keys, the connection.

Keys are ``<host>.<session_id>`` and ``<host>._host`` (the heartbeat) in the JetStream
key-value bucket ``pmux_sessions``; actions travel on ``pmux.<host>.actions``. Host names and
session ids become single key tokens (characters outside ``[A-Za-z0-9_-]`` become ``-``; an id
that would change that way is hashed), so a key always splits at its one dot.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import socket
from typing import Any

import nats
from nats.aio.client import Client
from nats.js.client import JetStreamContext
from nats.js.errors import BadRequestError
from nats.js.kv import KeyValue

__all__ = [
    "BUCKET",
    "DEFAULT_HEARTBEAT",
    "HEARTBEAT_KEY",
    "MISSED_BEATS",
    "actions_subject",
    "connect",
    "default_heartbeat",
    "ensure_bucket",
    "host_name",
    "session_key",
    "split_key",
]

log = logging.getLogger(__name__)

BUCKET = "pmux_sessions"
HEARTBEAT_KEY = "_host"
#: Seconds between heartbeats unless ``PMUX_WIDGET_FLEET_HEARTBEAT`` or a parameter says so.
DEFAULT_HEARTBEAT = 5.0
#: A host that missed this many beats is shown offline (its sessions stay listed).
MISSED_BEATS = 3

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def default_heartbeat() -> float:
    """The heartbeat period: ``$PMUX_WIDGET_FLEET_HEARTBEAT`` (seconds) or 5 s."""
    raw = os.environ.get("PMUX_WIDGET_FLEET_HEARTBEAT", "")
    try:
        value = float(raw) if raw else DEFAULT_HEARTBEAT
    except ValueError:
        log.warning("PMUX_WIDGET_FLEET_HEARTBEAT=%r is not a number: using 5 s", raw)
        return DEFAULT_HEARTBEAT
    return value if value > 0 else DEFAULT_HEARTBEAT


def host_name(name: str | None = None) -> str:
    """The host's token: ``name`` (``--host-name``) or the machine's name, made key-safe."""
    raw = (name or socket.gethostname() or "host").strip()
    token = _UNSAFE.sub("-", raw).strip("-")
    if not token or token == HEARTBEAT_KEY:
        raise ValueError(f"{raw!r} cannot name a host in the fleet")
    return token


def session_key(host: str, session_id: str) -> str:
    """``<host>.<session id>``; an id with characters a key cannot hold is hashed."""
    token = session_id
    if not session_id or _UNSAFE.search(session_id) or session_id == HEARTBEAT_KEY:
        token = "h-" + hashlib.sha1(session_id.encode()).hexdigest()[:20]
    return f"{host}.{token}"


def split_key(key: str) -> tuple[str, str] | None:
    """``(host, rest)`` of a bucket key, None for a key that is not ours."""
    host, dot, rest = key.partition(".")
    if not dot or not host or not rest or "." in rest:
        return None
    return host, rest


def actions_subject(host: str) -> str:
    return f"pmux.{host}.actions"


async def _quiet_error(exc: Exception) -> None:
    # nats-py reports every failed (re)connect attempt here; a dead broker is an expected state
    log.debug("fleet connection: %s", exc)


async def connect(
    url: str,
    *,
    name: str,
    creds: str | os.PathLike[str] | None = None,
    reconnect_forever: bool = True,
    connect_timeout: float = 2.0,
    **callbacks: Any,
) -> Client:
    """A NATS connection: ``nats://`` or ``tls://`` URLs (comma-separated for a cluster),
    an optional credentials file; with ``reconnect_forever`` it waits for the broker as long
    as it takes, first connection included."""
    servers = [part.strip() for part in url.split(",") if part.strip()]
    if not servers:
        raise ValueError("empty fleet URL")
    options: dict[str, Any] = {
        "servers": servers,
        "name": name,
        "connect_timeout": max(1, int(connect_timeout)),
        "reconnect_time_wait": 0.5,
        "max_reconnect_attempts": -1 if reconnect_forever else 1,
        "allow_reconnect": True,
        "error_cb": callbacks.pop("error_cb", _quiet_error),
        **callbacks,
    }
    if creds is not None:
        options["user_credentials"] = os.fspath(creds)
    return await nats.connect(**options)


async def ensure_bucket(js: JetStreamContext) -> KeyValue:
    """The bucket, created if missing: one value per key (history 1) and no max age, so an
    offline host's last sessions stay listed (``pmux-widget fleet forget HOST`` removes them)."""
    try:
        return await js.key_value(BUCKET)
    except Exception as exc:  # BucketNotFoundError and kin: create it
        log.debug("bucket %s: %s; creating it", BUCKET, exc)
    try:
        return await js.create_key_value(
            bucket=BUCKET, history=1, description="pmux-widget: sessions of every host"
        )
    except BadRequestError:  # another hub created it in between
        return await js.key_value(BUCKET)


async def close_quietly(nc: Client | None) -> None:
    if nc is None:
        return
    with contextlib.suppress(Exception):
        await nc.close()
