"""The rules of Claude Code's own background sessions (``claude --bg``, ``/background``, the
agent view ``claude agents``): who is one, where it is not, and how it stops and goes.

A background session is its worker's PID file (``kind: "bg"``, ``jobId``, ``name``): it is
never in a tmux pane or a terminal, whatever ``TMUX_PANE`` its hooks carry (the daemon that
runs it inherited the pane of whatever started it). Never a session: a pre-warmed spare
worker, and the agent view, whose ``agent_needs_input`` / ``agent_completed`` notifications
come under the VIEW's session id. A stopped or killed worker stops running but stays a row
(``claude agents`` still lists it, and the daemon may respawn it); ``claude rm`` ends it.
"""

from __future__ import annotations

from . import signals as sig
from .model import Background, Cause, Session, State, source_text
from .transitions import WORK_STATES, StepEdits, because, end, move, track

__all__ = [
    "AGENT_VIEW_NOTIFICATIONS",
    "adopt",
    "boot_record",
    "from_agent_view",
    "keeps_its_status",
    "on_background_gone",
    "respawned_status",
    "stop",
    "unspare",
]

#: What an agent view fires (under its own session id) for the sessions it lists.
AGENT_VIEW_NOTIFICATIONS = frozenset({"agent_needs_input", "agent_completed"})
#: PID statuses of a worker at work (a respawned one reports them before its hooks arrive).
_AT_WORK = frozenset({"busy", "waiting"})
_STARTED = source_text("hook", "SessionStart")


def from_agent_view(known: Session | None, signal: sig.HookSignal) -> bool:
    """A hook that must not create or change a row: an agent view's notification about a
    background session (the session it names has its own hooks and PID file). A session's
    own ``agent_needs_input`` (auto mode's "can't check" dialog, 2.1.332) comes from a
    session already known by its earlier hooks; the view's never from a known one."""
    if not isinstance(signal, sig.Notification):
        return False
    if signal.notification_type not in AGENT_VIEW_NOTIFICATIONS:
        return False
    if known is None or known.tracking.spare:
        return True
    # known only from notifications of this kind: a view that named itself before this rule
    t = known.tracking
    return not (t.pid_status or t.prompt_at or known.background or known.transcript_path)


def adopt(s: Session, background: Background) -> Session:
    """The session runs in the background: its job and name; no pane, no terminal."""
    if s.background == background and s.tmux is None and s.terminal is None:
        return s if s.tracking.pane is None else track(s, s.tracking.replace(pane=None))
    return s.replace(
        background=background, tmux=None, terminal=None, tracking=s.tracking.replace(pane=None)
    )


def stop(s: Session, cause: Cause, at: int, event: str | None = None) -> Session:
    """A background session's worker stopped (``claude stop``) or died (kill -9): not
    running, work states fall back to idle; it stays a row until its job is removed."""
    stopped = s.replace(
        running=False,
        subagents=0,
        compacting=False,
        current_tool=None,
        tool_summary=None,
        tracking=s.tracking.replace(
            gone_checks=0, subagent_ids=(), pid_status=None, waiting_for=None
        ),
    )
    if s.state in WORK_STATES:
        stopped = move(stopped, State.IDLE, cause, at, event)
    if stopped.state is State.IDLE:
        stopped = because(stopped, cause, event)
    return stopped


def boot_record(step: StepEdits, record: sig.PidRecord) -> bool:
    """A respawned worker's first PID file (2.1.197, after kill -9): the daemon runs
    ``claude --resume <transcript>``, whose PID file names a fresh session id with no status
    for ~0.4 s before the resume makes it the job's. Never a row, never retires the job's
    row (a rescan can read it before, and apply it after, the job's later records): the
    job's session, still a row, is the user's (``claude agents``, ``jobs/<job>/state.json``).
    With a status it is the job's session now (as after a ``/clear`` in it)."""
    background = record.background
    if background is None or record.status is not None or step.get(record.session_id):
        return False
    return any(
        o.background is not None and o.background.job == background.job and not o.ended
        for o in step.all()
        if o.session_id != record.session_id
    )


def respawned_status(s: Session, record: sig.PidRecord) -> bool:
    """A respawned worker's PID status decides, however its time compares with the row's
    last decision (kill -9: the daemon runs the session again in a new process). That
    decision is the old process's stop, stamped when the hub FOUND the death (the pidfd, the
    liveness loop, a poll: it can come after the new process wrote ``busy``), or the new
    process's ``SessionStart``, stamped when its hook script sent it (after the CLI may have
    written ``busy``). Neither says what the new process does; its own record does."""
    if s.background is None or s.state is not State.IDLE or record.status not in _AT_WORK:
        return False
    stopped = s.tracking.cause == "background:stopped"
    if not s.running:  # stopped by the death of another process than the record's
        return stopped and record.pid != s.pid
    # running again since (the new process's hook or first record named its pid)
    return (stopped or s.source == _STARTED) and record.pid == s.pid


def keeps_its_status(before: Session | None, signal: sig.SessionStart) -> bool:
    """A worker's ``SessionStart`` leaves the work its own PID file already reported: sent
    by the hook script, it can reach the hub after the CLI wrote ``busy`` (a respawn)."""
    return (
        before is not None
        and before.background is not None
        and before.pid is not None
        and before.pid == signal.pid
        and before.running
        and before.tracking.pid_status in _AT_WORK
        and before.state in (State.BUSY, State.NEEDS_INPUT)
    )


def unspare(step: StepEdits, signal: sig.PidFile) -> None:
    """A spare's PID file: a row its hooks made before the file was read ends, silently
    (``pid:spare``), and stays ignored; no row is made for it."""
    s = step.get(signal.record.session_id)
    if s is None or s.tracking.spare or s.background is not None or s.tracking.prompt_at:
        return  # nothing shown; or a session with a job or a prompt: no spare has either
    gone = end(s, "pid:spare", signal.at)
    step.put(track(gone, gone.tracking.replace(spare=True)))


def on_background_gone(step: StepEdits, signal: sig.BackgroundGone) -> None:
    s = step.get(signal.session_id)
    if s is None or s.ended or s.background is None or s.background.job != signal.job:
        return
    step.put(end(s, "background:removed", signal.at))
