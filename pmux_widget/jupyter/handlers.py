"""The routes, under the server's ``base_url``, behind Jupyter's own authentication (token or
login cookie; XSRF on every POST; 403 without): ``GET pmux/api/sessions``,
``GET pmux/api/stream`` (websocket), ``POST pmux/api/actions``.

No handler blocks the server's loop: each reaches the hub through ``ServerHub`` (our own
threads, a timeout, then 503 with the reason), so a slow or hung hub leaves every other
JupyterLab request answering.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized, ws_authenticated
from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.base.websocket import WebSocketMixin
from tornado import web, websocket

from .service import SERVICE_KEY, ServerHub, Unavailable

if TYPE_CHECKING:
    from .stream import Client

__all__ = [
    "AUTH_RESOURCE",
    "TEST_ROUTES",
    "ActionsHandler",
    "SessionsHandler",
    "StreamHandler",
    "routes",
]

#: The resource a custom authorizer is asked about (reading sessions: "read"; acting on them,
#: which types into a terminal: "execute").
AUTH_RESOURCE = "pmux_widget"
#: ``PMUX_WIDGET_TEST_ROUTES=1`` adds ``POST pmux/api/test/hang`` (tests only).
TEST_ROUTES = "PMUX_WIDGET_TEST_ROUTES"
#: An action's body is a name, a session id and at most a prompt (the hub's own limit).
MAX_ACTION_BYTES = 256 * 1024


class _Base(APIHandler):
    auth_resource = AUTH_RESOURCE

    @property
    def service(self) -> ServerHub:
        service: ServerHub = self.settings[SERVICE_KEY]
        return service

    def set_default_headers(self) -> None:
        super().set_default_headers()
        self.set_header("Cache-Control", "no-store")

    def fail(self, status: int, reason: str) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": reason}))

    def json_body(self, not_json: str) -> tuple[bool, Any]:
        """``(True, the body as JSON)`` (``null`` when empty); ``(False, None)`` once it has
        answered 413 (over ``MAX_ACTION_BYTES``) or 400 ``not_json`` (not JSON)."""
        if len(self.request.body or b"") > MAX_ACTION_BYTES:
            self.fail(413, f"body over {MAX_ACTION_BYTES} bytes")
            return False, None
        try:
            return True, json.loads(self.request.body or b"null")
        except (ValueError, RecursionError):
            self.fail(400, not_json)
            return False, None

    async def act_and_answer(
        self, work: Callable[[], dict[str, Any]], status: int, failed: str, log: str
    ) -> None:
        """Run ``work`` on the hub's threads and answer its JSON with ``status``: 503 when
        the server runs no hub, 404 (no such session) or 409 when it is refused, 409
        ``"{failed}: {error}"`` when it fails otherwise (logged as ``log``)."""
        # imported here: loading the extension stays light (the hub's thread imports it too)
        from pmux_widget.runtime.action_outcome import ActionError

        try:
            answer = await self.service.run(work)
        except Unavailable as exc:
            self.fail(503, exc.reason)
            return
        except ActionError as refused:
            self.fail(404 if refused.unknown else 409, refused.reason)
            return
        except Exception as exc:  # tmux vanished mid-way, a PTY or OS error: say so, 409
            self.log.exception("pmux-widget | %s", log)
            self.fail(409, f"{failed}: {exc}")
            return
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(answer))


class SessionsHandler(_Base):
    """The contract JSON of ``status --json`` (``?ended=1``: the ended sessions too); each
    session also says which JupyterLab terminal runs it (``terminal``: null for now)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        ended = self.get_query_argument("ended", "0") not in ("", "0", "false", "no")
        try:
            data: dict[str, Any] = await self.service.call(
                lambda hub: hub.snapshot_json(include_ended=ended)
            )
        except Unavailable as exc:
            self.fail(503, exc.reason)
            return

        def serialized() -> str:  # 200 sessions are ~200 KB: not on the loop
            for session in data.get("sessions", []):
                session.setdefault("terminal", None)
            return json.dumps(data)

        text = await self.service.run(serialized)
        self.set_header("Content-Type", "application/json")
        self.finish(text)


