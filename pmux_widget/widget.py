"""``StatusWidget``: the anywidget that shows every session, fed by the hub on the hub thread.

Traffic (docs/widget-protocol.md; the shapes are core/contract.py's): the full fleet lives in
the ``snapshot`` trait, which the kernel updates in place WITHOUT syncing it on every change; a
view reads it when it is created (display, re-run, page reload). Each change travels alone as a
``patch`` message with only the touched sessions' rows, at most ~20 per second (coalesced).
The ``history`` trait (each session's transitions over the last 24 h, for the timeline strips)
travels the same way: read with the model, kept current in place, never synced; a patch adds no
history bytes, since the browser appends a transition from each row whose ``state_since`` moved.

Updates are sent from the hub thread: they reach the browser even while a cell blocks.
Messages from the browser (dismiss, install, action, peek) are handled only when the kernel is
idle — a Jupyter limit the front-end tells the user about while a click waits. Actions and
peeks type into or read a tmux pane (tens of ms to a second): they run on a worker thread and
answer with ``action_result`` / ``peek_result``.
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
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets

from pmux_widget.core.contract import (
    ActionResultMessage,
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
    TransitionJSON,
    counts,
)
from pmux_widget.core.contract import row as contract_row
from pmux_widget.core.model import Change, Session, State, Transition
from pmux_widget.runtime import actions
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    from pmux_widget.runtime.hub import Hub

__all__ = ["StatusWidget"]

#: The built front-end (npm run build). `_esm` stays a Path: with ANYWIDGET_HMR=1, anywidget
#: watches the file and reloads open widgets on every rebuild (npm run watch).
STATIC = Path(__file__).parent / "static"
#: At most one patch per this many seconds (≤ 20 front-end updates per second).
MIN_PATCH_INTERVAL = 0.05
#: How often an open widget re-checks Claude's config dir and the hooks (its `env`).
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


class StatusWidget(anywidget.AnyWidget):
    """The session status widget. Create it with :func:`pmux_widget.show`."""

    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    snapshot = traitlets.Dict().tag(sync=True)
    history = traitlets.Dict().tag(sync=True)
    env = traitlets.Dict().tag(sync=True)
    title_prefix = traitlets.Bool(True).tag(sync=True)
    desktop_notifications = traitlets.Bool(False).tag(sync=True)
    sidebar_note = traitlets.Unicode("").tag(sync=True)
    mode = traitlets.Unicode("full").tag(sync=True)
    show_non_interactive = traitlets.Bool(None, allow_none=True).tag(sync=True)

    def __init__(self, hub: Hub, **kwargs: Any) -> None:
        self._hub = hub
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._notes: list[NotificationJSON] = []
        self._seq = 0
        # None: never flushed. A 0.0 here compared with time.monotonic(), which counts from the
        # machine's boot: on a machine up for less than the interval the first change waited.
        self._last_flush: float | None = None
        self._flush_scheduled = False
        self._hosts_sent: dict[str, bool] = {}
        self.patches_sent = 0
        self.bytes_sent = 0
        # The fleet (read on the hub thread: it is the one that changes it) and the env travel
        # WITH the comm_open. Set after super().__init__, they would follow as an update whose
        # seq (0) is not newer than the open's empty default, so the front-end kept the empty
        # fleet: a widget created over an existing fleet showed "no sessions" until a change.
        rows, live = hub.call(
            lambda: ({sid: row(s) for sid, s in hub.fleet.items()}, counts(hub.fleet.values()))
        )
        hosts = self._hosts()
        self._hosts_sent = _online(hosts)
        snapshot: Snapshot = {
            "seq": 0,
            "sessions": rows,
            "counts": live,
            "now": now_ms(),
            "hosts": hosts,
        }
        kwargs.setdefault("snapshot", snapshot)
        kwargs.setdefault("history", _trait(self._read_history(snapshot["now"] - HISTORY_MS)))
        kwargs.setdefault("env", _trait(self._env()))
        super().__init__(**kwargs)
        self.on_msg(self._on_front_end_msg)
        self._unlisten = hub.call(lambda: self._listen(rows))
        hub.loop.call_soon_threadsafe(hub.loop.call_later, ENV_SECONDS, self._follow_env)

    def _listen(self, shown: dict[str, Row]) -> Callable[[], None]:
        """Hub thread: listen for changes, and patch what changed since ``shown`` was read."""
        unlisten = self._hub.add_listener(self._on_changes)
        fleet = self._hub.fleet
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
            self._hub.loop.call_later(wait, self._flush)

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
        fleet = self._hub.fleet
        rows: dict[str, Row] = dict(self.snapshot.get("sessions", {}))
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
        self._trait_values["snapshot"] = Snapshot(
            seq=self._seq, sessions=rows, counts=live, now=now, hosts=hosts
        )
        if self.comm is None:
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
        self._send_message(patch)
        for note in notes:
            self._send_message({"type": "notify", "notification": note})

    def _hosts(self) -> dict[str, HostJSON]:
        """The fleet's hosts (a fleet view has them); none for this machine's hub."""
        hosts = getattr(self._hub, "hosts", None)
        if not isinstance(hosts, Mapping):
            return {}
        return {
            str(name): {"online": bool(h.get("online")), "last_seen": int(h.get("last_seen") or 0)}
            for name, h in hosts.items()
        }

    def _read_history(self, since: int) -> History:
        """Each session's transitions from ``since`` on (with the one that was current then)."""
        store = self._hub.store
        transitions = store.transitions(since_ms=since) if store is not None else []
        sessions: dict[str, list[TransitionJSON]] = {}
        for t in transitions:
            sessions.setdefault(t.session_id, []).append(_transition_json(t))
        return {"since": since, "sessions": sessions}

    def _record_history(self, changes: list[Change]) -> None:
        """Hub thread: keep the ``history`` trait current in place, without a sync (like the
        snapshot): a view created later reads it whole; open views append from the patches."""
        history = self._trait_values.get("history")
        if not history:
            return
        with self._lock:
            for change in changes:
                transition = change.transition()
                if transition is None:
                    continue
                sessions = history["sessions"]
                entries = sessions.get(change.session_id)
                if entries is None:
                    # A new key goes into a copy: the kernel thread may be serializing the
                    # trait for a new view (appending to a list is safe, growing a dict is not).
                    history["sessions"] = {**sessions, change.session_id: []}
                    entries = history["sessions"][change.session_id]
                entries.append(_transition_json(transition))
            if now_ms() - history["since"] > 2 * HISTORY_MS:
                self._trait_values["history"] = _trimmed(history, now_ms() - HISTORY_MS)

    def _send_message(self, message: KernelMessage) -> None:
        with contextlib.suppress(Exception):  # a closed comm must not break the hub thread
            self.send(message)
            self.patches_sent += 1
            self.bytes_sent += len(_json_bytes(message))

    # ----------------------------------------------------------------- browser → kernel

    def _on_front_end_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "dismiss" and isinstance(content.get("session_id"), str):
            session_id = content["session_id"]
            self._hub.dismiss(session_id)
            # Always answer with the row, so a refused dismiss (no longer in review) un-pends
            # the button too; queued after the Dismiss itself on the hub loop.
            self._hub.loop.call_soon_threadsafe(self._mark, {session_id}, [])
        elif kind == "install_hooks":
            self._install_hooks()
        elif kind in ("action", "peek") and isinstance(content.get("session_id"), str):
            work = self._act if kind == "action" else self._peek
            threading.Thread(target=work, args=(content,), name=f"pmux-{kind}", daemon=True).start()

    def _act(self, content: dict[str, Any]) -> None:
        """Worker thread: approve / deny / interrupt / send, and answer with the outcome."""
        session_id, action = content["session_id"], str(content.get("action", ""))
        text, sent = content.get("text"), content.get("token")
        # The browser names the state it saw by its short token; act() compares full tokens,
        # so a match passes the current full token on (act() checks it again, atomically with
        # the rest) and anything else passes as it is, which act() refuses.
        token: str | None = sent if isinstance(sent, str) else None
        session = self._hub.fleet.get(session_id)
        if token is not None and session is not None:
            current = actions.dialog_token(session)
            if short_token(current) == token:
                token = current
        try:
            result = actions.act(
                self._hub,
                session_id,
                action,
                text=text if isinstance(text, str) else None,
                token=token,
                # the history names the action (a fleet view records nothing here)
                record=getattr(self._hub, "record_action", None),
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
        self._send_message(answer)

    def _peek(self, content: dict[str, Any]) -> None:
        """Worker thread: the pane's last lines, read-only."""
        session_id = content["session_id"]
        try:
            seen = actions.peek(self._hub, session_id, PEEK_LINES)
            answer = PeekResultMessage(
                type="peek_result",
                session_id=session_id,
                ok=True,
                lines=list(seen.lines),
                dialog=seen.dialog.title if seen.dialog is not None else None,
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
        self._send_message(answer)

    def _install_hooks(self) -> None:
        from pmux_widget import hooks

        try:
            result = hooks.install(self._hub.claude_dir / "settings.json", self._hub.home)
            answer = InstallResult(ok=True, message=result.message)
        except Exception as exc:  # shown to the user as it is: a clear reason, not a crash
            answer = InstallResult(ok=False, message=str(exc))
        env = self._env()
        env["install_result"] = answer
        self.env = _trait(env)
        self._send_message({"type": "install_result", **answer})

    def _env(self) -> Env:
        from pmux_widget import hooks

        claude_dir = self._hub.claude_dir
        problem: str | None = None
        installed = False
        try:
            status = hooks.hooks_status(claude_dir / "settings.json", self._hub.home)
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
            "hub": {"port": self._hub.port, "pid": os.getpid(), "hub_id": self._hub.hub_id},
            "install_result": None,
        }

    def _follow_env(self) -> None:
        """Hub thread, every ENV_SECONDS while the widget is open: "Claude not installed" and
        "hooks not installed" follow the world (Claude installed, hooks installed from a
        terminal later), not the moment the widget was made; ``show()`` reuses it."""
        if self.comm is None:
            return  # closed
        env = self._env()
        env["install_result"] = self.env.get("install_result")
        if _trait(env) != self.env:
            self.env = _trait(env)
        self._hub.loop.call_later(ENV_SECONDS, self._follow_env)

    def refresh_env(self) -> None:
        """Re-check Claude and the hooks (e.g. after installing them from a terminal)."""
        self.env = _trait(self._env())

    # ----------------------------------------------------------------- lifecycle / text

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._hub.call(self._unlisten)
        super().close()

    def __repr__(self) -> str:
        """The text/plain fallback for front-ends without widgets: the status table."""
        from pmux_widget.table import format_table

        hub = getattr(self, "_hub", None)
        if hub is None:
            return "<StatusWidget (starting)>"
        sessions = [s for s in hub.fleet.values() if not s.ended]
        return format_table(
            {"sessions": [s.to_json() for s in sessions], "counts": counts(sessions)}
        )


def _trait(value: Mapping[str, object]) -> dict[str, Any]:
    """A contract value as a traitlets Dict holds it."""
    return dict(value)


def _online(hosts: Mapping[str, HostJSON]) -> dict[str, bool]:
    return {name: h["online"] for name, h in hosts.items()}


def _trimmed(history: History, since: int) -> History:
    """``history`` from ``since`` on (each session keeps the transition current at ``since``),
    as a new value: a long-lived widget's trait stays about a day long."""
    sessions: dict[str, list[TransitionJSON]] = {}
    for sid, entries in history["sessions"].items():
        first = 0
        for i, entry in enumerate(entries):
            if entry["at"] <= since:
                first = i
        sessions[sid] = entries[first:]
    return {"since": since, "sessions": sessions}


def _transition_json(t: Transition) -> TransitionJSON:
    return {"at": t.at, "state": t.to_state.value, "source": t.source}


def _json_bytes(message: KernelMessage) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()
