"""The tracker: a pure reducer from (sessions, signal, now) to (new sessions, changes).

Every state rule of pmux-widget lives here and nowhere else. No I/O, no clock (``now`` is
passed in, signals carry their own event time), no threads, no globals; the input mapping and
its sessions are never modified, so old snapshots stay valid.

Ordering: signals reach the hub by different paths (HTTP, file watchers, polls) and can
overtake each other. Each session's bookkeeping (:class:`~.model.Tracking`) keeps
``decided_at``, the event time of the newest signal that decided its state; a signal that
happened earlier than that may not change the state.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from . import signals as sig
from .model import (
    ACTION_WINDOW_MS,
    Cause,
    Change,
    Notification,
    PidStatus,
    Session,
    State,
    Tracking,
    TranscriptEnding,
    clip,
    source_text,
)
from .summaries import summarize_tool
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

#: A process found gone within this long of the session's start is not believed (boot window).
BOOT_WINDOW_MS = 5_000
#: Busy this long with no live Claude process found: the poll returns it to idle.
STALE_BUSY_MS = 10 * 60_000
#: Unknown (after a restart) at most this long, then idle.
UNKNOWN_TIMEOUT_MS = 10 * 60_000
#: Compacting without a PostCompact for this long: the indicator clears itself.
COMPACTING_TIMEOUT_MS = 5 * 60_000
#: A process is declared gone after this many consecutive checks found it dead.
GONE_CONFIRMATIONS = 2
#: PID-file ``entrypoint``s and ``kind``s of runs nobody sits at (``-p``: ``sdk-cli``).
_NON_INTERACTIVE_KINDS = frozenset({"daemon", "daemon-worker"})

Fleet = Mapping[str, Session]

_WORK_STATES = frozenset({State.BUSY, State.NEEDS_INPUT, State.UNKNOWN})
_NEEDS_INPUT_NOTIFICATIONS = frozenset(
    # agent_needs_input (2.1.332): auto mode's "can't check actions" dialog, which fires no
    # PermissionRequest (recorded: tests/fixtures/real/2.1.332/auto_blocked)
    {"permission_prompt", "worker_permission_prompt", "agent_needs_input"}
)
#: A prompt the CLI submits itself when a background task ends (2.1.332), not the user's.
_TASK_NOTIFICATION = "<task-notification>"
_SWITCH_SOURCES = frozenset({"startup", "resume", "clear"})
_KEEP_ID_END_REASONS = frozenset({"clear", "resume"})

#: What a PID-file status decides, and what the same decision is called at a hub's restart.
_PidCause = Literal["pid:busy", "pid:waiting", "pid:idle", "pid:shell"]
_RECOVERED: dict[_PidCause, Cause] = {
    "pid:busy": "recovery:pid:busy",
    "pid:waiting": "recovery:pid:waiting",
    "pid:idle": "recovery:pid:idle",
    "pid:shell": "recovery:pid:shell",
}


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
            _on_hook(step, signal)
        case sig.TranscriptInterrupt():
            _on_interrupt(step, signal)
        case sig.TranscriptUpdate():
            _on_transcript(step, signal)
        case sig.PidFile():
            _on_pid_file(step, signal)
        case sig.ProcessGone():
            _on_process_gone(step, signal)
        case sig.PollTick():
            _on_poll(step, signal)
        case sig.Dismiss():
            _on_dismiss(step, signal)
        case sig.ActionTaken():
            _on_action(step, signal)
        case sig.HubRestart():
            _on_restart(step, signal)
        case sig.Recover():
            _on_recover(step, signal)
        case sig.Locate():
            _on_locate(step, signal)
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


def _track(session: Session, tracking: Tracking) -> Session:
    return session.replace(tracking=tracking)


def _because(session: Session, cause: Cause, event: str | None) -> Session:
    """Record why the session is in its state: the typed cause and the JSON's text."""
    return session.replace(
        source=source_text(cause, event), tracking=session.tracking.replace(cause=cause)
    )


