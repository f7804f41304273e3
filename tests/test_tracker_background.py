"""The tracker's rules for Claude Code's own background sessions (issue 26; DESIGN.md "Claude
Code's background sessions"): identity from the worker's PID file, no pane, spares and agent
views never rows, stop / kill -9 / respawn / rm. Shapes as recorded from 2.1.197 and 2.1.332
(docs/claude-code-behaviour.md, "Background sessions")."""

from __future__ import annotations

import dataclasses

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pmux_widget.core import signals as s
from pmux_widget.core.model import Background, State, TmuxLocation, count_states
from pmux_widget.core.tracker import reduce

from .test_tracker import CWD, Run

JOB_A, JOB_B, JOB_C = "84ed038b", "319062b3", "a169f373"
SID_A = JOB_A + "-93f5-40db-b6ed-b6a9d117f38d"
SID_B = JOB_B + "-9d1a-4bbc-9f08-c55e9df702d1"
SID_C = JOB_C + "-faaa-4a3d-9f2d-c7dc39dc7660"
SPARE_SID = "4728c581-0000-4000-8000-000000000000"
VIEW_SID = "75b68c3a-0000-4000-8000-000000000000"
VIEW_PID, DAEMON_PANE = 21770, "%0"


def bg_record(
    sid: str, pid: int, status: str | None, at: int, *, job: str | None = None, **more: object
) -> s.PidRecord:
    """A worker's PID file as both CLIs write it (``kind: "bg"``, ``jobId``, ``name``)."""
    job = job if job is not None else sid[:8]
    fields: dict[str, object] = {
        "pid": pid,
        "session_id": sid,
        "cwd": CWD,
        "started_at": 1,
        "kind": "bg",
        "entrypoint": "cli",
        "job_id": job,
        "name": more.pop("name", f"name-{job}"),
        "status": status,
        "waiting_for": "permission prompt" if status == "waiting" else None,
        "status_updated_at": at,
    }
    fields.update(more)
    return s.PidRecord(**fields)  # type: ignore[arg-type]


def pid_file(run: Run, record: s.PidRecord, live: bool = True) -> None:
    run(s.PidFile(at=record.event_time, live=live, record=record))


def hook(run: Run, sid: str, event: str, at: int, pid: int | None, **fields: object) -> None:
    """A worker's hook: its TMUX_PANE is the daemon's (inherited from the agent view)."""
    run.hook(event, at=at, session_id=sid, pid=pid, pane=DAEMON_PANE, **fields)


def waiting_worker(run: Run, sid: str, pid: int, t: int) -> None:
    """``claude --bg "please ask later"``: a harmless step, then a permission dialog."""
    hook(run, sid, "SessionStart", t, pid, source="startup")
    hook(run, sid, "UserPromptSubmit", t + 10, pid, prompt="please ask later")
    hook(run, sid, "PreToolUse", t + 20, pid, tool_name="Bash", tool_input={"command": "echo"})
    hook(run, sid, "PostToolUse", t + 30, pid, tool_name="Bash", tool_input={"command": "echo"})
    tool = {"command": "touch sim-2.txt"}
    hook(run, sid, "PreToolUse", t + 40, pid, tool_name="Bash", tool_input=tool)
    hook(run, sid, "PermissionRequest", t + 50, pid, tool_name="Bash", tool_input=tool)
    pid_file(run, bg_record(sid, pid, "waiting", t + 60))


def agent_view_notification(run: Run, kind: str, at: int, name: str = "late-a") -> None:
    """What each open agent view fires, under the VIEW's session id (its own pane)."""
    message = (
        f"{name} needs your input: approve Bash: touch"
        if kind == "agent_needs_input"
        else f"{name} finished"
    )
    run.hook(
        "Notification",
        at=at,
        session_id=VIEW_SID,
        pid=VIEW_PID,
        pane=DAEMON_PANE,
        notification_type=kind,
        message=message,
    )


