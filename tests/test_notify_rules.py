"""The notifier's rules (core/notify_rules.py): pure functions, a fake clock, hypothesis."""

from __future__ import annotations

import heapq
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pmux_widget.core.notify_rules import (
    SAME_TRANSITION_MS,
    WORDS_POLL_MS,
    WORDS_WAIT_MS,
    ChannelFilter,
    NotifyEvent,
    NotifySettings,
    Presence,
    Sent,
    check,
    in_quiet_hours,
    link,
    looking_until,
    matches,
    minutes_until,
    plan,
    ttl_seconds,
)

T0 = 1_800_000_000_000  # a fixed epoch ms: 2027-01-15 08:00 UTC
MIN = 60_000


def ev(sid: str = "s1", state: str = "needs-input", at: int = T0, **kw: object) -> NotifyEvent:
    return NotifyEvent(host="h", session_id=sid, state=state, at=at, **kw)  # type: ignore[arg-type]


def sent_for(e: NotifyEvent, when: int, kind: str = "send") -> Sent:
    return Sent(e.key, e.session_id, e.state, e.at, when, kind, e.host)


def run_check(e: NotifyEvent, s: NotifySettings, now: int, **kw: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {"still_waiting": True, "looking": 0, "sent": [], "local_minute": 600}
    args.update(kw)
    return check(e, s, now=now, **args)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ plan


def test_plan_waits_the_delay_then_rechecks() -> None:
    d = plan(ev(), NotifySettings(delay_s=20), T0)
    assert (d.verdict, d.at) == ("later", T0 + 20_000)
    assert plan(ev(), NotifySettings(delay_s=0), T0).at == T0


@pytest.mark.parametrize(
    ("event", "s", "reason"),
    [
        (ev(state="review"), NotifySettings(states=("needs-input",)), "state not notified"),
        (ev(state="busy"), NotifySettings(), "state not notified"),
        (ev(interactive=False), NotifySettings(), "claude -p / SDK run"),
        (ev(), NotifySettings(snooze_until=T0 + 1), "snoozed"),
        (ev(project="p"), NotifySettings(muted_projects={"p": 0}), "project muted"),
        (ev(project="p"), NotifySettings(muted_projects={"p": T0 + MIN}), "project muted"),
    ],
)
def test_plan_drops(event: NotifyEvent, s: NotifySettings, reason: str) -> None:
    d = plan(event, s, T0)
    assert (d.verdict, d.reason) == ("drop", reason)


def test_plan_keeps_what_is_not_muted_any_more() -> None:
    assert (
        plan(ev(project="p"), NotifySettings(muted_projects={"p": T0 - 1}), T0).verdict == "later"
    )
    assert plan(ev(), NotifySettings(snooze_until=T0), T0).verdict == "later"
    s = NotifySettings(include_non_interactive=True)
    assert plan(ev(interactive=False), s, T0).verdict == "later"


def test_an_sdk_run_notifies_when_a_handler_waits_and_never_when_nothing_waits() -> None:
    """issue 35: an SDK run whose permission call waits on our handler can be answered (from
    the notification too); one whose CLI refused the tool by itself cannot."""
    assert plan(ev(interactive=False, answerable=True), NotifySettings(), T0).verdict == "later"
    assert plan(ev(interactive=False), NotifySettings(), T0).verdict == "drop"
    review = ev(state="review", interactive=False, answerable=False)
    assert plan(review, NotifySettings(), T0).verdict == "drop"


# ------------------------------------------------------------------------------ check


def test_check_sends_needs_input_high_and_review_normal() -> None:
    s = NotifySettings()
    assert run_check(ev(), s, T0).priority == "high"
    d = run_check(ev(state="review"), s, T0)
    assert (d.verdict, d.priority) == ("send", "normal")


def test_a_dialog_waits_a_moment_for_what_it_asks() -> None:
    """Known from the PID file's ``waiting`` before its PermissionRequest says what it asks:
    looked at again every WORDS_POLL_MS, sent at once when the words come, and with what
    is known once WORDS_WAIT_MS have passed (a session without hooks never gets them)."""
    s = NotifySettings(delay_s=0)
    d = run_check(ev(), s, T0, knows_the_ask=False)
    assert (d.verdict, d.at) == ("later", T0 + WORDS_POLL_MS)
    assert d.reason == "what it asks is not known yet"
    assert run_check(ev(), s, T0 + WORDS_POLL_MS, knows_the_ask=True).verdict == "send"
    late = run_check(ev(), s, T0 + WORDS_WAIT_MS - 50, knows_the_ask=False)
    assert (late.verdict, late.at) == ("later", T0 + WORDS_WAIT_MS)  # never past the wait
    assert run_check(ev(), s, T0 + WORDS_WAIT_MS, knows_the_ask=False).verdict == "send"
    assert run_check(ev(state="review"), s, T0, knows_the_ask=False).verdict == "send"
    # an answered dialog still goes unsent, words or none
    assert run_check(ev(), s, T0, knows_the_ask=False, still_waiting=False).verdict == "drop"


def test_check_drops_an_answered_dialog_and_a_sent_transition() -> None:
    s, e = NotifySettings(), ev()
    assert run_check(e, s, T0, still_waiting=False).reason == "answered meanwhile"
    assert run_check(e, s, T0, sent=[sent_for(e, T0 - 1)]).reason == "already sent"
    # another hub learnt the same transition 40 ms apart (PID file vs hook): same one
    near = sent_for(ev(at=T0 + 40), T0 - 1)
    assert run_check(e, s, T0, sent=[near]).reason == "already sent"
    far = sent_for(ev(at=T0 - 10_000), T0 - 9_000)
    assert run_check(e, s, T0, sent=[far]).reason == "cooldown"


def test_one_transition_dated_seconds_apart_by_two_hubs_is_sent_once() -> None:
    """One hub dated the dialog by the hook's stamp, another by the PID file Claude wrote once
    the hook returned, 9 s later on a loaded machine: the same transition, as the second hub
    saw the session busy since before the first one's dating. A send from before that busy
    stay is an earlier transition."""
    s = NotifySettings(cooldown_s=0)
    by_hook = ev(at=T0, since=T0 - 3_000)
    by_pid = ev(at=T0 + 9_000, since=T0 - 3_000)
    assert run_check(by_pid, s, T0 + 9_500, sent=[sent_for(by_hook, T0 + 10)]).reason == (
        "already sent"
    )
    assert run_check(by_hook, s, T0 + 9_500, sent=[sent_for(by_pid, T0 + 9_100)]).reason == (
        "already sent"
    )
    earlier = sent_for(ev(at=T0 - 4_000), T0 - 3_900)  # the previous dialog, before the busy
    assert run_check(by_pid, s, T0 + 9_500, sent=[earlier]).verdict == "send"
    # not known since when (a session first seen in this state): the 5 s window only
    assert run_check(ev(at=T0 + 9_000), s, T0 + 9_500, sent=[sent_for(by_hook, T0)]).verdict == (
        "send"
    )
    other = ev(sid="s2", at=T0, since=T0 - 3_000)
    assert run_check(by_pid, s, T0 + 9_500, sent=[sent_for(other, T0)]).verdict == "send"


def test_someone_looking_holds_the_push_until_they_stop() -> None:
    d = run_check(ev(), NotifySettings(), T0, looking=T0 + 30_000)
    assert (d.verdict, d.at) == ("later", T0 + 30_000)


def test_looking_until_needs_the_session_shown_visible_focused_and_recent_input() -> None:
    s = NotifySettings(looking_s=60)
    ok = Presence("d", frozenset({"s1"}), True, True, T0 - 10_000)
    assert looking_until("s1", [ok], s, T0) == T0 + 50_000
    assert looking_until("s2", [ok], s, T0) == 0
    for other in (
        Presence("d", frozenset({"s1"}), False, True, T0),
        Presence("d", frozenset({"s1"}), True, False, T0),
        Presence("d", frozenset({"s1"}), True, True, T0 - 60_000),
    ):
        assert looking_until("s1", [other], s, T0) == 0
    later = Presence("e", frozenset({"s1"}), True, True, T0 - 1_000)
    assert looking_until("s1", [ok, later], s, T0) == T0 + 59_000


def test_quiet_hours_hold_review_and_lower_needs_input() -> None:
    s = NotifySettings(quiet_start="22:00", quiet_end="07:00")
    at_23h = 23 * 60
    d = run_check(ev(state="review"), s, T0, local_minute=at_23h)
    assert (d.verdict, d.at) == ("later", T0 + 8 * 60 * MIN)
    d = run_check(ev(), s, T0, local_minute=at_23h)
    assert (d.verdict, d.priority) == ("send", "low")
    assert run_check(ev(state="review"), s, T0, local_minute=7 * 60).verdict == "send"


@pytest.mark.parametrize(
    ("start", "end", "minute", "quiet"),
    [
        ("22:00", "07:00", 22 * 60, True),
        ("22:00", "07:00", 0, True),
        ("22:00", "07:00", 7 * 60, False),
        ("22:00", "07:00", 12 * 60, False),
        ("12:00", "13:30", 12 * 60 + 59, True),
        ("12:00", "13:30", 13 * 60 + 30, False),
        ("12:00", "12:00", 12 * 60, False),
        ("", "", 0, False),
    ],
)
def test_in_quiet_hours(start: str, end: str, minute: int, quiet: bool) -> None:
    assert in_quiet_hours(NotifySettings(quiet_start=start, quiet_end=end), minute) is quiet


def test_minutes_until_wraps() -> None:
    assert minutes_until(23 * 60, "07:00") == 8 * 60
    assert minutes_until(7 * 60, "07:00") == 1440


def test_cooldown_per_session() -> None:
    s = NotifySettings(cooldown_s=60)
    other = ev(sid="s1", state="review", at=T0 - 20_000)
    d = run_check(ev(), s, T0, sent=[sent_for(other, T0 - 20_000)])
    assert (d.verdict, d.at, d.reason) == ("later", T0 + 40_000, "cooldown")
    elsewhere = sent_for(ev(sid="s2", at=T0 - 20_000), T0 - 20_000)
    assert run_check(ev(), s, T0, sent=[elsewhere]).verdict == "send"


def test_cap_then_one_digest_per_window() -> None:
    s = NotifySettings(cap=2, cap_window_s=300, cooldown_s=0)
    history = [sent_for(ev(sid=f"x{i}", at=T0 - i), T0 - 1000 * (i + 1)) for i in range(2)]
    d = run_check(ev(), s, T0, sent=history)
    assert (d.verdict, d.at) == ("digest", T0)
    digest = Sent("digest/1", "", "", 0, T0 - 500, "digest", "h")
    d = run_check(ev(), s, T0, sent=[*history, digest])
    assert (d.verdict, d.at) == ("digest", T0 - 500 + 300_000)
    # once the window has passed, sends go again
    assert run_check(ev(), s, T0 + 300_000, sent=[*history, digest]).verdict == "send"


def test_channel_filters() -> None:
    assert matches(ChannelFilter(), "review", None, "h")
    f = ChannelFilter(states=("needs-input",), projects=("web-*",), hosts=("gpu*",))
    assert matches(f, "needs-input", "web-shop", "gpu1")
    assert not matches(f, "review", "web-shop", "gpu1")
    assert not matches(f, "needs-input", "api", "gpu1")
    assert not matches(f, "needs-input", None, "gpu1")
    assert not matches(f, "needs-input", "web-shop", "laptop")
    assert matches(f, "", "web-shop", "gpu1")  # a digest has no single state


def test_ttl() -> None:
    assert ttl_seconds("needs-input", T0, T0) == 600
    assert ttl_seconds("needs-input", T0, T0 + 300_000) == 300
    assert ttl_seconds("needs-input", T0, T0 + 3_600_000) == 30
    assert ttl_seconds("review", T0, T0) == 12 * 3600


def test_settings_round_trip_and_refuse_bad_values() -> None:
    s = NotifySettings().updated(delay_s=0, quiet_start="22:00", states=["needs-input"])
    assert NotifySettings.from_json(s.to_json()) == s
    assert NotifySettings.from_json({"unknown": 1}) == NotifySettings()
    ok = NotifySettings().updated(vapid_subject="mailto:me@example.com").vapid_subject
    assert ok == "mailto:me@example.com"
    bad_values: list[dict[str, object]] = [
        {"delay_s": -1},
        {"delay_s": "soon"},
        {"states": ["busy"]},
        {"quiet_start": "25:00"},
        {"generic": "yes"},
        {"nope": 1},
        {"vapid_subject": "mailto:me@localhost"},
        {"vapid_subject": "mailto:a@b.local"},
        {"vapid_subject": "me@example.com"},
        {"vapid_subject": "https://x.org/path"},
        {"link_base": "lab.example.org"},
        {"link_base": "ftp://lab.example.org"},
        {"link_base": "https://lab.example.org/lab"},
        {"link_base": "https://user@lab.example.org"},
    ]
    for bad in bad_values:
        with pytest.raises(ValueError):
            NotifySettings().updated(**bad)


def test_a_phone_gets_a_link_only_to_an_address_it_can_reach() -> None:
    base = NotifySettings().updated(link_base="HTTPS://lab.example.org:8443/").link_base
    assert base == "https://lab.example.org:8443"
    assert link(base, "/user/al/lab?pmux-session=s1") == (
        "https://lab.example.org:8443/user/al/lab?pmux-session=s1"
    )
    assert link("", "/lab?pmux-session=s1") == ""  # this machine's path means nothing there
    assert link(base, "") == ""
    assert link(base, "https://elsewhere.example/x") == "https://elsewhere.example/x"


# ------------------------------------------------------------------------------ properties


_events = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["needs-input", "review"]),
        st.integers(0, 40 * MIN),
    ),
    max_size=40,
)
_settings = st.builds(
    NotifySettings,
    delay_s=st.sampled_from([0.0, 5.0, 20.0]),
    cooldown_s=st.sampled_from([0.0, 30.0, 60.0]),
    cap=st.integers(1, 5),
    cap_window_s=st.sampled_from([60.0, 300.0]),
    quiet_start=st.sampled_from(["", "08:10", "23:00"]),
    quiet_end=st.sampled_from(["", "08:20", "06:00"]),
)