def _move(
    session: Session, state: State, cause: Cause, at: int, event: str | None = None
) -> Session:
    """Set the state (and when/why) if it differs; ``decided_at`` always advances.

    ``event``: the hook's name, when ``cause`` is a hook."""
    t = session.tracking
    decided = max(t.decided_at, at)
    if session.state is state:
        return _track(session, t.replace(decided_at=decided))
    if state is State.BUSY:
        t = t.replace(decided_at=decided, cause=cause, turn_started_at=at)
    elif state is State.NEEDS_INPUT:
        t = t.replace(decided_at=decided, cause=cause, asked_at=at)
    else:
        t = t.replace(decided_at=decided, cause=cause)
    source = source_text(cause, event)
    if t.action is not None:
        # The first state change after an action is the action's doing: say so. The cause
        # stays the signal's (the rules branch on it); only the shown source changes.
        if 0 <= at - t.action_at <= ACTION_WINDOW_MS:
            source = f"action:{t.action}"
        t = t.replace(action=None, action_at=0)
    return session.replace(state=state, state_since=at, source=source, tracking=t)


def _answered_since_asked(t: Tracking) -> bool:
    """The transcript ends with a finished answer written after the last dialog opened: the
    dialog was approved and the turn ran to its end (a denial or Esc ends with a marker)."""
    return (
        t.transcript_end == "clean"
        and 0 < t.asked_at < t.transcript_at
        and t.interrupt_at < t.asked_at
    )


def _turn_ended_quietly(ending: TranscriptEnding | None) -> bool:
    """The transcript says the last busy period was no answer: Esc, /clear, /compact…"""
    return ending in ("interrupt", "meta")


def _project_of(cwd: str | None) -> str | None:
    """The fallback name, for a signal the runtime did not name (it names them all)."""
    if not cwd:
        return None
    return posixpath.basename(cwd.rstrip("/")) or cwd


def _named(s: Session, project: str | None) -> Session:
    """The one naming rule: the project is the runtime's name for the folder (its git root's
    name, else its own: ``system.projects``); the workspace is the tmux session once the
    session is located in one, else the project. So the two never disagree for one folder."""
    if not project:
        return s
    workspace = (s.workspace or project) if s.tmux is not None else project
    return s.replace(project=project, workspace=workspace)


def _retire_others(step: _Builder, keep: str, pid: int | None, pane: str | None, at: int) -> None:
    """End other live sessions of the same Claude process (a /clear or session switch)."""
    for other in step.all():
        if other.session_id == keep or other.ended:
            continue
        same_pid = pid is not None and other.pid == pid
        other_pane = other.tmux.pane if other.tmux is not None else other.tracking.pane
        same_pane = pane is not None and other_pane == pane
        if same_pid or same_pane:
            step.put(_end(other, "retired", at))


def _end(session: Session, cause: Cause, at: int, event: str | None = None) -> Session:
    """The session's process is over: not running, ended; work states fall back to idle."""
    ended = session.replace(
        running=False,
        subagents=0,
        compacting=False,
        current_tool=None,
        tool_summary=None,
        tracking=session.tracking.replace(
            ended=True, gone_checks=0, subagent_ids=(), pid_status=None, waiting_for=None
        ),
    )
    if cause == "retired" or session.state in _WORK_STATES:
        ended = _move(ended, State.IDLE, cause, at, event)
    if ended.state is State.IDLE:
        ended = _because(ended, cause, event)  # why it is idle now: it ended
    return ended


# ------------------------------------------------------------------------------- hooks


def _on_hook(step: _Builder, signal: sig.HookSignal) -> None:
    at = signal.at
    session = step.get(signal.session_id)
    if session is None:
        session = Session(
            session_id=signal.session_id,
            state=State.IDLE,
            state_since=at,
            source=source_text("hook", signal.event_name),
            tracking=Tracking(first_seen=step.now, cause="hook"),
        )
    t = session.tracking
    stale = at < t.decided_at
    t = t.replace(last_hook_at=max(t.last_hook_at, at), active_at=max(t.active_at, at))
    s = session
    if not stale and not isinstance(signal, sig.SessionEnd):
        s = s.replace(running=True)  # a hook is proof of life
        t = t.replace(ended=False, gone_checks=0)
    if signal.pane:
        t = t.replace(pane=signal.pane)
    if signal.entrypoint and t.interactive is None:  # a PID file's entrypoint and kind win
        t = t.replace(interactive=_interactive(signal.entrypoint))
    s = _track(s, t)
    if signal.cwd:
        s = s.replace(cwd=signal.cwd)
    if signal.transcript_path:
        s = s.replace(transcript_path=signal.transcript_path)
    s = _named(s, signal.project or _project_of(signal.cwd))
    if signal.pid is not None:
        s = s.replace(pid=signal.pid)
    if signal.permission_mode and not stale:
        s = s.replace(permission_mode=signal.permission_mode)

    # A hook that happened before what we already know may only move order-free counters.
    s = _apply_counters(s, signal) if stale else _apply_hook(step, s, signal)
    step.put(s)
    step.notify(s, signal.live)


