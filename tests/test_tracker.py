"""The tracker, one test per row of DESIGN.md's tables, plus the seed's known failures.

Each test is named after the row it checks. Times are small integers (ms) so the arithmetic of
each rule is visible; ``NOW`` is far enough from zero that the boot window has passed.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from pmux_widget.core import hook_signals
from pmux_widget.core import signals as s
from pmux_widget.core.model import (
    ACTION_WINDOW_MS,
    CAUSES,
    JSON_FIELDS,
    Session,
    SessionChanges,
    State,
    Tokens,
    Tracking,
    cause_of,
    source_text,
)
from pmux_widget.core.tracker import (
    BOOT_WINDOW_MS,
    COMPACTING_TIMEOUT_MS,
    STALE_BUSY_MS,
    UNKNOWN_TIMEOUT_MS,
    reduce,
)
from pmux_widget.core.tracking import TrackingChanges

SID = "5f0c3a2e-8d41-4b7a-9c6e-2b1d7e9f4a10"
NEW_SID = "9c1d2e3f-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
CWD = "/home/dev/projects/acme-api"


class Run:
    """Feeds signals one by one and keeps the fleet and every change, like the hub does."""

    def __init__(self, fleet: dict[str, Session] | None = None, now: int = 100_000) -> None:
        self.fleet: dict[str, Session] = dict(fleet or {})
        self.now = now
        self.changes: list = []

    def __call__(self, signal: s.Signal, now: int | None = None):
        if now is not None:
            self.now = now
        step = reduce(self.fleet, signal, self.now)
        self.fleet = step.sessions
        self.changes.extend(step.changes)
        return step

    def hook(self, event: str, at: int | None = None, live: bool = True, **fields):
        """Send a hook built from a raw payload, as the hub would after parsing it."""
        payload = {"session_id": fields.pop("session_id", SID), "hook_event_name": event}
        payload.setdefault("cwd", CWD)
        payload.update(fields)
        pid = payload.pop("pid", None)
        pane = payload.pop("pane", None)
        signal = s.parse_hook(
            payload, at=self.now if at is None else at, live=live, pid=pid, pane=pane
        )
        assert not isinstance(signal, s.Invalid), signal
        return self(signal)

    def pid(
        self,
        status: str | None,
        at: int,
        session_id: str = SID,
        pid: int = 4242,
        live: bool = True,
        waiting_for: str | None = None,
    ):
        record = s.PidRecord(
            pid=pid,
            session_id=session_id,
            cwd=CWD,
            started_at=1,
            status=status,
            waiting_for=waiting_for,
            status_updated_at=at,
        )
        return self(s.PidFile(at=at, live=live, record=record))

    @property
    def session(self) -> Session:
        return self.fleet[SID]

    @property
    def state(self) -> State:
        return self.fleet[SID].state

    def notifications(self):
        return [c.notification for c in self.changes if c.notification]


@pytest.fixture
def run() -> Run:
    return Run()


def busy_run(now: int = 100_000) -> Run:
    run = Run(now=now)
    run.hook("SessionStart", at=now - 1000, source="startup")
    run.hook("UserPromptSubmit", at=now - 900, prompt="fix the tests")
    assert run.state is State.BUSY
    return run


def dialog_run() -> Run:
    """A busy hooked session whose Bash dialog shows at run.now (hook, PID file 5 ms on)."""
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash")
    run.pid("waiting", at=run.now + 5)
    assert run.state is State.NEEDS_INPUT
    return run


# ----------------------------------------------------------------------- hook events table


@pytest.mark.parametrize("source", ["startup", "resume", "clear"])
def test_sessionstart_startup_resume_clear_goes_idle(source):
    run = busy_run()
    run.hook("SessionStart", at=run.now, source=source, pid=4242, pane="%3")
    assert run.state is State.IDLE
    assert run.session.running is True
    assert run.session.pid == 4242
    assert run.session.source == "hook:SessionStart"


def test_sessionstart_clear_retires_previous_session_of_that_process(run):
    run.hook("SessionStart", at=1, source="startup", pid=4242)
    run.hook("Stop", at=2)
    run.hook("SessionEnd", at=3, reason="clear", pid=4242)
    assert run.session.ended is False  # the id is about to change, nothing moves yet
    run.hook("SessionStart", at=4, source="clear", pid=4242, session_id=NEW_SID)
    old, new = run.fleet[SID], run.fleet[NEW_SID]
    assert (old.ended, old.running, old.state, old.source) == (True, False, State.IDLE, "retired")
    assert (new.ended, new.running, new.state) == (False, True, State.IDLE)
    assert run.notifications() == [run.changes[1].notification]  # only the Stop notified


def test_sessionstart_clear_retires_by_pane_when_pid_unknown(run):
    run(s.Locate(at=0, session_id=SID))  # unknown session: ignored
    run.hook("SessionStart", at=1, source="startup", pane="%3")
    run.hook("SessionStart", at=2, source="clear", pane="%3", session_id=NEW_SID)
    assert run.fleet[SID].ended is True


def test_sessionstart_startup_in_same_pane_does_not_retire_a_nested_session(run):
    """A `claude -p` run inside a session's Bash tool shares $TMUX_PANE, not the pid."""
    run.hook("SessionStart", at=1, source="startup", pid=10, pane="%3")
    run.hook("SessionStart", at=2, source="startup", pid=11, pane="%3", session_id=NEW_SID)
    assert run.fleet[SID].ended is False


def test_sessionstart_compact_leaves_state_unchanged():
    run = busy_run()
    run.hook("PreCompact", trigger="auto")
    run.hook("SessionStart", source="compact", model="claude-sonnet-4-5")
    assert run.state is State.BUSY
    assert run.session.model == "claude-sonnet-4-5"


def test_userpromptsubmit_goes_busy_sets_prompt_and_clears_error(run):
    run.hook("StopFailure", at=1, error="rate_limit")
    assert run.session.error == "rate_limit"
    run.hook("UserPromptSubmit", at=2, prompt="  try\nagain  ")
    assert run.state is State.BUSY
    assert run.session.last_prompt == "try again"
    assert run.session.error is None


@pytest.mark.parametrize("start", [State.IDLE, State.UNKNOWN])
def test_pretooluse_from_idle_or_unknown_goes_busy(start):
    run = Run({SID: Session(SID, state=start)})
    run.hook("PreToolUse", tool_name="Bash", tool_input={"command": "pytest -q\necho done"})
    assert run.state is State.BUSY
    assert (run.session.current_tool, run.session.tool_summary) == ("Bash", "$ pytest -q")


@pytest.mark.parametrize("start", [State.BUSY, State.NEEDS_INPUT, State.REVIEW])
def test_pretooluse_otherwise_leaves_state_unchanged(start):
    run = Run({SID: Session(SID, state=start)})
    run.hook("PreToolUse", tool_name="Read", tool_input={"file_path": "/a/b.py"})
    assert run.state is start
    assert run.session.tool_summary == "Read /a/b.py"


def test_permissionrequest_goes_needs_input_with_what_is_asked():
    run = busy_run()
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "rm -rf build"})
    assert run.state is State.NEEDS_INPUT
    assert run.session.tool_summary == "$ rm -rf build"
    [note] = run.notifications()
    assert note.state is State.NEEDS_INPUT and "rm -rf build" in note.body


@pytest.mark.parametrize("kind", ["permission_prompt", "worker_permission_prompt", None])
def test_notification_permission_kinds_go_needs_input(kind):
    run = busy_run()
    fields = {"message": "Claude needs your permission"}
    if kind:
        fields["notification_type"] = kind
    run.hook("Notification", **fields)
    assert run.state is State.NEEDS_INPUT


@pytest.mark.parametrize(
    "kind", ["idle_prompt", "auth_success", "elicitation_dialog", "elicitation_complete", "x"]
)
def test_notification_other_types_change_nothing(kind):
    run = busy_run()
    before = run.session
    run.hook("Notification", notification_type=kind, message="Claude is waiting for your input")
    assert run.state is State.BUSY

    def without_times(x: Session) -> Session:
        return x.replace(tracking=x.tracking.replace(last_hook_at=0, active_at=0))

    assert without_times(run.session) == without_times(before)


@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_posttooluse_needs_input_goes_busy_and_clears_tool(event):
    run = busy_run()
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "make"})
    run.hook(event, tool_name="Bash")
    assert run.state is State.BUSY
    assert run.session.current_tool is None and run.session.tool_summary is None


