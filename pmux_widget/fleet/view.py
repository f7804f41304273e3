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
import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.core.model import Change, Notification, Session, State
from pmux_widget.core.wording import notification_text
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
        """Another host's review is dismissed there (an action: not available yet)."""

    def seen(self, session_id: str) -> None:
        """Another host's review ends when its own hub sees the look (not forwarded yet)."""

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