def scenario() -> Run:
    """The issue's scenario: an agent view in a tmux pane, two workers on a dialog, one busy,
    a spare; the view's notifications in between."""
    run = Run(now=200_000)
    spare = bg_record(SPARE_SID, 100, "idle", 1_000, job=SPARE_SID[:8], spare=True)
    hook(run, SPARE_SID, "SessionStart", 1_000, 100, source="startup")
    pid_file(run, spare)
    waiting_worker(run, SID_A, 101, 2_000)
    agent_view_notification(run, "agent_needs_input", 2_100)
    waiting_worker(run, SID_B, 102, 3_000)
    agent_view_notification(run, "agent_needs_input", 3_100, "late-b")
    hook(run, SID_C, "SessionStart", 4_000, 103, source="startup")
    hook(run, SID_C, "UserPromptSubmit", 4_010, 103, prompt="please keep busy")
    pid_file(run, bg_record(SID_C, 103, "busy", 4_020))
    return run


def live(run: Run) -> dict[str, State]:
    return {sid: x.state for sid, x in run.fleet.items() if not x.ended}


def test_two_workers_on_a_dialog_and_one_busy_are_two_needs_input_and_one_busy():
    run = scenario()
    assert live(run) == {
        SID_A: State.NEEDS_INPUT,
        SID_B: State.NEEDS_INPUT,
        SID_C: State.BUSY,
    }
    counts = count_states(x for x in run.fleet.values() if not x.ended)
    assert (counts["needs-input"], counts["busy"], counts["attention"]) == (2, 1, 2)
    for sid, pid in ((SID_A, 101), (SID_B, 102), (SID_C, 103)):
        session = run.fleet[sid]
        assert session.running and session.pid == pid
        assert session.background == Background(sid[:8], f"name-{sid[:8]}")
        assert session.tmux is None and session.tracking.pane is None
        assert session.name == f"acme-api (background: name-{sid[:8]})"  # no pane in it


def test_the_agent_views_notifications_never_make_or_change_a_row():
    run = scenario()
    assert VIEW_SID not in run.fleet
    before = dict(run.fleet)
    agent_view_notification(run, "agent_completed", 5_000, "busy-c")
    agent_view_notification(run, "agent_needs_input", 5_100)
    assert run.fleet == before


def test_a_sessions_own_agent_needs_input_still_asks():
    """Auto mode's "can't check" dialog (2.1.332) fires agent_needs_input from the session
    itself: a session known by its own hooks."""
    run = Run()
    run.hook("SessionStart", at=1_000, source="startup", pid=7)
    run.hook("UserPromptSubmit", at=1_100, prompt="install the tool", pid=7)
    run.hook("Notification", at=1_200, notification_type="agent_needs_input", message="x", pid=7)
    assert run.state is State.NEEDS_INPUT


def test_a_spare_is_never_a_row_whichever_comes_first():
    hooks_first = Run()
    hook(hooks_first, SPARE_SID, "SessionStart", 1_000, 100, source="startup")
    assert not hooks_first.fleet[SPARE_SID].ended  # not known as a spare yet
    spare = bg_record(SPARE_SID, 100, "idle", 1_010, spare=True)
    pid_file(hooks_first, spare)
    assert hooks_first.fleet[SPARE_SID].ended and hooks_first.fleet[SPARE_SID].tracking.spare
    hook(hooks_first, SPARE_SID, "Notification", 61_000, 100, notification_type="idle_prompt")
    assert hooks_first.fleet[SPARE_SID].ended  # its hooks change nothing
    file_first = Run()
    pid_file(file_first, spare)
    assert file_first.fleet == {}


def test_a_claimed_spare_is_the_jobs_session_and_its_placeholder_stays_gone():
    run = Run()
    hook(run, SPARE_SID, "SessionStart", 1_000, 100, source="startup")
    pid_file(run, bg_record(SPARE_SID, 100, "idle", 1_010, spare=True))
    # the same process takes a job: its PID file names the job's session now
    waiting_worker(run, SID_A, 100, 2_000)
    assert live(run) == {SID_A: State.NEEDS_INPUT}
    assert run.fleet[SID_A].pid == 100