@pytest.mark.parametrize("start", [State.IDLE, State.REVIEW, State.BUSY])
@pytest.mark.parametrize("event", ["PostToolUse", "PostToolUseFailure"])
def test_posttooluse_otherwise_unchanged(start, event):
    run = Run({SID: Session(SID, state=start)})
    run.hook(event, tool_name="Bash")
    assert run.state is start


def test_stop_goes_review_with_last_assistant_message():
    run = busy_run()
    run.hook("Stop", last_assistant_message="All 12 auth tests pass.")
    assert run.state is State.REVIEW
    assert run.session.last_assistant == "All 12 auth tests pass."
    [note] = run.notifications()
    assert note.state is State.REVIEW and note.body == "All 12 auth tests pass."


def test_stopfailure_goes_review_with_error():
    run = busy_run()
    run.hook(
        "StopFailure",
        error="rate_limit",
        error_details="429 rate_limit_error",
        last_assistant_message="API Error: Rate limit reached",
    )
    assert run.state is State.REVIEW
    assert run.session.error == "rate_limit"
    assert run.session.error_detail == "429 rate_limit_error"
    assert run.session.last_assistant is None  # an error is not an answer
    [note] = run.notifications()
    assert "rate_limit" in note.title


def test_precompact_postcompact_toggle_compacting_state_unchanged():
    run = busy_run()
    run.hook("PreCompact", trigger="auto")
    assert run.session.compacting is True and run.state is State.BUSY
    run.hook("PostCompact", trigger="auto")
    assert run.session.compacting is False and run.state is State.BUSY


def test_compacting_cleared_after_5_minutes_without_postcompact():
    run = busy_run()
    run.hook("PreCompact", at=run.now, trigger="manual")
    run(s.PollTick(at=0, alive={SID: True}), now=run.now + COMPACTING_TIMEOUT_MS)
    assert run.session.compacting is True  # exactly 5 min: not yet
    run(s.PollTick(at=0, alive={SID: True}), now=run.now + 1)
    assert run.session.compacting is False
    assert run.state is State.BUSY


def test_subagentstart_subagentstop_count_never_below_zero():
    run = busy_run()
    run.hook("SubagentStart", agent_id="a1", agent_type="general-purpose")
    run.hook("SubagentStart", agent_id="a2", agent_type="general-purpose")
    assert run.session.subagents == 2
    for _ in range(3):
        run.hook("SubagentStop", agent_id="a1")
    assert run.session.subagents == 1
    run.hook("SubagentStop", agent_id="a2")
    run.hook("SubagentStop", agent_id="a2")
    assert run.session.subagents == 0
    assert run.state is State.BUSY


def test_compaction_unmatched_subagentstop_does_not_miscount():
    """Real CLI: /compact fires SubagentStop (agent_type "") with no SubagentStart."""
    run = busy_run()
    run.hook("SubagentStart", agent_id="a1", agent_type="general-purpose")
    run.hook("PreCompact", trigger="manual")
    run.hook("SubagentStop", agent_id="compact-agent", agent_type="")
    assert run.session.subagents == 1


@pytest.mark.parametrize("reason", ["clear", "resume"])
def test_sessionend_clear_resume_leaves_state_unchanged(reason):
    run = busy_run()
    run.hook("Stop")
    run.hook("SessionEnd", reason=reason)
    assert run.state is State.REVIEW
    assert run.session.running is True and run.session.ended is False


@pytest.mark.parametrize("reason", ["prompt_input_exit", "other", "logout", "bypass_x"])
def test_sessionend_other_reasons_go_idle_not_running(reason):
    run = busy_run()
    run.hook("SessionEnd", reason=reason)
    assert run.state is State.IDLE
    assert run.session.running is False and run.session.ended is True


def test_subagent_events_never_end_the_parents_turn():
    run = busy_run()
    run.hook("PreToolUse", tool_name="Agent", tool_input={"description": "find calls"})
    run.hook("SubagentStart", agent_id="a7", agent_type="general-purpose")
    run.hook("PreToolUse", agent_id="a7", tool_name="Grep", tool_input={"pattern": "x"})
    assert run.session.current_tool == "Agent"  # a sub-agent's tool is not the main tool
    run.hook("Stop", agent_id="a7", last_assistant_message="sub-agent done")
    run.hook("StopFailure", agent_id="a7", error="overloaded")
    run.hook("SubagentStop", agent_id="a7")
    assert run.state is State.BUSY
    assert run.session.last_assistant is None
    run.hook("Stop", last_assistant_message="parent done")
    assert run.state is State.REVIEW


def test_subagent_permission_request_still_needs_input():
    run = busy_run()
    run.hook("PermissionRequest", agent_id="a7", tool_name="Bash", tool_input={"command": "rm x"})
    assert run.state is State.NEEDS_INPUT


def test_unknown_hook_event_is_proof_of_life_only():
    run = busy_run()
    run.hook("CwdChanged", old_cwd="/a", new_cwd="/b")
    assert run.state is State.BUSY


# ---------------------------------------------------------------------- other signals table


def test_transcript_interrupt_newer_than_last_hook_busy_goes_idle():
    run = busy_run()
    run(s.TranscriptInterrupt(at=run.now + 5, session_id=SID))
    assert run.state is State.IDLE
    assert run.session.source == "transcript:interrupt"
    assert run.notifications() == []


def test_transcript_interrupt_needs_input_goes_idle():
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash")
    run(s.TranscriptInterrupt(at=run.now + 5, session_id=SID))
    assert run.state is State.IDLE


def test_transcript_interrupt_older_than_a_later_hook_loses():
    run = busy_run()
    run(s.TranscriptInterrupt(at=run.now - 950, session_id=SID))  # before the prompt at -900
    assert run.state is State.BUSY


def test_transcript_interrupt_same_marker_never_fires_twice():
    run = busy_run()
    marker = s.TranscriptInterrupt(at=run.now + 5, session_id=SID)
    run(marker)
    run.hook("UserPromptSubmit", at=run.now + 10)
    run(marker)  # re-read (e.g. a rescan): must not idle the new turn
    assert run.state is State.BUSY


def test_transcript_interrupt_leaves_review_and_idle_alone():
    run = busy_run()
    run.hook("Stop", at=run.now)
    run(s.TranscriptInterrupt(at=run.now + 5, session_id=SID))
    assert run.state is State.REVIEW


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["busy"], [State.BUSY]),
        (["busy", "waiting"], [State.BUSY, State.NEEDS_INPUT]),
        (
            ["busy", "waiting", "busy", "idle"],
            [State.BUSY, State.NEEDS_INPUT, State.BUSY, State.REVIEW],
        ),
        (["busy", "idle"], [State.BUSY, State.REVIEW]),
        (["busy", "shell"], [State.BUSY, State.IDLE]),
        (["idle"], [State.IDLE]),
        (["busy", "waiting", "idle"], [State.BUSY, State.NEEDS_INPUT, State.IDLE]),
    ],
)
def test_pid_status_drives_a_session_without_hooks(statuses, expected):
    run = Run()
    seen = []
    for i, status in enumerate(statuses, start=1):
        run.pid(status, at=i * 10)
        seen.append(run.state)
    assert seen == expected
    assert run.session.running is True and run.session.pid == 4242
    assert all(n.state in (State.NEEDS_INPUT, State.REVIEW) for n in run.notifications())


def test_pid_idle_after_busy_with_interrupt_marker_goes_idle():
    run = Run()
    run.pid("busy", at=10)
    run(s.TranscriptUpdate(at=15, session_id=SID, ending="interrupt"))
    run.pid("idle", at=20)
    assert run.state is State.IDLE


@pytest.mark.parametrize("ending", ["interrupt", "meta"])
def test_pid_idle_after_a_turn_with_no_answer_goes_idle(ending):
    """Real CLI: /clear and /compact turn the PID file busy → idle with no turn at all."""
    run = Run()
    run.pid("busy", at=10)
    run(s.TranscriptUpdate(at=15, session_id=SID, ending=ending))
    run.pid("idle", at=20)
    assert run.state is State.IDLE


def test_late_interrupt_marker_turns_pid_review_into_idle():
    """Real CLI: PID `idle` lands 85-185 ms before the Esc marker is flushed."""
    run = Run()
    run.pid("busy", at=1000)
    run.pid("idle", at=2000)
    assert run.state is State.REVIEW
    run(s.TranscriptInterrupt(at=1990, session_id=SID))
    assert run.state is State.IDLE and run.session.source == "transcript:interrupt"


def test_old_interrupt_marker_does_not_undo_a_pid_review():
    run = Run()
    run.pid("busy", at=1000)
    run.pid("idle", at=2000)
    run(s.TranscriptInterrupt(at=900, session_id=SID))  # from an earlier turn
    assert run.state is State.REVIEW


