"""Insight: what a session's history says about you, from its segments (:mod:`.timeline`).

How long sessions waited on you, how fast you answered, how many turns finished: per session
(:class:`SessionStats`) and over every session of a window (:class:`Insight`, the header's
numbers). Pure: no I/O and no clock; ``now_ms`` and the start of "today" are parameters (the
caller knows the local midnight).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pmux_widget.core.model import ATTENTION_STATES, State, Tokens, Transition
from pmux_widget.core.timeline import HistoryRow, Span, by_session, state_spans

__all__ = [
    "Insight",
    "SessionStats",
    "insight",
    "session_stats",
    "session_stats_rows",
    "stats",
    "today",
]


@dataclass(frozen=True, slots=True)
class SessionStats:
    """What one session's history says, over a window (``since`` .. now).

    - ``seconds``: time in each state within the window (every state present, 0 if none);
    - ``waited``: seconds waiting on you = needs-input + review;
    - ``waits``: waits that began in the window (a wait begins when the session enters
      needs-input or review from any other state; needs-input → review continues it);
    - ``response_times``: for each wait that ended by the session going straight back to
      busy, or by the user looking at it (``user:seen``), with that end in the window: seconds
      from the wait's start to it. A wait that ends otherwise (dismissed, interrupted, ended, a
      hub restart's unknown) or is still open is not a response;
    - ``turns``: turns finished in the window, a finished turn being an entry into review;
    - ``tokens``: the session's token totals (not windowed: tokens have no history).
    """

    session_id: str
    seconds: Mapping[State, float]
    waited: float
    waits: int
    response_times: tuple[float, ...]
    turns: int
    tokens: Tokens = field(default_factory=Tokens)

    @property
    def responses(self) -> int:
        return len(self.response_times)

    @property
    def median_response(self) -> float | None:
        return statistics.median(self.response_times) if self.response_times else None


@dataclass(frozen=True, slots=True)
class Insight:
    """The header's numbers over a window: total waited seconds, the median response time
    over every response of every session (None without one), turns finished, and the waited
    seconds of each session (for the rows)."""

    waited: float
    median_response: float | None
    responses: int
    turns: int
    waited_by_session: Mapping[str, float]


def session_stats(
    transitions: Sequence[Transition],
    now_ms: int,
    since_ms: int | None = None,
    *,
    end_ms: int | None = None,
    tokens: Tokens | None = None,
) -> SessionStats:
    """One session's :class:`SessionStats` over ``since_ms`` .. now (its whole life if None).

    Waits and responses are followed on the unclipped segments, so a wait that began before
    the window and was answered inside it counts with its full length."""
    session_id = transitions[0].session_id if transitions else ""
    return _stats(session_id, state_spans(transitions, end_ms), now_ms, since_ms, tokens)


def session_stats_rows(
    rows: Sequence[HistoryRow],
    now_ms: int,
    since_ms: int | None = None,
    *,
    end_ms: int | None = None,
    tokens: Tokens | None = None,
) -> SessionStats:
    """:func:`session_stats` over ONE session's plain rows (oldest first, as the store reads
    them): ``stats()`` on a month of history builds no Transition per row."""
    session_id = rows[0][0] if rows else ""
    return _stats(session_id, _row_spans(rows, end_ms), now_ms, since_ms, tokens)


_STATES = {state.value: state for state in State}


def _row_spans(rows: Sequence[HistoryRow], end_ms: int | None) -> list[Span]:
    """:func:`~.timeline.state_spans` over plain rows (the state made a :class:`State` per
    segment)."""
    out: list[Span] = []
    if not rows:
        return out
    session_id, start, value, source = rows[0]
    for _, at, to_value, to_source in rows:
        if to_value != value:
            out.append((session_id, _STATES[value], start, at, source))
            value, start, source = to_value, at, to_source
    last_at = rows[-1][1]
    end = None if end_ms is None else max(end_ms, last_at)
    out.append((session_id, _STATES[value], start, end, source))
    return out


def _stats(
    session_id: str,
    spans: list[Span],
    now_ms: int,
    since_ms: int | None,
    tokens: Tokens | None,
) -> SessionStats:
    since = min(since_ms, now_ms) if since_ms is not None else -(2**63)
    ms = dict.fromkeys(State, 0)  # whole ms, summed exactly
    waits = 0
    turns = 0
    responses: list[float] = []
    wait_start: int | None = None
    for _, state, start, end, source in spans:
        stop = now_ms if end is None else end
        if stop > since:
            ms[state] += max(0, stop - max(start, since))
        inside = start >= since
        if state in ATTENTION_STATES:
            if wait_start is None:
                wait_start = start
                waits += 1 if inside else 0
            if state is State.REVIEW and inside:
                turns += 1
            continue
        if wait_start is not None and _answers(state, source) and inside:
            responses.append((start - wait_start) / 1000)
        wait_start = None
    seconds = {state: total / 1000 for state, total in ms.items()}
    waited = seconds[State.NEEDS_INPUT] + seconds[State.REVIEW]
    return SessionStats(
        session_id=session_id,
        seconds=seconds,
        waited=waited,
        waits=waits,
        response_times=tuple(responses),
        turns=turns,
        tokens=tokens if tokens is not None else Tokens(),
    )


def _answers(state: State, source: str) -> bool:
    """Does entering this segment end a wait as the user's response? Going back to work, or
    looking at a finished turn (``user:seen``: its terminal or pane was shown, issue 34)."""
    return state is State.BUSY or source == SEEN


#: The source of a review ended by the user looking at the session.
SEEN = "user:seen"


def stats(
    transitions: Iterable[Transition],
    now_ms: int,
    since_ms: int | None = None,
    *,
    ends: Mapping[str, int] | None = None,
    tokens: Mapping[str, Tokens] | None = None,
) -> dict[str, SessionStats]:
    """:func:`session_stats` of every session in ``transitions``, by session id."""
    ends = ends or {}
    tokens = tokens or {}
    return {
        sid: session_stats(
            group, now_ms, since_ms, end_ms=ends.get(sid), tokens=tokens.get(sid, Tokens())
        )
        for sid, group in by_session(transitions).items()
    }


def insight(per_session: Iterable[SessionStats]) -> Insight:
    """The header's totals over sessions' stats (of one window)."""
    waited = 0.0
    turns = 0
    every_response: list[float] = []
    by_sid: dict[str, float] = {}
    for s in per_session:
        waited += s.waited
        turns += s.turns
        every_response.extend(s.response_times)
        by_sid[s.session_id] = s.waited
    return Insight(
        waited=waited,
        median_response=statistics.median(every_response) if every_response else None,
        responses=len(every_response),
        turns=turns,
        waited_by_session=by_sid,
    )


def today(
    transitions: Iterable[Transition],
    now_ms: int,
    day_start_ms: int,
    *,
    ends: Mapping[str, int] | None = None,
) -> Insight:
    """Today's insight: the window starts at ``day_start_ms`` (the caller's local midnight)."""
    return insight(stats(transitions, now_ms, day_start_ms, ends=ends).values())
