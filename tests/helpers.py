"""Test helpers: HTTP calls to a hub, polling with deadlines (tests never sleep blindly)."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.02,
    what: str = "condition",
) -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def request(
    port: int,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
) -> tuple[int, bytes, dict[str, str]]:
    """One raw HTTP request to 127.0.0.1:``port``; returns (status, body, headers)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_host="Host" in (headers or {}))
        for key, value in (headers or {}).items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders()
        if body is not None:
            conn.send(body)
        response = conn.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        conn.close()


def post_hook(port: int, token: str, payload: Any, **headers: str) -> int:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    status, _, _ = request(
        port,
        "POST",
        "/api/hook",
        body,
        {"X-Pmux-Token": token, "Content-Type": "application/json", **headers},
    )
    return status


def get_sessions(port: int, token: str) -> dict[str, Any]:
    status, body, _ = request(port, "GET", "/api/sessions", headers={"X-Pmux-Token": token})
    assert status == 200, (status, body)
    return json.loads(body)