def test_pid_status_ignored_once_hooks_arrived():
    run = busy_run()
    run.hook("Stop", at=run.now)
    run.pid("busy", at=run.now + 10)
    assert run.state is State.REVIEW
    run.pid("idle", at=run.now + 20)
    assert run.state is State.REVIEW


def test_hooked_busy_pid_idle_without_stop_goes_idle():
    """Esc before the first token (both CLIs): no hook, no marker, the PID file turns idle."""
    run = busy_run()
    run.pid("busy", at=run.now - 850)
    run.pid("idle", at=run.now + 400)
    assert run.state is State.IDLE
    assert run.session.source == "pid:idle"
    assert run.notifications() == []


def test_hooked_busy_pid_idle_before_the_prompt_changes_nothing():
    run = busy_run()
    run.pid("idle", at=run.now - 950)  # written before UserPromptSubmit, read late
    assert run.state is State.BUSY


def test_hooked_busy_pid_idle_with_an_answer_this_turn_is_a_lost_stop():
    run = busy_run()
    run(s.TranscriptUpdate(at=run.now + 300, session_id=SID, ending="clean"))
    run.pid("idle", at=run.now + 400)
    assert run.state is State.REVIEW


def test_hooked_busy_pid_idle_with_an_answer_of_an_earlier_turn_goes_idle():
    run = busy_run()
    run(s.TranscriptUpdate(at=run.now - 950, session_id=SID, ending="clean"))
    run.pid("idle", at=run.now + 400)
    assert run.state is State.IDLE


def test_hooked_busy_waiting_for_a_background_agent_ignores_pid_idle():
    run = busy_run()
    task = {"id": "a1", "type": "local_agent", "status": "running", "description": "research"}
    run.hook("Stop", at=run.now + 100, background_tasks=[task])
    assert run.state is State.BUSY
    run.pid("idle", at=run.now + 200)
    assert run.state is State.BUSY


@pytest.mark.parametrize(("status", "expected"), [("busy", State.BUSY), ("idle", State.IDLE)])
def test_pid_status_leaves_waiting_while_needs_input(status, expected):
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash")
    run.pid("waiting", at=run.now + 5, waiting_for="permission prompt")
    assert run.state is State.NEEDS_INPUT
    run.pid(status, at=run.now + 900)
    assert run.state is expected
    assert run.session.source == f"pid:{status}"


def test_pid_status_older_than_permission_request_does_not_clear_it():
    run = busy_run()
    run.pid("busy", at=run.now - 800)  # written before the dialog
    run.hook("PermissionRequest", at=run.now, tool_name="Bash")
    run.pid("busy", at=run.now - 800)  # the same old status, re-read
    assert run.state is State.NEEDS_INPUT


def test_notification_sent_before_pid_reported_approval_does_not_bring_needs_input_back():
    """DESIGN.md: signals ordered by when they happened, not when they arrived."""
    run = dialog_run()
    t = run.now
    run.pid("busy", at=t + 6000)  # approved
    run.hook("Notification", at=t + 5990, notification_type="permission_prompt")
    assert run.state is State.BUSY


def refused_run() -> Run:
    """An SDK run with no permission handler (agent-sdk.md 3a): PermissionRequest fires, the
    PID file stays busy (it never says waiting), and the CLI refuses the tool by itself."""
    run = busy_run()
    run.pid("busy", at=run.now - 850)
    run.hook("PermissionRequest", at=run.now, tool_name="Bash", tool_input={"command": "touch x"})
    assert run.state is State.NEEDS_INPUT
    return run


def test_a_tool_the_cli_refused_by_itself_is_no_wait_and_the_turn_goes_on():
    run = refused_run()
    # the tool_result ("... needs approval") written after the hook: no tool call pending
    run(s.TranscriptUpdate(at=run.now + 40, session_id=SID, current_tool=None, ending="open"))
    assert run.state is State.BUSY
    assert run.session.source == "transcript:tool-result"
    assert run.session.question is None and run.session.current_tool is None
    assert run.session.tracking.turn_started_at == run.now - 900  # the same turn
    assert [c.notification for c in run.changes if c.notification][-1].state is State.NEEDS_INPUT
    run.hook("Stop", at=run.now + 12_000, last_assistant_message="I could not run it.")
    assert run.state is State.REVIEW  # (an SDK run, non-interactive: idle)


def test_a_refused_tool_whose_turn_ends_in_the_same_read_is_busy_until_its_stop():
    run = refused_run()
    run(s.TranscriptUpdate(at=run.now + 40, session_id=SID, ending="clean", last_assistant="No."))
    assert run.state is State.BUSY
    run.hook("Stop", at=run.now + 60, last_assistant_message="No.")
    assert run.state is State.REVIEW


@pytest.mark.parametrize(
    "update",
    [
        # the asked tool is still pending: a dialog shows (or a handler waits)
        {"current_tool": "Bash", "at_offset": 40},
        # a record older than the question
        {"current_tool": None, "at_offset": -10},
        # an Esc marker: the interrupt rule's (it goes idle)
        {"current_tool": None, "at_offset": 40, "ending": "interrupt"},
    ],
)
def test_a_dialog_stays_while_its_tool_call_is_pending_or_the_record_is_older(update):
    run = refused_run()
    at = run.now + update["at_offset"]
    run(
        s.TranscriptUpdate(
            at=at,
            session_id=SID,
            current_tool=update["current_tool"],
            ending=update.get("ending", "open"),
        )
    )
    assert run.state is State.NEEDS_INPUT


def test_a_waiting_pid_file_keeps_the_dialog_whatever_the_transcript_says():
    """A handler that waits (agent-sdk.md 3b) or a dialog on screen: the PID file says so."""
    run = refused_run()
    run.pid("waiting", at=run.now + 5, waiting_for="permission prompt")
    run(s.TranscriptUpdate(at=run.now + 40, session_id=SID, current_tool=None, ending="open"))
    assert run.state is State.NEEDS_INPUT


def test_a_pid_waiting_dialog_is_the_pid_files_to_end_not_the_transcripts():
    """Without hooks needs-input comes from the PID file alone, and it says when it is over."""
    run = Run()
    run.pid("busy", at=1_000)
    run.pid("waiting", at=2_000)
    run(s.TranscriptUpdate(at=2_040, session_id=SID, current_tool=None, ending="open"))
    assert run.state is State.NEEDS_INPUT


QUESTION_INPUT = {
    "questions": [
        {
            "question": "Which colour should the badge use?",
            "header": "Colour",
            "multiSelect": False,
            "options": [{"label": "Purple"}, {"label": "Amber"}],
        }
    ]
}


def test_a_permission_request_landing_after_the_pid_files_waiting_still_says_what_is_asked():
    """The CLI fires PermissionRequest, then draws the dialog and writes ``waiting``; under
    load the hook's POST lands after the PID file was read: older than what decided the
    state, it is still the open dialog's words (ci, 2.1.337: the row said "AskUserQuestion",
    never the question)."""
    run = busy_run()
    run.pid("waiting", at=run.now + 50, waiting_for="permission prompt")
    assert run.state is State.NEEDS_INPUT and run.session.source == "pid:waiting"
    run.hook("PermissionRequest", at=run.now + 10, tool_name="AskUserQuestion",
             tool_input=QUESTION_INPUT)  # fmt: skip
    question = run.session.question
    assert question is not None and question.kind == "question"
    assert [o.label for o in question.questions[0].options] == ["Purple", "Amber"]
    assert run.session.current_tool == "AskUserQuestion"
    assert run.state is State.NEEDS_INPUT and run.session.source == "pid:waiting"


def test_a_late_permission_request_of_an_earlier_turn_says_nothing_of_the_open_dialog():
    run = busy_run()
    early = run.now - 950  # before this turn's prompt (UserPromptSubmit at now - 900)
    run.pid("waiting", at=run.now + 50, waiting_for="permission prompt")
    run.hook("PermissionRequest", at=early, tool_name="Bash", tool_input={"command": "ls"})
    assert run.session.tool_summary is None and run.session.current_tool is None
    assert run.state is State.NEEDS_INPUT


def test_a_late_permission_request_moves_no_state():
    """Sent while the dialog was open, it arrives after the dialog was answered (busy again,
    by the PID file): stale, it says nothing and moves nothing."""
    run = busy_run()
    run.pid("waiting", at=run.now + 50)
    run.pid("busy", at=run.now + 400)
    run.hook("PermissionRequest", at=run.now + 10, tool_name="Bash", tool_input={"command": "ls"})
    assert run.state is State.BUSY and run.session.tool_summary is None