class ActionsHandler(_Base):
    """``{"action", "session_id", "text"?}`` → the hub's HTTP actions' codes and bodies: 202
    delivered, 400 bad body, 404 unknown session, 409 refused (``{"error": reason}``); 413
    over 256 KB; 503 when the server runs no hub. The checks and keys: ``runtime.actions``."""

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        length = self.request.headers.get("Content-Length")
        if len(self.request.body or b"") > MAX_ACTION_BYTES or (
            length is not None and length.isdigit() and int(length) > MAX_ACTION_BYTES
        ):
            self.fail(413, f"body over {MAX_ACTION_BYTES} bytes")
            return
        # imported here: loading the extension stays light (the hub's thread imports it too)
        from pmux_widget.runtime.action_request import BadActionBody, answer_json, parse_action

        try:
            asked = parse_action(self.request.body)
        except BadActionBody as bad:
            self.fail(400, str(bad))
            return
        service = self.service

        def run() -> dict[str, Any]:
            hub, _ = service.ready()
            return answer_json(asked.act(hub, record=hub.record_action))

        await self.act_and_answer(run, 202, "the action failed", f"action {asked.action} failed")


class HangHandler(_Base):
    """Tests only: hold the hub's thread busy for ``seconds`` (a hung hub)."""

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        seconds = float(self.get_query_argument("seconds", "30"))
        try:
            await self.service.run(lambda: self.service.hang(seconds))
        except Unavailable as exc:
            self.fail(503, exc.reason)
            return
        self.set_status(202)
        self.finish("{}")


class StreamHandler(WebSocketMixin, websocket.WebSocketHandler, JupyterHandler):
    """The widget's traits and messages over a websocket (see :mod:`.stream`). Jupyter's
    authentication (403 without), its Origin rules (a foreign Origin is refused) and pings."""

    auth_resource = AUTH_RESOURCE
    _client: Client | None = None
    _may_act = False

    @property
    def service(self) -> ServerHub:
        service: ServerHub = self.settings[SERVICE_KEY]
        return service

    async def pre_get(self) -> None:
        user = self.current_user
        allowed = await ensure_async(
            self.authorizer.is_authorized(self, user, "read", AUTH_RESOURCE)
        )
        if not allowed:
            raise web.HTTPError(403)
        self._may_act = bool(
            await ensure_async(self.authorizer.is_authorized(self, user, "execute", AUTH_RESOURCE))
        )
        try:
            self._hub_stream = await self.service.run(self.service.ready)
        except Unavailable as exc:
            raise web.HTTPError(503, exc.reason) from None

    @ws_authenticated
    async def get(self, *args: Any, **kwargs: Any) -> None:
        await self.pre_get()
        result = super().get(*args, **kwargs)
        if result is not None:
            await result

    async def open(self, *args: Any, **kwargs: Any) -> None:
        super().open(*args, **kwargs)  # the mixin's pings
        from .stream import Client

        _, stream = self._hub_stream
        client = self._client = Client(self._write)
        stream.add(client)
        try:
            first = await self.service.run(stream.first_frame)
        except Exception as exc:
            self.log.warning("pmux-widget | stream: no first frame: %s", exc)
            self.close(1011, "the pmux-widget hub is not available")
            return
        client.started(first)

    def _write(self, text: str) -> None:
        try:
            written = self.write_message(text)
        except websocket.WebSocketClosedError:
            self._forget()
            return
        # a page that goes while a frame is on its way: nothing to report
        written.add_done_callback(lambda done: done.cancelled() or done.exception())

    def on_message(self, message: str | bytes) -> None:
        client = self._client
        if client is None:
            return
        try:
            frame = json.loads(message)
        except (ValueError, RecursionError):
            return
        if not isinstance(frame, dict):
            return
        _, stream = self._hub_stream
        if frame.get("type") == "traits":
            stream.set_traits(frame.get("traits"), client)
        elif frame.get("type") == "msg":
            content = frame.get("content")
            reply = stream.reply_to(client)
            if not self._may_act and isinstance(content, dict):
                if content.get("type") == "action":
                    reply(
                        {
                            "type": "action_result",
                            "session_id": str(content.get("session_id", "")),
                            "action": str(content.get("action", "")),
                            "ok": False,
                            "message": "not authorized to act on sessions",
                            "queued": False,
                        }
                    )
                if content.get("type") != "peek":
                    return
            # quick, but install_hooks writes a file: off the loop
            self.service.submit(lambda: stream.feed.handle(content, reply))

    def on_close(self) -> None:
        self._forget()

    def _forget(self) -> None:
        client, self._client = self._client, None
        stream = getattr(self, "_hub_stream", (None, None))[1]
        if client is not None and stream is not None:
            stream.remove(client)


def routes() -> list[tuple[str, type[web.RequestHandler]]]:
    """The extension's handlers (the ExtensionApp puts the server's base_url in front)."""
    found: list[tuple[str, type[web.RequestHandler]]] = [
        (r"pmux/api/sessions", SessionsHandler),
        (r"pmux/api/actions", ActionsHandler),
        (r"pmux/api/stream", StreamHandler),
    ]
    if os.environ.get(TEST_ROUTES) == "1":
        found.append((r"pmux/api/test/hang", HangHandler))
    return found
