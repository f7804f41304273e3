"""Properties of the tracker over any sequence of signals (hypothesis).

Signals are drawn for two sessions sharing a pid pool, with event times that mostly advance but
may jump back (signals overtaking each other), live or replayed.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pmux_widget.core import signals as s
from pmux_widget.core.model import Session, State, Tokens
from pmux_widget.core.tracker import reduce

SIDS = ("s-1", "s-2")
TOOLS = ("Bash", "Read", "Edit", "Agent")
ATTENTION = (State.NEEDS_INPUT, State.REVIEW)

times = st.integers(min_value=0, max_value=2_000_000)


def hook_payloads() -> st.SearchStrategy[dict]:
    event = st.sampled_from(
        [
            (
                "SessionStart",
                {"source": st.sampled_from(["startup", "resume", "clear", "compact"])},
            ),
            ("UserPromptSubmit", {"prompt": st.text(max_size=20)}),
            ("PreToolUse", {"tool_name": st.sampled_from(TOOLS)}),
            ("PermissionRequest", {"tool_name": st.sampled_from(TOOLS)}),
            (
                "Notification",
                {
                    "notification_type": st.sampled_from(
                        [
                            "permission_prompt",
                            "idle_prompt",
                            "worker_permission_prompt",
                            "elicitation_dialog",
                        ]
                    )
                },
            ),
            ("PostToolUse", {"tool_name": st.sampled_from(TOOLS)}),
            ("PostToolUseFailure", {"tool_name": st.sampled_from(TOOLS)}),
            ("Stop", {"last_assistant_message": st.text(max_size=20)}),
            ("StopFailure", {"error": st.sampled_from(["rate_limit", "overloaded"])}),
            ("PreCompact", {"trigger": st.sampled_from(["auto", "manual"])}),
            ("PostCompact", {"trigger": st.just("auto")}),
            ("SubagentStart", {"agent_type": st.just("general-purpose")}),
            ("SubagentStop", {"agent_type": st.just("general-purpose")}),
            ("SessionEnd", {"reason": st.sampled_from(["clear", "resume", "other", "logout"])}),
            ("CwdChanged", {}),
        ]
    )

    @st.composite
    def build(draw):
        name, extra = draw(event)
        payload = {"session_id": draw(st.sampled_from(SIDS)), "hook_event_name": name}
        payload["cwd"] = "/w/proj"
        for key, strategy in extra.items():
            payload[key] = draw(strategy)
        if draw(st.booleans()) and name not in ("SessionStart",):
            payload["agent_id"] = "a" + draw(st.sampled_from("0123"))
        return payload

    return build()


@st.composite
def signals(draw) -> s.Signal:
    kind = draw(
        st.sampled_from(
            ["hook"] * 6
            + ["pid", "interrupt", "transcript", "gone", "poll", "dismiss", "seen", "recover"]
            + ["restart"]
        )
    )
    at = draw(times)
    live = draw(st.booleans())
    sid = draw(st.sampled_from(SIDS))
    pid = draw(st.sampled_from([100, 200]))
    if kind == "hook":
        sig = s.parse_hook(
            draw(hook_payloads()),
            at=at,
            live=live,
            pid=draw(st.sampled_from([None, 100, 200])),
            pane=draw(st.sampled_from([None, "%1", "%2"])),
        )
        assert not isinstance(sig, s.Invalid)
        return sig
    if kind == "pid":
        record = s.PidRecord(
            pid=pid,
            session_id=sid,
            cwd="/w/proj",
            started_at=0,
            status=draw(st.sampled_from([None, "busy", "idle", "waiting", "shell"])),
            status_updated_at=at,
        )
        return s.PidFile(at=at, live=live, record=record)
    if kind == "interrupt":
        return s.TranscriptInterrupt(at=at, live=live, session_id=sid)
    if kind == "transcript":
        return s.TranscriptUpdate(
            at=at,
            live=live,
            session_id=sid,
            ending=draw(st.sampled_from([None, "clean", "interrupt", "meta", "open"])),
            current_tool=draw(st.sampled_from([None, *TOOLS])),
            api_error=draw(st.sampled_from([None, "API Error: 500"])),
            tokens=Tokens(draw(st.integers(0, 9)), 1, 2, 3),
        )
    if kind == "gone":
        return s.ProcessGone(at=at, live=live, session_id=sid, pid=pid)
    if kind == "poll":
        alive = {x: draw(st.sampled_from([None, True, False])) for x in SIDS}
        return s.PollTick(at=at, live=False, alive=alive)
    if kind == "dismiss":
        return s.Dismiss(at=at, live=live, session_id=sid)
    if kind == "seen":
        return s.Seen(at=at, live=live, session_id=sid)
    if kind == "recover":
        return s.Recover(
            at=at,
            live=False,
            session_id=sid,
            process_running=draw(st.sampled_from([None, True, False])),
            pid_status=draw(st.sampled_from([None, "busy", "idle", "waiting", "shell"])),
            transcript_ending=draw(st.sampled_from([None, "clean", "interrupt", "meta", "open"])),
        )
    persisted = tuple(
        Session(x, state=draw(st.sampled_from(list(State))), pid=100, running=True) for x in SIDS
    )
    return s.HubRestart(at=at, live=False, sessions=persisted)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(signals(), max_size=40), st.integers(min_value=0, max_value=3_000_000))
def test_tracker_properties_hold_for_any_signal_sequence(sequence, start):
    fleet: dict[str, Session] = {}
    snapshots: list[tuple[dict[str, Session], dict[str, dict]]] = []
    now = start
    for signal in sequence:
        now += 1_000
        before = fleet
        snapshots.append((before, {k: v.to_record() for k, v in before.items()}))
        step = reduce(before, signal, now)
        fleet = step.sessions

        for change in step.changes:
            after, old = change.after, change.before
            # (a) the state is always one of the five
            assert isinstance(after.state, State)
            assert after.subagents >= 0
            entered = after.state in ATTENTION and (old is None or old.state is not after.state)
            # (b) a notification only on a live transition INTO needs-input or review
            if change.notification is not None:
                assert signal.live and entered
                assert change.notification.state is after.state
            # (c) recovery, replay and restore never notify
            if isinstance(signal, s.Recover | s.HubRestart | s.PollTick) or not signal.live:
                assert change.notification is None
            # ... and every live entry of the signal's own session does notify
            target = getattr(signal, "session_id", None)
            if (
                signal.live
                and entered
                and change.session_id == target
                and isinstance(signal, s.HookSignal | s.PidFile)
            ):
                assert change.notification is not None

        for sid in SIDS:
            old, new = before.get(sid), fleet.get(sid)
            if old is None or new is None or getattr(signal, "session_id", None) != sid:
                continue
            # (d) PostToolUse never leaves review or idle
            if isinstance(signal, s.PostToolUse) and old.state in (State.REVIEW, State.IDLE):
                assert new.state is old.state
            # (e) a sub-agent's Stop never changes the parent's state
            if isinstance(signal, s.Stop | s.StopFailure) and signal.agent_id:
                assert new.state is old.state
            # (f) compacting never changes the state
            compacting = isinstance(signal, s.PreCompact | s.PostCompact) or (
                isinstance(signal, s.SessionStart) and signal.source == "compact"
            )
            if compacting:
                assert new.state is old.state
            # (h) a look ends a review (silently, user:seen) and moves nothing else: never a
            # needs-input or busy row
            if isinstance(signal, s.Seen):
                if old.state is State.REVIEW and new.state is not State.REVIEW:
                    assert new.state is State.IDLE and new.source == "user:seen"
                else:
                    assert new.state is old.state

        # (i) a look never notifies, and touches only its own session
        if isinstance(signal, s.Seen):
            assert all(c.notification is None for c in step.changes)
            assert {c.session_id for c in step.changes} <= {signal.session_id}

    # (g) the sessions returned are never mutated in place: old snapshots stay valid
    for old_fleet, records in snapshots:
        assert {k: v.to_record() for k, v in old_fleet.items()} == records
