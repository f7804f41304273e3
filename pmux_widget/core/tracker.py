"""The tracker: a pure reducer from (sessions, signal, now) to (new sessions, changes).

Every state rule of pmux-widget lives here and nowhere else. No I/O, no clock (``now`` is
passed in, signals carry their own event time), no threads, no globals; the input mapping and
its sessions are never modified, so old snapshots stay valid.

Ordering: signals reach the hub by different paths (HTTP, file watchers, polls) and can
overtake each other. Each session keeps ``decided_at``, the event time of the newest signal
that decided its state; a signal that happened earlier than that may not change the state.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import signals as sig
from .model import Change, Notification, Session, State, clip
from .summaries import summarize_tool

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

Fleet = Mapping[str, Session]

_WORK_STATES = frozenset({State.BUSY, State.NEEDS_INPUT, State.UNKNOWN})
_NEEDS_INPUT_NOTIFICATIONS = frozenset({"permission_prompt", "worker_permission_prompt"})
_SWITCH_SOURCES = frozenset({"startup", "resume", "clear"})
_KEEP_ID_END_REASONS = frozenset({"clear", "resume"})


@dataclass(frozen=True, slots=True)
class Step:
    """The result of one signal: the new fleet and what changed in it, in order."""

    sessions: dict[str, Session]
    changes: list[Change]


def reduce(sessions: Fleet, signal: sig.Signal, now: int) -> Step:
    """Apply one signal at time ``now`` (ms epoch). ``sessions`` is left untouched."""
    step = _Builder(sessions, now)
    handler = _HANDLERS.get(type(signal))
    if handler is None:
        for cls in type(signal).__mro__:
            handler = _HANDLERS.get(cls)
            if handler:
                break
    if handler is not None:
        handler(step, signal)
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
    name = session.name
    if session.state is State.NEEDS_INPUT:
        asked = session.tool_summary or session.current_tool or session.waiting_for
        body = f"Waiting for you: {asked}" if asked else "Waiting for your answer"
        title = f"{name} needs your input"
    elif session.error:
        title = f"{name} stopped: {session.error}"
        body = session.error_detail or session.last_assistant or "The turn ended with an error"
    else:
        title = f"{name} finished"
        body = session.last_assistant or "Ready for review"
    return Notification(session.session_id, session.state, title, body, session.state_since)


def _move(session: Session, state: State, source: str, at: int) -> Session:
    """Set the state (and when/why) if it differs; ``decided_at`` always advances."""
    decided = max(session.decided_at, at)
    if session.state is state:
        return session.replace(decided_at=decided)
    moved = session.replace(state=state, state_since=at, source=source, decided_at=decided)
    if state is State.BUSY:
        moved = moved.replace(turn_started_at=at)
    elif state is State.NEEDS_INPUT:
        moved = moved.replace(asked_at=at)
    return moved


def _answered_since_asked(session: Session) -> bool:
    """The transcript ends with a finished answer written after the last dialog opened: the
    dialog was approved and the turn ran to its end (a denial or Esc ends with a marker)."""
    return (
        session.transcript_end == "clean"
        and 0 < session.asked_at < session.transcript_at
        and session.interrupt_at < session.asked_at
    )


def _turn_ended_quietly(session: Session) -> bool:
    """The transcript says the last busy period was no answer: Esc, /clear, /compact…"""
    return session.transcript_end in ("interrupt", "meta")


def _project_of(cwd: str | None) -> str | None:
    if not cwd:
        return None
    return posixpath.basename(cwd.rstrip("/")) or cwd


def _retire_others(step: _Builder, keep: str, pid: int | None, pane: str | None, at: int) -> None:
    """End other live sessions of the same Claude process (a /clear or session switch)."""
    for other in step.all():
        if other.session_id == keep or other.ended:
            continue
        same_pid = pid is not None and other.pid == pid
        other_pane = other.tmux.pane if other.tmux is not None else other.pane
        same_pane = pane is not None and other_pane == pane
        if same_pid or same_pane:
            step.put(_end(other, "retired", at))


def _end(session: Session, source: str, at: int) -> Session:
    """The session's process is over: not running, ended; work states fall back to idle."""
    ended = session.replace(
        running=False,
        ended=True,
        gone_checks=0,
        subagents=0,
        subagent_ids=(),
        compacting=False,
        current_tool=None,
        tool_summary=None,
        pid_status=None,
        waiting_for=None,
    )
    if source == "retired" or session.state in _WORK_STATES:
        ended = _move(ended, State.IDLE, source, at)
    if ended.state is State.IDLE:
        ended = ended.replace(source=source)  # why it is idle now: it ended
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
            first_seen=step.now,
            source=f"hook:{sig.event_name(signal)}",
        )
    stale = at < session.decided_at
    s = session.replace(
        last_hook_at=max(session.last_hook_at, at),
        active_at=max(session.active_at, at),
    )
    if not stale and not isinstance(signal, sig.SessionEnd):
        s = s.replace(running=True, ended=False, gone_checks=0)  # a hook is proof of life
    if signal.cwd:
        s = s.replace(cwd=signal.cwd)
    if signal.transcript_path:
        s = s.replace(transcript_path=signal.transcript_path)
    project = signal.project or _project_of(signal.cwd)
    if project:
        s = s.replace(project=project, workspace=s.workspace or project)
    if signal.pid is not None:
        s = s.replace(pid=signal.pid)
    if signal.pane:
        s = s.replace(pane=signal.pane)

    # A hook that happened before what we already know may only move order-free counters.
    s = _apply_counters(s, signal) if stale else _apply_hook(step, s, signal)
    step.put(s)
    step.notify(s, signal.live)