def _interactive(entrypoint: str | None, kind: str | None = None) -> bool | None:
    """Who sits at the session, from a PID file's ``entrypoint`` and ``kind`` or a hook's
    ``CLAUDE_CODE_ENTRYPOINT``: False for ``claude -p`` and SDK runs (``sdk-*``) and daemons;
    None when neither is known."""
    if entrypoint is None and kind is None:
        return None
    return not ((entrypoint or "").startswith("sdk-") or kind in _NON_INTERACTIVE_KINDS)


def _finished(t: Tracking) -> State:
    """The state a finished turn leaves: review, unless nobody sits at the session (then no
    "finished" notification either: it waits for no one)."""
    return State.IDLE if t.interactive is False else State.REVIEW


def _compaction_over(s: Session) -> Session:
    """Clear the compacting indicator (PostCompact, SessionStart "compact", the turn's end)."""
    if not s.compacting and not s.tracking.compacting_since:
        return s
    return s.replace(compacting=False, tracking=s.tracking.replace(compacting_since=0))


def _apply_counters(s: Session, signal: sig.HookSignal) -> Session:
    # Counted by agent id: compaction fires a SubagentStop that no SubagentStart matched.
    agent = signal.agent_id
    running = s.tracking.subagent_ids
    if isinstance(signal, sig.SubagentStart) and agent and agent not in running:
        ids = (*running, agent)
    elif isinstance(signal, sig.SubagentStop) and agent in running:
        ids = tuple(a for a in running if a != agent)
    else:
        return s
    return s.replace(subagents=len(ids), tracking=s.tracking.replace(subagent_ids=ids))


