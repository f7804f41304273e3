"""Test helpers: HTTP calls to a hub, polling with deadlines (tests never sleep blindly)."""

from __future__ import annotations

import collections
import http.client
import json
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import requests

from pmux_widget.core.signals import HookSignal
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

T = TypeVar("T")

#: Debian's Chromium (browsers cannot be downloaded here), and the flags a headless run needs.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def launch_chromium(playwright: Any) -> Any:
    """Headless Debian Chromium through Playwright."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


class WaitTimeout(AssertionError, TimeoutError):
    """A condition was not met in time: a test failure (AssertionError) that code written
    against the harness's ``TimeoutError`` can still catch."""


#: Raised by a predicate while files appear or are rewritten under it: "not yet", not a failure.
NOT_YET: tuple[type[BaseException], ...] = (OSError, ValueError, KeyError)


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 10.0,
    interval: float = 0.02,
    what: str | Callable[[], str] = "condition",
    *,
    not_yet: tuple[type[BaseException], ...] = NOT_YET,
) -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds.

    The one waiting helper of the tests. ``what`` names the condition in the failure; a
    callable is asked only then (for messages that show the state at the deadline, such as a
    process's output so far). Exceptions in ``not_yet`` count as "not yet"; the last one is
    named in the failure. Raises :class:`WaitTimeout`.
    """
    deadline = time.monotonic() + timeout
    last_exc: BaseException | None = None
    while True:
        try:
            value = predicate()
        except not_yet as exc:
            last_exc, value = exc, None
        if value:
            return value
        if time.monotonic() > deadline:
            described = what() if callable(what) else f"waiting for {what}"
            detail = f" (last error: {last_exc!r})" if last_exc else ""
            raise WaitTimeout(f"timed out after {timeout} s {described}{detail}")
        time.sleep(interval)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def get_sessions(port: int, token: str, *, ended: bool = False) -> dict[str, Any]:
    """``GET /api/sessions`` (``ended``: ``?ended=1``, the ended sessions listed too)."""
    path = "/api/sessions?ended=1" if ended else "/api/sessions"
    status, body, _ = request(port, "GET", path, headers={"X-Pmux-Token": token})
    assert status == 200, (status, body)
    return json.loads(body)


def worker_script(url: str, *, timeout: float) -> requests.Response:
    """Fetch the push service worker's script as a browser's worker fetch does (no cookie, no
    XSRF header): it must be served (200, not a login redirect), as a browser under
    JupyterHub needs it."""
    answer = requests.get(
        url,
        headers={"Sec-Fetch-Mode": "same-origin", "Sec-Fetch-Dest": "serviceworker"},
        allow_redirects=False,
        timeout=timeout,
    )
    assert answer.status_code == 200 and "notificationclick" in answer.text, (
        answer.status_code,
        answer.text[:300],
    )
    return answer


#: Counts the push worker's finished and running showNotification() calls (see
#: :class:`WorkerNotifications`).
_SHOW_COUNTER = """() => {
  if (self.__pmuxShows !== undefined) return;
  self.__pmuxShows = 0;
  self.__pmuxShowing = 0;
  const real = ServiceWorkerRegistration.prototype.showNotification;
  ServiceWorkerRegistration.prototype.showNotification = async function (...args) {
    self.__pmuxShowing += 1;
    try { return await real.apply(this, args); }
    finally { self.__pmuxShowing -= 1; self.__pmuxShows += 1; }
  };
}"""


class WorkerNotifications:
    """The push worker's notifications, read as a test may read them.

    Chromium's ``getNotifications()`` syncs the browser's store with what the platform
    displays: a call that runs while a ``showNotification()`` is under way drops the new
    notification from the store as "not displayed", and it is never listed again. A test that
    polls while the worker shows loses notifications that way (6 of 150 show/close cycles with
    a poll every 20 ms; 0 of 150 when each read waited for the show: issue 37). So a read here
    waits until the worker has finished the shows the test caused (``expect()`` says one more
    is coming) and runs none: until then it raises ``ValueError``, which ``wait_until`` takes
    as "not yet"."""

    def __init__(self, worker: Any) -> None:
        self.worker = worker
        worker.evaluate(_SHOW_COUNTER)
        self.expected = int(worker.evaluate("self.__pmuxShows"))

    def expect(self, shows: int = 1) -> None:
        """The test just caused ``shows`` more shows (a push, a refused answer)."""
        self.expected += shows

    def __call__(self) -> list[dict[str, Any]]:
        """The shown notifications: title, body, tag, data and actions ([action, title])."""
        found: dict[str, Any] | None = self.worker.evaluate(
            """async (expected) => {
                 if (self.__pmuxShowing !== 0 || self.__pmuxShows < expected) return null;
                 return {all: (await self.registration.getNotifications()).map(n => ({
                   title: n.title, body: n.body, tag: n.tag, data: n.data,
                   actions: n.actions.map(a => [a.action, a.title])}))}; }""",
            self.expected,
        )
        if found is None:
            raise ValueError("the worker is still showing a notification")
        listed: list[dict[str, Any]] = found["all"]
        return listed

    def describe(self) -> str:
        """What a failure's message shows (never raises)."""
        try:
            return repr(self())
        except Exception as exc:  # still showing, or the worker is gone
            return f"({exc})"


def running(proc: subprocess.Popen[Any] | None, what: str, log: Callable[[], str]) -> bool:
    """True while ``proc`` runs; once it has exited, an AssertionError with its log, so that a
    wait for it to answer fails at once rather than at its deadline."""
    assert proc is not None
    if proc.poll() is not None:
        raise AssertionError(f"{what} exited; its log:\n{log()}")
    return True


def runtime_files(home: PmuxHome) -> list[dict[str, Any]]:
    """Every hub's runtime file in ``home``, read (one being written or removed: passed over)."""
    found = []
    for path in sorted(home.runtime_dir.glob("*.json")):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found


def count_hooks(hub: Hub) -> collections.Counter[str]:
    """The hook events ``hub`` accepts from now on (before it starts: its spool replay too),
    counted by name as they arrive."""
    arrived: collections.Counter[str] = collections.Counter()
    accept = hub.accept_hook

    def counting(
        signal: HookSignal, ppid: int | None, hook_id: tuple[int, int] | None = None
    ) -> None:
        arrived[signal.event_name] += 1
        accept(signal, ppid, hook_id)

    hub.accept_hook = counting  # type: ignore[method-assign]
    return arrived
