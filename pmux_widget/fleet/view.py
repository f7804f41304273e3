"""A hub-like view of the fleet, so the status widget can show every host without changes.

:class:`FleetView` offers what ``StatusWidget`` reads from a hub — ``fleet`` (sessions by id),
``call``, ``add_listener`` (changes, fleet), ``loop`` — fed by a :class:`Subscriber` on its
thread, plus ``hosts`` (each host online or not, and its last beat), which the widget sends
along so the front-end groups by host, then workspace. Rows keep their own workspace and host;
a session its host published as ended is ended here too (the widget's "Ended" section, out of
the counts).
Listeners hear of each session change and of each host going online or offline (with no
change then, when only a host moved): a beat alone tells nobody. A session another host
publishes INTO needs-input or review carries a notification, in the words this machine's
tracker uses, so a fleet widget notifies as a local one does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import secrets
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import nats.errors

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.core.model import ActionName, Change, Notification, Session, State
from pmux_widget.core.wording import notification_text
from pmux_widget.runtime.action_outcome import ActionError, ActionResult
from pmux_widget.system.home import PmuxHome

from .subscriber import Subscriber, is_ended

__all__ = ["FleetView", "fleet_notification", "fleet_session"]

ViewListener = Callable[[list[Change], dict[str, Session]], None]


def fleet_session(data: dict[str, Any], host: str) -> Session:
    """A :class:`Session` from a fleet JSON, with the host it was published under, ended when
    the JSON says ``"ended": true`` (and only then: an old publisher's JSON has no such field)."""
    session = Session.from_record(data)
    ended = is_ended(data)
    if session.ended != ended:  # a stray value: ``Tracking`` would take any truthy one
        session = session.replace(tracking=session.tracking.replace(ended=ended))
    return session if session.host == host else session.replace(host=host)


def fleet_notification(before: Session | None, after: Session) -> Notification | None:
    """The notification of a published change that moved a session into needs-input or review
    (core.tracker notifies the same way for this machine's sessions), its title led by the
    host."""
    if after.ended or after.state not in (State.NEEDS_INPUT, State.REVIEW):
        return None
    if before is not None and before.state is after.state:
        return None
    title, body = notification_text(after)
    if after.host:  # which machine: two hosts may run sessions of the same name
        title = f"{after.host}: {title}"
    return Notification(after.session_id, after.state, title, body, after.state_since)


#: How long an action on another host waits for that host's answer (its checks read the
#: screen: about a second at most on a loaded machine).
ACT_TIMEOUT_S = 10.0

log = logging.getLogger(__name__)


def _log_refusal(done: concurrent.futures.Future[dict[str, Any]], host: str, what: str) -> None:
    """A look or a dismiss told to another host: only its failure is worth a line (debug:
    a look at a row that was no review is refused, and that is no news)."""
    try:
        answer = done.result()
    except Exception as exc:
        log.debug("fleet: %s could not reach %s: %s", what, host, exc)
        return
    if answer.get("code") != 202:
        log.debug("fleet: %s refused by %s: %s", what, host, answer.get("error"))


class FleetView:
    """Read-only, hub-shaped access to a running :class:`Subscriber`."""

    def __init__(
        self,
        subscriber: Subscriber,
        *,
        home: str | os.PathLike[str] | None = None,
        claude_home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.subscriber = subscriber
        self.home = PmuxHome.resolve(home)
        self.claude_dir: Path = ClaudeHome.resolve(claude_home).root
        self.port = 0
        self.hub_id = f"fleet-{secrets.token_hex(4)}"
        self.fleet: dict[str, Session] = {}
        self._listeners: list[ViewListener] = []
        self._where: dict[str, str] = {}  # session id → host
        self._online: dict[str, bool] = {}  # host → online, as last told to the listeners
        self._unlisten: Callable[[], None] = self.call(self._load)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        loop = self.subscriber._loop
        assert loop is not None, "subscriber not started"
        return loop

    @property
    def running(self) -> bool:
        return self.subscriber._thread is not None and self.subscriber._thread.is_alive()

    def call(self, fn: Callable[[], Any], timeout: float = 10) -> Any:
        """Run ``fn`` on the subscriber's thread (where ``fleet`` changes) and return it."""

        thread = self.subscriber._thread
        if thread is None or not thread.is_alive() or threading.current_thread() is thread:
            return fn()  # stopped (nothing changes any more), or already on that thread

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout)

    def add_listener(self, listener: ViewListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def sessions(self) -> list[Session]:
        return list(self.fleet.values())

    @property
    def hosts(self) -> dict[str, dict[str, Any]]:
        """``{host: {"online": bool, "last_seen": ms}}``, as ``status --json --fleet`` says."""
        return self.subscriber.hosts()

    @property
    def store(self) -> None:
        """No store: the fleet bucket holds each session's current state, not its history
        (the widget's timeline strips start when the view does)."""
        return None

    def dismiss(self, session_id: str) -> None:
        """Dismiss another host's review: told to that host's hub (not waited for: its row's
        next change says whether it ended)."""
        self._tell(session_id, "dismiss")

    def seen(self, session_id: str) -> None:
        """A look at another host's row (its peek or attach opened here): told to that host's
        hub, which ends a review as for a look of its own (``user:seen``) and tells the
        machine's other hubs. Not waited for."""
        self._tell(session_id, "seen")

    def act(
        self,
        session_id: str,
        action: ActionName,
        *,
        text: str | None = None,
        options: Sequence[str] | None = None,
        mode: str | None = None,
        token: str | None = None,
        timeout: float = ACT_TIMEOUT_S,
    ) -> ActionResult:
        """An action on another host's session: a NATS request to that host's hub, which
        makes every check of a local action (docs/fleet.md); its refusal is ours."""
        host = self._where.get(session_id)
        if host is None:
            raise ActionError(f"no session {session_id} in the fleet", unknown=True)
        request: dict[str, Any] = {"session_id": session_id, "action": action, "text": text,
                                   "options": list(options) if options else None,
                                   "mode": mode, "token": token}  # fmt: skip
        try:
            answer = self.subscriber.request(host, request, timeout).result(timeout + 1)
        except nats.errors.NoRespondersError:
            raise ActionError(f"{host}'s hub is not connected to the fleet") from None
        except (TimeoutError, nats.errors.TimeoutError, concurrent.futures.TimeoutError):
            raise ActionError(f"{host}'s hub did not answer within {timeout:g} s") from None
        except (ConnectionError, ValueError) as exc:
            raise ActionError(f"the action could not reach {host}: {exc}") from None
        code = answer.get("code")
        if code != 202:
            reason = str(answer.get("error") or f"{host} refused it ({code})")
            raise ActionError(reason, unknown=code == 404)
        return ActionResult(session_id, action, (), queued=answer.get("queued") is True)

    def _tell(self, session_id: str, what: str) -> None:
        host = self._where.get(session_id)
        if host is None:
            return
        future = self.subscriber.request(host, {"session_id": session_id, "action": what})
        future.add_done_callback(lambda done: _log_refusal(done, host, what))

    def _load(self) -> Callable[[], None]:
        """Subscriber thread: read everything and listen, with nothing slipping in between."""
        self._online = {host: h["online"] for host, h in self.subscriber.hosts().items()}
        fleet: dict[str, Session] = {}
        for data in self.subscriber.sessions(include_ended=True):
            host = str(data.get("host"))
            session = fleet_session(data, host)
            fleet[session.session_id] = session
            self._where[session.session_id] = host
        self.fleet = fleet
        return self.subscriber.add_listener(self._on_update)

    def _on_update(self, changed: list[tuple[str, str | None]], sub: Subscriber) -> None:
        """Subscriber thread: rebuild the touched sessions, tell the listeners."""
        fleet = dict(self.fleet)
        touched: set[str] = set()
        for host, session_id in changed:
            if session_id is not None:
                touched.add(session_id)
                self._where[session_id] = host
        # The host itself (a beat, an online flip, gone): its rows do not change; the listeners
        # hear of a flip, with no change, and read ``hosts``.
        online = {host: h["online"] for host, h in sub.hosts().items()}
        hosts_moved = online != self._online
        self._online = online
        changes = []
        for session_id in sorted(touched):
            host = self._where.get(session_id, "")
            data = sub.get(host, session_id)
            before = fleet.get(session_id)
            if data is None:
                fleet.pop(session_id, None)
                self._where.pop(session_id, None)
                if before is not None:
                    changes.append(Change(session_id, before, before))
                continue
            after = fleet_session(data, host)
            fleet[session_id] = after
            changes.append(Change(session_id, before, after, fleet_notification(before, after)))
        self.fleet = fleet
        if changes or hosts_moved:
            for listener in list(self._listeners):
                listener(changes, fleet)

    def close(self) -> None:
        self._unlisten()