def _apply_counters(s: Session, signal: sig.HookSignal) -> Session:
    # Counted by agent id: compaction fires a SubagentStop that no SubagentStart matched.
    agent = signal.agent_id
    if isinstance(signal, sig.SubagentStart) and agent and agent not in s.subagent_ids:
        ids = (*s.subagent_ids, agent)
        return s.replace(subagent_ids=ids, subagents=len(ids))
    if isinstance(signal, sig.SubagentStop) and agent in s.subagent_ids:
        ids = tuple(a for a in s.subagent_ids if a != agent)
        return s.replace(subagent_ids=ids, subagents=len(ids))
    return s


def _apply_hook(step: _Builder, s: Session, signal: sig.HookSignal) -> Session:
    at = signal.at
    source = f"hook:{sig.event_name(signal)}"
    sub = signal.from_subagent

    if isinstance(signal, sig.SessionStart):
        if signal.model:
            s = s.replace(model=signal.model)
        if signal.source not in _SWITCH_SOURCES:  # "compact": mid-turn, nothing moves
            return s
        if not sub:
            pane = signal.pane if signal.source in ("clear", "resume") else None
            _retire_others(step, s.session_id, signal.pid or s.pid, pane, at)
        s = s.replace(
            compacting=False,
            subagents=0,
            subagent_ids=(),
            current_tool=None,
            tool_summary=None,
            error=None,
        )
        return _move(s, State.IDLE, source, at)

    if isinstance(signal, sig.UserPromptSubmit):
        s = s.replace(
            last_prompt=clip(signal.prompt) or s.last_prompt,
            error=None,
            error_detail=None,
            current_tool=None,
            tool_summary=None,
            tool_at=at,
            prompt_at=at,
        )
        return _move(s, State.BUSY, source, at)

    if isinstance(signal, sig.PreToolUse):
        if not sub:
            s = s.replace(
                current_tool=signal.tool_name or None,
                tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
                tool_at=at,
            )
        if s.state in (State.IDLE, State.UNKNOWN):
            return _move(s, State.BUSY, source, at)
        return s

    if isinstance(signal, sig.PermissionRequest):
        s = s.replace(
            current_tool=signal.tool_name or None,
            tool_summary=summarize_tool(signal.tool_name, signal.tool_input),
            tool_at=at,
        )
        return _move(s, State.NEEDS_INPUT, source, at)

    if isinstance(signal, sig.Notification):
        if signal.notification_type is None or signal.notification_type in (
            _NEEDS_INPUT_NOTIFICATIONS
        ):
            if s.state is not State.NEEDS_INPUT and signal.message:
                s = s.replace(waiting_for=clip(signal.message))
            return _move(s, State.NEEDS_INPUT, source, at)
        return s

    if isinstance(signal, sig.PostToolUse):  # also PostToolUseFailure
        if not sub:
            s = s.replace(current_tool=None, tool_summary=None, tool_at=at)
        if s.state is State.NEEDS_INPUT:
            return _move(s, State.BUSY, source, at)
        return s

    if isinstance(signal, sig.StopFailure):
        if sub:
            return s
        s = s.replace(
            error=signal.error or "unknown",
            # the "answer" of a failed turn is the error text: shown as the error, not a reply
            error_detail=clip(signal.error_details or signal.last_assistant_message),
            current_tool=None,
            tool_summary=None,
            tool_at=at,
            subagents=0,
            subagent_ids=(),
        )
        return _move(s, State.REVIEW, source, at)

    if isinstance(signal, sig.Stop):
        if sub:  # a sub-agent's end never ends the parent's turn
            return s
        answer = clip(signal.last_assistant_message)
        if answer:
            s = s.replace(last_assistant=answer, assistant_at=at)
        s = s.replace(
            current_tool=None,
            tool_summary=None,
            tool_at=at,
            subagents=0,
            subagent_ids=(),
        )
        return _move(s, State.REVIEW, source, at)

    if isinstance(signal, sig.PreCompact):
        return s.replace(compacting=True, compacting_since=at)

    if isinstance(signal, sig.PostCompact):
        return s.replace(compacting=False, compacting_since=0)

    if isinstance(signal, sig.SubagentStart | sig.SubagentStop):
        return _apply_counters(s, signal)

    if isinstance(signal, sig.SessionEnd):
        if signal.reason in _KEEP_ID_END_REASONS:  # the id is about to change: nothing moves
            return s
        s = _end(s, source, at)
        return _move(s, State.IDLE, source, at)

    return s  # OtherHook: proof of life only