def _apply_hook(step: _Builder, s: Session, signal: sig.HookSignal) -> Session:
    at = signal.at
    event = signal.event_name
    sub = signal.from_subagent

    if isinstance(signal, sig.SessionStart):
        if signal.model:
            s = s.replace(model=signal.model)
        if signal.source == "compact":  # fired once the compaction is done
            return _compaction_over(s)
        if signal.source not in _SWITCH_SOURCES:  # mid-turn: nothing moves
            return s
        if not sub:
            pane = signal.pane if signal.source in ("clear", "resume") else None
            _retire_others(step, s.session_id, signal.pid or s.pid, pane, at)
        s = s.replace(
            compacting=False,
            subagents=0,
            current_tool=None,
            tool_summary=None,
            error=None,
            background_tasks=(),
            tracking=s.tracking.replace(subagent_ids=()),
        )
        return _move(s, State.IDLE, "hook", at, event)

    if isinstance(signal, sig.UserPromptSubmit) and _woken_by_task(signal.prompt):
        # The CLI woke itself for a finished background task: busy again, but it is not the
        # user's prompt (last_prompt keeps theirs) and no one is notified of a wake-up.
        s = s.replace(
            current_tool=None,
            tool_summary=_task_summary(signal.prompt or ""),
            tracking=s.tracking.replace(tool_at=at),
        )
        return _move(s, State.BUSY, "hook", at, event)

    if isinstance(signal, sig.UserPromptSubmit):
        s = s.replace(
            last_prompt=clip(signal.prompt) or s.last_prompt,
            error=None,
            current_tool=None,
            tool_summary=None,
            tracking=s.tracking.replace(error_detail=None, tool_at=at, prompt_at=at),
        )
        return _move(s, State.BUSY, "hook", at, event)

    if isinstance(signal, sig.PreToolUse):
        if not sub:
            s = s.replace(
                current_tool=signal.tool_name or None,
                tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
                tracking=s.tracking.replace(tool_at=at),
            )
        if s.state in (State.IDLE, State.UNKNOWN):
            return _move(s, State.BUSY, "hook", at, event)
        return s

    if isinstance(signal, sig.PermissionRequest):
        s = s.replace(
            current_tool=signal.tool_name or None,
            tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
            tracking=s.tracking.replace(tool_at=at),
        )
        return _move(s, State.NEEDS_INPUT, "hook", at, event)

    if isinstance(signal, sig.Notification):
        # Old CLIs sent no type: then any Notification meant a dialog. A CLI whose PID file
        # reports statuses types every notification, and says "waiting" itself for a dialog:
        # an untyped one from it is not a dialog.
        untyped_dialog = signal.notification_type is None and s.tracking.pid_status is None
        if untyped_dialog or signal.notification_type in _NEEDS_INPUT_NOTIFICATIONS:
            if s.state is not State.NEEDS_INPUT and signal.message:
                s = _track(s, s.tracking.replace(waiting_for=clip(signal.message)))
            return _move(s, State.NEEDS_INPUT, "hook", at, event)
        return s

    if isinstance(signal, sig.PostToolUse):  # also PostToolUseFailure
        if not sub:
            s = s.replace(
                current_tool=None, tool_summary=None, tracking=s.tracking.replace(tool_at=at)
            )
        if s.state is State.NEEDS_INPUT:
            return _move(s, State.BUSY, "hook", at, event)
        return s

    if isinstance(signal, sig.StopFailure):
        if sub:
            return s
        s = _compaction_over(s)  # a turn's end is past any compaction in it
        s = s.replace(
            error=signal.error or "unknown",
            current_tool=None,
            tool_summary=None,
            subagents=0,
            tracking=s.tracking.replace(
                # the "answer" of a failed turn is the error text: shown as the error
                error_detail=clip(signal.error_details or signal.last_assistant_message),
                tool_at=at,
                subagent_ids=(),
            ),
        )
        return _move(s, _finished(s.tracking), "hook", at, event)

    if isinstance(signal, sig.Stop):
        if sub:  # a sub-agent's end never ends the parent's turn
            return s
        s = _compaction_over(s)  # a turn's end is past any compaction in it
        running = tuple(task for task in signal.background_tasks if task.status == "running")
        t = s.tracking.replace(tool_at=at)
        answer = clip(signal.last_assistant_message)
        if answer:
            s = s.replace(last_assistant=answer)
            t = t.replace(assistant_at=at)
        s = s.replace(current_tool=None, tool_summary=None, background_tasks=running)
        if any(not task.is_shell for task in running):
            # Background agents still work (2.1.332: the PID file stays busy and the CLI says
            # "Waiting for N background agents"): the session does not wait for you yet.
            s = _move(_track(s, t), State.BUSY, "hook", at, event)
            return _because(s, "wait:background-agent", None)
        s = s.replace(subagents=0, tracking=t.replace(subagent_ids=()))
        return _move(s, _finished(t), "hook", at, event)

    if isinstance(signal, sig.PreCompact):
        return s.replace(compacting=True, tracking=s.tracking.replace(compacting_since=at))

    if isinstance(signal, sig.PostCompact):
        return _compaction_over(s)

    if isinstance(signal, sig.SubagentStart | sig.SubagentStop):
        return _apply_counters(s, signal)

    if isinstance(signal, sig.SessionEnd):
        if signal.reason in _KEEP_ID_END_REASONS:  # the id is about to change: nothing moves
            return s
        s = _end(s, "hook", at, event)
        return _move(s, State.IDLE, "hook", at, event)

    return s  # OtherHook: proof of life only


def _woken_by_task(prompt: str | None) -> bool:
    return bool(prompt) and (prompt or "").lstrip().startswith(_TASK_NOTIFICATION)


def _task_summary(prompt: str) -> str:
    """What a ``<task-notification>`` wake-up says: "background agent finished: <summary>"."""
    start, end = prompt.find("<summary>"), prompt.find("</summary>")
    summary = prompt[start + len("<summary>") : end].strip() if 0 <= start < end else ""
    text = f"background agent finished: {summary}" if summary else "background agent finished"
    return clip(text) or ""


# ---------------------------------------------------------------------- transcript


def _on_interrupt(step: _Builder, signal: sig.TranscriptInterrupt) -> None:
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
    if (newer_than_hooks and s.state in _WORK_STATES) or late_marker:
        s = s.replace(current_tool=None, tool_summary=None, tracking=t.replace(tool_at=signal.at))
        s = _move(s, State.IDLE, "transcript:interrupt", max(signal.at, s.state_since))
    else:
        s = _track(s, t)
    step.put(s)


