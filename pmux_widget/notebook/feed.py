"""``Feed``: what a status view is sent and what it may ask, whatever carries it.

One front-end, two transports: :class:`~pmux_widget.notebook.widget.StatusWidget` carries a feed
over anywidget (traits and comm messages, in a kernel), the Jupyter server extension over a
websocket (``pmux_widget.jupyter.stream``). The feed holds none of the values itself: they
live in its :class:`Model` (the widget's traits, or the stream's dict), so both transports read
and write the same names (docs/widget-protocol.md):

* ``snapshot`` and ``history``: updated in place WITHOUT a sync (a view reads them when it is
  created); each change travels alone as a ``patch`` message, at most ~20 per second
  (coalesced), a session that starts to wait at once;
* ``env``: synced when it changes (Claude installed, hooks installed: re-checked every
  :data:`ENV_SECONDS` while the model is open);
* messages from the browser (dismiss, seen, install_hooks, action, peek, attach):
  :meth:`Feed.handle`.
  Actions and peeks type into or read a tmux pane (tens of ms to a second), an attach opens a
  tmux window: they run on a worker thread and answer with ``action_result`` /
  ``peek_result`` / ``attach_result``.

Updates are made on the hub thread: they reach the browser even while a cell blocks, and
never run on a Jupyter server's own loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from pmux_widget.core.contract import (
    ActionResultMessage,
    AttachResultMessage,
    Env,
    History,
    HostJSON,
    InstallResult,
    KernelMessage,
    NotificationJSON,
    PatchMessage,
    PeekResultMessage,
    Row,
    Snapshot,
    counts,
)
from pmux_widget.core.contract import row as contract_row
from pmux_widget.core.model import Change, Session, State
from pmux_widget.notebook.feed_history import append_changes, read_history, trimmed
from pmux_widget.runtime import actions
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

__all__ = [
    "ENV_SECONDS",
    "HISTORY_MS",
    "MACHINE",
    "MIN_PATCH_INTERVAL",
    "PEEK_LINES",
    "Feed",
    "Model",
    "Reply",
    "row",
    "short_token",
]

#: At most one patch per this many seconds (≤ 20 front-end updates per second).
MIN_PATCH_INTERVAL = 0.05
#: How often an open model re-checks Claude's config dir and the hooks (its `env`).
ENV_SECONDS = 2.0
#: Lines a peek shows (the pane's last ones).
PEEK_LINES = 20
#: The longest range a timeline strip shows (24 h): the history a new model reads.
HISTORY_MS = 24 * 3600 * 1000
#: This machine's name: tmux's default pane title, which a row does not show.
MACHINE = socket.gethostname()


def row(session: Session) -> Row:
    """The contract's row, with the dialog token a click on it sends back."""
    return contract_row(session, short_token(actions.dialog_token(session)), MACHINE)


def short_token(token: str) -> str:
    """A dialog token as the browser holds it: a short hash (the full token repeats the tool
    summary, and every byte of a row travels with each change, P9)."""
    return hashlib.sha1(token.encode()).hexdigest()[:12]


#: Where the answer to a view's message goes.
Reply = Callable[[KernelMessage], None]


class Model(Protocol):
    """Where a feed's values live and where its messages go (one model, many views)."""

    @property
    def open(self) -> bool:
        """False once closed: the feed stops following the world."""

    def get(self, name: str) -> Any:
        """The current value of ``name`` (None when unset)."""

    def put(self, name: str, value: Any, *, sync: bool) -> None:
        """Set ``name``: sent to the views when ``sync``, else only kept for views made later."""

    def send(self, message: KernelMessage) -> None:
        """One message to every view (may raise on a closed channel: the feed ignores it)."""