def test_a_worker_located_in_its_daemons_pane_stays_in_none():
    run = scenario()
    pane = TmuxLocation("view", "0", DAEMON_PANE)
    run(s.Locate(at=6_000, session_id=SID_A, tmux=pane, pid=101))
    assert run.fleet[SID_A].tmux is None
    run(s.InTerminal(at=6_000, session_id=SID_A, pid=101, terminal=None))
    assert run.fleet[SID_A].terminal is None


def test_a_respawn_after_a_resume_does_not_retire_the_daemons_other_workers():
    """A respawned worker's SessionStart(resume) carries the daemon's pane, as every worker's
    hooks do: it must not retire the others (same pane)."""
    run = scenario()
    hook(run, SID_C, "SessionStart", 7_000, 203, source="resume")
    assert live(run).keys() == {SID_A, SID_B, SID_C}


def test_an_agent_view_found_in_its_pane_never_takes_a_background_session():
    """The poller's discovery would name the view's process with the newest transcript of its
    folder (a worker's): the worker's own PID file decides."""
    run = scenario()
    found = s.PidRecord(pid=VIEW_PID, session_id=SID_B, cwd=CWD, started_at=1)
    pid_file(run, found)
    assert run.fleet[SID_B].pid == 102 and run.fleet[SID_B].state is State.NEEDS_INPUT


def test_claude_stop_is_not_running_and_claude_rm_ends_it():
    run = scenario()
    hook(run, SID_A, "SessionEnd", 8_000, 101, reason="other")
    a = run.fleet[SID_A]
    assert (a.running, a.ended, a.state) == (False, False, State.IDLE)
    assert a.source == "background:stopped"
    run(s.ProcessGone(at=8_100, session_id=SID_A, pid=101))
    run(s.ProcessGone(at=8_200, session_id=SID_A, pid=101))
    assert not run.fleet[SID_A].ended  # gone, but still listed by `claude agents`
    run(s.BackgroundGone(at=9_000, session_id=SID_A, job="someother"))
    assert not run.fleet[SID_A].ended
    run(s.BackgroundGone(at=9_000, session_id=SID_A, job=JOB_A))
    assert run.fleet[SID_A].ended and run.fleet[SID_A].source == "background:removed"


def test_kill_9_is_not_running_and_the_respawn_follows_the_new_pid_busy():
    run = scenario()
    for at in (8_000, 8_400):
        run(s.ProcessGone(at=at, session_id=SID_C, pid=103))
    c = run.fleet[SID_C]
    assert (c.running, c.ended, c.state) == (False, False, State.IDLE)
    # ~10 s later: the same session in a new process, no prompt hook, PID file busy
    hook(run, SID_C, "SessionStart", 18_000, 303, source="resume")
    assert run.fleet[SID_C].running and run.fleet[SID_C].pid == 303
    pid_file(run, bg_record(SID_C, 303, "busy", 18_050))
    c = run.fleet[SID_C]
    assert (c.state, c.pid, c.running) == (State.BUSY, 303, True)
    assert live(run).keys() == {SID_A, SID_B, SID_C}


#: the id a respawned 2.1.197 worker's first PID file names: its own, before the resume
BOOT_SID = "4519e9f7-ae8e-4c7d-9d26-0780806d15f9"


def _killed_and_respawned(run: Run) -> tuple[s.PidRecord, s.PidRecord, s.PidRecord]:
    """kill -9 of busy-c; its respawn's three PID files as 2.1.197 wrote them (by hand: the
    boot record names a fresh id and no status, 0.4 s later the job's session, busy, idle)."""
    for at in (8_000, 8_400):
        run(s.ProcessGone(at=at, session_id=SID_C, pid=103))
    boot = bg_record(BOOT_SID, 303, None, 0, name=f"name-{JOB_C}", job=JOB_C, updated_at=18_000)
    busy = bg_record(SID_C, 303, "busy", 18_400)
    idle = bg_record(SID_C, 303, "idle", 18_800)
    return boot, busy, idle


