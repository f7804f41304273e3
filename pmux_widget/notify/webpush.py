"""Web Push (RFC 8030 delivery, RFC 8291 encryption, RFC 8292 VAPID) to the browsers that
asked ("Notify this device" in the panel).

- ``$PMUX_WIDGET_HOME/push/vapid.json`` (0600): the key pair, made once.
- ``$PMUX_WIDGET_HOME/push/subscriptions.json`` (0600): the browsers' ``PushSubscription``s,
  one per endpoint, with the device's name.

``pywebpush`` is imported lazily (0.3 s): only when something is sent.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

from .channels import contained_logs
from .delivery import MaybeSent

if TYPE_CHECKING:
    from py_vapid import Vapid02

__all__ = [
    "DEFAULT_SUBJECT",
    "PushGone",
    "PushMaybeSent",
    "Subscription",
    "VapidKeys",
    "add_subscription",
    "load_subscriptions",
    "push_dir",
    "remove_subscription",
    "send_push",
    "topic_of",
    "vapid_keys",
]

#: The VAPID ``sub`` when none is set (RFC 8292 allows an ``https:`` URL; py_vapid takes a bare
#: origin only). The push service contacts it about abuse, so set your own ``mailto:`` in the
#: settings (``vapid_subject``); Apple's push service refuses ``mailto:…@localhost`` and
#: ``.local`` (403 BadJwtToken), and the settings refuse them too.
DEFAULT_SUBJECT = "https://pypi.org"
_URGENCY = {"high": "high", "normal": "normal", "low": "low"}


class PushGone(Exception):
    """The push service says the subscription is gone (404, 410): remove it."""


class PushMaybeSent(MaybeSent):
    """The message went and the push service did not answer in time: it may have it."""


def push_dir(home: PmuxHome) -> Path:
    return home.root / "push"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class VapidKeys:
    private_pem: str
    #: the application server key the browser subscribes with (uncompressed P-256, base64url)
    public_key: str

    def vapid(self) -> Vapid02:
        from py_vapid import Vapid02

        return Vapid02.from_pem(self.private_pem.encode())


def _read_keys(path: Path) -> VapidKeys | None:
    with contextlib.suppress(FileNotFoundError, ValueError, KeyError):
        data = json.loads(path.read_text())
        return VapidKeys(str(data["private_pem"]), str(data["public_key"]))
    return None


def vapid_keys(home: PmuxHome) -> VapidKeys:
    """The key pair, made on first use, once (under the push directory's lock: every hub's
    notifier, in this process or another, may ask at the same moment)."""
    path = push_dir(home) / "vapid.json"
    keys = _read_keys(path)
    if keys is not None:
        return keys
    with _locked(home):
        return _read_keys(path) or _make_keys(path)


def _make_keys(path: Path) -> VapidKeys:
    from cryptography.hazmat.primitives import serialization
    from py_vapid import Vapid02

    vapid = Vapid02()
    vapid.generate_keys()
    public = vapid.public_key.public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    keys = VapidKeys(vapid.private_pem().decode(), _b64(public))
    data = json.dumps({"private_pem": keys.private_pem, "public_key": keys.public_key})
    atomic_write(path, data.encode(), 0o600, exclusive=True)
    return keys


@dataclass(frozen=True)
class Subscription:
    endpoint: str
    p256dh: str
    auth: str
    device: str = ""
    added_at: int = 0

    @property
    def dest(self) -> str:
        return "push:" + hashlib.sha256(self.endpoint.encode()).hexdigest()[:16]

    def info(self) -> dict[str, Any]:
        """The ``subscription_info`` pywebpush takes."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def to_json(self) -> dict[str, Any]:
        return {**self.info(), "device": self.device, "added_at": self.added_at}

    def listed(self) -> dict[str, Any]:
        """What the panel and ``notify list`` show: no keys, the endpoint's host only."""
        host = self.endpoint.split("://", 1)[-1].split("/", 1)[0]
        return {"id": self.dest, "device": self.device, "service": host, "added_at": self.added_at}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], device: str = "", now: int = 0) -> Subscription:
        """A browser's ``PushSubscription.toJSON()``; ValueError says what is missing."""
        endpoint = data.get("endpoint")
        keys = data.get("keys")
        if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
            raise ValueError("a push subscription needs an http(s) endpoint")
        if not isinstance(keys, Mapping):
            raise ValueError("a push subscription needs keys.p256dh and keys.auth")
        p256dh, auth = keys.get("p256dh"), keys.get("auth")
        if not isinstance(p256dh, str) or not isinstance(auth, str) or not p256dh or not auth:
            raise ValueError("a push subscription needs keys.p256dh and keys.auth")
        return cls(
            endpoint,
            p256dh,
            auth,
            str(data.get("device") or device),
            int(data.get("added_at") or now),
        )