def _on_transcript(step: _Builder, signal: sig.TranscriptUpdate) -> None:
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
        s = _named(s, signal.project or _project_of(signal.cwd))
    if signal.at >= t.tool_at:
        s = s.replace(current_tool=signal.current_tool, tool_summary=signal.tool_summary)
        t = t.replace(tool_at=signal.at)
    s = _track(s, t)
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
    # Without hooks, a dialog whose PID status went straight to idle reads as dismissed; when
    # its busy moment was too short for the watcher (seen: 165 ms) and the answer came after
    # the idle, the answer says it was approved and the turn ran to its end.
    approved_unseen = (
        not t.hooked
        and s.state is State.IDLE
        and t.cause == "pid:idle"
        and s.state_since >= t.asked_at
        and _answered_since_asked(t)
    )
    if (answered or approved_unseen) and _finished(t) is State.REVIEW:
        s = _move(s, State.REVIEW, "transcript:answer", max(signal.at, s.state_since))
    t = s.tracking
    if signal.api_error and signal.at >= t.prompt_at:
        detail = t.error_detail or clip(signal.api_error)
        s = s.replace(error=s.error or "api_error")
        t = t.replace(error_detail=detail)
    elif not signal.api_error and s.error == "api_error":
        s = s.replace(error=None)  # a later answer: the error is over
        t = t.replace(error_detail=None)
    s = _track(s, t.replace(active_at=max(t.active_at, signal.at)))
    step.put(s)
    step.notify(s, signal.live)


# ------------------------------------------------------------------------- PID files


def _pid_target(
    state: State, t: Tracking, status: PidStatus | None
) -> tuple[State, _PidCause] | None:
    """The state a PID-file status implies for a session without hooks (None: no change)."""
    match status:
        case "busy":
            return State.BUSY, "pid:busy"
        case "waiting":
            return State.NEEDS_INPUT, "pid:waiting"
        case "shell":
            return State.IDLE, "pid:shell"
        case "idle" if state is State.NEEDS_INPUT:
            if _answered_since_asked(t):
                return State.REVIEW, "pid:idle"  # approved; its short busy went unseen
            return State.IDLE, "pid:idle"  # the dialog was dismissed (Esc, "No")
        case "idle" if state in (State.BUSY, State.UNKNOWN):
            if _turn_ended_quietly(t.transcript_end):
                return State.IDLE, "pid:idle"
            return _finished(t), "pid:idle"
    return None


def _on_pid_file(step: _Builder, signal: sig.PidFile) -> None:
    rec = signal.record
    at = signal.at
    s = step.get(rec.session_id)
    project = signal.project or _project_of(rec.cwd)
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
    interactive = _interactive(rec.entrypoint, rec.kind)
    if interactive is not None:
        t = t.replace(interactive=interactive)
    _retire_others(step, rec.session_id, rec.pid, None, at)
    s = s.replace(
        pid=rec.pid,
        running=True,
        cwd=s.cwd or rec.cwd,
        tracking=t.replace(ended=False, gone_checks=0, active_at=max(t.active_at, at)),
    )
    s = _named(s, s.project or project)  # a hook's cwd (where it runs now) names it first
    t = s.tracking
    if at >= t.decided_at and rec.status is not None:
        target: tuple[State, _PidCause] | None = None
        if not t.hooked:
            target = _pid_target(s.state, t, rec.status)
        elif rec.status == "waiting":
            target = State.NEEDS_INPUT, "pid:waiting"  # any dialog, hooked or not
        elif s.state is State.NEEDS_INPUT:  # left waiting: answered (busy) or dismissed
            target = (State.BUSY, "pid:busy") if rec.status == "busy" else (State.IDLE, "pid:idle")
        if target is not None:
            state, cause = target
            if state is State.NEEDS_INPUT and s.state is not State.NEEDS_INPUT:
                s = _track(s, t.replace(waiting_for=rec.waiting_for))
            if state is not State.NEEDS_INPUT and s.state is State.NEEDS_INPUT:
                s = _track(s, t.replace(waiting_for=None))
                if state is State.IDLE:  # dismissed: the tool it asked for will not run
                    s = s.replace(
                        current_tool=None,
                        tool_summary=None,
                        tracking=s.tracking.replace(tool_at=at),
                    )
            s = _move(s, state, cause, at)
    t = s.tracking
    if at >= t.decided_at or t.pid_status is None:
        s = _track(s, t.replace(pid_status=rec.status))
    step.put(s)
    step.notify(s, signal.live)


def _strike(step: _Builder, s: Session, cause: Cause, at: int, *, by_pane: bool = False) -> None:
    """One check found the process dead; the second consecutive one ends the session.
    ``by_pane``: a session with no pid whose tmux pane no longer runs Claude."""
    t = s.tracking
    if (s.pid is None and not by_pane) or t.ended:
        return  # never identified: only the 10-minute rule (or its pane) may idle it
    if step.now - t.first_seen < BOOT_WINDOW_MS:
        return
    checks = t.gone_checks + 1
    if checks < GONE_CONFIRMATIONS:
        step.put(_track(s, t.replace(gone_checks=checks)))
        return
    step.put(_end(s, cause, at))


