"""The ``history`` value a feed keeps (docs/widget-protocol.md): each session's transitions
of the last day, read once from the store, then appended in place as changes come (a view made
later reads it whole; open views append from the patches), and trimmed to a day when it has
grown to two."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pmux_widget.core.contract import History, TransitionJSON
from pmux_widget.core.model import Change, Transition

if TYPE_CHECKING:
    from pmux_widget.runtime.store import Store

__all__ = ["append_changes", "read_history", "transition_json", "trimmed"]


def read_history(store: Store | None, since: int) -> History:
    """Each session's transitions from ``since`` on (with the one that was current then)."""
    transitions = store.transitions(since_ms=since) if store is not None else []
    sessions: dict[str, list[TransitionJSON]] = {}
    for t in transitions:
        sessions.setdefault(t.session_id, []).append(transition_json(t))
    return {"since": since, "sessions": sessions}


def append_changes(history: History, changes: list[Change]) -> None:
    """The transitions of ``changes``, appended to ``history`` in place."""
    for change in changes:
        transition = change.transition()
        if transition is None:
            continue
        sessions = history["sessions"]
        entries = sessions.get(change.session_id)
        if entries is None:
            # A new key goes into a copy: another thread may be serializing the value
            # for a new view (appending to a list is safe, growing a dict is not).
            history["sessions"] = {**sessions, change.session_id: []}
            entries = history["sessions"][change.session_id]
        entries.append(transition_json(transition))


def trimmed(history: History, since: int) -> History:
    """``history`` from ``since`` on (each session keeps the transition current at ``since``),
    as a new value: a long-lived model's history stays about a day long."""
    sessions: dict[str, list[TransitionJSON]] = {}
    for sid, entries in history["sessions"].items():
        first = 0
        for i, entry in enumerate(entries):
            if entry["at"] <= since:
                first = i
        sessions[sid] = entries[first:]
    return {"since": since, "sessions": sessions}


def transition_json(t: Transition) -> TransitionJSON:
    return {"at": t.at, "state": t.to_state.value, "source": t.source}