class Feed:
    """The coalescing, history, env and message handling of a status model over ``hub``
    (a :class:`~pmux_widget.runtime.hub.Hub` or a hub-shaped fleet view).

    Made in two steps, as a widget needs: :meth:`initial` reads the values a model starts with
    (the fleet read on the hub thread, which is the one that changes it); once the model holds
    them, :meth:`attach` starts listening and patches what changed in between. ``seq``: the
    first patch's seq minus one (a websocket's views must see it grow across reconnects).
    """

    def __init__(self, hub: Hub, *, seq: int = 0) -> None:
        self.hub = hub
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._notes: list[NotificationJSON] = []
        self._seq = seq
        # None: never flushed. A 0.0 here compared with time.monotonic(), which counts from the
        # machine's boot: on a machine up for less than the interval the first change waited.
        self._last_flush: float | None = None
        self._flush_scheduled = False
        self._hosts_sent: dict[str, bool] = {}
        self._shown: dict[str, Row] = {}
        self._model: Model | None = None
        self._unlisten: Callable[[], None] | None = None
        self.patches_sent = 0
        self.bytes_sent = 0

    # ----------------------------------------------------------------- set-up / teardown

    def initial(self) -> dict[str, Any]:
        """The values a new model starts with: ``snapshot``, ``history`` and ``env``."""
        hub = self.hub
        rows, live = hub.call(
            lambda: ({sid: row(s) for sid, s in hub.fleet.items()}, counts(hub.fleet.values()))
        )
        self._shown = rows
        hosts = self._hosts()
        self._hosts_sent = _online(hosts)
        snapshot: Snapshot = {
            "seq": self._seq,
            "sessions": rows,
            "counts": live,
            "now": now_ms(),
            "hosts": hosts,
        }
        return {
            "snapshot": snapshot,
            "history": _trait(self._read_history(snapshot["now"] - HISTORY_MS)),
            "env": _trait(self._env()),
        }

    def attach(self, model: Model) -> None:
        """Listen to the hub for ``model`` (which holds :meth:`initial`'s values)."""
        self._model = model
        shown, self._shown = self._shown, {}
        self._unlisten = self.hub.call(lambda: self._listen(shown))
        self.hub.loop.call_soon_threadsafe(self.hub.loop.call_later, ENV_SECONDS, self._follow_env)

    def close(self) -> None:
        """Stop listening (the model stops following the world)."""
        unlisten, self._unlisten = self._unlisten, None
        if unlisten is not None:
            with contextlib.suppress(Exception):
                self.hub.call(unlisten)

    @property
    def model(self) -> Model:
        assert self._model is not None, "Feed.attach() was not called"
        return self._model

    def _listen(self, shown: dict[str, Row]) -> Callable[[], None]:
        """Hub thread: listen for changes, and patch what changed since ``shown`` was read."""
        unlisten = self.hub.add_listener(self._on_changes)
        fleet = self.hub.fleet
        missed = {sid for sid, s in fleet.items() if shown.get(sid) != row(s)}
        missed |= shown.keys() - fleet.keys()
        if missed:
            self._mark(missed, [])
        return unlisten

    # ----------------------------------------------------------------- hub → browser

    def _on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        """Hub thread: note what changed, flush now or soon (coalesced)."""
        notes: list[NotificationJSON] = [
            c.notification.to_json()  # type: ignore[misc]  # its keys: tests/test_contract.py
            for c in changes
            if c.notification is not None
        ]
        self._record_history(changes)
        # A session that starts to wait for you is sent at once, not after the coalescing
        # interval: a dialog's PermissionRequest comes a few ms after its PreToolUse, and the
        # dot should turn amber before the terminal has drawn the dialog (P11).
        urgent = any(
            c.after.state is State.NEEDS_INPUT
            and (c.before is None or c.before.state is not State.NEEDS_INPUT)
            for c in changes
        )
        self._mark({c.session_id for c in changes}, notes, urgent=urgent)

    def _mark(
        self, session_ids: set[str], notes: list[NotificationJSON], *, urgent: bool = False
    ) -> None:
        with self._lock:
            self._dirty |= session_ids
            self._notes.extend(notes)
            if self._flush_scheduled and not urgent:
                return
            wait = 0.0
            if not urgent and self._last_flush is not None:
                wait = self._last_flush + MIN_PATCH_INTERVAL - time.monotonic()
            self._flush_scheduled = True
        if wait <= 0:
            self._flush()
        else:
            self.hub.loop.call_later(wait, self._flush)

    def _flush(self) -> None:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            notes, self._notes = self._notes, []
            self._flush_scheduled = False
            self._last_flush = time.monotonic()
        hosts = self._hosts()
        # Hosts travel when one goes online or offline, not with each beat's last_seen.
        hosts_moved = _online(hosts) != self._hosts_sent
        if not dirty and not notes and not hosts_moved:
            return
        self._hosts_sent = _online(hosts)
        fleet = self.hub.fleet
        model = self.model
        rows: dict[str, Row] = dict((model.get("snapshot") or {}).get("sessions", {}))
        upsert: list[Row] = []
        remove: list[str] = []
        for sid in sorted(dirty):
            session = fleet.get(sid)
            if session is None:
                rows.pop(sid, None)
                remove.append(sid)
            else:
                rows[sid] = updated = row(session)
                upsert.append(updated)
        self._seq += 1
        live = counts(fleet.values())
        now = now_ms()
        # In place, without a sync: views read it when they are created (see module doc).
        model.put(
            "snapshot",
            Snapshot(seq=self._seq, sessions=rows, counts=live, now=now, hosts=hosts),
            sync=False,
        )
        if not model.open:
            return
        patch = PatchMessage(
            type="patch",
            seq=self._seq,
            upsert=upsert,
            remove=remove,
            counts=live,
            now=now,
            hosts=hosts if hosts_moved else None,
        )
        self.send(patch)
        for note in notes:
            self.send({"type": "notify", "notification": note})

    def _hosts(self) -> dict[str, HostJSON]:
        """The fleet's hosts (a fleet view has them); none for this machine's hub."""
        hosts = getattr(self.hub, "hosts", None)
        if not isinstance(hosts, Mapping):
            return {}
        return {
            str(name): {"online": bool(h.get("online")), "last_seen": int(h.get("last_seen") or 0)}
            for name, h in hosts.items()
        }

    def _read_history(self, since: int) -> History:
        """Each session's transitions from ``since`` on (with the one that was current then)."""
        return read_history(self.hub.store, since)

    def _record_history(self, changes: list[Change]) -> None:
        """Hub thread: keep the ``history`` value current in place, without a sync (like the
        snapshot): a view created later reads it whole; open views append from the patches."""
        history = self.model.get("history")
        if not history:
            return
        with self._lock:
            append_changes(history, changes)
            if now_ms() - history["since"] > 2 * HISTORY_MS:
                self.model.put("history", trimmed(history, now_ms() - HISTORY_MS), sync=False)

    def dumps(self, value: object) -> str:
        """``value`` (e.g. a model's values) as JSON, taken while no change is being recorded
        into the history in place (for a view made on another thread)."""
        with self._lock:
            return json.dumps(value, separators=(",", ":"))

    def send(self, message: KernelMessage) -> None:
        with contextlib.suppress(Exception):  # a closed channel must not break the hub thread
            self.model.send(message)
            self.patches_sent += 1
            self.bytes_sent += len(_json_bytes(message))

    # ----------------------------------------------------------------- browser → hub

    def handle(self, content: Any, reply: Reply | None = None) -> None:
        """A message from a view (dismiss, install_hooks, action, peek, attach); anything else is
        ignored. Quick: actions and peeks go to a worker thread; install writes one file.
        ``reply``: where the answers go (``action_result``, ``peek_result``, ``attach_result``,
        ``install_result``): the asking view only; by default every view (one comm)."""
        if not isinstance(content, dict):
            return
        answer = reply or self.send
        kind = content.get("type")
        if kind == "dismiss" and isinstance(content.get("session_id"), str):
            session_id = content["session_id"]
            self.hub.dismiss(session_id)
            # Always answer with the row, so a refused dismiss (no longer in review) un-pends
            # the button too; queued after the Dismiss itself on the hub loop.
            self.hub.loop.call_soon_threadsafe(self._mark, {session_id}, [])
        elif kind == "seen" and isinstance(content.get("session_id"), str):
            # a look (a terminal tab focused, a peek or attach opened): the row's patch says
            # whether it ended a review; no answer otherwise
            self.hub.seen(content["session_id"])
        elif kind == "install_hooks":
            self._install_hooks(answer)
        elif kind in ("action", "peek", "attach") and isinstance(content.get("session_id"), str):
            work = {"action": self._act, "peek": self._peek, "attach": self._attach}[kind]
            threading.Thread(
                target=work, args=(content, answer), name=f"pmux-{kind}", daemon=True
            ).start()

    def _act(self, content: dict[str, Any], reply: Reply) -> None:
        """Worker thread: approve / deny / interrupt / send, and answer with the outcome."""
        session_id, action = content["session_id"], str(content.get("action", ""))
        text, sent = content.get("text"), content.get("token")
        raw_options, mode = content.get("options"), content.get("mode")
        options = (
            [o for o in raw_options if isinstance(o, str)]
            if isinstance(raw_options, list)
            else None
        )
        # The browser names the state it saw by its short token; act() compares full tokens,
        # so a match passes the current full token on (act() checks it again, atomically with
        # the rest) and anything else passes as it is, which act() refuses.
        token: str | None = sent if isinstance(sent, str) else None
        session = self.hub.fleet.get(session_id)
        if token is not None and session is not None:
            current = actions.dialog_token(session)
            if short_token(current) == token:
                token = current
        # A fleet's view acts on another host's session through that host's hub (its act
        # makes a NATS request there); a hub acts here.
        remote = getattr(self.hub, "act", None)
        asked: dict[str, Any] = {
            "text": text if isinstance(text, str) else None,
            "options": options,
            "mode": mode if isinstance(mode, str) else None,
            "token": token,
        }
        try:
            if callable(remote):
                result = remote(session_id, action, **asked)
            else:
                result = actions.act(
                    self.hub, session_id, action, record=self.hub.record_action, **asked
                )
            answer = ActionResultMessage(
                type="action_result",
                session_id=session_id,
                action=action,
                ok=True,
                message="queued: sent after the running turn" if result.queued else "sent",
                queued=result.queued,
            )
        except actions.ActionError as exc:
            answer = ActionResultMessage(
                type="action_result",
                session_id=session_id,
                action=action,
                ok=False,
                message=exc.reason,
                queued=False,
            )
        except Exception as exc:  # a failure is reported on the row, never a silent click
            answer = ActionResultMessage(
                type="action_result",
                session_id=session_id,
                action=action,
                ok=False,
                message=f"failed: {exc}",
                queued=False,
            )
        reply(answer)

    def _peek(self, content: dict[str, Any], reply: Reply) -> None:
        """Worker thread: the pane's last lines, read-only."""
        session_id = content["session_id"]
        try:
            seen = actions.peek(self.hub, session_id, PEEK_LINES)
            answer = PeekResultMessage(
                type="peek_result",
                session_id=session_id,
                ok=True,
                lines=list(seen.lines),
                dialog=seen.dialog,
                message="",
            )
        except Exception as exc:
            reason = exc.reason if isinstance(exc, actions.ActionError) else f"failed: {exc}"
            answer = PeekResultMessage(
                type="peek_result",
                session_id=session_id,
                ok=False,
                lines=[],
                dialog=None,
                message=reason,
            )
        reply(answer)

    def _attach(self, content: dict[str, Any], reply: Reply) -> None:
        """Worker thread: "Attach in a terminal" as a tmux window (``Session.attach()``)."""
        from pmux_widget.runtime.attach_window import attach_in_tmux

        session_id = content["session_id"]
        try:
            window = attach_in_tmux(self.hub.fleet, self.hub.claude_dir, session_id)
            again = "" if window.opened else " (open already: brought to the front)"
            answer = AttachResultMessage(
                type="attach_result",
                session_id=session_id,
                ok=True,
                target=window.target,
                command=window.attach_command,
                opened=window.opened,
                message=f"attached in tmux window {window.target}{again}: {window.attach_command}",
            )
        except Exception as exc:  # refused or failed: the reason shows on the row
            reason = exc.reason if isinstance(exc, actions.ActionError) else f"failed: {exc}"
            answer = AttachResultMessage(
                type="attach_result",
                session_id=session_id,
                ok=False,
                target=None,
                command=None,
                opened=False,
                message=reason,
            )
        reply(answer)

    def _install_hooks(self, reply: Reply) -> None:
        from pmux_widget import hooks

        try:
            result = hooks.install(self.hub.claude_dir / "settings.json", self.hub.home)
            answer = InstallResult(ok=True, message=result.message)
        except Exception as exc:  # shown to the user as it is: a clear reason, not a crash
            answer = InstallResult(ok=False, message=str(exc))
        env = self._env()
        env["install_result"] = answer
        self.model.put("env", _trait(env), sync=True)
        reply({"type": "install_result", **answer})

    def _env(self) -> Env:
        from pmux_widget import hooks

        claude_dir = self.hub.claude_dir
        problem: str | None = None
        installed = False
        try:
            status = hooks.hooks_status(claude_dir / "settings.json", self.hub.home)
            installed = bool(status.ok)
            if not installed:
                problem = getattr(status, "message", None) or "hooks are not installed"
        except Exception as exc:
            problem = str(exc)
        return {
            "claude_installed": claude_dir.is_dir(),
            "claude_dir": str(claude_dir),
            "hooks_installed": installed,
            "hooks_problem": problem,
            # The hub runs in this process (its runtime file says the same pid).
            "hub": {"port": self.hub.port, "pid": os.getpid(), "hub_id": self.hub.hub_id},
            "install_result": None,
        }

    def _follow_env(self) -> None:
        """Hub thread, every ENV_SECONDS while the model is open: "Claude not installed" and
        "hooks not installed" follow the world (Claude installed, hooks installed from a
        terminal later), not the moment the model was made."""
        if self._model is None or not self._model.open or self._unlisten is None:
            return  # closed
        self.refresh_env(keep_result=True)
        self.hub.loop.call_later(ENV_SECONDS, self._follow_env)

    def refresh_env(self, *, keep_result: bool = False) -> None:
        """Re-check Claude and the hooks; synced only when something changed."""
        env = self._env()
        current = self.model.get("env") or {}
        if keep_result:
            env["install_result"] = current.get("install_result")
        if _trait(env) != current:
            self.model.put("env", _trait(env), sync=True)


def _trait(value: Mapping[str, object]) -> dict[str, Any]:
    """A contract value as a traitlets Dict (or the stream's dict) holds it."""
    return dict(value)


def _online(hosts: Mapping[str, HostJSON]) -> dict[str, bool]:
    return {name: h["online"] for name, h in hosts.items()}


def _json_bytes(message: KernelMessage) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()
