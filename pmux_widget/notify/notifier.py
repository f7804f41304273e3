"""The notifier: an effect of the hub that tells your phone when a session needs you.

On the hub thread it only looks at each step's changes and queues the notifying ones (a live
transition into needs-input or review, flagged by the tracker) and the dialogs that closed;
everything else runs on its own thread: the rules (``core.notify_rules``) with a real clock,
the claim in the store every hub shares (``claims``), the payload, and the hand-off to one
sender per destination (``delivery``). So a hook is never delayed, and however many hubs run
on the machine each transition goes once per destination.

It plugs into a hub as a source (``make_hub(notify=...)`` or :func:`notifier_source`): it is
started and stopped with the hub and sees it only through ``fleet`` and ``add_listener``.
The server extension reaches it through :func:`find` (by hub) for presence, subscriptions and
the channel list.
"""

from __future__ import annotations

import collections
import contextlib
import heapq
import itertools
import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pmux_widget.core.model import Change, Session, State
from pmux_widget.core.notify_rules import (
    SAME_TRANSITION_MS,
    Decision,
    NotifyEvent,
    NotifySettings,
    Presence,
    check,
    looking_until,
    matches,
    plan,
    ttl_seconds,
)
from pmux_widget.core.remote_answer import push_buttons
from pmux_widget.core.wording import knows_the_ask
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from . import webpush
from .answers import AnswerTokens
from .claims import HISTORY_MS, NotifyStore
from .config import Channel, ConfigError, config_path, effective_settings, load_config
from .delivery import Delivery, Outbox
from .payload import close_payload, digest_payload, session_payload
from .sends import channel_delivery, push_delivery

__all__ = ["Notifier", "find", "notifier_source"]

log = logging.getLogger(__name__)

_notifiers: dict[int, Notifier] = {}


class _HubView(Protocol):
    @property
    def fleet(self) -> Mapping[str, Session]: ...

    def add_listener(
        self, listener: Callable[[list[Change], dict[str, Session]], None]
    ) -> Callable[[], None]: ...


def find(hub: object) -> Notifier | None:
    """The notifier running in ``hub`` (the server extension's entry point)."""
    return _notifiers.get(id(hub))


def notifier_source(home: PmuxHome) -> Callable[[Any], Notifier]:
    """A source factory for ``Hub(sources=...)``: a notifier on that hub, with this home."""

    def factory(hub: Any) -> Notifier:
        return Notifier(
            home,
            host=str(getattr(hub, "host_name", "") or socket.gethostname()),
            hub_id=str(getattr(hub, "hub_id", "")),
            hub=hub,
        )

    return factory


@dataclass(frozen=True)
class _Item:
    kind: str  # "event" | "close"
    event: NotifyEvent


def local_minute(ms: int) -> int:
    t = time.localtime(ms / 1000)
    return t.tm_hour * 60 + t.tm_min