def _on_process_gone(step: _Builder, signal: sig.ProcessGone) -> None:
    s = step.get(signal.session_id)
    if s is None or s.pid != signal.pid:
        return
    _strike(step, s, "process:gone", signal.at)


def _on_poll(step: _Builder, signal: sig.PollTick) -> None:
    now = step.now
    for s in step.all():
        alive = signal.alive.get(s.session_id)
        if alive is False:
            _strike(step, s, "process:gone", now)
        elif s.pid is None and s.session_id in signal.exited:
            _strike(step, s, "process:gone", now, by_pane=True)
        elif (alive is True or s.pid is None) and s.tracking.gone_checks:
            step.put(_track(s, s.tracking.replace(gone_checks=0)))  # seen again: not gone
        s = step.get(s.session_id) or s
        quiet_for = now - max(s.state_since, s.tracking.active_at)
        if s.state is State.BUSY and alive is not True and quiet_for > STALE_BUSY_MS:
            step.put(_move(s, State.IDLE, "poll:stale-busy", now))
        elif s.state is State.UNKNOWN and now - s.state_since > UNKNOWN_TIMEOUT_MS:
            step.put(_move(s, State.IDLE, "poll:unknown-timeout", now))
        s = step.get(s.session_id) or s
        if s.compacting and now - s.tracking.compacting_since > COMPACTING_TIMEOUT_MS:
            step.put(s.replace(compacting=False, tracking=s.tracking.replace(compacting_since=0)))


# ------------------------------------------------------------------- user and restart


def _on_dismiss(step: _Builder, signal: sig.Dismiss) -> None:
    s = step.get(signal.session_id)
    if s is not None and s.state is State.REVIEW:
        step.put(_move(s, State.IDLE, "user:dismiss", max(signal.at, s.tracking.decided_at)))


def _on_action(step: _Builder, signal: sig.ActionTaken) -> None:
    s = step.get(signal.session_id)
    if s is not None and not s.ended:
        step.put(_track(s, s.tracking.replace(action=signal.action, action_at=signal.at)))


def _on_restart(step: _Builder, signal: sig.HubRestart) -> None:
    for s in signal.sessions:
        if s.state is State.BUSY:
            s = _because(s.replace(state=State.UNKNOWN, state_since=signal.at), "restart", None)
        step.put(_track(s, s.tracking.replace(gone_checks=0, first_seen=step.now)))


def _on_recover(step: _Builder, signal: sig.Recover) -> None:
    s = step.get(signal.session_id)
    if s is None or s.state is not State.UNKNOWN:
        return  # already decided (by a replayed hook), or nothing to verify
    if signal.process_running is False:
        step.put(_end(s, "recovery:process-gone", signal.at))
        return
    if signal.pid_status is not None:
        s = _track(s, s.tracking.replace(pid_status=signal.pid_status))
        told = s.tracking.replace(transcript_end=signal.transcript_ending)
        target = _pid_target(s.state, told, signal.pid_status)
        if target is not None:
            step.put(_move(s, target[0], _RECOVERED[target[1]], signal.at))
            return
    match signal.transcript_ending:
        case "clean":
            step.put(_move(s, State.REVIEW, "recovery:transcript", signal.at))
        # An Esc marker, or a harness record (/clear, /compact): nothing is in flight.
        case "interrupt":
            step.put(_move(s, State.IDLE, "recovery:interrupt", signal.at))
        case "meta":
            step.put(_move(s, State.IDLE, "recovery:meta", signal.at))


def _on_locate(step: _Builder, signal: sig.Locate) -> None:
    s = step.get(signal.session_id)
    if s is None:
        return
    s = s.replace(tmux=signal.tmux, ports=tuple(signal.ports))
    workspace = signal.workspace or (signal.tmux.session if signal.tmux else None) or s.project
    if workspace:
        s = s.replace(workspace=workspace)
    if signal.pid is not None and s.pid is None:
        s = s.replace(pid=signal.pid)
    if s.cwd is None and signal.cwd:  # the pane's folder: a fallback, never over a signal's
        s = s.replace(cwd=signal.cwd)
        if not s.project:
            s = _named(s, signal.project or _project_of(signal.cwd))
    step.put(s)
