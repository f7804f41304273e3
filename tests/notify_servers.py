"""Local stand-ins for the services notifications go to, all on 127.0.0.1: an HTTP server
that records every request (ntfy, Gotify, json://, form://), an SMTP server (aiosmtpd), and a
Web Push service that checks the VAPID signature and decrypts each message with the
receiving browser's own key, as a real push service's client would (RFC 8291/8292).
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: time.monotonic() when the request was read (the benchmark's end point)
    received: float = 0.0

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Recorder:
    """An HTTP server that records requests and answers ``status`` (per path prefix)."""

    requests: list[Request] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)
    #: seconds to hold the answer back (per path prefix): a service too slow to answer
    delay: dict[str, float] = field(default_factory=dict)
    server: ThreadingHTTPServer | None = None
    #: called with each request before it is answered (the push service decrypts here)
    inspect: Any = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        assert self.server is not None
        return self.server.server_address[1]

    def start(self) -> Recorder:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                req = Request("POST", self.path, headers, body, time.monotonic())
                if recorder.inspect is not None:
                    recorder.inspect(req)
                with recorder.lock:
                    recorder.requests.append(req)
                code = 200
                for prefix, value in recorder.status.items():
                    if self.path.startswith(prefix):
                        code = value
                for prefix, held in recorder.delay.items():
                    if self.path.startswith(prefix):
                        threading.Event().wait(held)  # the slow service under test
                payload = b'{"id": 1}'
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a delay under test)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def count(self, prefix: str = "") -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.path.startswith(prefix))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class Browser:
    """A browser's side of a push subscription: its P-256 key and auth secret."""

    key: ec.EllipticCurvePrivateKey
    auth: bytes
    endpoint: str

    @classmethod
    def make(cls, endpoint: str) -> Browser:
        return cls(ec.generate_private_key(ec.SECP256R1()), os.urandom(16), endpoint)

    def subscription(self) -> dict[str, Any]:
        public = self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "keys": {"p256dh": _b64(public), "auth": _b64(self.auth)},
        }

    def decrypt(self, body: bytes) -> Any:
        import http_ece

        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.auth, version="aes128gcm"
        )
        return json.loads(plain)


@dataclass
class Delivered:
    path: str
    headers: dict[str, str]
    payload: Any
    vapid_ok: bool
    claims: dict[str, Any]
    received: float = 0.0


class PushService:
    """A loopback Web Push service: ``/push/<id>`` endpoints; every message's VAPID header is
    verified (py_vapid) and its body decrypted with the subscribed browser's key."""

    def __init__(self) -> None:
        self.browsers: dict[str, Browser] = {}
        self.delivered: list[Delivered] = []
        self.errors: list[str] = []
        self.recorder = Recorder(inspect=self._inspect)

    def start(self) -> PushService:
        self.recorder.start()
        return self

    def stop(self) -> None:
        self.recorder.stop()

    def browser(self, name: str, status: int | None = None) -> Browser:
        endpoint = f"http://127.0.0.1:{self.recorder.port}/push/{name}"
        browser = self.browsers[f"/push/{name}"] = Browser.make(endpoint)
        if status is not None:
            self.recorder.status[f"/push/{name}"] = status
        return browser

    def _inspect(self, req: Request) -> None:
        from py_vapid import Vapid02

        browser = self.browsers.get(req.path)
        if browser is None:
            self.errors.append(f"unknown endpoint {req.path}")
            return
        auth = req.headers.get("authorization", "")
        try:
            ok = bool(Vapid02.verify(auth))
            claims = _jwt_claims(auth)
            claims["k"] = auth.split("k=", 1)[-1].split(",", 1)[0]
            payload = browser.decrypt(req.body)
        except Exception as exc:
            self.errors.append(f"{req.path}: {exc!r}")
            return
        self.delivered.append(Delivered(req.path, req.headers, payload, ok, claims, req.received))


def _jwt_claims(auth: str) -> dict[str, Any]:
    """The claims of ``vapid t=<jwt>,k=<key>`` (unverified: Vapid02.verify checked it)."""
    token = auth.split("t=", 1)[-1].split(",", 1)[0]
    part = token.split(".")[1]
    return dict(json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))))
