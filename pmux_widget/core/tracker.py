"""The tracker: a pure reducer from (sessions, signal, now) to (new sessions, changes).

Every state rule of pmux-widget lives here and nowhere else. No I/O, no clock (``now`` is
passed in, signals carry their own event time), no threads, no globals; the input mapping and
its sessions are never modified, so old snapshots stay valid.

Ordering: signals reach the hub by different paths (HTTP, file watchers, polls) and can
overtake each other. Each session's bookkeeping (:class:`~.model.Tracking`) keeps
``decided_at``, the event time of the newest signal that decided its state; a signal that
happened earlier than that may not change the state.

The rules live in three families, dispatched from :func:`reduce`: ``rules_hooks`` (Claude
Code's hooks), ``rules_files`` (transcripts and PID files) and ``rules_process`` (processes,
polls, restarts, tmux, the user's dismiss and actions); ``transitions`` holds the edits they
share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import signals as sig
from .model import Change, Notification, Session, State
from .rules_background import on_background_gone
from .rules_files import on_interrupt, on_pid_file, on_transcript
from .rules_hooks import on_hook
from .rules_process import (
    BOOT_WINDOW_MS,
    COMPACTING_TIMEOUT_MS,
    STALE_BUSY_MS,
    UNKNOWN_TIMEOUT_MS,
    on_action,
    on_dismiss,
    on_handler_waits,
    on_in_terminal,
    on_locate,
    on_origin,
    on_poll,
    on_process_gone,
    on_recover,
    on_restart,
    on_seen,
    on_tui_shows,
)
from .rules_rollout import on_rollout_turn
from .wording import notification_text

__all__ = [
    "BOOT_WINDOW_MS",
    "COMPACTING_TIMEOUT_MS",
    "STALE_BUSY_MS",
    "UNKNOWN_TIMEOUT_MS",
    "Fleet",
    "Step",
    "reduce",
    "reduce_all",
]

Fleet = Mapping[str, Session]


@dataclass(frozen=True, slots=True)
class Step:
    """The result of one signal: the new fleet and what changed in it, in order."""

    sessions: dict[str, Session]
    changes: list[Change]


def reduce(sessions: Fleet, signal: sig.Signal, now: int) -> Step:
    """Apply one signal at time ``now`` (ms epoch). ``sessions`` is left untouched."""
    step = _Builder(sessions, now)
    match signal:
        case sig.HookSignal():
            on_hook(step, signal)
        case sig.TranscriptInterrupt():
            on_interrupt(step, signal)
        case sig.TranscriptUpdate():
            on_transcript(step, signal)
        case sig.PidFile():
            on_pid_file(step, signal)
        case sig.ProcessGone():
            on_process_gone(step, signal)
        case sig.PollTick():
            on_poll(step, signal)
        case sig.Dismiss():
            on_dismiss(step, signal)
        case sig.Seen():
            on_seen(step, signal)
        case sig.ActionTaken():
            on_action(step, signal)
        case sig.HubRestart():
            on_restart(step, signal)
        case sig.Recover():
            on_recover(step, signal)
        case sig.Locate():
            on_locate(step, signal)
        case sig.RolloutTurn():
            on_rollout_turn(step, signal)
        case sig.InTerminal():
            on_in_terminal(step, signal)
        case sig.TuiShows():
            on_tui_shows(step, signal)
        case sig.BackgroundGone():
            on_background_gone(step, signal)
        case sig.Origin():
            on_origin(step, signal)
        case sig.HandlerWaits():
            on_handler_waits(step, signal)
    return step.finish()


def reduce_all(sessions: Fleet, signals: list[sig.Signal], now: int) -> Step:
    """Apply signals in order; convenient for replays and tests."""
    fleet: Mapping[str, Session] = sessions
    changes: list[Change] = []
    for signal in signals:
        step = reduce(fleet, signal, now)
        fleet = step.sessions
        changes.extend(step.changes)
    return Step(dict(fleet), changes)


# ------------------------------------------------------------------------------ builder


class _Builder:
    """Collects the updates of one step, then emits one Change per touched session."""

    def __init__(self, sessions: Fleet, now: int) -> None:
        self.before = sessions
        self.now = now
        self.updated: dict[str, Session] = {}
        self.notes: dict[str, Notification] = {}
        self.order: list[str] = []

    def get(self, session_id: str) -> Session | None:
        return self.updated.get(session_id) or self.before.get(session_id)

    def put(self, session: Session) -> None:
        sid = session.session_id
        if sid not in self.updated:
            self.order.append(sid)
        self.updated[sid] = session

    def all(self) -> list[Session]:
        merged = dict(self.before)
        merged.update(self.updated)
        return list(merged.values())

    def notify(self, session: Session, live: bool) -> None:
        """Notify if a live signal moved this session INTO needs-input or review."""
        old = self.before.get(session.session_id)
        entered = session.state in (State.NEEDS_INPUT, State.REVIEW) and (
            old is None or old.state is not session.state
        )
        if live and entered:
            self.notes[session.session_id] = _notification(session)

    def finish(self) -> Step:
        if not self.updated:
            return Step(dict(self.before), [])
        fleet = dict(self.before)
        changes = []
        for sid in self.order:
            after = self.updated[sid]
            before = self.before.get(sid)
            if after == before:
                continue
            fleet[sid] = after
            changes.append(Change(sid, before, after, self.notes.get(sid)))
        return Step(fleet, changes)


def _notification(session: Session) -> Notification:
    # The rows' own words (core.wording), so a notification says what the row says.
    title, body = notification_text(session)
    return Notification(session.session_id, session.state, title, body, session.state_since)