def test_a_respawned_workers_boot_record_never_becomes_a_row():
    """The real order: the boot record, SessionStart(resume) under the job's session, busy,
    Stop, idle. The boot id never shows; the job's row follows the new pid."""
    run = scenario()
    boot, busy, idle = _killed_and_respawned(run)
    pid_file(run, boot)
    assert BOOT_SID not in run.fleet
    hook(run, SID_C, "SessionStart", 18_300, 303, source="resume")
    pid_file(run, busy)
    assert (run.fleet[SID_C].state, run.fleet[SID_C].pid) == (State.BUSY, 303)
    hook(run, SID_C, "Stop", 18_700, 303)
    pid_file(run, idle)
    assert live(run).keys() == {SID_A, SID_B, SID_C}
    assert run.fleet[SID_C].running and run.fleet[SID_C].pid == 303


def test_a_respawned_workers_boot_record_read_late_retires_nothing():
    """The CI failure (2.1.197, loaded machine): the hub's periodic rescan read the boot
    record, the watcher applied the job's later records meanwhile, then the rescan applied
    the stale boot record: a row for the boot id, and the job's row retired (same pid)."""
    run = scenario()
    boot, busy, idle = _killed_and_respawned(run)
    hook(run, SID_C, "SessionStart", 18_300, 303, source="resume")
    pid_file(run, busy)
    hook(run, SID_C, "Stop", 18_700, 303)
    pid_file(run, idle)
    pid_file(run, boot)
    assert live(run).keys() == {SID_A, SID_B, SID_C}
    c = run.fleet[SID_C]
    assert (c.running, c.ended, c.pid, c.background) == (
        True,
        False,
        303,
        Background(JOB_C, f"name-{JOB_C}"),
    )


def test_a_new_session_of_a_job_with_a_status_still_takes_over():
    """Not a boot record: the job's worker names another session with a status (as after a
    /clear in it): that session is the job's now, the old row retires."""
    run = scenario()
    pid_file(run, bg_record(BOOT_SID, 103, "idle", 9_000, job=JOB_C))
    assert BOOT_SID in live(run) and SID_C not in live(run)


def test_without_hooks_background_sessions_show_from_their_pid_files():
    run = Run(now=200_000)
    pid_file(run, bg_record(SPARE_SID, 100, "idle", 900, spare=True))
    pid_file(run, bg_record(SID_A, 101, "waiting", 1_000))
    pid_file(run, bg_record(SID_B, 102, "waiting", 1_100))
    pid_file(run, bg_record(SID_C, 103, "busy", 1_200))
    assert live(run) == {SID_A: State.NEEDS_INPUT, SID_B: State.NEEDS_INPUT, SID_C: State.BUSY}
    assert run.fleet[SID_A].waiting_for == "permission prompt"
    assert run.fleet[SID_A].background == Background(JOB_A, f"name-{JOB_A}")
    # answered from anywhere (the agent view's peek, claude attach): busy, then done
    pid_file(run, bg_record(SID_A, 101, "busy", 2_000))
    assert run.fleet[SID_A].state is State.BUSY


def test_a_bg_pid_file_without_a_job_is_a_spare():
    run = Run()
    pid_file(run, bg_record(SPARE_SID, 100, "idle", 900, job=""))
    assert run.fleet == {}


def test_the_background_round_trips_through_the_record():
    run = scenario()
    a = run.fleet[SID_A]
    assert type(a).from_record(a.to_record()) == a
    assert a.to_json()["background"] == {"job": JOB_A, "name": f"name-{JOB_A}"}


# --------------------------------------------------------------------------- properties

_EVENTS = st.sampled_from(
    [
        "view_needs",
        "view_done",
        "spare_start",
        "spare_file",
        "locate",
        "resume_hook",
        "gone",
        "file_waiting",
        "file_busy",
        "file_idle",
    ]
)


