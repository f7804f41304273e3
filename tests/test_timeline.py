"""Timeline and insight (core/timeline.py, core/insight.py): segments and stats on
hand-computed histories, and the tiling properties of segments on generated ones."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmux_widget.core.insight import insight, session_stats, session_stats_rows, stats, today
from pmux_widget.core.model import Session, State, Tokens, Tracking, Transition
from pmux_widget.core.timeline import (
    Segment,
    ended_at,
    segment_columns,
    segments,
    session_segments,
)

IDLE, BUSY, REVIEW, UNKNOWN = State.IDLE, State.BUSY, State.REVIEW, State.UNKNOWN
ASK = State.NEEDS_INPUT
S = 1000  # ms per second: histories below are written in seconds


def history(sid: str, *steps: tuple[float, State, str]) -> list[Transition]:
    """Transitions from ``(seconds, state, source)`` steps; ``from_state`` follows the chain."""
    out: list[Transition] = []
    before: State | None = None
    for at, state, source in steps:
        out.append(Transition(sid, int(at * S), before, state, source))
        before = state
    return out


def spans(segs: list[Segment]) -> list[tuple[str, float, float | None, float]]:
    """(state, start s, end s or None, seconds): what a test compares."""
    return [
        (s.state.value, s.start_ms / S, None if s.end_ms is None else s.end_ms / S, s.seconds)
        for s in segs
    ]


# ------------------------------------------------------------------------------ segments


def test_open_segment_runs_to_now():
    h = history(
        "a", (0, IDLE, "hook:SessionStart"), (10, BUSY, "hook:UserPromptSubmit"), (70, REVIEW, "s")
    )
    segs = segments(h, now_ms=100 * S, default_host="box")
    assert spans(segs) == [("idle", 0, 10, 10), ("busy", 10, 70, 60), ("review", 70, None, 30)]
    assert [s.source for s in segs] == ["hook:SessionStart", "hook:UserPromptSubmit", "s"]
    assert {s.host for s in segs} == {"box"}


def test_ended_session_last_segment_ends_at_its_end():
    h = history("a", (0, BUSY, "hook:UserPromptSubmit"), (30, IDLE, "hook:SessionEnd"))
    # ended in idle at 30 s: the idle segment is closed at the end, not left open
    assert spans(segments(h, now_ms=500 * S, ends={"a": 30 * S})) == [
        ("busy", 0, 30, 30),
        ("idle", 30, 30, 0),
    ]
    # ended while in review (no transition at the end): review lasts until the end
    h = history("b", (0, BUSY, "p"), (20, REVIEW, "hook:Stop"))
    assert spans(segments(h, now_ms=500 * S, ends={"b": 45 * S})) == [
        ("busy", 0, 20, 20),
        ("review", 20, 45, 25),
    ]


def test_restart_unknown_is_a_segment_like_any_other():
    h = history(
        "a",
        (0, BUSY, "hook:UserPromptSubmit"),
        (50, UNKNOWN, "restart"),
        (55, BUSY, "recovery:pid:busy"),
        (80, REVIEW, "hook:Stop"),
    )
    assert spans(segments(h, now_ms=90 * S)) == [
        ("busy", 0, 50, 50),
        ("unknown", 50, 55, 5),
        ("busy", 55, 80, 25),
        ("review", 80, None, 10),
    ]
    assert segments(h, now_ms=90 * S)[1].source == "restart"


def test_dismiss_closes_review_and_after_the_end_leaves_zero_length_idle():
    h = history("a", (0, BUSY, "p"), (10, REVIEW, "hook:Stop"), (40, IDLE, "user:dismiss"))
    assert spans(segments(h, now_ms=60 * S)) == [
        ("busy", 0, 10, 10),
        ("review", 10, 40, 30),
        ("idle", 40, None, 20),
    ]
    # the session ended at 25 s in review, was dismissed at 40 s: nothing runs past 40
    assert spans(segments(h, now_ms=60 * S, ends={"a": 25 * S})) == [
        ("busy", 0, 10, 10),
        ("review", 10, 40, 30),
        ("idle", 40, 40, 0),
    ]


def test_repeated_entry_into_the_same_state_continues_the_segment():
    # two hubs recorded the same prompt under different sources (or from_states)
    h = [
        Transition("a", 0, None, IDLE, "hook:SessionStart"),
        Transition("a", 5 * S, IDLE, BUSY, "hook:UserPromptSubmit"),
        Transition("a", 6 * S, None, BUSY, "transcript"),
        Transition("a", 9 * S, BUSY, REVIEW, "hook:Stop"),
    ]
    assert spans(segments(h, now_ms=10 * S)) == [
        ("idle", 0, 5, 5),
        ("busy", 5, 9, 4),
        ("review", 9, None, 1),
    ]


def test_since_clips_the_first_segment_and_drops_earlier_ones():
    h = history("a", (0, IDLE, "s"), (10, BUSY, "p"), (70, REVIEW, "stop"))
    assert spans(segments(h, now_ms=100 * S, since_ms=30 * S)) == [
        ("busy", 30, 70, 40),
        ("review", 70, None, 30),
    ]
    assert spans(segments(h, now_ms=100 * S, since_ms=80 * S)) == [("review", 80, None, 20)]
    # a segment that ended exactly at `since` is gone; one starting there stays
    assert spans(segments(h, now_ms=100 * S, since_ms=70 * S)) == [("review", 70, None, 30)]
    # an ended session entirely before `since` has no segment at all
    assert segments(h, now_ms=100 * S, since_ms=90 * S, ends={"a": 80 * S}) == []


def test_sessions_keep_their_own_hosts_and_order():
    h = history("a", (0, IDLE, "s")) + history("b", (5, BUSY, "p")) + history("a", (7, BUSY, "p"))
    segs = segments(h, now_ms=10 * S, hosts={"b": "far"}, default_host="here")
    assert [(s.session_id, s.state.value, s.host) for s in segs] == [
        ("a", "idle", "here"),
        ("a", "busy", "here"),
        ("b", "busy", "far"),
    ]


def test_no_transitions_no_segments():
    assert segments([], now_ms=1) == []
    assert session_segments([], now_ms=1) == []


# ------------------------------------------------------------------------------ stats

#: busy 0-10, needs-input 10-25 (answered: response 15), busy 25-60, review 60-100, dismissed
#: (idle 100-200: no response), busy 200-300, review 300-330 (answered: 30), busy 330-400 (now)
LONG = history(
    "a",
    (0, BUSY, "p"),
    (10, ASK, "hook:PermissionRequest"),
    (25, BUSY, "hook:PostToolUse"),
    (60, REVIEW, "hook:Stop"),
    (100, IDLE, "user:dismiss"),
    (200, BUSY, "p"),
    (300, REVIEW, "hook:Stop"),
    (330, BUSY, "p"),
)


def test_stats_seconds_waits_responses_turns():
    s = session_stats(LONG, now_ms=400 * S, tokens=Tokens(input=3, output=7))
    assert s.seconds == {IDLE: 100, BUSY: 10 + 35 + 100 + 70, ASK: 15, REVIEW: 40 + 30, UNKNOWN: 0}
    assert s.waited == 15 + 40 + 30
    assert s.waits == 3
    assert s.response_times == (15, 30)
    assert s.responses == 2 and s.median_response == 22.5
    assert s.turns == 2
    assert s.tokens == Tokens(input=3, output=7)


def test_stats_since_window_counts_full_responses_completed_inside_it():
    # window from 310 s: review 310-330 (20 s waited), its response (330) counted in full (30)
    s = session_stats(LONG, now_ms=400 * S, since_ms=310 * S)
    assert s.seconds == {IDLE: 0, BUSY: 70, ASK: 0, REVIEW: 20, UNKNOWN: 0}
    assert s.waited == 20
    assert s.waits == 0  # the wait began before the window
    assert s.turns == 0  # so did the entry into review
    assert s.response_times == (30,)


def test_a_wait_through_needs_input_then_review_is_one_wait_answered_from_its_start():
    h = history("a", (0, BUSY, "p"), (10, ASK, "perm"), (20, REVIEW, "stop"), (50, BUSY, "p"))
    s = session_stats(h, now_ms=60 * S)
    assert (s.waits, s.turns, s.response_times, s.waited) == (1, 1, (40,), 40)


def test_waits_ended_otherwise_or_still_open_are_not_responses():
    h = history(
        "a",
        (0, BUSY, "p"),
        (10, ASK, "perm"),
        (20, IDLE, "transcript:interrupt"),  # Esc: not a response
        (30, BUSY, "p"),
        (40, REVIEW, "stop"),
        (50, UNKNOWN, "restart"),  # a restart's unknown: not a response either
        (60, BUSY, "recovery"),
        (70, ASK, "perm"),  # still open at now
    )
    s = session_stats(h, now_ms=100 * S)
    assert s.response_times == ()
    assert s.median_response is None
    assert (s.waits, s.turns, s.waited) == (3, 1, 10 + 10 + 30)


def test_a_look_ends_a_review_wait_as_a_response_and_stops_its_time():
    # the user looked at the finished turn at 25 s (its terminal tab focused): the wait ends
    # there, answered; a dismiss at the same time is not a response
    seen = history("a", (0, BUSY, "p"), (10, REVIEW, "hook:Stop"), (25, IDLE, "user:seen"))
    s = session_stats(seen, now_ms=100 * S)
    assert (s.waited, s.waits, s.turns, s.response_times) == (15, 1, 1, (15,))
    assert s.seconds[IDLE] == 75
    dismissed = history("a", (0, BUSY, "p"), (10, REVIEW, "hook:Stop"), (25, IDLE, "user:dismiss"))
    assert session_stats(dismissed, now_ms=100 * S).response_times == ()


def test_ended_session_stats_stop_at_the_end():
    h = history("a", (0, BUSY, "p"), (10, REVIEW, "stop"))
    s = session_stats(h, now_ms=1000 * S, end_ms=25 * S)
    assert s.seconds[REVIEW] == 15 and s.waited == 15


def test_insight_and_today_pool_every_session():
    other = history(
        "b", (0, BUSY, "p"), (50, ASK, "perm"), (52, BUSY, "post"), (90, REVIEW, "stop")
    )
    per = stats(LONG + other, now_ms=400 * S)
    assert per["b"].response_times == (2,)
    total = insight(per.values())
    assert total.median_response == 15  # of 15, 30 and 2
    assert total.responses == 3
    assert total.turns == 3
    assert total.waited == 85 + 2 + 310
    assert total.waited_by_session == {"a": 85, "b": 312}
    day = today(LONG + other, now_ms=400 * S, day_start_ms=310 * S, ends={"b": 100 * S})
    assert day.waited_by_session == {"a": 20, "b": 0}
    assert (day.turns, day.median_response) == (0, 30)


def test_ended_at_is_the_newest_sign_of_life_of_an_ended_session():
    live = Session("a", state_since=5, tracking=Tracking(active_at=9))
    assert ended_at(live) is None
    gone = live.replace(
        tracking=live.tracking.replace(ended=True, last_hook_at=12, transcript_at=11)
    )
    assert ended_at(gone) == 12


# ------------------------------------------------------------------------------ properties

steps = st.lists(
    st.tuples(
        st.integers(0, 10_000),  # gap before this transition (0: several in one ms)
        st.sampled_from(list(State)),
        st.sampled_from(["hook:Stop", "restart", "user:dismiss", "pid:busy"]),
    ),
    min_size=1,
    max_size=30,
)


@st.composite
def lives(draw: st.DrawFn) -> tuple[list[Transition], int, int | None]:
    """A session's transitions, `now`, and its end (None while live)."""
    at = draw(st.integers(0, 10**12))
    out: list[Transition] = []
    for gap, state, source in draw(steps):
        at += gap
        out.append(Transition("s", at, out[-1].to_state if out else None, state, source))
    end = draw(st.none() | st.integers(out[0].at, at + 20_000))
    now = max(at, end or 0) + draw(st.integers(0, 50_000))
    return out, now, end