def test_pid_waiting_for_hooked_session_goes_needs_input():
    """An extension: any dialog (elicitation, plan approval) the PID file reports."""
    run = busy_run()
    run.pid("waiting", at=run.now + 5, waiting_for="dialog open")
    assert run.state is State.NEEDS_INPUT
    assert run.session.waiting_for == "dialog open"


def test_process_gone_confirmed_twice_goes_idle_silently():
    run = busy_run(now=100_000)
    run.pid("busy", at=run.now)
    gone = s.ProcessGone(at=run.now, session_id=SID, pid=4242)
    run.now += BOOT_WINDOW_MS
    run(gone)
    assert run.session.running is True  # one check is not enough
    run(gone)
    assert run.session.running is False and run.state is State.IDLE
    assert run.session.source == "process:gone"
    assert run.notifications() == []


def test_process_gone_keeps_review():
    run = busy_run()
    run.pid("busy", at=run.now)
    run.hook("Stop", at=run.now + 1)
    run.now += BOOT_WINDOW_MS
    for _ in range(2):
        run(s.ProcessGone(at=run.now, session_id=SID, pid=4242))
    assert run.session.running is False and run.state is State.REVIEW


def test_a_known_pids_exit_is_believed_at_once_even_just_after_the_hub_saw_it():
    """Issue 19: a Claude started before the hub is first seen by the hub when it starts; a
    kill -9 right after stayed running for the hub's 5 s "boot window" (and more). A known
    pid's exit has no launch race: two checks end it, however young the session is."""
    run = Run(now=50_000)
    run.pid("idle", at=50_000)
    run(s.ProcessGone(at=50_001, session_id=SID, pid=4242), now=50_001)
    assert run.session.running is True  # one check is not enough
    run(s.ProcessGone(at=50_002, session_id=SID, pid=4242), now=50_002)
    assert run.session.running is False and run.session.source == "process:gone"


def test_a_pane_without_claude_is_not_believed_within_5s_of_the_session_start():
    """The boot window stays for the pane check: a Claude being launched is not in its
    pane's process tree yet."""
    run = Run(now=50_000)
    run.hook("SessionStart", at=50_000, source="startup", pane="%7")  # no pid: hooks only
    for _ in range(3):
        run(s.PollTick(at=50_001, exited=frozenset({SID})), now=50_000 + BOOT_WINDOW_MS - 1)
    assert run.session.running is True
    for _ in range(2):
        run(s.PollTick(at=50_002, exited=frozenset({SID})), now=50_000 + BOOT_WINDOW_MS)
    assert run.session.running is False


def test_a_pidless_session_takes_the_pid_of_its_own_gone_pid_file():
    """Issue 19: a Claude killed before the hub started left spooled hooks (whose process
    could no longer be resolved: no pid) and its PID file: the session was running for
    good. Its PID file's pid found gone twice ends it."""
    run = Run(now=50_000)
    run.hook("SessionStart", at=49_000, source="startup", live=False)
    assert run.session.pid is None and run.session.running is True
    run(s.ProcessGone(at=50_000, session_id=SID, pid=4242))
    assert run.session.pid == 4242 and run.session.running is True
    run(s.ProcessGone(at=50_001, session_id=SID, pid=4242))
    assert run.session.running is False and run.session.source == "process:gone"
    run(s.ProcessGone(at=50_002, session_id=SID, pid=777))
    assert run.session.pid == 4242  # an ended session takes no other pid


def test_process_gone_never_declared_for_a_never_identified_process():
    run = busy_run()
    run.now += BOOT_WINDOW_MS
    for _ in range(3):
        run(s.PollTick(at=run.now, alive={SID: False}))
    assert run.session.running is True and run.state is State.BUSY


def test_process_gone_check_reset_by_a_live_finding():
    run = busy_run()
    run.pid("busy", at=run.now)
    run.now += BOOT_WINDOW_MS
    run(s.PollTick(at=run.now, alive={SID: False}))
    run(s.PollTick(at=run.now, alive={SID: True}))
    run(s.PollTick(at=run.now, alive={SID: False}))
    assert run.session.running is True
    run(s.PollTick(at=run.now, alive={SID: False}))
    assert run.session.running is False  # two in a row


def test_poll_busy_over_10_minutes_without_live_process_goes_idle_silently():
    run = busy_run()
    t = run.session.tracking.active_at
    run(s.PollTick(at=0, alive={}), now=t + STALE_BUSY_MS)
    assert run.state is State.BUSY
    run(s.PollTick(at=0, alive={SID: True}), now=t + STALE_BUSY_MS + 1)
    assert run.state is State.BUSY  # the process lives: a long turn, not a stuck one
    run(s.PollTick(at=0, alive={}), now=t + STALE_BUSY_MS + 1)
    assert run.state is State.IDLE and run.session.source == "poll:stale-busy"
    assert run.notifications() == []


def test_dismiss_review_goes_idle():
    run = busy_run()
    run.hook("Stop")
    run(s.Dismiss(at=run.now, session_id=SID))
    assert run.state is State.IDLE and run.session.source == "user:dismiss"


@pytest.mark.parametrize("start", [State.BUSY, State.NEEDS_INPUT, State.IDLE, State.UNKNOWN])
def test_dismiss_other_states_unchanged(start):
    run = Run({SID: Session(SID, state=start)})
    run(s.Dismiss(at=1, session_id=SID))
    assert run.state is start


def test_seen_review_goes_idle_silently():
    run = busy_run()
    run.hook("Stop")
    before = len(run.notifications())
    run(s.Seen(at=run.now + 5, session_id=SID))
    assert run.state is State.IDLE and run.session.source == "user:seen"
    assert run.session.state_since == run.now + 5
    assert len(run.notifications()) == before


@pytest.mark.parametrize("start", [State.BUSY, State.NEEDS_INPUT, State.IDLE, State.UNKNOWN])
def test_seen_other_states_unchanged(start):
    run = Run({SID: Session(SID, state=start)})
    run(s.Seen(at=1, session_id=SID))
    assert run.state is start


def test_a_look_older_than_the_review_does_not_end_it():
    # a tmux check made while the turn still ran, applied after its Stop
    run = busy_run()
    looked = run.now
    run.hook("Stop", at=looked + 10)
    run(s.Seen(at=looked, session_id=SID))
    assert run.state is State.REVIEW


# --------------------------------------------------------------------- Claude Code 2.1.332
# Payload shapes as recorded from the real CLI (tests/fixtures/real/2.1.332/background_*).

AGENT = {"id": "a2a71344d93df7398", "type": "subagent", "status": "running",
         "description": "Slow research", "agent_type": "general-purpose"}  # fmt: skip
SHELL = {"id": "bwy7gqbj1", "type": "shell", "status": "running",
         "description": "Wait in the background", "command": "sleep 600"}  # fmt: skip
WAKE = (
    "<task-notification>\n<task-id>a2a71344d93df7398</task-id>\n<status>completed</status>\n"
    '<summary>Agent "Slow research" finished</summary>\n<result>notes</result>\n'
    "</task-notification>"
)


def test_a_turn_left_with_background_agents_stays_busy_until_they_finish():
    run = busy_run()
    t = run.now
    run.hook("SubagentStart", at=t, agent_id=AGENT["id"], agent_type="general-purpose")
    run.hook("Stop", at=t + 10, last_assistant_message="Researching; I'll report back.",
             background_tasks=[AGENT], permission_mode="default")  # fmt: skip
    assert run.state is State.BUSY  # the CLI says "Waiting for 1 background agent to finish"
    assert run.session.source == "wait:background-agent"
    assert run.session.last_assistant == "Researching; I'll report back."
    assert [task.description for task in run.session.background_tasks] == ["Slow research"]
    assert run.session.subagents == 1
    assert run.notifications() == []
    run.hook("SubagentStop", at=t + 20_000, agent_id=AGENT["id"], background_tasks=[])
    run.hook("UserPromptSubmit", at=t + 20_030, prompt=WAKE)
    assert run.state is State.BUSY
    assert run.session.last_prompt == "fix the tests"  # the user's, not the wake-up
    assert run.session.tool_summary == 'background agent finished: Agent "Slow research" finished'
    run.hook("Stop", at=t + 21_000, last_assistant_message="Done: 20 notes.", background_tasks=[])
    assert run.state is State.REVIEW and run.session.background_tasks == ()
    assert [n.state for n in run.notifications()] == [State.REVIEW]  # once, at the very end