@settings(max_examples=300, deadline=None)
@given(events=st.lists(_EVENTS, max_size=25))
def test_whatever_the_order_no_view_or_spare_row_and_workers_stay_paneless(events):
    """Whatever the views, spares, pane guesses and worker files do, in any order: no row
    for a view or a spare, a worker is never in a pane, and its pid is only ever a pid its
    own PID file or hooks named."""
    run = scenario()
    at = 10_000
    worker_pids = {101, 102, 103, 201, 202}
    for event in events:
        at += 100
        match event:
            case "view_needs":
                agent_view_notification(run, "agent_needs_input", at)
            case "view_done":
                agent_view_notification(run, "agent_completed", at)
            case "spare_start":
                hook(run, SPARE_SID, "SessionStart", at, 100, source="startup")
            case "spare_file":
                pid_file(run, bg_record(SPARE_SID, 100, "idle", at, spare=True))
            case "locate":
                pane = TmuxLocation("view", "0", DAEMON_PANE)
                run(s.Locate(at=at, session_id=SID_B, tmux=pane, pid=VIEW_PID))
                pid_file(run, s.PidRecord(pid=VIEW_PID, session_id=SID_A, cwd=CWD, started_at=1))
            case "resume_hook":
                hook(run, SID_C, "SessionStart", at, 201, source="resume")
            case "gone":
                run(s.ProcessGone(at=at, session_id=SID_B, pid=run.fleet[SID_B].pid or 0))
            case "file_waiting":
                pid_file(run, bg_record(SID_A, 101, "waiting", at))
            case "file_busy":
                pid_file(run, bg_record(SID_C, 202, "busy", at))
            case "file_idle":
                pid_file(run, bg_record(SID_A, 101, "idle", at))
    shown = {sid for sid, x in run.fleet.items() if not x.ended}
    assert VIEW_SID not in run.fleet
    assert SPARE_SID not in shown
    assert shown == {SID_A, SID_B, SID_C}  # none retired the others, none removed
    for sid in shown:
        session = run.fleet[sid]
        assert session.tmux is None and session.tracking.pane is None
        assert session.background is not None and session.background.job == sid[:8]
        assert session.pid in worker_pids


def test_reduce_never_mutates_the_fleet_it_is_given():
    run = scenario()
    frozen = {k: dataclasses.replace(v) for k, v in run.fleet.items()}
    reduce(run.fleet, s.BackgroundGone(at=1, session_id=SID_A, job=JOB_A), 1)
    assert run.fleet == frozen


# ----------------------------------------------------------------- the respawn race (issue 37)
#
# kill -9 of busy-c (pid 103); the daemon respawns it ~10 s later as pid 303, same session. The
# hub learns the old pid's death (pidfd, liveness loop, the poll, a removed PID file) and the
# new process's records (its PID file, its SessionStart(resume)) by different paths, so they
# reach the tracker in any order, and a death is stamped when the hub FOUND it, not when it
# happened. Whatever the order, the row ends up following the new pid's PID file.

OLD, NEW = 103, 303


def _respawned_busy(run: Run) -> None:
    c = run.fleet[SID_C]
    assert (c.state, c.pid, c.running, c.ended) == (State.BUSY, NEW, True, False), (
        c.state,
        c.pid,
        c.running,
        c.source,
    )
    assert live(run).keys() == {SID_A, SID_B, SID_C}


def test_respawn_the_old_pids_death_found_late_then_the_new_busy_record():
    """The death was found (and stamped) after the new worker wrote busy, but reached the
    tracker first: the stop's decision is newer than the busy record's statusUpdatedAt, yet
    the record is the new process's, and nothing about the dead one outranks it."""
    run = scenario()
    busy = bg_record(SID_C, NEW, "busy", 18_000)
    for at in (18_200, 18_600):  # found by the liveness loop after the respawn wrote busy
        run(s.ProcessGone(at=at, session_id=SID_C, pid=OLD))
    assert not run.fleet[SID_C].running
    pid_file(run, busy)
    _respawned_busy(run)


