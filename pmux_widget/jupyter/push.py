"""Web Push in the Jupyter server: the routes the panel and the service worker use, under the
server's ``base_url``, each behind Jupyter's authentication (403 without) except ``sw.js``:

- ``GET pmux/api/push/key`` → ``{"public_key": "<base64url>"}`` (the VAPID key, made once)
- ``GET|POST|DELETE pmux/api/push/subscriptions``: the browsers (no keys) / keep a browser's
  ``PushSubscription`` JSON (201) / forget one by ``endpoint`` (or its ``push:…`` id)
- ``POST pmux/api/push/presence``: what a page's panel shows and whether someone uses it
  (a session someone looks at is not pushed)
- ``POST pmux/api/push/answer``: Allow once / Deny, a plan's Approve / Keep planning or a
  question's option from a notification (its single-use token)
- ``GET pmux/api/notify``: channels (masked), browsers, their health, the remote answers
- ``GET pmux/sw.js``: the service worker (a JupyterHandler: an APIHandler's CSP would
  forbid it), the one public route: a static script a browser must fetch without Jupyter's
  XSRF header (``ServiceWorkerHandler`` says why); its scope is ``{base_url}pmux/``, its
  own folder (no ``Service-Worker-Allowed`` needed), which is enough to show notifications
  and reach any page of the origin (``clients.matchAll({includeUncontrolled: true})``).

The notifier (``pmux_widget.notify``) does the work on its own thread; the routes reach it
through ``ServerHub.run`` (our threads: files and SQLite never block the server's loop).
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import allow_unauthenticated, authorized
from jupyter_server.base.handlers import JupyterHandler
from tornado import web

from .handlers import _Base
from .service import Unavailable

if TYPE_CHECKING:
    from pmux_widget.notify.notifier import Notifier

__all__ = ["missing_package", "page_url", "routes"]

#: A subscription, a presence report or an answer is a few hundred bytes.
MAX_BODY = 16 * 1024
#: What a refused remote answer turns the notification into (the reason, in words).
REFUSED = {
    "already used": "This notification was already used",
    "expired": "Too late: the answer buttons expire after 5 minutes",
    "answered meanwhile": "Already answered (or the dialog changed)",
}


#: The packages a push route may import, and what installs each (pywebpush brings the rest).
_INSTALLS = {"apprise": "pip install 'pmux-widget[notify]'"}
_WEB_PUSH = "pip install 'pywebpush>=2.5,<3' 'py-vapid>=1.9,<2'"


def missing_package(exc: ImportError) -> str:
    """Why a route cannot answer when ``exc.name`` is not installed, and the fix."""
    name = (exc.name or "a package").split(".")[0]
    fix = _INSTALLS.get(name, _WEB_PUSH)
    return f"Web Push needs {name}, which this Jupyter server's Python lacks: {fix}"


def page_url(base_url: str, default_url: str) -> str:
    """The page a notification opens: JupyterLab, or Notebook 7's tree page when the server
    is Notebook's (its ``default_url``); ``?pmux-session=<id>`` selects the row."""
    page = "tree" if default_url.rstrip("/").endswith("/tree") else "lab"
    return base_url.rstrip("/") + "/" + page


def _device_of(user_agent: str) -> str:
    """A short name for a browser that did not name itself: "Chrome on Android"."""
    ua = user_agent
    browser = next(
        (name for key, name in (("Edg/", "Edge"), ("Firefox/", "Firefox"),
                                ("Chrome/", "Chrome"), ("Safari/", "Safari")) if key in ua),
        "a browser",
    )  # fmt: skip
    system = next(
        (name for key, name in (("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"),
                                ("Mac OS X", "macOS"), ("Windows", "Windows"),
                                ("Linux", "Linux")) if key in ua),
        "",
    )  # fmt: skip
    return f"{browser} on {system}" if system else browser


class _PushBase(_Base):
    def body(self) -> dict[str, Any] | None:
        """The JSON object posted, or None after answering 400/413."""
        if len(self.request.body or b"") > MAX_BODY:
            self.fail(413, f"body over {MAX_BODY} bytes")
            return None
        try:
            data = json.loads(self.request.body or b"null")
        except (ValueError, RecursionError):
            self.fail(400, "body is not valid JSON")
            return None
        if not isinstance(data, dict):
            self.fail(400, "body must be a JSON object")
            return None
        return data

    def notifier(self) -> Notifier:
        """From a worker thread: the server hub's notifier (Unavailable: 503 with why)."""
        from pmux_widget.notify.notifier import find

        hub, _ = self.service.ready()
        notifier = find(hub)
        if notifier is None:
            raise Unavailable("notifications are off in this server (PMUX_WIDGET_NOTIFY=0)")
        return notifier

    async def on_notifier(self, fn: Any) -> Any:
        """``fn(notifier)`` on our threads; None after answering 503 (the hub is not there,
        or a package Web Push needs is missing from this server's Python: the reason and the
        command that installs it, which the panel shows, never a bare 500)."""
        try:
            return await self.service.run(lambda: fn(self.notifier()))
        except Unavailable as exc:
            self.fail(503, exc.reason)
            return None
        except ImportError as exc:
            self.fail(503, missing_package(exc))
            return None

    def reply(self, status: int, data: Any) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(data))