def simulate(
    raw: list[tuple[str, str, int]], s: NotifySettings, waiting: bool = True
) -> tuple[list[Sent], list[tuple[NotifyEvent, int]]]:
    """Drive plan/check with a fake clock, as the notifier does, and return what went."""
    sent: list[Sent] = []
    sends: list[tuple[NotifyEvent, int]] = []
    queue: list[tuple[int, int, NotifyEvent]] = []
    for n, (sid, state, offset) in enumerate(raw):
        e = NotifyEvent("h", sid, state, T0 + offset)
        d = plan(e, s, e.at)
        if d.verdict == "later":
            heapq.heappush(queue, (d.at, n, e))
    steps = 0
    while queue:
        steps += 1
        assert steps < 10_000, "the rules never settle"
        now, n, e = heapq.heappop(queue)
        minute = (now // MIN) % 1440
        d = check(e, s, now=now, still_waiting=waiting, looking=0, sent=sent, local_minute=minute)
        if d.verdict == "send":
            sent.append(Sent(e.key, e.session_id, e.state, e.at, now, "send", "h"))
            sends.append((e, now))
        elif d.verdict == "digest" and d.at <= now:
            sent.append(Sent(f"digest/{now}", "", "", 0, now, "digest", "h"))
            sent.append(Sent(e.key, e.session_id, e.state, e.at, now, "folded", "h"))
        elif d.verdict in ("later", "digest"):
            assert d.at > now, d
            heapq.heappush(queue, (d.at, n, e))
    return sent, sends


@settings(max_examples=300, deadline=None)
@given(_events, _settings)
def test_property_never_twice_cap_quiet_cooldown(raw, s) -> None:  # type: ignore[no-untyped-def]
    sent, sends = simulate(raw, s)
    keys = [e.key for e, _ in sends]
    assert len(keys) == len(set(keys)), "a transition was sent twice"
    window = int(s.cap_window_s * 1000)
    plain = sorted(x.sent_at for x in sent if x.kind == "send")
    digests = sorted(x.sent_at for x in sent if x.digest)
    for t in plain:
        assert sum(1 for u in plain if t <= u < t + window) <= s.cap
    for t in digests:
        assert sum(1 for u in digests if t <= u < t + window) <= 1
    for e, when in sends:
        assert when >= e.at + int(s.delay_s * 1000), "sent before the away delay"
        if e.state == "review":
            assert not in_quiet_hours(s, (when // MIN) % 1440), "review in quiet hours"
    cooldown = int(s.cooldown_s * 1000)
    per_session: dict[str, list[int]] = {}
    for e, when in sends:
        per_session.setdefault(e.session_id, []).append(when)
    for times in per_session.values():
        times.sort()
        assert all(b - a >= cooldown for a, b in itertools.pairwise(times)), "cooldown broken"


@settings(max_examples=100, deadline=None)
@given(_events, _settings)
def test_property_an_answered_dialog_never_goes(raw, s) -> None:  # type: ignore[no-untyped-def]
    sent, _ = simulate(raw, s, waiting=False)
    assert sent == []


@settings(max_examples=100, deadline=None)
@given(_events)
def test_property_nothing_is_lost_without_limits(raw) -> None:  # type: ignore[no-untyped-def]
    """With no cap, cooldown or quiet hours, every transition goes once; only one seen twice
    (the same session and state within SAME_TRANSITION_MS of a sent one) is not sent again."""
    s = NotifySettings(delay_s=0, cooldown_s=0, cap=1000)
    _, sends = simulate(raw, s)
    expected: list[NotifyEvent] = []
    for sid, state, offset in sorted(raw, key=lambda r: r[2]):
        e = NotifyEvent("h", sid, state, T0 + offset)
        if not any(
            x.session_id == sid and x.state == state and abs(x.at - e.at) <= SAME_TRANSITION_MS
            for x in expected
        ):
            expected.append(e)
    assert sorted(e.key for e, _ in sends) == sorted(e.key for e in expected)
