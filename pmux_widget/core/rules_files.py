"""The file rules: what the transcript (answers, Esc markers, tokens) and the PID file
(status, pid, entrypoint) do to a session.

These are the signals of sessions without hooks (zero install), and the PID file's
``waiting`` status is the one dialog signal every session has.
"""

from __future__ import annotations

from typing import Literal

from . import signals as sig
from .model import PidStatus, Session, State, Tracking, clip, source_text
from .rules_background import adopt, boot_record, respawned_status, unspare
from .transitions import (
    WORK_STATES,
    StepEdits,
    answered_since_asked,
    finished,
    interactive_of,
    move,
    named,
    project_of,
    retire_others,
    track,
    turn_ended_quietly,
)

#: What a PID-file status decides, and what the same decision is called at a hub's restart.
PidCause = Literal["pid:busy", "pid:waiting", "pid:idle", "pid:shell"]


def pid_target(
    state: State, t: Tracking, status: PidStatus | None
) -> tuple[State, PidCause] | None:
    """The state a PID-file status implies for a session without hooks (None: no change)."""
    match status:
        case "busy":
            return State.BUSY, "pid:busy"
        case "waiting":
            return State.NEEDS_INPUT, "pid:waiting"
        case "shell":
            return State.IDLE, "pid:shell"
        case "idle" if state is State.NEEDS_INPUT:
            if answered_since_asked(t):
                return State.REVIEW, "pid:idle"  # approved; its short busy went unseen
            return State.IDLE, "pid:idle"  # the dialog was dismissed (Esc, "No")
        case "idle" if state in (State.BUSY, State.UNKNOWN):
            if turn_ended_quietly(t.transcript_end):
                return State.IDLE, "pid:idle"
            return finished(t), "pid:idle"
    return None


def _hooked_turn_over(t: Tracking) -> tuple[State, PidCause]:
    """A hooked session's PID file went idle after its last decision, and no Stop came (the
    runtime lets hooks settle first). Esc before the first token does this on 2.1.332: the CLI
    puts the prompt back in the box, writes no marker and fires no hook. Only an answer
    written during this turn makes it a finished turn whose Stop was lost."""
    if t.transcript_end == "clean" and t.transcript_at >= t.turn_started_at > 0:
        return finished(t), "pid:idle"
    return State.IDLE, "pid:idle"


def on_pid_file(step: StepEdits, signal: sig.PidFile) -> None:
    rec = signal.record
    at = signal.at
    if rec.spare or (rec.kind == "bg" and not rec.job_id):
        unspare(step, signal)
        return
    if boot_record(step, rec):
        return
    s = step.get(rec.session_id)
    background = rec.background
    if s is not None and background is None and (s.tracking.spare or s.background):
        # a spare; or a process that is not the worker claims a background session (a
        # record the poller made for an agent view in a pane): the worker's file decides
        return
    if s is not None and s.tracking.spare:  # taken for a spare, but a job has it after all
        s = track(s, s.tracking.replace(spare=False))
    project = signal.project or project_of(rec.cwd)
    if s is None:
        s = Session(
            session_id=rec.session_id,
            state=State.IDLE,
            state_since=rec.started_at or at,
            source=source_text("pid:found"),
            cwd=rec.cwd,
            project=project,
            workspace=project,
            tracking=Tracking(first_seen=step.now, cause="pid:found"),
        )
    t = s.tracking
    # /clear or a resume: the PID file names the new id before its SessionStart hook comes.
    # A process whose earlier session sent hooks will send them for this one too.
    inherits_hooks = any(
        o.pid == rec.pid and o.session_id != rec.session_id and o.hooked for o in step.all()
    )
    if inherits_hooks and not t.hooked:
        t = t.replace(process_hooked=True)
    interactive = interactive_of(rec.entrypoint, rec.kind)
    if interactive is not None:
        t = t.replace(interactive=interactive, entrypoint=rec.entrypoint)
    retire_others(step, rec.session_id, rec.pid, None, at)
    respawn = respawned_status(s, rec)
    s = s.replace(
        pid=rec.pid,
        running=True,
        cwd=s.cwd or rec.cwd,
        tracking=t.replace(ended=False, gone_checks=0, active_at=max(t.active_at, at)),
    )
    s = named(s, s.project or project)  # a hook's cwd (where it runs now) names it first
    if background is not None:
        s = adopt(s, background)
    t = s.tracking
    if (at >= t.decided_at or respawn) and rec.status is not None:
        target: tuple[State, PidCause] | None = None
        if not t.hooked:
            target = pid_target(s.state, t, rec.status)
        elif rec.status == "waiting":
            target = State.NEEDS_INPUT, "pid:waiting"  # any dialog, hooked or not
        elif s.state is State.NEEDS_INPUT and rec.status == "busy":
            target = State.BUSY, "pid:busy"  # left waiting: answered
        elif s.state is State.NEEDS_INPUT:  # dismissed, or approved with its busy unseen
            target = pid_target(s.state, t, "idle")
        elif rec.status == "idle" and s.state is State.BUSY and not s.background_tasks:
            target = _hooked_turn_over(t)
        elif rec.status == "busy" and s.state is State.IDLE and s.background is not None:
            # a respawned worker (kill -9): SessionStart(resume) and no prompt hook; its PID
            # file says it works on
            target = State.BUSY, "pid:busy"
        if target is not None:
            state, cause = target
            if state is State.NEEDS_INPUT and s.state is not State.NEEDS_INPUT:
                s = track(s, t.replace(waiting_for=rec.waiting_for))
            if state is not State.NEEDS_INPUT and s.state is State.NEEDS_INPUT:
                s = track(s, t.replace(waiting_for=None))
                if state is State.IDLE:  # dismissed: the tool it asked for will not run
                    s = s.replace(
                        current_tool=None,
                        tool_summary=None,
                        tracking=s.tracking.replace(tool_at=at),
                    )
            s = move(s, state, cause, at)
    t = s.tracking
    if at >= t.decided_at or t.pid_status is None or respawn:
        s = track(s, t.replace(pid_status=rec.status))
    step.put(s)
    step.notify(s, signal.live)