def test_a_background_shell_does_not_hold_the_turn():
    run = busy_run()
    run.hook("Stop", last_assistant_message="Server started.", background_tasks=[SHELL])
    assert run.state is State.REVIEW
    assert [(t.type, t.description) for t in run.session.background_tasks] == [
        ("shell", "Wait in the background")
    ]
    run.pid("shell", at=run.now + 50)  # 2.1.332: idle with a background shell running
    assert run.state is State.REVIEW


def test_auto_modes_dialog_is_needs_input_from_its_notification():
    run = busy_run()
    run.hook("Notification", notification_type="agent_needs_input", permission_mode="auto",
             message="Auto mode can't check actions in this session")  # fmt: skip
    assert run.state is State.NEEDS_INPUT
    assert run.session.permission_mode == "auto"
    run.hook("Notification", at=run.now + 5, notification_type="agent_completed")
    assert run.state is State.NEEDS_INPUT  # other new types change nothing


@pytest.mark.parametrize("bad", [None, "x", 7, [1, "a", {"no": "type"}], {"type": "shell"}])
def test_odd_background_tasks_are_read_leniently(bad):
    run = busy_run()
    run.hook("Stop", background_tasks=bad)
    assert run.state is State.REVIEW and run.session.background_tasks == ()


# --------------------------------------------------------------------- actions


def test_action_approve_is_the_source_of_the_state_it_leads_to():
    run = busy_run()
    t = run.now
    run.hook("PermissionRequest", at=t, tool_name="Bash", tool_input={"command": "make"})
    run(s.ActionTaken(at=t + 100, session_id=SID, action="approve"))
    assert run.state is State.NEEDS_INPUT  # the action alone moves nothing
    assert run.session.source == "hook:PermissionRequest"
    run.pid("busy", at=t + 250)
    assert run.state is State.BUSY and run.session.source == "action:approve"
    assert run.session.tracking.cause == "pid:busy"  # the rules still see the real signal
    run.hook("Stop", at=t + 900)
    assert run.session.source == "hook:Stop"  # one state change only
    assert [n.state for n in run.notifications()] == [State.NEEDS_INPUT, State.REVIEW]


@pytest.mark.parametrize(
    ("action", "then", "state"),
    [
        ("deny", ("pid", "idle"), State.IDLE),
        ("interrupt", ("marker", None), State.IDLE),
        ("send", ("hook", "UserPromptSubmit"), State.BUSY),
    ],
)
def test_each_action_names_the_next_state(action, then, state):
    run = busy_run()
    t = run.now
    if action == "send":
        run.hook("Stop", at=t)
    else:
        run.hook("PermissionRequest", at=t, tool_name="Bash", tool_input={"command": "make"})
    run(s.ActionTaken(at=t + 100, session_id=SID, action=action))
    kind, value = then
    if kind == "pid":
        run.pid(value, at=t + 300)
    elif kind == "marker":
        run(s.TranscriptInterrupt(at=t + 300, session_id=SID))
    else:
        run.hook(value, at=t + 300, prompt="go on")
    assert run.state is state and run.session.source == f"action:{action}"


def test_an_answer_from_elsewhere_names_its_device_in_the_history():
    run = busy_run()
    t = run.now
    run.hook("PermissionRequest", at=t, tool_name="Bash", tool_input={"command": "make"})
    origin = "Pixel 8\n(notification)\x1b[31m" + "x" * 100
    run(s.ActionTaken(at=t + 100, session_id=SID, action="approve", origin=origin))
    restored = Session.from_record(run.session.to_record())  # a hub restart in between
    assert restored.tracking.action_origin == origin
    run.pid("busy", at=t + 250)
    source = run.session.source
    assert run.state is State.BUSY and source.startswith("action:approve@Pixel 8 (notification)")
    assert source.isprintable() and len(source) == len("action:approve@") + 60
    assert run.changes[-1].transition().source == source  # what the store's history keeps
    run(s.ActionTaken(at=t + 300, session_id=SID, action="interrupt"))
    run(s.TranscriptInterrupt(at=t + 400, session_id=SID))
    assert run.session.source == "action:interrupt"  # the next action, from here: no origin


def test_a_stale_action_names_nothing():
    run = busy_run()
    t = run.now
    run.hook("PermissionRequest", at=t, tool_name="Bash", tool_input={"command": "make"})
    run(s.ActionTaken(at=t, session_id=SID, action="approve"))
    run.pid("busy", at=t + ACTION_WINDOW_MS + 1)
    assert run.state is State.BUSY and run.session.source == "pid:busy"
    assert run.session.tracking.action is None


def test_an_action_survives_the_store():
    run = busy_run()
    run(s.ActionTaken(at=run.now, session_id=SID, action="interrupt"))
    restored = Session.from_record(run.session.to_record())
    assert restored.tracking.action == "interrupt"
    assert restored.tracking.action_at == run.now


# --------------------------------------------------------------------- restart recovery


def restarted(state: State, **fields) -> Run:
    persisted = Session(SID, state=state, running=True, pid=4242, state_since=10, **fields)
    run = Run(now=500_000)
    run(s.HubRestart(at=500_000, sessions=(persisted,)))
    return run


def test_restart_persisted_busy_becomes_unknown_silently():
    run = restarted(State.BUSY)
    assert run.state is State.UNKNOWN and run.session.source == "restart"
    assert run.notifications() == []


@pytest.mark.parametrize("state", [State.IDLE, State.NEEDS_INPUT, State.REVIEW])
def test_restart_idle_needs_input_review_restored_as_they_were(state):
    run = restarted(state)
    assert run.state is state and run.session.state_since == 10


def test_recovery_step1_spooled_hooks_replayed_first_decide():
    run = restarted(State.BUSY)
    run.hook("Stop", at=400_000, live=False)
    run(s.Recover(at=run.now, session_id=SID, process_running=False))
    assert run.state is State.REVIEW  # the replayed Stop decided; recovery left it
    assert run.notifications() == []


def test_recovery_step2_process_not_running_goes_idle():
    run = restarted(State.BUSY)
    run(
        s.Recover(
            at=run.now,
            session_id=SID,
            process_running=False,
            pid_status="busy",
            transcript_ending="clean",
        )
    )
    assert run.state is State.IDLE and run.session.running is False


@pytest.mark.parametrize(
    ("status", "ending", "expected"),
    [
        ("busy", None, State.BUSY),
        ("waiting", None, State.NEEDS_INPUT),
        ("idle", None, State.REVIEW),
        ("idle", "interrupt", State.IDLE),
        ("shell", None, State.IDLE),
    ],
)
def test_recovery_step3_pid_file_status_decides(status, ending, expected):
    run = restarted(State.BUSY)
    run(
        s.Recover(
            at=run.now,
            session_id=SID,
            process_running=True,
            pid_status=status,
            transcript_ending=ending,
        )
    )
    assert run.state is expected
    assert run.notifications() == []


@pytest.mark.parametrize(
    ("ending", "expected"),
    [("clean", State.REVIEW), ("interrupt", State.IDLE), ("meta", State.IDLE)],
)
def test_recovery_step4_transcript_ending_decides(ending, expected):
    run = restarted(State.BUSY)
    run(s.Recover(at=run.now, session_id=SID, process_running=True, transcript_ending=ending))
    assert run.state is expected
    assert run.notifications() == []


def test_recovery_step5_otherwise_unknown_at_most_10_minutes():
    run = restarted(State.BUSY)
    run(s.Recover(at=run.now, session_id=SID, process_running=None, transcript_ending="open"))
    assert run.state is State.UNKNOWN
    run(s.PollTick(at=0, alive={SID: True}), now=run.now + UNKNOWN_TIMEOUT_MS)
    assert run.state is State.UNKNOWN
    run(s.PollTick(at=0, alive={SID: True}), now=run.now + 1)
    assert run.state is State.IDLE and run.session.source == "poll:unknown-timeout"
    assert run.notifications() == []


def test_recovery_does_not_touch_sessions_that_are_not_unknown():
    run = restarted(State.REVIEW)
    run(s.Recover(at=run.now, session_id=SID, process_running=True, pid_status="busy"))
    assert run.state is State.REVIEW


def test_replayed_hooks_never_notify():
    run = Run()
    run.hook("PermissionRequest", at=1, live=False, tool_name="Bash")
    run.hook("Stop", at=2, live=False)
    assert run.state is State.REVIEW
    assert run.notifications() == []


# ------------------------------------------------------------------------- notifications