def assert_tiles(segs: list[Segment], start: int, end: int | None, now: int) -> None:
    assert segs, "a life with transitions has segments"
    assert segs[0].start_ms == start
    for one, following in itertools.pairwise(segs):
        assert one.end_ms == following.start_ms  # no gap, no overlap
        assert one.start_ms <= one.end_ms
        assert one.state is not following.state  # maximal: a repeated state continues
    assert segs[-1].end_ms == end
    final = now if end is None else end
    assert sum(s.seconds for s in segs) == pytest.approx((final - start) / 1000)
    for s in segs:
        final = now if s.end_ms is None else s.end_ms
        assert s.seconds == pytest.approx((final - s.start_ms) / 1000)


@given(lives())
def test_segments_tile_the_lifetime(life):
    transitions, now, end = life
    segs = segments(transitions, now, ends={} if end is None else {"s": end})
    last = transitions[-1].at
    assert_tiles(segs, transitions[0].at, None if end is None else max(end, last), now)


@given(lives(), st.integers(-5_000, 400_000))
def test_since_clipping_keeps_the_tiling(life, offset):
    transitions, now, end = life
    since = min(transitions[0].at + offset, now)  # a window in the future starts at now
    segs = segments(transitions, now, since, ends={} if end is None else {"s": end})
    final_end = None if end is None else max(end, transitions[-1].at)
    if final_end is not None and final_end <= since and transitions[0].at < since:
        # the whole life ended before the window (zero-length tails at `since` aside)
        assert all(s.start_ms >= since for s in segs)
        return
    if not segs:
        assert transitions[0].at < since and final_end is not None and final_end <= since
        return
    assert_tiles(segs, max(since, transitions[0].at), final_end, now)