def on_interrupt(step: StepEdits, signal: sig.TranscriptInterrupt) -> None:
    s = step.get(signal.session_id)
    if s is None or signal.at <= s.tracking.interrupt_at:
        return  # unknown session, or this marker (or a newer one) was already acted upon
    t = s.tracking.replace(interrupt_at=signal.at, transcript_end="interrupt")
    newer_than_hooks = signal.at >= t.last_hook_at and signal.at >= t.decided_at
    # The PID file turns idle 85-185 ms before the marker is flushed (measured): a review
    # that only the PID file decided, for the turn this marker ends, was really an Esc.
    late_marker = (
        s.state is State.REVIEW
        and t.cause == "pid:idle"
        and not t.hooked
        and signal.at >= t.turn_started_at
    )
    if (newer_than_hooks and s.state in WORK_STATES) or late_marker:
        s = s.replace(current_tool=None, tool_summary=None, tracking=t.replace(tool_at=signal.at))
        s = move(s, State.IDLE, "transcript:interrupt", max(signal.at, s.state_since))
    else:
        s = track(s, t)
    step.put(s)


def _dialog_over(s: Session, signal: sig.TranscriptUpdate) -> bool:
    """A hook's dialog whose tool call the transcript shows answered: no tool call is pending
    any more in a record written since it asked, and the PID file does not say ``waiting``
    (a handler or a dialog that waits keeps it so). A real dialog keeps its tool call pending
    until it is answered, so this is true only once nothing waits: the tool was refused (by
    the CLI itself, a hook's deny) or ran. An Esc marker is the interrupt rule's."""
    t = s.tracking
    return (
        s.state is State.NEEDS_INPUT
        and t.cause == "hook"
        and signal.current_tool is None
        and signal.ending != "interrupt"
        and 0 < t.asked_at <= signal.at
        and signal.at >= t.decided_at
        and t.pid_status != "waiting"
    )


def on_transcript(step: StepEdits, signal: sig.TranscriptUpdate) -> None:
    s = step.get(signal.session_id)
    if s is None:
        return
    t = s.tracking
    # The Stop hook's answer and UserPromptSubmit's prompt often come before their records
    # are flushed (measured: up to 185 ms): an update from an older moment keeps them.
    if signal.at >= t.assistant_at and clip(signal.last_assistant):
        s = s.replace(last_assistant=clip(signal.last_assistant))
    if signal.at >= t.prompt_at and clip(signal.last_prompt):
        s = s.replace(last_prompt=clip(signal.last_prompt))
    t = t.replace(transcript_end=signal.ending, transcript_at=max(t.transcript_at, signal.at))
    s = s.replace(
        model=signal.model or s.model,
        tokens=signal.tokens,
        context_tokens=signal.context_tokens,
        transcript_path=s.transcript_path or signal.transcript_path,
        cwd=s.cwd or signal.cwd,
    )
    if not s.project:
        s = named(s, signal.project or project_of(signal.cwd))
    if signal.at >= t.tool_at:
        s = s.replace(current_tool=signal.current_tool, tool_summary=signal.tool_summary)
        t = t.replace(tool_at=signal.at)
    s = track(s, t)
    if t.ended:
        # the final reads of a run that is over: its figures, never a state
        step.put(s)
        return
    if _dialog_over(s, signal):
        # The CLI refused the tool by itself (an SDK run with no handler: recorded, the
        # PermissionRequest hook fires, then the tool_result says it needs approval): nothing
        # waits on anyone, and the turn goes on. The same turn: its start stays.
        started = t.turn_started_at
        s = move(s, State.BUSY, "transcript:tool-result", signal.at)
        s = track(s, s.tracking.replace(turn_started_at=started or s.tracking.turn_started_at))
        t = s.tracking
    # Without hooks, a finished answer the PID file never reported (the CLI sometimes writes
    # no status at all for a fast turn): review, if written after we first saw the session.
    answered = (
        signal.ending == "clean"
        and not t.hooked
        and signal.at > t.decided_at
        and signal.at > t.first_seen
        # busy: the PID file reports the end itself (and a queued prompt may go on at once)
        and s.state in (State.IDLE, State.UNKNOWN)
    )
    # A dialog whose PID status went straight to idle reads as dismissed; when its busy
    # moment was too short for the watcher (seen: 165 ms) and the answer came after the idle,
    # the answer says it was approved and the turn ran to its end (hooked or not: no
    # per-tool hook says so since issue 28; a Stop may be lost, 2.1.197 at exit).
    approved_unseen = (
        s.state is State.IDLE
        and t.cause == "pid:idle"
        and s.state_since >= t.asked_at
        and answered_since_asked(t)
    )
    if (answered or approved_unseen) and finished(t) is State.REVIEW:
        s = move(s, State.REVIEW, "transcript:answer", max(signal.at, s.state_since))
    t = s.tracking
    if signal.api_error and signal.at >= t.prompt_at:
        detail = t.error_detail or clip(signal.api_error)
        s = s.replace(error=s.error or "api_error")
        t = t.replace(error_detail=detail)
    elif not signal.api_error and s.error == "api_error":
        s = s.replace(error=None)  # a later answer: the error is over
        t = t.replace(error_detail=None)
    s = track(s, t.replace(active_at=max(t.active_at, signal.at)))
    step.put(s)
    step.notify(s, signal.live)
