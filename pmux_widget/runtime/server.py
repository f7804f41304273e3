"""The hub's HTTP face: ``POST /api/hook``, ``GET /api/health``, ``GET /api/sessions``,
``POST /api/sessions/<id>/actions``, ``POST /api/decisions`` (an Agent SDK call that waits),
``POST /api/sessions/<id>/seen`` (a look another hub of this machine was told of).

Bad input gets a 4xx with a JSON reason, never a 5xx and never a crash. Checks, in order:
loopback ``Host`` (403: defeats DNS rebinding), token (401 missing, 403 wrong; compared in
constant time), size (413 over 16 MB, checked before the body is read), JSON (400). No CORS
headers, no state-changing GET.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import tornado.web

from pmux_widget._version import __version__
from pmux_widget.core.model import ActionName, Session
from pmux_widget.core.signals import HookSignal, Invalid, parse_hook
from pmux_widget.system.clock import now_ms

from .action_request import BadActionBody, answer_json, parse_action
from .actions import ActionError
from .decisions import Decisions, HubGone, Pending, find_session

__all__ = ["DRAIN_LIMIT", "MAX_BODY_BYTES", "HubLike", "make_app"]

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 16 * 1024 * 1024
#: An action's body is a name and at most a prompt.
MAX_ACTION_BYTES = 256 * 1024
#: Bodies up to this size are read and dropped before answering 413; bigger: closed at once.
DRAIN_LIMIT = 64 * 1024 * 1024
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


class HubLike(Protocol):
    """What the HTTP layer needs from the hub (called on the hub's own loop)."""

    token: str

    def accept_hook(
        self, signal: HookSignal, ppid: int | None, hook_id: tuple[int, int] | None = None
    ) -> None: ...

    def snapshot_json(self, include_ended: bool = False) -> dict[str, Any]: ...

    @property
    def fleet(self) -> Mapping[str, Session]: ...

    @property
    def claude_dir(self) -> Path: ...

    def record_action(self, session_id: str, action: ActionName) -> None: ...

    def seen(self, session_id: str, *, spread: bool = True) -> None: ...

    @property
    def decisions(self) -> Decisions: ...


def host_is_loopback(host: str) -> bool:
    """``127.0.0.1``, ``localhost`` or ``[::1]``, with any port (or none)."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[: host.find("]") + 1] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return name in _LOOPBACK_HOSTS


def parse_sent(value: str | None, now: int) -> int:
    """``X-Pmux-Sent`` (ms epoch) if sane, else the receive time; never in the future."""
    try:
        sent = int(value) if value else now
    except ValueError:
        return now
    return min(sent, now) if sent > 0 else now


def parse_int(value: str | None) -> int | None:
    try:
        number = int(value) if value else None
    except ValueError:
        return None
    return number if number and number > 0 else None


def _hook_id(headers: Mapping[str, str]) -> tuple[int, int] | None:
    """(script pid, X-Pmux-Sent as sent): the name its spool entry or leftover would have."""
    pid, sent = parse_int(headers.get("X-Pmux-Hook")), parse_int(headers.get("X-Pmux-Sent"))
    return (pid, sent) if pid and sent else None


class _Base(tornado.web.RequestHandler):
    hub: HubLike

    def initialize(self, hub: HubLike) -> None:
        self.hub = hub

    def set_default_headers(self) -> None:
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    def fail(self, status: int, reason: str) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": reason}))

    def prepare(self) -> None:
        if not host_is_loopback(self.request.host or ""):
            self.fail(403, "Host must be a loopback name (127.0.0.1, localhost, [::1])")

    def check_token(self) -> bool:
        given = self.request.headers.get("X-Pmux-Token")
        if not given:
            self.fail(401, "missing X-Pmux-Token header")
            return False
        if not hmac.compare_digest(given.encode(), self.hub.token.encode()):
            self.fail(403, "wrong token")
            return False
        return True

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": self._reason}))


@tornado.web.stream_request_body
class HookHandler(_Base):
    """Receives one hook payload, applies it, answers 204 once the state is updated.

    An oversized body is drained (up to :data:`DRAIN_LIMIT`) before the 413 is sent, so that
    clients that only read the answer after sending everything still get it.
    """

    def prepare(self) -> None:
        super().prepare()
        if self._finished:
            return
        if self.request.method != "POST":
            self.fail(405, "use POST")
            return
        if not self.check_token():
            return
        self._chunks: list[bytes] = []
        self._size = 0
        self._too_large = False
        length = self.request.headers.get("Content-Length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                self.fail(400, "bad Content-Length")
                return
            if declared > DRAIN_LIMIT:
                self.fail(413, f"body over {MAX_BODY_BYTES} bytes")
            elif declared > MAX_BODY_BYTES:
                self._too_large = True

    def data_received(self, chunk: bytes) -> None:
        if self._finished or self._too_large:
            return
        self._size += len(chunk)
        if self._size > MAX_BODY_BYTES:
            self._too_large = True
            self._chunks = []
            return
        self._chunks.append(chunk)

    def post(self) -> None:
        if self._finished:
            return
        if self._too_large:
            self.fail(413, f"body over {MAX_BODY_BYTES} bytes")
            return
        headers = self.request.headers
        now = now_ms()
        signal = parse_hook(
            b"".join(self._chunks),
            at=parse_sent(headers.get("X-Pmux-Sent"), now),
            pane=headers.get("X-Pmux-Pane") or None,
            agent=headers.get("X-Pmux-Agent") or None,
        )
        if isinstance(signal, Invalid):
            self.fail(400, signal.reason)
            return
        try:
            self.hub.accept_hook(signal, parse_int(headers.get("X-Pmux-Ppid")), _hook_id(headers))
        except Exception:  # a bug in the hub must not turn into a 5xx for the hook
            log.exception("hub failed to apply %s", type(signal).__name__)
        self.set_status(204)
        self.finish()


class HealthHandler(_Base):
    def get(self) -> None:
        self.finish({"ok": True, "version": __version__})


class SessionsHandler(_Base):
    def get(self) -> None:
        if not self.check_token():
            return
        # ?ended=1: the ended sessions too (the history's); the counts stay the live ones'
        ended = self.get_query_argument("ended", "0") not in ("", "0", "false", "no")
        self.finish(self.hub.snapshot_json(include_ended=ended))


class _SmallPost(_Base):
    """A route that takes a POST with a token and a small body (at most
    :data:`MAX_ACTION_BYTES`): anything else is refused before the body is read."""

    def prepare(self) -> None:
        super().prepare()
        if self._finished:
            return
        if self.request.method != "POST":
            self.fail(405, "use POST")
            return
        if not self.check_token():
            return
        length = self.request.headers.get("Content-Length")
        if length is not None and (not length.isdigit() or int(length) > MAX_ACTION_BYTES):
            self.fail(413 if length.isdigit() else 400, "bad or oversized body")


class ActionsHandler(_SmallPost):
    """``POST /api/sessions/<id>/actions`` with ``{"action": ..., "text": ...}``: 202 when the
    keys were delivered, 404 for an unknown session, 409 refused (with the reason), 400 for a
    bad body. The checks and the typing run on a worker thread: never on the hub's loop."""

    async def post(self, session_id: str) -> None:
        if self._finished:
            return
        try:
            asked = parse_action(self.request.body, session_id)
        except BadActionBody as bad:
            self.fail(400, str(bad))
            return
        hub = self.hub
        try:
            result = await asyncio.get_running_loop().run_in_executor(
                None,
                lambda: asked.act(hub, record=hub.record_action),
            )
        except ActionError as refused:
            self.fail(404 if refused.unknown else 409, refused.reason)
            return
        except Exception as exc:  # tmux vanished mid-way, an OS error: say so, 409
            log.exception("action %s on %s failed", asked.action, session_id)
            self.fail(409, f"the action failed: {exc}")
            return
        self.set_status(202)
        self.finish(answer_json(result))


class SeenHandler(_SmallPost):
    """``POST /api/sessions/<id>/seen``: another hub of this machine was told of a look at the
    session (``runtime.looks``); 204, and a review here ends too (not told on again)."""

    def post(self, session_id: str) -> None:
        if self._finished:
            return
        self.hub.seen(session_id, spread=False)
        self.set_status(204)
        self.finish()


#: How long a waiting call may look for its session (the SDK asks ~50 ms before the hook
#: that may be the hub's first news of the run).
SESSION_WAIT_S = 3.0
_SESSION_POLL_S = 0.05


class DecisionHandler(_SmallPost):
    """``POST /api/decisions`` with ``{"pid", "tool_use_id", "tool_name", "input"}``: an Agent
    SDK permission call of program ``pid`` waits on our handler (``pmux_widget.can_use_tool``
    in another process). A long poll: the answer comes when an action on the row decides it
    (200, the decision); 409 when no session of that program is known; 503 when the hub stops.
    The connection closing (the program or its kernel gone) drops the call."""

    _pending: Pending | None = None

    async def post(self) -> None:
        if self._finished:
            return
        try:
            body = json.loads(self.request.body or b"null")
        except (ValueError, RecursionError):
            body = None
        shape = '{"pid": <int>, "tool_use_id": "...", "tool_name": "...", "input": {...}}'
        if not (
            isinstance(body, dict)
            and isinstance(body.get("pid"), int)
            and isinstance(body.get("tool_use_id"), str)
            and body["tool_use_id"]
            and isinstance(body.get("tool_name"), str)
            and isinstance(body.get("input"), dict)
        ):
            self.fail(400, f"body must be {shape}")
            return
        hub, loop = self.hub, asyncio.get_running_loop()
        deadline = loop.time() + SESSION_WAIT_S
        while True:  # /proc reads: off the hub's loop
            sid = await loop.run_in_executor(
                None, find_session, hub.fleet, body["pid"], body["tool_use_id"]
            )
            if sid is not None or loop.time() >= deadline or self.request.connection is None:
                break
            await asyncio.sleep(_SESSION_POLL_S)
        if sid is None:
            self.fail(409, f"no running Claude session of process {body['pid']} is known here")
            return
        try:
            pending = hub.decisions.register(
                sid, body["tool_use_id"], body["tool_name"], body["input"]
            )
        except HubGone:
            self.fail(503, "the hub is stopping")
            return
        self._pending = pending
        try:
            decision = await asyncio.wrap_future(pending.future)
        except HubGone:
            self.fail(503, "the hub is stopping")
            return
        except asyncio.CancelledError:  # dropped: its connection closed
            return
        self.finish({"session_id": sid, **decision.to_json()})

    def on_connection_close(self) -> None:
        if self._pending is not None:
            self.hub.decisions.drop(self._pending)


class NotFoundHandler(_Base):
    def prepare(self) -> None:
        super().prepare()
        if not self._finished:
            self.fail(404, "no such route")


def make_app(hub: HubLike) -> tornado.web.Application:
    """The Tornado application bound to ``hub``."""
    return tornado.web.Application(
        [
            (r"/api/hook", HookHandler, {"hub": hub}),
            (r"/api/health", HealthHandler, {"hub": hub}),
            (r"/api/sessions", SessionsHandler, {"hub": hub}),
            (r"/api/sessions/([^/]+)/actions", ActionsHandler, {"hub": hub}),
            (r"/api/sessions/([^/]+)/seen", SeenHandler, {"hub": hub}),
            (r"/api/decisions", DecisionHandler, {"hub": hub}),
        ],
        default_handler_class=NotFoundHandler,
        default_handler_args={"hub": hub},
        compress_response=False,
        xsrf_cookies=False,
        log_function=lambda handler: None,
    )