def test_notification_only_on_entry_never_twice_for_same_entry():
    run = busy_run()
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "a"})
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "b"})
    run.hook("Notification", notification_type="permission_prompt")
    assert len(run.notifications()) == 1
    assert run.session.tool_summary == "$ b"  # the detail was updated


def test_notification_again_after_leaving_and_reentering():
    run = busy_run()
    run.hook("PermissionRequest", tool_name="Bash")
    run.hook("PostToolUse", tool_name="Bash")
    run.hook("PermissionRequest", tool_name="Edit")
    run.hook("Stop")
    assert [n.state for n in run.notifications()] == [
        State.NEEDS_INPUT,
        State.NEEDS_INPUT,
        State.REVIEW,
    ]


def test_no_notification_for_poll_dismiss_or_recovery():
    run = restarted(State.BUSY)
    run(s.Recover(at=run.now, session_id=SID, process_running=True, transcript_ending="clean"))
    run(s.Dismiss(at=run.now, session_id=SID))
    run(s.PollTick(at=0, alive={}), now=run.now + UNKNOWN_TIMEOUT_MS * 2)
    assert run.notifications() == []


# ----------------------------------------------------- where purplemux falls short (seed)


def test_seed_gap_1_needs_input_from_permission_request_not_the_late_notification():
    run = busy_run()
    run.hook("PreToolUse", tool_name="Bash", tool_input={"command": "rm -r dist"})
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "rm -r dist"})
    assert run.state is State.NEEDS_INPUT  # at once, not 6-8 s later


def test_seed_gap_2_permission_answered_in_terminal_clears_needs_input():
    run = busy_run()
    run.hook("PermissionRequest", tool_name="Bash")
    run.hook("PostToolUse", tool_name="Bash")  # answered in the terminal; the tool ran
    assert run.state is State.BUSY


def test_seed_gap_3_esc_on_permission_prompt_does_not_leave_needs_input():
    run = busy_run()
    t = run.now
    run.hook("PermissionRequest", at=t, tool_name="Bash")
    run.pid("waiting", at=t + 10)
    # Esc: no hook; the PID file goes idle, the transcript gets the tool-use marker.
    run(s.TranscriptInterrupt(at=t + 500, session_id=SID))
    run.pid("idle", at=t + 505)
    assert run.state is State.IDLE


def test_seed_gap_3_esc_on_permission_prompt_marker_alone_suffices():
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash")
    run(s.TranscriptInterrupt(at=run.now + 500, session_id=SID))
    assert run.state is State.IDLE


def test_seed_gap_4_sessionstart_compact_does_not_end_a_busy_turn():
    run = busy_run()
    run.hook("PreCompact", trigger="auto")
    run.hook("SessionStart", source="compact")
    run.hook("PostCompact", trigger="auto")
    assert run.state is State.BUSY


def test_seed_gap_7_unknown_not_forever_while_claude_is_alive_and_silent():
    run = restarted(State.BUSY)
    run(s.PollTick(at=0, alive={SID: True}), now=run.now + UNKNOWN_TIMEOUT_MS + 1)
    assert run.state is State.IDLE


# -------------------------------------------------------------------------- misc rules


def test_stale_hook_cannot_undo_newer_state_but_counters_apply():
    run = busy_run()
    t = run.now
    run.hook("Stop", at=t)
    run.hook("PreToolUse", at=t - 5, tool_name="Bash")
    run.hook("SubagentStart", at=t - 4, agent_id="a")
    assert run.state is State.REVIEW
    assert run.session.current_tool is None
    assert run.session.subagents == 1


def test_stale_hook_does_not_revive_a_retired_session(run):
    run.hook("SessionStart", at=10, source="startup", pid=7)
    run.hook("SessionStart", at=20, source="clear", pid=7, session_id=NEW_SID)
    run.hook("Notification", at=15, notification_type="idle_prompt")
    assert run.fleet[SID].ended is True


def test_zero_install_pid_file_creates_session_and_session_id_change_retires_old():
    run = Run()
    run.pid("idle", at=10)
    assert run.state is State.IDLE and run.session.source == "pid:found"
    run.pid("idle", at=20, session_id=NEW_SID)  # /clear: the PID file's sessionId changed
    assert run.fleet[SID].ended is True and run.fleet[NEW_SID].running is True


def test_transcript_update_fills_metadata_without_changing_state():
    run = busy_run()
    tokens = Tokens(1, 2, 3, 4)
    run(
        s.TranscriptUpdate(
            at=run.now + 1,
            session_id=SID,
            model="claude-x",
            current_tool="Grep",
            tool_summary='Grep "x"',
            last_assistant="hi",
            tokens=tokens,
            context_tokens=8,
            ending="open",
        )
    )
    sess = run.session
    assert sess.state is State.BUSY
    assert (
        sess.model,
        sess.current_tool,
        sess.last_assistant,
        sess.tokens,
        sess.context_tokens,
    ) == ("claude-x", "Grep", "hi", tokens, 8)


def test_transcript_api_error_shown_as_error_until_next_prompt():
    run = busy_run()
    run(s.TranscriptUpdate(at=run.now + 1, session_id=SID, api_error="API Error: 529 overloaded"))
    assert run.session.error == "api_error"
    assert run.session.error_detail == "API Error: 529 overloaded"
    run.hook("UserPromptSubmit", at=run.now + 2)
    assert run.session.error is None


def test_transcript_api_error_cleared_by_a_later_answer_without_hooks():
    run = Run()
    run.pid("busy", at=10)
    run(s.TranscriptUpdate(at=20, session_id=SID, api_error="API Error: 500"))
    assert run.session.error == "api_error"
    run(s.TranscriptUpdate(at=30, session_id=SID, last_assistant="fine now", ending="clean"))
    assert run.session.error is None and run.session.error_detail is None


def test_input_fleet_is_never_mutated():
    run = busy_run()
    snapshot = dict(run.fleet)
    frozen = {k: v.to_record() for k, v in snapshot.items()}
    run.hook("Stop")
    assert {k: v.to_record() for k, v in snapshot.items()} == frozen


# A record as the previous layout (bookkeeping fields on Session, no ``cause``) persisted it.
OLD_RECORD = {
    "session_id": "sid-1", "state": "review", "running": True, "state_since": 1000,
    "cwd": "/w/proj", "project": "proj", "workspace": "main", "pid": 42,
    "tmux": {"session": "main", "window": "1", "pane": "%3", "title": "t"},
    "transcript_path": "/t.jsonl", "model": "m", "current_tool": None, "tool_summary": None,
    "last_assistant": "done", "last_prompt": None,
    "tokens": {"input": 1, "output": 2, "cache_read": 3, "cache_creation": 4},
    "context_tokens": 9, "compacting": False, "subagents": 1, "error": None, "ports": [3000],
    "source": "pid:idle", "first_seen": 5, "decided_at": 1000, "last_hook_at": 0,
    "interrupt_at": 7, "tool_at": 8, "prompt_at": 9, "assistant_at": 10, "active_at": 1000,
    "pid_status": "idle", "waiting_for": "w", "transcript_end": "clean", "transcript_at": 999,
    "compacting_since": 0, "gone_checks": 1, "ended": False, "error_detail": "d",
    "subagent_ids": ["a1"], "turn_started_at": 900, "asked_at": 950, "pane": "%3",
    "process_hooked": False,
}  # fmt: skip


def test_records_of_the_previous_layout_load_and_round_trip():
    session = Session.from_record(json.loads(json.dumps(OLD_RECORD)))
    t = session.tracking
    assert (session.state, session.source, session.ports) == (State.REVIEW, "pid:idle", (3000,))
    assert (t.cause, t.pid_status, t.transcript_end, t.subagent_ids) == (
        "pid:idle", "idle", "clean", ("a1",)
    )  # fmt: skip
    assert (session.waiting_for, session.error_detail, session.ended) == ("w", "d", False)
    # the JSON is the contract's, byte for byte; the record adds only the new ``cause``
    # fields added since (host, permission mode, background tasks) come with their defaults
    # (and the JupyterLab terminal, which sits next to tmux)
    added = {
        "terminal": None,
        "host": None,
        "agent": "claude",  # records from before Codex (issue 36) were all Claude's
        "permission_mode": None,
        "background_tasks": [],
        "background": None,
        "question": None,
    }
    assert json.dumps(session.to_json()) == json.dumps(
        {k: added[k] if k in added else OLD_RECORD[k] for k in JSON_FIELDS}
    )
    record = json.loads(json.dumps(session.to_record()))
    assert record == {
        **OLD_RECORD,
        **added,
        "cause": "pid:idle",
        "action": None,
        "action_at": 0,
        "action_origin": "",
        "interactive": None,
        "entrypoint": None,
        "program": None,
        "kernel_id": None,
        "notebook": None,
        "spare": False,
        "tools_done": [],
    }
    assert Session.from_record(record) == session