# ---------------------------------------------------------------------- transcript


def _on_interrupt(step: _Builder, signal: sig.TranscriptInterrupt) -> None:
    s = step.get(signal.session_id)
    if s is None or signal.at <= s.interrupt_at:
        return  # unknown session, or this marker (or a newer one) was already acted upon
    s = s.replace(interrupt_at=signal.at, transcript_end="interrupt")
    newer_than_hooks = signal.at >= s.last_hook_at and signal.at >= s.decided_at
    # The PID file turns idle 85-185 ms before the marker is flushed (measured): a review
    # that only the PID file decided, for the turn this marker ends, was really an Esc.
    late_marker = (
        s.state is State.REVIEW
        and s.source == "pid:idle"
        and not s.hooked
        and signal.at >= s.turn_started_at
    )
    if (newer_than_hooks and s.state in _WORK_STATES) or late_marker:
        s = s.replace(current_tool=None, tool_summary=None, tool_at=signal.at)
        s = _move(s, State.IDLE, "transcript:interrupt", max(signal.at, s.state_since))
    step.put(s)


def _on_transcript(step: _Builder, signal: sig.TranscriptUpdate) -> None:
    s = step.get(signal.session_id)
    if s is None:
        return
    # The Stop hook's answer and UserPromptSubmit's prompt often come before their records
    # are flushed (measured: up to 185 ms): an update from an older moment keeps them.
    if signal.at >= s.assistant_at and clip(signal.last_assistant):
        s = s.replace(last_assistant=clip(signal.last_assistant))
    if signal.at >= s.prompt_at and clip(signal.last_prompt):
        s = s.replace(last_prompt=clip(signal.last_prompt))
    s = s.replace(
        model=signal.model or s.model,
        tokens=signal.tokens,
        context_tokens=signal.context_tokens,
        transcript_end=signal.ending,
        transcript_at=max(s.transcript_at, signal.at),
        transcript_path=s.transcript_path or signal.transcript_path,
        cwd=s.cwd or signal.cwd,
    )
    if not s.project and signal.cwd:
        s = s.replace(project=_project_of(signal.cwd), workspace=s.workspace or s.project)
    if signal.at >= s.tool_at:
        s = s.replace(
            current_tool=signal.current_tool, tool_summary=signal.tool_summary, tool_at=signal.at
        )
    # Without hooks, a finished answer the PID file never reported (the CLI sometimes writes
    # no status at all for a fast turn): review, if written after we first saw the session.
    answered = (
        signal.ending == "clean"
        and not s.hooked
        and signal.at > s.decided_at
        and signal.at > s.first_seen
        # busy: the PID file reports the end itself (and a queued prompt may go on at once)
        and s.state in (State.IDLE, State.UNKNOWN)
    )
    # Without hooks, a dialog whose PID status went straight to idle reads as dismissed; when
    # its busy moment was too short for the watcher (seen: 165 ms) and the answer came after
    # the idle, the answer says it was approved and the turn ran to its end.
    approved_unseen = (
        not s.hooked
        and s.state is State.IDLE
        and s.source == "pid:idle"
        and s.state_since >= s.asked_at
        and _answered_since_asked(s)
    )
    if answered or approved_unseen:
        s = _move(s, State.REVIEW, "transcript:answer", max(signal.at, s.state_since))
    if signal.api_error and signal.at >= s.prompt_at:
        detail = s.error_detail or clip(signal.api_error)
        s = s.replace(error=s.error or "api_error", error_detail=detail)
    elif not signal.api_error and s.error == "api_error":
        s = s.replace(error=None, error_detail=None)  # a later answer: the error is over
    s = s.replace(active_at=max(s.active_at, signal.at))
    step.put(s)
    step.notify(s, signal.live)