class Notifier:
    """One per hub. Thread-safe entry points; ``listener`` runs on the hub thread."""

    def __init__(
        self,
        home: PmuxHome,
        *,
        host: str,
        hub_id: str = "",
        hub: _HubView | None = None,
        fleet: bool = False,
        clock: Callable[[], int] = now_ms,
        url_for: Callable[[str], str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.home = home
        self.host = host
        self.hub_id = hub_id
        self.fleet = fleet  # add the host to titles
        #: the sessions are this machine's (False for a fleet-wide notifier: no answer buttons)
        self.answers_here = True
        self.clock = clock
        #: the deep link a click opens (the server extension sets it: JupyterLab's panel)
        self.url_for = url_for
        self.timeout = timeout
        self.store = NotifyStore(home.root / "notify.db", hub_id)
        self.outbox = Outbox(home)
        self._hub = hub
        self._fleet: Mapping[str, Session] = hub.fleet if hub is not None else {}
        self._unlisten: Callable[[], None] | None = None
        self._heap: list[tuple[int, int, _Item]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._working = False  # an item taken from the heap and not yet done (wait_idle)
        self._config_stamp: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None
        self._channels: tuple[Channel, ...] = ()
        self._settings = NotifySettings()
        self._subs: list[webpush.Subscription] = []
        self._vapid: Any = None
        self._answers: AnswerTokens | None = None
        #: set once the notifier has loaded its configuration and imported its senders
        self.ready = threading.Event()
        #: a second, fleet-wide claim (``fleet.notify_claims``): (key, dests) → the dests won
        self.remote_claim: Callable[[str, list[str]], list[str]] | None = None
        #: called at stop (what was attached to this notifier)
        self.on_stop: list[Callable[[], None]] = []
        #: the latest decisions, newest last, for tests and the panel ("why did nothing come?")
        self.log: collections.deque[tuple[str, Decision]] = collections.deque(maxlen=500)
        self._pruned_at = 0

    # ------------------------------------------------------------------ lifecycle (Source)

    async def start(self) -> None:
        self.start_sync()

    async def stop(self) -> None:
        self.stop_sync()

    def start_sync(self) -> Notifier:
        if self._thread is not None:
            return self
        if self._hub is not None:
            self._unlisten = self._hub.add_listener(self.listener)
            _notifiers[id(self._hub)] = self
        self._thread = threading.Thread(target=self._run, name="pmux-notifier", daemon=True)
        self._thread.start()
        return self

    def stop_sync(self) -> None:
        if self._unlisten is not None:
            self._unlisten()
        if self._hub is not None and _notifiers.get(id(self._hub)) is self:
            del _notifiers[id(self._hub)]
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(5)
        self.outbox.stop()
        for stop in self.on_stop:
            with contextlib.suppress(Exception):
                stop()
        self.store.close()
        if self._answers is not None:
            self._answers.close()

    # ------------------------------------------------------------------ the hub thread

    def listener(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        """Queue the notifying changes; nothing else (the hub thread must not wait)."""
        self._fleet = fleet
        items = []
        for change in changes:
            after = change.after
            before = change.before
            if change.notification is not None:
                # the stay it ends began at before.state_since (what another hub's claim of
                # this transition is told apart by: NotifyEvent.since)
                since = before.state_since if before is not None else 0
                items.append(_Item("event", self._event(after, since)))
            if before is not None and before.state is State.NEEDS_INPUT and change.state_changed:
                # the dialog's stay began after the busy moment before it
                since = before.tracking.turn_started_at
                items.append(_Item("close", self._event(before, since)))
        if items:
            now = self.clock()
            with self._cond:
                for item in items:
                    heapq.heappush(self._heap, (now, next(self._seq), item))
                self._cond.notify()

    def _event(self, s: Session, since: int = 0) -> NotifyEvent:
        return NotifyEvent(
            host=s.host or self.host,  # a fleet-wide notifier's sessions name their host
            session_id=s.session_id,
            state=s.state.value,
            at=s.state_since,
            project=s.project,
            interactive=s.tracking.interactive,
            since=since if 0 < since < s.state_since else 0,
            # an SDK run's call waits on our handler: someone can answer it (runtime.decisions)
            answerable=s.host in (None, self.host)
            and (self.home.decisions_dir / f"{s.session_id}.json").exists(),
        )

    # ------------------------------------------------------------------ the notifier thread

    def _run(self) -> None:
        self._warm()
        while True:
            with self._cond:
                while not self._stopping:
                    wait = (self._heap[0][0] - self.clock()) / 1000 if self._heap else None
                    if wait is not None and wait <= 0:
                        break
                    self._cond.wait(wait)
                if self._stopping:
                    return
                _, _, item = heapq.heappop(self._heap)
                self._working = True
            try:
                if item.kind == "close":
                    self._close(item.event)
                else:
                    self._step(item)
            except Exception:
                log.exception("notifier failed on %r", item)
            finally:
                with self._cond:
                    self._working = False

    def _warm(self) -> None:
        """Import and load what a first send needs now, not at the first transition
        (pywebpush takes 0.3 s to import, Apprise 0.15 s); the hub does not wait for it."""
        self._refresh()
        if self._subs:
            with contextlib.suppress(Exception):
                from pywebpush import WebPusher

                WebPusher(self._subs[0].info()).encode(b"warm")  # loads http_ece's crypto
                self._vapid.sign({"sub": "https://example.org", "aud": "https://example.org"})
        if self._channels:
            with contextlib.suppress(Exception):
                import apprise

                apprise.Apprise.instantiate("json://127.0.0.1")  # loads the plugin registry
        self.ready.set()

    def _refresh(self) -> None:
        """Re-read notify.json and the subscriptions when they changed (a stat each). A
        change is a new file (each write replaces it: a new inode), not only a new mtime: two
        writes within one tick of the file system's clock have the same one."""
        stamps = []
        for path in (config_path(self.home), webpush.push_dir(self.home) / "subscriptions.json"):
            try:
                st = path.stat()
                stamps.append((st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                stamps.append((0, 0, 0))
        stamp = (stamps[0], stamps[1])
        if stamp == self._config_stamp:
            return
        try:
            config = load_config(self.home)
        except ConfigError as exc:
            log.warning("notifications: %s", exc)
            return
        self._channels = config.channels
        self._settings = effective_settings(config)
        self._subs = webpush.load_subscriptions(self.home)
        if self._subs and self._vapid is None:
            self._vapid = webpush.vapid_keys(self.home).vapid()
        self._config_stamp = stamp

    def _defer(self, at: int, item: _Item) -> None:
        with self._cond:
            heapq.heappush(self._heap, (at, next(self._seq), item))

    def _step(self, item: _Item) -> None:
        event = item.event
        now = self.clock()
        self._refresh()
        if now - self._pruned_at > 3600_000:  # the claims only need to outlive the rules' look-back
            self._pruned_at = now
            self.store.prune(now - HISTORY_MS)
        settings = self._settings
        if item.kind == "event":
            first = plan(event, settings, event.at if event.at > 0 else now)
            self.log.append((event.key, first))
            if first.verdict == "drop":
                return
            item = _Item("due", event)
            if first.at > now:
                self._defer(first.at, item)
                return
        session = self._fleet.get(event.session_id)
        still = (
            session is not None
            and not session.ended
            and session.state.value == event.state
            and abs(session.state_since - event.at) <= SAME_TRANSITION_MS
        )
        dests = self._dests(event.state, event.project, event.host)
        if not dests:
            self.log.append((event.key, Decision("drop", reason="no destination")))
            return

        def rules(sent: Any, presences: list[Presence]) -> Decision:
            return check(
                event,
                settings,
                now=now,
                still_waiting=still,
                looking=looking_until(event.session_id, presences, settings, now),
                sent=sent,
                local_minute=local_minute(now),
                # only a hooked session's words are on their way (its PermissionRequest)
                knows_the_ask=session is None or not session.hooked or knows_the_ask(session),
            )

        claim = self.store.decide(event, dests, rules, now)
        decision = claim.decision
        self.log.append((event.key, decision))
        if decision.verdict in ("later", "digest") and decision.at > now:
            self._defer(decision.at, item)
            return
        if claim.dests and self.remote_claim is not None:
            # Across machines a digest is claimed by the transition that brings it (its key,
            # the same as its own message's): two notifiers over their caps at once send one
            # digest, and a transition never goes both alone and in a digest.
            key = event.key if decision.verdict == "digest" else claim.key
            claim.dests = self.remote_claim(key, claim.dests)
        if not claim.dests or session is None:
            return
        url = self.url_for(event.session_id) if self.url_for else ""
        if decision.verdict == "digest":
            waiting = [s for s in self._fleet.values() if s.needs_attention and not s.ended]
            payload = digest_payload(waiting, host=self.host, url=url, generic=settings.generic)
            self._send(claim.dests, payload, decision.priority, 600, "pmux-digest")
            return
        payload = session_payload(
            session,
            host=event.host,
            fleet=self.fleet,
            url=url,
            generic=settings.generic,
            redact=settings.redact,
        )
        ttl = ttl_seconds(event.state, event.at, now)
        self._send(claim.dests, payload, decision.priority, ttl, event.session_id,
                   self._push_actions(session, settings, claim.dests, now))  # fmt: skip

    def _push_actions(
        self, session: Session, settings: NotifySettings, dests: list[str], now: int
    ) -> dict[str, Any]:
        """A dialog's buttons (``core.remote_answer``: Allow once / Deny / Open, a plan's,
        a single question's options) and a single-use token, for a push to a browser, when
        the user opted in (``actions``); none (a tap opens the row) for other questions."""
        if not (
            settings.actions
            and self.answers_here  # another machine's dialog is answered there, not from here
            and session.state is State.NEEDS_INPUT
            and session.current_tool
            and any(d.startswith("push:") for d in dests)
        ):
            return {}
        buttons = push_buttons(session.question, words=not (settings.generic or settings.redact))
        if not buttons:
            return {}
        token = self.answers.issue(self.host, session, now)
        return {"actions": [dict(b) for b in buttons], "token": token}

    @property
    def answers(self) -> AnswerTokens:
        """The remote-answer tokens (the server extension's ``pmux/act`` route redeems them
        with :meth:`AnswerTokens.answer`)."""
        if self._answers is None:
            self._answers = AnswerTokens(self.home.root / "notify.db")
        return self._answers

    def update_notification(self, session_id: str, title: str, body: str) -> int:
        """Replace a session's notification on every browser (e.g. "already answered" after
        a refused remote answer); returns how many were sent to."""
        self._refresh()
        payload = {"title": title, "body": body, "session_id": session_id, "state": "update",
                   "host": self.host, "url": "", "tag": session_id}  # fmt: skip
        for sub in self._subs:
            self.outbox.submit(self._push_delivery(sub, payload, 600, "normal", session_id))
        return len(self._subs)

    def _dests(self, state: str, project: str | None, host: str) -> list[str]:
        dests = [c.dest for c in self._channels if matches(c.filters, state, project, host)]
        return dests + [s.dest for s in self._subs]

    def _send(
        self,
        dests: list[str],
        payload: dict[str, Any],
        priority: str,
        ttl: int,
        topic_of: str,
        push_extra: Mapping[str, Any] | None = None,
    ) -> None:
        channels = {c.dest: c for c in self._channels}
        subs = {s.dest: s for s in self._subs}
        link_base = self._settings.link_base
        for dest in dests:
            if dest in channels:
                channel = channels[dest]
                self.outbox.submit(
                    channel_delivery(
                        channel, payload, priority=priority, link_base=link_base,
                        timeout=self.timeout,
                    )
                )  # fmt: skip
            elif dest in subs:
                pushed = {**payload, **(push_extra or {})}
                self.outbox.submit(self._push_delivery(subs[dest], pushed, ttl, priority,
                                                       topic_of))  # fmt: skip

    def _push_delivery(
        self, sub: webpush.Subscription, payload: dict[str, Any], ttl: int, priority: str,
        topic_of: str,
    ) -> Delivery:  # fmt: skip
        return push_delivery(self.home, sub, payload, vapid=self._vapid,
                             subject=self._settings.vapid_subject, ttl=ttl, priority=priority,
                             topic_of=topic_of, timeout=self.timeout)  # fmt: skip

    def _close(self, event: NotifyEvent) -> None:
        """The dialog was answered: close its notification on the browsers that got it."""
        self._refresh()
        if not self._subs:
            return
        # Closed on the key of the notification that went (whichever hub dated it how), not
        # on this hub's own dating of the dialog: every hub claims the same close.
        sent_key, got = self.store.latest_sent(event)
        if not sent_key:
            return
        now = self.clock()
        key = f"close/{sent_key}"
        mine = [
            s.dest for s in self._subs if s.dest in got and self.store.claim_once(key, s.dest, now)
        ]
        if mine and self.remote_claim is not None:
            mine = self.remote_claim(key, mine)
        for sub in self._subs:
            if sub.dest in mine:
                payload = close_payload(event.session_id, event.host)
                self.outbox.submit(
                    self._push_delivery(sub, payload, 600, "normal", event.session_id)
                )

    # ------------------------------------------------------------------ for the server extension

    def report_presence(
        self,
        device: str,
        sessions: list[str] | frozenset[str],
        *,
        visible: bool,
        focused: bool,
        input_at: int | None = None,
    ) -> None:
        """A browser reports what its panel or widget shows and whether someone uses it."""
        now = self.clock()
        presence = Presence(device, frozenset(sessions), visible, focused, input_at or now)
        self.store.report_presence(presence, now)

    def public_key(self) -> str:
        """The VAPID application server key (``GET pmux/api/push/key``)."""
        return webpush.vapid_keys(self.home).public_key

    def subscribe(self, data: Mapping[str, Any], device: str = "") -> dict[str, Any]:
        """Keep a browser's PushSubscription (``POST pmux/api/push/subscriptions``)."""
        sub = webpush.Subscription.from_json(data, device=device, now=self.clock())
        webpush.vapid_keys(self.home)
        webpush.add_subscription(self.home, sub)
        return sub.listed()

    def unsubscribe(self, endpoint_or_id: str) -> bool:
        return webpush.remove_subscription(self.home, endpoint_or_id)

    def devices(self) -> list[dict[str, Any]]:
        return [s.listed() for s in webpush.load_subscriptions(self.home)]

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Until nothing is queued or due now, none is being decided, and every send
        finished (tests, bench). (An item being decided is off the heap and not yet in the
        outbox: ci18 read a 3-hub notifier idle while its close was being claimed.)"""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self._deciding() and self.outbox.wait_idle(deadline - time.monotonic()):
                # nothing was taken and sent while the outbox drained
                if not self._deciding() and self.outbox.wait_idle(0):
                    return True
                continue
            time.sleep(0.01)
        return False

    def _deciding(self) -> bool:
        with self._cond:
            return self._working or any(t <= self.clock() for t, _, _ in self._heap)