@pytest.mark.parametrize(
    ("source", "cause"),
    [("hook:Stop", "hook"), ("hook:Setup", "hook"), ("retired", "retired"), ("", None),
     ("recovery:pid:idle", "recovery:pid:idle"), ("something-new", None)],
)  # fmt: skip
def test_old_records_get_their_cause_from_their_source(source, cause):
    assert Session.from_record({"session_id": SID, "source": source}).tracking.cause == cause


def test_unknown_vocabulary_in_a_record_reads_as_none():
    record = {"session_id": SID, "pid_status": "dozing", "transcript_end": 3, "cause": "x"}
    t = Session.from_record(record).tracking
    assert (t.pid_status, t.transcript_end, t.cause) == (None, None, None)


def test_replace_keywords_match_the_fields():
    """The TypedDicts that type ``replace``'s keywords list exactly the dataclass fields."""
    assert list(SessionChanges.__annotations__) == [f.name for f in dataclasses.fields(Session)]
    assert list(TrackingChanges.__annotations__) == [f.name for f in dataclasses.fields(Tracking)]
    with pytest.raises(TypeError, match="no field"):
        Session(SID).replace(**{"decided_at": 1})


def test_vocabulary_matches_the_signal_classes_and_the_sources():
    assert tuple(hook_signals._HOOK_CLASSES) == s.HOOK_EVENTS
    assert all(cls.event == name for name, cls in hook_signals._HOOK_CLASSES.items())
    assert s.OtherHook(at=1, session_id=SID, name="Setup").event_name == "Setup"
    for cause in CAUSES:
        assert cause_of(source_text(cause, "Stop")) == cause