# ------------------------------------------------------------------------- PID files


def _pid_target(s: Session, status: str | None) -> tuple[State, str] | None:
    """The state a PID-file status implies for a session without hooks (None: no change)."""
    if status == "busy":
        return State.BUSY, "pid:busy"
    if status == "waiting":
        return State.NEEDS_INPUT, "pid:waiting"
    if status == "shell":
        return State.IDLE, "pid:shell"
    if status == "idle":
        if s.state is State.NEEDS_INPUT:
            if _answered_since_asked(s):
                return State.REVIEW, "pid:idle"  # approved; its short busy went unseen
            return State.IDLE, "pid:idle"  # the dialog was dismissed (Esc, "No")
        if s.state in (State.BUSY, State.UNKNOWN):
            if _turn_ended_quietly(s):
                return State.IDLE, "pid:idle"
            return State.REVIEW, "pid:idle"
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
            first_seen=step.now,
            source="pid:found",
            cwd=rec.cwd,
            project=project,
            workspace=project,
        )
    # /clear or a resume: the PID file names the new id before its SessionStart hook comes.
    # A process whose earlier session sent hooks will send them for this one too.
    inherits_hooks = any(
        o.pid == rec.pid and o.session_id != rec.session_id and o.hooked for o in step.all()
    )
    if inherits_hooks and not s.hooked:
        s = s.replace(process_hooked=True)
    _retire_others(step, rec.session_id, rec.pid, None, at)
    s = s.replace(
        pid=rec.pid,
        running=True,
        ended=False,
        gone_checks=0,
        cwd=s.cwd or rec.cwd,
        project=s.project or project,
        workspace=s.workspace or project,
    )
    s = s.replace(active_at=max(s.active_at, at))
    if at >= s.decided_at and rec.status is not None:
        target = None
        if not s.hooked:
            target = _pid_target(s, rec.status)
        elif rec.status == "waiting":
            target = State.NEEDS_INPUT, "pid:waiting"  # any dialog, hooked or not
        elif s.state is State.NEEDS_INPUT:  # left waiting: answered (busy) or dismissed
            target = (State.BUSY, "pid:busy") if rec.status == "busy" else (State.IDLE, "pid:idle")
        if target is not None:
            state, source = target
            if state is State.NEEDS_INPUT and s.state is not State.NEEDS_INPUT:
                s = s.replace(waiting_for=rec.waiting_for)
            if state is not State.NEEDS_INPUT and s.state is State.NEEDS_INPUT:
                s = s.replace(waiting_for=None)
                if state is State.IDLE:  # dismissed: the tool it asked for will not run
                    s = s.replace(current_tool=None, tool_summary=None, tool_at=at)
            s = _move(s, state, source, at)
    if at >= s.decided_at or s.pid_status is None:
        s = s.replace(pid_status=rec.status)
    step.put(s)
    step.notify(s, signal.live)