def _subs_path(home: PmuxHome) -> Path:
    return push_dir(home) / "subscriptions.json"


def load_subscriptions(home: PmuxHome) -> list[Subscription]:
    try:
        data = json.loads(_subs_path(home).read_text())
    except (FileNotFoundError, ValueError):
        return []
    subs = []
    for item in data if isinstance(data, list) else []:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            subs.append(Subscription.from_json(item))
    return subs


@contextlib.contextmanager
def _locked(home: PmuxHome) -> Iterator[None]:
    """The push directory's lock (``flock``: between processes and between threads alike)."""
    directory = push_dir(home)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(directory / ".lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _edit(home: PmuxHome) -> Iterator[list[Subscription]]:
    with _locked(home):
        subs = load_subscriptions(home)
        before = list(subs)
        yield subs
        if subs != before:
            data = json.dumps([s.to_json() for s in subs], indent=2) + "\n"
            atomic_write(_subs_path(home), data.encode(), 0o600)


def add_subscription(home: PmuxHome, sub: Subscription) -> None:
    """Keep ``sub`` (replacing one with the same endpoint)."""
    with _edit(home) as subs:
        subs[:] = [s for s in subs if s.endpoint != sub.endpoint] + [sub]


def remove_subscription(home: PmuxHome, which: str) -> bool:
    """Remove by endpoint or by id (``push:…``); True when one was removed."""
    with _edit(home) as subs:
        kept = [s for s in subs if which not in (s.endpoint, s.dest)]
        removed = len(kept) != len(subs)
        subs[:] = kept
    return removed


def topic_of(session_id: str) -> str:
    """The ``Topic`` header (≤ 32 base64url characters): a newer message for the same session
    replaces an undelivered older one at the push service."""
    return _b64(hashlib.sha256(session_id.encode()).digest())[:32]


def send_push(
    sub: Subscription,
    payload: Mapping[str, Any],
    *,
    vapid: Vapid02,
    subject: str,
    ttl: int,
    urgency: str = "normal",
    topic: str | None = None,
    timeout: float = 10.0,
) -> int:
    """Encrypt and POST one message; the push service's status (201). PushGone on 404/410;
    other failures raise (the sender retries them)."""
    import requests
    from pywebpush import WebPushException, webpush

    headers = {"Urgency": _URGENCY.get(urgency, "normal")}
    if topic:
        headers["Topic"] = topic
    try:
        with contained_logs():  # urllib3's debug line names the endpoint (a capability URL)
            response = webpush(
                sub.info(),
                data=json.dumps(payload, separators=(",", ":")),
                vapid_private_key=vapid,
                vapid_claims={"sub": subject or DEFAULT_SUBJECT},
                ttl=max(0, int(ttl)),
                headers=headers,
                timeout=timeout,
            )
    except requests.exceptions.ReadTimeout:
        # the request went: the push service may have queued it (a second try would show
        # the notification twice)
        raise PushMaybeSent(f"no answer from the push service in {timeout:g} s") from None
    except WebPushException as exc:
        status = exc.response.status_code if exc.response is not None else 0
        if status in (404, 410):
            raise PushGone(f"the push service answered {status}") from None
        raise RuntimeError(f"push service: HTTP {status or 'error'}") from None
    return int(getattr(response, "status_code", 201))