def test_tracker_module_is_pure():
    """No I/O, threads, clock or event loop: only the data modules and pure helpers."""
    import ast
    from pathlib import Path

    import pmux_widget.core.tracker as tracker

    # The tracker and its rule families (split out of tracker.py) are held to the same rule.
    rules = (".tracker", ".transitions", ".rules_hooks", ".rules_files", ".rules_process",
             ".rules_background", ".rules_rollout")  # fmt: skip
    imported = set()
    for rule in rules:
        tree = ast.parse(Path(tracker.__file__).with_name(rule[1:] + ".py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported.add(("." * node.level) + (node.module or ""))
    allowed = {"__future__", "posixpath", "collections.abc", "dataclasses", "typing", ".",
               ".model", ".question", ".summaries", ".signals", ".wording", ".agents",
               *rules}  # fmt: skip
    assert imported <= allowed, imported - allowed
    data = (".model", ".vocabulary", ".tracking", ".summaries", ".signals",
            ".hook_signals", ".signal_base", ".wording", ".question", ".agents")  # fmt: skip
    for module in (*rules, *data):
        source = Path(tracker.__file__).with_name(module[1:] + ".py").read_text()
        for banned in ("import os", "import time", "import threading", "import asyncio",
                       "import socket", "open("):  # fmt: skip
            assert banned not in source, (module, banned)


def test_zero_install_clean_answer_without_any_pid_status_goes_review():
    """Real CLI: about 1 fast turn in 10 leaves the PID file on its startup `idle`."""
    run = Run(now=1_000)
    run.pid("idle", at=900)
    run(s.TranscriptUpdate(at=5_000, session_id=SID, ending="clean", last_assistant="hi"),
        now=5_100)  # fmt: skip
    assert run.state is State.REVIEW and run.session.source == "transcript:answer"
    assert [n.state for n in run.notifications()] == [State.REVIEW]


def test_zero_install_old_clean_transcript_at_discovery_stays_idle():
    run = Run(now=10_000)
    run.pid("idle", at=900)
    run(s.TranscriptUpdate(at=5_000, session_id=SID, ending="clean"))  # written before
    assert run.state is State.IDLE


def test_clean_transcript_never_overrides_hooks():
    run = busy_run()
    run(s.TranscriptUpdate(at=run.now + 5, session_id=SID, ending="clean"))
    assert run.state is State.BUSY  # the Stop hook decides


def test_zero_install_dialog_approved_with_busy_unseen_goes_review():
    """Real CLI, hookless: '1. Yes' → PID busy for 165 ms → idle; the watcher saw only
    waiting → idle, which reads as a dismissal until the transcript's finished answer, written
    after the dialog opened, shows the approved turn ran to its end."""
    run = Run(now=1_000)
    run.pid("idle", at=900)
    run.pid("busy", at=2_000)
    run.pid("waiting", at=2_600)
    run.pid("idle", at=3_000)  # busy at 2_830 never seen
    assert run.state is State.IDLE
    run(s.TranscriptUpdate(at=2_990, session_id=SID, ending="clean", last_assistant="Done."),
        now=3_100)  # fmt: skip
    assert run.state is State.REVIEW and run.session.source == "transcript:answer"
    assert run.session.state_since == 3_000  # never earlier than the idle it corrects
    assert [n.state for n in run.notifications()] == [State.NEEDS_INPUT, State.REVIEW]


def test_zero_install_dialog_approved_answer_read_before_the_idle_goes_straight_to_review():
    """The same, when the answer was tailed while the PID idle settled: no idle in between."""
    run = Run(now=1_000)
    run.pid("busy", at=2_000)
    run.pid("waiting", at=2_600)
    run(s.TranscriptUpdate(at=2_990, session_id=SID, ending="clean", last_assistant="Done."),
        now=3_100)  # fmt: skip
    assert run.state is State.NEEDS_INPUT  # the PID file decides when the dialog closed
    run.pid("idle", at=3_000)
    assert run.state is State.REVIEW and run.session.source == "pid:idle"
    assert [c.after.state for c in run.changes if c.before and c.before.state != c.after.state] \
        == [State.NEEDS_INPUT, State.REVIEW]  # fmt: skip


def test_zero_install_dialog_dismissed_after_an_earlier_answer_goes_idle():
    run = Run(now=1_000)
    run(s.TranscriptUpdate(at=1_500, session_id=SID, ending="clean"), now=1_600)  # last turn
    run.pid("busy", at=2_000)
    run.pid("waiting", at=2_600)
    run.pid("idle", at=3_000)
    assert run.state is State.IDLE and run.session.source == "pid:idle"


@pytest.mark.parametrize(
    ("ending", "answer_at"),
    [
        ("interrupt", 2_990),  # "No" or Esc on the dialog: the marker ends the transcript
        ("open", 2_990),  # the tool ran, no final answer yet
        ("clean", 2_500),  # an answer from before the dialog opened
    ],
)
def test_zero_install_dismissed_dialog_stays_idle(ending, answer_at):
    run = Run(now=1_000)
    run.pid("busy", at=2_000)
    run.pid("waiting", at=2_600)
    run.pid("idle", at=3_000)
    run(s.TranscriptUpdate(at=answer_at, session_id=SID, ending=ending), now=3_100)
    assert run.state is State.IDLE and run.session.source == "pid:idle"


def test_hooked_dismissed_dialog_stays_idle_with_its_marker():
    """Esc or "No" writes the marker after the PID file's idle (85-185 ms): the transcript then
    ends with it, never with a clean answer, so the dismissal stands. (Before issue 28 a
    hooked session also ignored a clean answer here: "hooks decide". Without per-tool hooks
    that answer is how an approval whose busy went unseen shows when the Stop is lost.)"""
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash", tool_input={"command": "ls"})
    run.pid("waiting", at=run.now + 5)
    run.pid("idle", at=run.now + 900)
    run(s.TranscriptInterrupt(at=run.now + 1050, session_id=SID))
    run(s.TranscriptUpdate(at=run.now + 1050, session_id=SID, ending="interrupt"))
    assert run.state is State.IDLE


def test_pid_leaving_waiting_for_idle_clears_the_tool():
    run = busy_run()
    run.hook("PermissionRequest", at=run.now, tool_name="Bash", tool_input={"command": "rm x"})
    run.pid("waiting", at=run.now + 5)
    run.pid("idle", at=run.now + 900)
    assert run.state is State.IDLE and run.session.current_tool is None


def test_pid_file_names_the_new_id_before_sessionstart_clear():
    """Real CLI: after /clear the PID file says `busy` with the new id ~tens of ms before
    SessionStart(clear): the new session must not flash busy."""
    run = Run()
    run.hook("SessionStart", at=10, source="startup", pid=4242)
    run.pid("busy", at=20, session_id=NEW_SID)
    assert run.fleet[NEW_SID].state is State.IDLE and run.fleet[NEW_SID].hooked
    assert run.fleet[SID].ended
    run.hook("SessionStart", at=30, source="clear", pid=4242, session_id=NEW_SID)
    assert run.fleet[NEW_SID].state is State.IDLE


def test_transcript_from_before_the_stop_hook_keeps_its_answer():
    """Real CLI: Stop arrives before the turn's records are flushed (up to 185 ms): an update
    read in between still holds the previous answer and the previous prompt."""
    run = busy_run()
    t = run.now
    run.hook("UserPromptSubmit", at=t + 10, prompt="say hi")
    run.hook("Stop", at=t + 50, last_assistant_message="Hi!")
    run(s.TranscriptUpdate(at=t + 5, session_id=SID, last_assistant="old answer",
                           last_prompt="old prompt", ending="open"))  # fmt: skip
    assert (run.session.last_assistant, run.session.last_prompt) == ("Hi!", "say hi")
    run(s.TranscriptUpdate(at=t + 60, session_id=SID, last_assistant="Hi! (full)",
                           last_prompt="say hi", ending="clean"))  # fmt: skip
    assert run.session.last_assistant == "Hi! (full)"


# ------------------------------------------ no per-tool hooks (issue 28: the default install)


def test_an_approved_dialog_whose_busy_went_unseen_ends_in_review_by_its_late_stop():
    """Without PostToolUse nothing but the PID file says a dialog was answered. Approving a
    fast tool can leave the CLI ``busy`` too briefly for the watcher: it reads waiting →
    idle, a dismissal. The turn's Stop, sent before that idle but arriving after it, says
    the turn ran to its end."""
    run = busy_run()
    t = run.now
    run.hook("PermissionRequest", at=t, tool_name="Bash", tool_input={"command": "ls"})
    run.pid("waiting", at=t + 5)
    assert run.state is State.NEEDS_INPUT
    run.pid("idle", at=t + 400)
    assert run.state is State.IDLE  # read as a dismissal, for now
    run.hook("Stop", at=t + 380, last_assistant_message="listed")
    assert run.state is State.REVIEW and run.session.source == "hook:Stop"
    assert run.session.state_since == t + 400 and run.session.last_assistant == "listed"
    assert [n.state for n in run.notifications()][-1] is State.REVIEW


def test_a_stop_from_before_the_dialog_does_not_undo_its_dismissal():
    run = dialog_run()
    t = run.now
    run.pid("idle", at=t + 400)  # Esc: no hook at all
    run.hook("Stop", at=t - 10)  # an older turn's, arriving late
    assert run.state is State.IDLE


def test_a_subagents_stop_never_ends_the_turn_the_pid_file_closed():
    run = dialog_run()
    t = run.now
    run.pid("idle", at=t + 400)
    run.hook("Stop", at=t + 300, agent_id="a1", agent_type="general-purpose")
    assert run.state is State.IDLE


def test_a_hooked_dialog_approved_unseen_is_review_by_the_transcript_answer():
    """The Stop may be lost (2.1.197 exiting with async hooks running): the finished answer
    written after the dialog says it was approved, as for a session without hooks."""
    run = dialog_run()
    t = run.now
    run.pid("idle", at=t + 400)
    assert run.state is State.IDLE
    run(s.TranscriptUpdate(at=t + 350, session_id=SID, ending="clean", last_assistant="ok"))
    assert run.state is State.REVIEW


def test_hooked_dialog_left_waiting_for_idle_with_its_answer_written_is_review():
    run = dialog_run()
    t = run.now
    run(s.TranscriptUpdate(at=t + 300, session_id=SID, ending="clean"))
    run.pid("idle", at=t + 400)
    assert run.state is State.REVIEW


def test_the_current_tool_comes_from_the_transcript_without_tool_hooks():
    run = busy_run()
    t = run.now
    run(s.TranscriptUpdate(at=t + 10, session_id=SID, current_tool="Bash", tool_summary="make"))
    assert run.session.current_tool == "Bash" and run.session.tool_summary == "make"
    run(s.TranscriptUpdate(at=t + 20, session_id=SID, current_tool=None, ending="open"))
    assert run.session.current_tool is None and run.state is State.BUSY


def test_a_subagent_run_shows_its_agent_call_as_the_parents_tool():
    """Without PreToolUse the parent's Agent call is known from the transcript, which a short
    sub-agent can beat: SubagentStart names it, the last SubagentStop clears it, and the
    transcript's own record (with the call's summary) wins when it is newer."""
    run = busy_run()
    t = run.now
    run.hook("SubagentStart", at=t, agent_id="a1", agent_type="general-purpose")
    assert (run.session.current_tool, run.session.tool_summary) == (
        "Agent",
        "general-purpose agent",
    )
    assert run.session.subagents == 1 and run.state is State.BUSY
    run(s.TranscriptUpdate(at=t + 5, session_id=SID, current_tool="Agent", tool_summary="Explore"))
    assert run.session.tool_summary == "Explore"
    run.hook("SubagentStop", at=t + 50, agent_id="a1", agent_type="general-purpose")
    assert run.session.current_tool is None and run.session.subagents == 0


def test_a_subagent_start_keeps_a_tool_already_known():
    run = busy_run()
    t = run.now
    run(s.TranscriptUpdate(at=t, session_id=SID, current_tool="Bash", tool_summary="make"))
    run.hook("SubagentStart", at=t + 1, agent_id="a1", agent_type="general-purpose")
    assert run.session.current_tool == "Bash"
    run.hook("SubagentStop", at=t + 2, agent_id="a1")
    assert run.session.current_tool == "Bash"


def test_a_final_read_after_the_end_sets_the_figures_and_never_the_state():
    """issue 35 part 3: the transcript is read once more when a run ends (its last records
    land around SessionEnd): tokens, model and answer become final; the row stays ended."""
    run = busy_run()
    run.hook("Stop", at=run.now + 100, last_assistant_message="first")
    run.hook("SessionEnd", at=run.now + 150, reason="other")
    ended = run.session
    assert ended.ended and not ended.running
    final = Tokens(input=22, output=80, cache_read=8510, cache_creation=430)
    run(
        s.TranscriptUpdate(
            at=run.now + 200,
            session_id=SID,
            model="claude-sonnet-4-5",
            tokens=final,
            last_assistant="the final answer",
            ending="clean",
        )
    )
    after = run.session
    assert after.tokens == final and after.model == "claude-sonnet-4-5"
    assert after.last_assistant == "the final answer"
    assert (after.state, after.state_since, after.source) == (
        ended.state,
        ended.state_since,
        ended.source,
    )
    assert after.ended and not after.running


def test_an_sdk_runs_origin_names_its_program_and_notebook_in_the_row():
    from pmux_widget.core.contract import row

    run = busy_run()
    assert row(run.session)["origin"] is None
    run(
        s.Origin(
            at=run.now, session_id=SID, program="ipykernel", kernel_id="k1", notebook="a.ipynb"
        )
    )
    assert row(run.session)["origin"] == {
        "program": "ipykernel",
        "kernel_id": "k1",
        "notebook": "a.ipynb",
    }
    assert run.state is State.BUSY and run.session.state_since == run.now - 900  # no move
    run(s.Origin(at=run.now, session_id="unknown", program="x.py"))
    assert "unknown" not in run.fleet


def test_a_call_waiting_on_our_handler_is_needs_input_with_what_it_asks_hooks_or_none():
    """issue 35: with setting_sources=[] no hook says what an SDK run asks; our handler does."""
    run = Run()
    run.pid("busy", at=1_000)
    ask = {
        "questions": [
            {"question": "Which colour?", "options": [{"label": "Purple"}, {"label": "Amber"}]}
        ]
    }
    run(s.HandlerWaits(at=2_000, session_id=SID, tool_name="AskUserQuestion", tool_input=ask))
    assert run.state is State.NEEDS_INPUT and run.session.source == "sdk:waiting"
    assert run.session.question is not None and run.session.question.kind == "question"
    assert [a.question for a in run.session.question.questions] == ["Which colour?"]
    run.pid("waiting", at=2_005)
    assert run.state is State.NEEDS_INPUT and run.session.state_since == 2_000
    run.pid("busy", at=3_000)  # answered: the CLI goes on
    assert run.state is State.BUSY and run.session.question is None
    # an older call (overtaken) changes nothing
    run(s.HandlerWaits(at=2_500, session_id=SID, tool_name="Bash", tool_input={"command": "x"}))
    assert run.state is State.BUSY