def _strike(step: _Builder, s: Session, source: str, at: int) -> None:
    """One check found the process dead; the second consecutive one ends the session."""
    if s.pid is None or s.ended:
        return  # never identified: only the 10-minute rule may idle it
    started = s.first_seen
    if step.now - started < BOOT_WINDOW_MS:
        return
    checks = s.gone_checks + 1
    if checks < GONE_CONFIRMATIONS:
        step.put(s.replace(gone_checks=checks))
        return
    step.put(_end(s, source, at))


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
        elif alive is True and s.gone_checks:
            step.put(s.replace(gone_checks=0))
        s = step.get(s.session_id) or s
        quiet_for = now - max(s.state_since, s.active_at)
        if s.state is State.BUSY and alive is not True and quiet_for > STALE_BUSY_MS:
            step.put(_move(s, State.IDLE, "poll:stale-busy", now))
        elif s.state is State.UNKNOWN and now - s.state_since > UNKNOWN_TIMEOUT_MS:
            step.put(_move(s, State.IDLE, "poll:unknown-timeout", now))
        s = step.get(s.session_id) or s
        if s.compacting and now - s.compacting_since > COMPACTING_TIMEOUT_MS:
            step.put(s.replace(compacting=False, compacting_since=0))


# ------------------------------------------------------------------- user and restart


def _on_dismiss(step: _Builder, signal: sig.Dismiss) -> None:
    s = step.get(signal.session_id)
    if s is not None and s.state is State.REVIEW:
        step.put(_move(s, State.IDLE, "user:dismiss", max(signal.at, s.decided_at)))


def _on_restart(step: _Builder, signal: sig.HubRestart) -> None:
    for s in signal.sessions:
        if s.state is State.BUSY:
            s = s.replace(state=State.UNKNOWN, state_since=signal.at, source="restart")
        step.put(s.replace(gone_checks=0, first_seen=step.now))


def _on_recover(step: _Builder, signal: sig.Recover) -> None:
    s = step.get(signal.session_id)
    if s is None or s.state is not State.UNKNOWN:
        return  # already decided (by a replayed hook), or nothing to verify
    if signal.process_running is False:
        step.put(_end(s, "recovery:process-gone", signal.at))
        return
    if signal.pid_status is not None:
        s = s.replace(pid_status=signal.pid_status)
        target = _pid_target(s.replace(transcript_end=signal.transcript_ending), signal.pid_status)
        if target is not None:
            step.put(_move(s, target[0], "recovery:" + target[1], signal.at))
            return
    if signal.transcript_ending == "clean":
        step.put(_move(s, State.REVIEW, "recovery:transcript", signal.at))
    elif signal.transcript_ending in ("interrupt", "meta"):
        # An Esc marker, or a harness record (/clear, /compact): nothing is in flight.
        step.put(_move(s, State.IDLE, "recovery:" + signal.transcript_ending, signal.at))


def _on_locate(step: _Builder, signal: sig.Locate) -> None:
    s = step.get(signal.session_id)
    if s is None:
        return
    s = s.replace(tmux=signal.tmux, ports=tuple(signal.ports))
    workspace = signal.workspace or (signal.tmux.session if signal.tmux else None)
    if workspace:
        s = s.replace(workspace=workspace)
    if signal.pid is not None and s.pid is None:
        s = s.replace(pid=signal.pid)
    step.put(s)


_HANDLERS: dict[type, Callable[[_Builder, object], None]] = {
    sig.HookSignal: _on_hook,  # type: ignore[dict-item]
    sig.TranscriptInterrupt: _on_interrupt,  # type: ignore[dict-item]
    sig.TranscriptUpdate: _on_transcript,  # type: ignore[dict-item]
    sig.PidFile: _on_pid_file,  # type: ignore[dict-item]
    sig.ProcessGone: _on_process_gone,  # type: ignore[dict-item]
    sig.PollTick: _on_poll,  # type: ignore[dict-item]
    sig.Dismiss: _on_dismiss,  # type: ignore[dict-item]
    sig.HubRestart: _on_restart,  # type: ignore[dict-item]
    sig.Recover: _on_recover,  # type: ignore[dict-item]
    sig.Locate: _on_locate,  # type: ignore[dict-item]
}