def test_respawn_the_new_busy_record_then_the_old_pids_death():
    run = scenario()
    pid_file(run, bg_record(SID_C, NEW, "busy", 18_000))
    for at in (18_200, 18_600):
        run(s.ProcessGone(at=at, session_id=SID_C, pid=OLD))
    _respawned_busy(run)


def test_respawn_the_new_record_between_the_two_reports_of_the_death():
    run = scenario()
    run(s.ProcessGone(at=8_000, session_id=SID_C, pid=OLD))
    pid_file(run, bg_record(SID_C, NEW, "busy", 18_000))
    run(s.ProcessGone(at=18_400, session_id=SID_C, pid=OLD))
    _respawned_busy(run)


def test_respawn_a_poll_that_checked_the_old_pid_strikes_not_the_new_one():
    """The poll's probe ran on its thread while the row still had the dead pid; its answer
    (not alive) came after the new record: it is about the old process."""
    run = scenario()
    for at in (8_000, 8_400):
        run(s.ProcessGone(at=at, session_id=SID_C, pid=OLD))
    pid_file(run, bg_record(SID_C, NEW, "busy", 18_000))
    for at in (18_500, 19_500):  # two polls that both looked at pid 103
        run(s.PollTick(at=at, alive={SID_C: False}, pids={SID_C: OLD}), now=at)
    _respawned_busy(run)


def test_respawn_session_start_sent_after_the_busy_record_either_order():
    """The respawned worker wrote busy before its SessionStart(resume) hook was sent: the
    hook says a process started, its PID file says what it does."""
    for record_first in (True, False):
        run = scenario()
        for at in (8_000, 8_400):
            run(s.ProcessGone(at=at, session_id=SID_C, pid=OLD))
        busy = bg_record(SID_C, NEW, "busy", 18_000)
        if record_first:
            pid_file(run, busy)
        hook(run, SID_C, "SessionStart", 18_100, NEW, source="resume")
        if not record_first:
            pid_file(run, busy)
        _respawned_busy(run)
        # its turn ends as any: the PID file's idle after a Stop
        hook(run, SID_C, "Stop", 25_000, NEW)
        pid_file(run, bg_record(SID_C, NEW, "idle", 25_050))
        assert run.fleet[SID_C].state in (State.IDLE, State.REVIEW)


_RESPAWN_EVENTS = st.permutations(["gone1", "gone2", "boot", "start", "busy", "poll"])


@settings(max_examples=200, deadline=None)
@given(order=_RESPAWN_EVENTS)
def test_respawn_in_any_order_the_row_follows_the_new_pid_file(order):
    """The old pid's two reports of death, a poll that looked at it, the new process's
    first record (the job's session, no status: 2.1.332), its SessionStart(resume) and its
    busy record: in any order, but the new PID file's two writes in theirs (one file, read
    in order by the watcher; a rescan never applies an older one)."""
    assume(order.index("boot") < order.index("busy"))
    run = scenario()
    at = 18_000
    for event in order:
        at += 100
        match event:
            case "gone1" | "gone2":
                run(s.ProcessGone(at=at, session_id=SID_C, pid=OLD))
            case "boot":
                pid_file(run, bg_record(SID_C, NEW, None, 0, updated_at=17_900))
            case "start":
                hook(run, SID_C, "SessionStart", at, NEW, source="resume")
            case "busy":
                pid_file(run, bg_record(SID_C, NEW, "busy", 17_950))
            case "poll":
                run(s.PollTick(at=at, alive={SID_C: False}, pids={SID_C: OLD}), now=at)
    # a later poll that looked at the row's pid
    run(s.PollTick(at=at + 1_000, alive={SID_C: True}, pids={SID_C: NEW}), now=at + 1_000)
    _respawned_busy(run)