@given(lives(), st.integers(0, 400_000))
def test_stats_seconds_add_up_to_the_window(life, offset):
    transitions, now, end = life
    since = min(transitions[0].at + offset, now)
    s = session_stats(transitions, now, since, end_ms=end)
    final = now if end is None else max(end, transitions[-1].at)
    window = max(0, final - max(since, transitions[0].at)) / 1000
    assert sum(s.seconds.values()) == pytest.approx(window)
    assert s.waited == pytest.approx(s.seconds[ASK] + s.seconds[REVIEW])
    assert all(r >= 0 for r in s.response_times)
    assert s.responses <= s.waits + 1  # at most one wait began before the window


# ------------------------------------------------------- segment_columns (timeline()'s path)


def rows_of(transitions: list[Transition]) -> list[tuple[str, int, str, str]]:
    return [(t.session_id, t.at, t.to_state.value, t.source) for t in transitions]


def columns_of(segs: list[Segment]) -> list[tuple[object, ...]]:
    return [(s.session_id, s.host, s.state.value, *s[3:]) for s in segs]


@st.composite
def fleets(draw: st.DrawFn) -> tuple[list[Transition], int, dict[str, int], dict[str, str], int]:
    """Several sessions' transitions, each session's together (as the store reads them),
    starting within a minute of each other, with `now`, the ended ones' ends, some hosts and
    a `since` around them."""
    base = draw(st.integers(0, 10**12))
    transitions: list[Transition] = []
    ends: dict[str, int] = {}
    hosts: dict[str, str] = {}
    now = base
    for k in range(draw(st.integers(0, 4))):
        life, life_now, end = draw(lives())
        shift = base + draw(st.integers(0, 60_000)) - life[0].at
        sid = f"s{k}"
        transitions += [
            Transition(sid, t.at + shift, t.from_state, t.to_state, t.source) for t in life
        ]
        now = max(now, life_now + shift)
        if end is not None:
            ends[sid] = end + shift
        if draw(st.booleans()):
            hosts[sid] = f"host-{k}"
    return transitions, now, ends, hosts, base


