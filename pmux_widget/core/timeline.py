"""Timeline: a session's history as segments.

The store records transitions (a session entered a state at a time, and why). Here they
become *segments* — maximal stretches of one state — that tile each session's lifetime
(:mod:`.insight` says what they tell about you). Pure: no I/O and no clock; ``now_ms`` is a
parameter.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from pmux_widget.core.model import Session, State, Transition

__all__ = [
    "HistoryRow",
    "Segment",
    "SegmentColumns",
    "Span",
    "by_session",
    "clip",
    "ended_at",
    "segment_columns",
    "segments",
    "session_segments",
    "state_spans",
]


class Segment(NamedTuple):
    """One stretch of a single state: ``[start_ms, end_ms)``; ``end_ms`` None while open.

    ``seconds`` is the length (up to ``now`` for the open segment); ``source`` is why the
    session entered the state (the transition's source). A named tuple, not a dataclass: a
    month of history is a quarter of a million of them, and a tuple is built ~2x faster.
    """

    session_id: str
    host: str
    state: State
    start_ms: int
    end_ms: int | None
    seconds: float
    source: str


def ended_at(session: Session) -> int | None:
    """When an ended session ended (its newest sign of life), None while it is not ended.

    The session carries no end time of its own: its last hook (a SessionEnd included), its
    last transcript record and its last state change bound it from below, which is as close
    as the record gets (a process found gone moves a working session to idle at that time)."""
    if not session.ended:
        return None
    t = session.tracking
    return max(session.state_since, t.active_at, t.last_hook_at, t.transcript_at, t.decided_at)


def session_segments(
    transitions: Sequence[Transition],
    now_ms: int,
    *,
    end_ms: int | None = None,
    host: str = "",
) -> list[Segment]:
    """The segments of ONE session, unclipped, from its transitions (oldest first, as the store
    gives them; ties keep their order).

    A segment starts at each transition into a state other than the current one (a repeated
    entry into the same state, e.g. two hubs recording the same change under different
    sources, continues the segment). The last segment ends at ``end_ms`` for an ended session
    and is open (``end_ms`` None, measured to ``now_ms``) otherwise. An end before the
    session's last transition (a dismissal after the end) is moved up to it. A hub restart's
    ``unknown`` is a state like any other.
    """
    return [
        Segment(session_id, host, state, start, end, _seconds(start, end, now_ms), source)
        for session_id, state, start, end, source in state_spans(transitions, end_ms)
    ]


#: (session_id, state, start, end or None, source): a segment before its host and length.
Span = tuple[str, State, int, int | None, str]


def state_spans(transitions: Sequence[Transition], end_ms: int | None) -> list[Span]:
    """(session_id, state, start, end or None, source) of one session: the work of
    :func:`session_segments` as plain tuples (30 days of 200 sessions is 240,000 of them)."""
    out: list[Span] = []
    if not transitions:
        return out
    first = transitions[0]
    session_id, state, start, source = first.session_id, first.to_state, first.at, first.source
    for t in transitions:
        if t.to_state is not state:
            out.append((session_id, state, start, t.at, source))
            state, start, source = t.to_state, t.at, t.source
    last_at = transitions[-1].at
    out.append((session_id, state, start, None if end_ms is None else max(end_ms, last_at), source))
    return out


def _seconds(start: int, end: int | None, now: int) -> float:
    return max(0, (now if end is None else end) - start) / 1000


def clip(segment: Segment, since_ms: int, now_ms: int) -> Segment | None:
    """The part of ``segment`` at or after ``since_ms`` (None if it ended before)."""
    if segment.start_ms >= since_ms:
        return segment
    end = segment.end_ms
    if end is not None and end <= since_ms:
        return None
    seconds = _seconds(since_ms, end, now_ms)
    return Segment(
        segment.session_id, segment.host, segment.state, since_ms, end, seconds, segment.source
    )


def by_session(transitions: Iterable[Transition]) -> dict[str, list[Transition]]:
    """Transitions grouped per session (first appearance order), each group in input order."""
    grouped: dict[str, list[Transition]] = {}
    for t in transitions:
        grouped.setdefault(t.session_id, []).append(t)
    return grouped


def segments(
    transitions: Iterable[Transition],
    now_ms: int,
    since_ms: int | None = None,
    *,
    ends: Mapping[str, int] | None = None,
    hosts: Mapping[str, str] | None = None,
    default_host: str = "",
) -> list[Segment]:
    """Every session's segments, session by session (in order of first appearance), each
    session's oldest first; clipped to ``since_ms`` when given (a segment that began before
    it starts at it). ``ends``: the end time of ended sessions (see :func:`ended_at`);
    ``hosts``: the host of each session (``default_host`` otherwise)."""
    ends = ends or {}
    hosts = hosts or {}
    if since_ms is not None:
        since_ms = min(since_ms, now_ms)  # a window in the future is empty, at now
    out: list[Segment] = []
    append = out.append
    for sid, group in by_session(transitions).items():
        host = hosts.get(sid, default_host)
        for _, state, start, end, source in state_spans(group, ends.get(sid)):
            if since_ms is not None and start < since_ms:
                if end is not None and end <= since_ms:
                    continue
                start = since_ms
            seconds = max(0, (now_ms if end is None else end) - start) / 1000
            append(Segment(sid, host, state, start, end, seconds, source))
    return out


#: A stored transition as bulk reads give it: (session_id, at, state value, source).
HistoryRow = tuple[str, int, str, str]


class SegmentColumns(NamedTuple):
    """:func:`segments` column by column (the state as its value): what a DataFrame is built
    from without a Python object per segment."""

    session_id: list[str]
    host: list[str]
    state: list[str]
    start_ms: list[int]
    end_ms: list[int | None]
    seconds: list[float]
    source: list[str]


def segment_columns(
    rows: Iterable[HistoryRow],
    now_ms: int,
    since_ms: int | None = None,
    *,
    ends: Mapping[str, int] | None = None,
    hosts: Mapping[str, str] | None = None,
    default_host: str = "",
) -> SegmentColumns:
    """:func:`segments` over plain rows, as columns: the same segments in the same order.

    ``rows`` hold each session's transitions together, oldest first (as the store reads them,
    ordered by session); a session whose rows are split raises ValueError. This is the path
    for a month of history (240,000 transitions): one pass, no object per transition or per
    segment, which made ``timeline()`` several times faster than :func:`segments`."""
    ends = ends or {}
    hosts = hosts or {}
    since = -(2**63) if since_ms is None else min(since_ms, now_ms)
    cols = SegmentColumns([], [], [], [], [], [], [])
    add_sid, add_host, add_state = cols.session_id.append, cols.host.append, cols.state.append
    add_start, add_end = cols.start_ms.append, cols.end_ms.append
    add_seconds, add_source = cols.seconds.append, cols.source.append
    seen: set[str] = set()

    def emit(sid: str, host: str, state: str, start: int, end: int | None, source: str) -> None:
        if start < since:
            if end is not None and end <= since:
                return
            start = since
        add_sid(sid)
        add_host(host)
        add_state(state)
        add_start(start)
        add_end(end)
        add_seconds(max(0, (now_ms if end is None else end) - start) / 1000)
        add_source(source)

    sid = host = state = source = ""
    start = last_at = 0
    for row_sid, at, row_state, row_source in rows:
        if row_sid != sid or not seen:
            if seen:  # the previous session's last segment
                end = ends.get(sid)
                emit(sid, host, state, start, None if end is None else max(end, last_at), source)
            if row_sid in seen:
                raise ValueError(f"segment_columns: the rows of session {row_sid} are not together")
            seen.add(row_sid)
            sid, host = row_sid, hosts.get(row_sid, default_host)
            state, start, source = row_state, at, row_source
        elif row_state != state:
            # inlined emit() for the common case (~every row): the hot loop of a month
            if start < since:
                emit(sid, host, state, start, at, source)
            else:
                add_sid(sid)
                add_host(host)
                add_state(state)
                add_start(start)
                add_end(at)
                add_seconds(max(0, at - start) / 1000)
                add_source(source)
            state, start, source = row_state, at, row_source
        last_at = at
    if seen:
        end = ends.get(sid)
        emit(sid, host, state, start, None if end is None else max(end, last_at), source)
    return cols