class KeyHandler(_PushBase):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        key = await self.on_notifier(lambda n: n.public_key())
        if key is not None:
            self.reply(200, {"public_key": key})


class SubscriptionsHandler(_PushBase):
    """The browsers subscribed (GET), one more (POST, 201), one less (DELETE, 204; 404)."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        devices = await self.on_notifier(lambda n: n.devices())
        if devices is not None:
            self.reply(200, {"browsers": devices})

    @web.authenticated
    @authorized("write")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        data = self.body()
        if data is None:
            return
        device = data.get("device")
        if not isinstance(device, str) or not device.strip():
            device = _device_of(self.request.headers.get("User-Agent", ""))
        data = {**data, "device": device.strip()[:80]}
        try:
            listed = await self.on_notifier(lambda n: n.subscribe(data))
        except ValueError as exc:
            self.fail(400, str(exc))
            return
        if listed is not None:
            self.reply(201, listed)

    @web.authenticated
    @authorized("write")  # type: ignore[untyped-decorator]
    async def delete(self) -> None:
        data = self.body()
        if data is None:
            return
        which = data.get("endpoint") or data.get("id")
        if not isinstance(which, str) or not which:
            self.fail(400, 'body must be {"endpoint": "..."} (or {"id": "push:..."})')
            return
        removed = await self.on_notifier(lambda n: n.unsubscribe(which))
        if removed is None:
            return
        if not removed:
            self.fail(404, "no such subscription")
            return
        self.set_status(204)
        self.finish()


class PresenceHandler(_PushBase):
    """``{"device", "sessions": [ids shown], "visible", "focused", "input_at"?: ms}`` → 204."""

    # an open page reports every 30 s: not someone's activity (JupyterHub's idle culler
    # reads the server's last activity, which every tracked API request moves)
    _track_activity = False

    @web.authenticated
    @authorized
    async def post(self) -> None:
        data = self.body()
        if data is None:
            return
        device, sessions = data.get("device"), data.get("sessions")
        input_at = data.get("input_at")
        if not (
            isinstance(device, str)
            and device
            and len(device) <= 200
            and isinstance(sessions, list)
            and all(isinstance(s, str) for s in sessions)
            and isinstance(data.get("visible"), bool)
            and isinstance(data.get("focused"), bool)
            and (input_at is None or (isinstance(input_at, int) and input_at >= 0))
        ):
            self.fail(
                400,
                'body must be {"device": "...", "sessions": ["id", ...], "visible": bool, '
                '"focused": bool, "input_at"?: epoch ms}',
            )
            return

        def report(n: Notifier) -> bool:
            n.report_presence(
                device,
                frozenset(sessions[:1000]),
                visible=data["visible"],
                focused=data["focused"],
                input_at=input_at,
            )
            return True

        done = await self.on_notifier(report)
        if done:
            self.set_status(204)
            self.finish()


class AnswerHandler(_PushBase):
    """``{"token", "action": "approve"|"deny"|"answer", "option"?, "endpoint"?}`` from the
    service worker (``option``: the label of a question's option button): the
    token's checks (``notify.answers``), then the same checks as every action before a key is
    typed (``runtime.actions.act``). 202 answered; 400; 404 unknown token; 409 used, answered
    meanwhile or refused; 410 expired. A refusal replaces the notification with why.

    XSRF: the worker cannot send Jupyter's ``_xsrf`` value (a worker has no
    ``document.cookie``), so this one route skips that comparison and keeps the rest: the
    login cookie (or token), ``authorized("execute")``, a same-origin ``Origin``. A forged
    cross-site request still fails, because what authorizes the answer is the single-use
    token in the body (128 random bits that only the subscribed browser received,
    encrypted): a page on another site cannot know it."""

    def check_xsrf_cookie(self) -> None:
        if not hasattr(self, "_jupyter_current_user"):
            return  # tornado's early call: Jupyter's prepare() calls it again once authenticated
        if not self.check_origin():
            raise web.HTTPError(404)

    @web.authenticated
    @authorized("execute")  # type: ignore[untyped-decorator]
    async def post(self) -> None:
        data = self.body()
        if data is None:
            return
        token, action, endpoint = data.get("token"), data.get("action"), data.get("endpoint")
        option = data.get("option")
        if not (
            isinstance(token, str)
            and token
            and isinstance(action, str)
            and (option is None or isinstance(option, str))
        ):
            self.fail(
                400,
                'body must be {"token": "...", "action": "approve" | "deny" | "answer", '
                '"option"?: "<label>"}',
            )
            return
        agent = _device_of(self.request.headers.get("User-Agent", ""))

        def answer(n: Notifier) -> dict[str, Any]:
            from pmux_widget.runtime.action_request import answer_from
            from pmux_widget.system.clock import now_ms

            hub, _ = self.service.ready()
            device = next(
                (d["device"] or agent for d in _subs(n) if d["endpoint"] == endpoint), agent
            )
            result = n.answers.answer(
                token,
                action,
                host=n.host,
                device=device,
                session_of=hub.fleet.get,
                act=answer_from(hub, device, hub.record_action),  # re-checks the screen
                now=now_ms(),
                option=option,
            )
            if result.status in (409, 410) and result.session_id:
                title = "Not answered"
                body = REFUSED.get(result.reason, f"Refused: {result.reason}")
                n.update_notification(result.session_id, title, body)
            return {"status": result.status, "reason": result.reason,
                    "session_id": result.session_id}  # fmt: skip

        outcome = await self.on_notifier(answer)
        if outcome is not None:
            self.reply(int(outcome["status"]), outcome)


def _subs(n: Notifier) -> list[dict[str, str]]:
    from pmux_widget.notify import webpush

    subs = webpush.load_subscriptions(n.home)
    return [{"endpoint": s.endpoint, "device": s.device} for s in subs]


class NotifyHandler(_PushBase):
    """What the panel shows: ``notify.status.overview`` (channels masked, browsers, each one's
    last outcome, the settings) and the latest remote answers with their devices."""

    _track_activity = False  # the panel reads it every minute, by itself

    @web.authenticated
    @authorized
    async def get(self) -> None:
        from pmux_widget.notify.config import ConfigError
        from pmux_widget.notify.status import overview

        def read(n: Notifier) -> dict[str, Any]:
            try:
                data = overview(n.home)
            except ConfigError as exc:
                data = {"channels": [], "browsers": n.devices(), "settings": {}, "error": str(exc)}
            data["answers"] = n.answers.history()[-20:]
            data["secure_hint"] = "Web Push needs https, or this server at localhost"
            return data

        data = await self.on_notifier(read)
        if data is not None:
            self.reply(200, data)


class ServiceWorkerHandler(JupyterHandler):
    """``{base_url}pmux/sw.js`` (a JupyterHandler: an APIHandler sends ``default-src
    'none'``), public like jupyter_server's own static files.

    Why no login: a browser fetches a worker's script itself, with ``Sec-Fetch-Mode:
    same-origin`` and ``Sec-Fetch-Dest: serviceworker``, and no way to add an ``_xsrf``
    header. JupyterHub's single-user server (``HubOAuth._get_user_cookie``) accepts its login
    cookie on a GET only for a navigation, a websocket or a same-origin ``no-cors`` fetch, so
    it answers 302 to its OAuth page, and a worker's script behind a redirect is refused. The
    script is static and holds no secret; every route it calls keeps Jupyter's auth (the
    answer route its single-use token too)."""

    @allow_unauthenticated
    def get(self) -> None:
        script = _worker_script()
        self.set_header("Content-Type", "text/javascript; charset=utf-8")
        # a changed worker must reach browsers at their next update check
        self.set_header("Cache-Control", "no-cache")
        self.finish(script)


@functools.cache
def _worker_script() -> str:
    """sw.js, read once per process: the handler runs on the server's event loop."""
    return resources.files("pmux_widget.jupyter").joinpath("sw.js").read_text()


def routes() -> list[tuple[str, type[web.RequestHandler]]]:
    return [
        (r"pmux/api/push/key", KeyHandler),
        (r"pmux/api/push/subscriptions", SubscriptionsHandler),
        (r"pmux/api/push/presence", PresenceHandler),
        (r"pmux/api/push/answer", AnswerHandler),
        (r"pmux/api/notify", NotifyHandler),
        (r"pmux/sw\.js", ServiceWorkerHandler),
    ]