@given(fleets(), st.none() | st.integers(-5_000, 500_000))
def test_segment_columns_are_the_segments_column_by_column(fleet, offset):
    transitions, now, ends, hosts, base = fleet
    since = None if offset is None else base + offset
    cols = segment_columns(
        rows_of(transitions), now, since, ends=ends, hosts=hosts, default_host="here"
    )
    expected = segments(transitions, now, since, ends=ends, hosts=hosts, default_host="here")
    assert list(zip(*cols, strict=True)) == columns_of(expected)


def test_segment_columns_on_hand_computed_history():
    h = history("a", (0, IDLE, "s"), (10, BUSY, "p"), (10, BUSY, "q"), (70, REVIEW, "stop"))
    h += history("b", (5, BUSY, "p"))
    cols = segment_columns(rows_of(h), 100 * S, 30 * S, ends={"b": 50 * S}, hosts={"b": "far"})
    assert list(zip(*cols, strict=True)) == [
        ("a", "", "busy", 30 * S, 70 * S, 40.0, "p"),
        ("a", "", "review", 70 * S, None, 30.0, "stop"),
        ("b", "far", "busy", 30 * S, 50 * S, 20.0, "p"),
    ]
    assert segment_columns([], now_ms=1) == ([], [], [], [], [], [], [])


def test_segment_columns_refuse_a_session_split_in_two():
    h = history("a", (0, IDLE, "s")) + history("b", (5, BUSY, "p")) + history("a", (7, BUSY, "p"))
    with pytest.raises(ValueError, match="session a"):
        segment_columns(rows_of(h), now_ms=10 * S)


@given(lives(), st.none() | st.integers(-5_000, 400_000))
def test_session_stats_rows_are_session_stats(life, offset):
    transitions, now, end = life
    since = None if offset is None else transitions[0].at + offset
    tokens = Tokens(1, 2, 3, 4)
    assert session_stats_rows(
        rows_of(transitions), now, since, end_ms=end, tokens=tokens
    ) == session_stats(transitions, now, since, end_ms=end, tokens=tokens)
    assert session_stats_rows([], now) == session_stats([], now)
