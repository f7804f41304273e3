"""The process rules: a process gone, the periodic poll (stale busy, unknown timeout,
compaction timeout), a hub's restart and recovery, locating a session in tmux, and the
user's dismiss and actions.

Also the timing thresholds these rules use (re-exported by ``tracker``).
"""

from __future__ import annotations

from . import signals as sig
from .model import Cause, Session, State
from .question import question_of
from .rules_background import stop
from .rules_files import PidCause, pid_target
from .summaries import summarize_tool
from .transitions import (
    StepEdits,
    because,
    end,
    move,
    named,
    project_of,
    retire_others,
    track,
)

#: A pane found without Claude within this long of the session's start is not believed (boot
#: window: a Claude being launched is not in its pane's process tree yet). A known pid's exit
#: has no such race and is not held back (kill -9 of a Claude started before the hub, which the
#: window counted from the hub's first sight, stayed running 5 s and more).
BOOT_WINDOW_MS = 5_000
#: Busy this long with no live Claude process found: the poll returns it to idle.
STALE_BUSY_MS = 10 * 60_000
#: Unknown (after a restart) at most this long, then idle.
UNKNOWN_TIMEOUT_MS = 10 * 60_000
#: Compacting without a PostCompact for this long: the indicator clears itself.
COMPACTING_TIMEOUT_MS = 5 * 60_000
#: A process is declared gone after this many consecutive checks found it dead.
GONE_CONFIRMATIONS = 2

#: A PID-file decision, as it is called when it settles a hub's restart (recovery).
_RECOVERED: dict[PidCause, Cause] = {
    "pid:busy": "recovery:pid:busy",
    "pid:waiting": "recovery:pid:waiting",
    "pid:idle": "recovery:pid:idle",
    "pid:shell": "recovery:pid:shell",
}


def _strike(step: StepEdits, s: Session, cause: Cause, at: int, *, by_pane: bool = False) -> None:
    """One check found the process dead; the second consecutive one ends the session.
    ``by_pane``: a session with no pid whose tmux pane no longer runs Claude (not believed
    within the boot window: a launch's pane does not show Claude yet)."""
    t = s.tracking
    if (s.pid is None and not by_pane) or t.ended:
        return  # never identified: only the 10-minute rule (or its pane) may idle it
    if by_pane and step.now - t.first_seen < BOOT_WINDOW_MS:
        return
    if s.background is not None and not s.running:
        return  # stopped already; only the removal of its job ends it
    checks = t.gone_checks + 1
    if checks < GONE_CONFIRMATIONS:
        step.put(track(s, t.replace(gone_checks=checks)))
        return
    step.put(stop(s, "background:stopped", at) if s.background else end(s, cause, at))


def on_process_gone(step: StepEdits, signal: sig.ProcessGone) -> None:
    """The session's process was found gone. A session no pid identified yet (known from
    hooks whose process had exited when they were replayed) takes the pid its own PID file
    names: the CLI wrote that file, and its process is the one found gone."""
    s = step.get(signal.session_id)
    if s is None or s.ended:
        return
    if s.pid is None:
        s = s.replace(pid=signal.pid)
    elif s.pid != signal.pid:
        return
    _strike(step, s, "process:gone", signal.at)


def on_poll(step: StepEdits, signal: sig.PollTick) -> None:
    now = step.now
    for s in step.all():
        alive = signal.alive.get(s.session_id)
        checked = signal.pids.get(s.session_id)
        if checked is not None and checked != s.pid:
            alive = None  # about the process it ran before (a respawned worker's dead one)
        if alive is False:
            _strike(step, s, "process:gone", now)
        elif s.pid is None and s.session_id in signal.exited:
            _strike(step, s, "process:gone", now, by_pane=True)
        elif (alive is True or s.pid is None) and s.tracking.gone_checks:
            step.put(track(s, s.tracking.replace(gone_checks=0)))  # seen again: not gone
        s = step.get(s.session_id) or s
        quiet_for = now - max(s.state_since, s.tracking.active_at)
        if s.state is State.BUSY and alive is not True and quiet_for > STALE_BUSY_MS:
            step.put(move(s, State.IDLE, "poll:stale-busy", now))
        elif s.state is State.UNKNOWN and now - s.state_since > UNKNOWN_TIMEOUT_MS:
            step.put(move(s, State.IDLE, "poll:unknown-timeout", now))
        s = step.get(s.session_id) or s
        if s.compacting and now - s.tracking.compacting_since > COMPACTING_TIMEOUT_MS:
            step.put(s.replace(compacting=False, tracking=s.tracking.replace(compacting_since=0)))


def on_dismiss(step: StepEdits, signal: sig.Dismiss) -> None:
    s = step.get(signal.session_id)
    if s is not None and s.state is State.REVIEW:
        step.put(move(s, State.IDLE, "user:dismiss", max(signal.at, s.tracking.decided_at)))


def on_seen(step: StepEdits, signal: sig.Seen) -> None:
    """Looking ends a review ("finished, not looked at yet"). A look older than the review
    (a check made before the turn finished, applied after) saw the work, not its end."""
    s = step.get(signal.session_id)
    if s is not None and s.state is State.REVIEW and not s.ended and signal.at >= s.state_since:
        step.put(move(s, State.IDLE, "user:seen", max(signal.at, s.tracking.decided_at)))


def on_action(step: StepEdits, signal: sig.ActionTaken) -> None:
    s = step.get(signal.session_id)
    if s is not None and not s.ended:
        step.put(
            track(
                s,
                s.tracking.replace(
                    action=signal.action, action_at=signal.at, action_origin=signal.origin
                ),
            )
        )


def on_restart(step: StepEdits, signal: sig.HubRestart) -> None:
    for s in signal.sessions:
        if s.state is State.BUSY:
            s = because(s.replace(state=State.UNKNOWN, state_since=signal.at), "restart", None)
        step.put(track(s, s.tracking.replace(gone_checks=0, first_seen=step.now)))


def on_recover(step: StepEdits, signal: sig.Recover) -> None:
    s = step.get(signal.session_id)
    if s is None or s.state is not State.UNKNOWN:
        return  # already decided (by a replayed hook), or nothing to verify
    if signal.process_running is False:
        if s.background is not None:
            step.put(stop(s, "background:stopped", signal.at))
        else:
            step.put(end(s, "recovery:process-gone", signal.at))
        return
    if signal.pid_status is not None:
        s = track(s, s.tracking.replace(pid_status=signal.pid_status))
        told = s.tracking.replace(transcript_end=signal.transcript_ending)
        target = pid_target(s.state, told, signal.pid_status)
        if target is not None:
            step.put(move(s, target[0], _RECOVERED[target[1]], signal.at))
            return
    match signal.transcript_ending:
        case "clean":
            step.put(move(s, State.REVIEW, "recovery:transcript", signal.at))
        # An Esc marker, or a harness record (/clear, /compact): nothing is in flight.
        case "interrupt":
            step.put(move(s, State.IDLE, "recovery:interrupt", signal.at))
        case "meta":
            step.put(move(s, State.IDLE, "recovery:meta", signal.at))


def on_locate(step: StepEdits, signal: sig.Locate) -> None:
    s = step.get(signal.session_id)
    if s is None:
        return
    # a background worker is in no pane, whatever pane its daemon descends from
    tmux = signal.tmux if s.background is None else None
    s = s.replace(tmux=tmux, ports=tuple(signal.ports))
    workspace = signal.workspace or (signal.tmux.session if signal.tmux else None) or s.project
    if workspace:
        s = s.replace(workspace=workspace)
    if signal.pid is not None and s.pid is None:
        s = s.replace(pid=signal.pid)
    if s.cwd is None and signal.cwd:  # the pane's folder: a fallback, never over a signal's
        s = s.replace(cwd=signal.cwd)
        if not s.project:
            s = named(s, signal.project or project_of(signal.cwd))
    step.put(s)


def on_tui_shows(step: StepEdits, signal: sig.TuiShows) -> None:
    """A Codex TUI's screen proves it shows this thread: the row takes the TUI's pid (a pane
    or terminal found for another pid is dropped: the Locator finds the TUI's), and another
    live row of that pid is the thread the TUI moved on from (``/new``, ``/resume``): ended,
    as Claude's ``/clear`` ends the old row ("retired")."""
    s = step.get(signal.session_id)
    if s is None or s.ended or s.agent != "codex":
        return
    if s.pid != signal.pid:
        step.put(s.replace(pid=signal.pid, tmux=None, terminal=None))
    retire_others(step, s.session_id, signal.pid, None, signal.at)


def on_in_terminal(step: StepEdits, signal: sig.InTerminal) -> None:
    s = step.get(signal.session_id)
    # For the process it was matched on: after /clear or a resume another pid (or none) runs
    # the session, and a late answer about the old one must not move it.
    if s is None or s.pid != signal.pid or s.terminal == signal.terminal:
        return
    if s.background is not None and signal.terminal is not None:
        return  # its daemon may descend from a terminal's shell: the worker is not in it
    if s.ended and signal.terminal is not None:
        return
    step.put(s.replace(terminal=signal.terminal))


def on_origin(step: StepEdits, signal: sig.Origin) -> None:
    """Where an Agent SDK run comes from (the row names its notebook or program)."""
    s = step.get(signal.session_id)
    if s is None:
        return
    t = s.tracking.replace(
        program=signal.program, kernel_id=signal.kernel_id, notebook=signal.notebook
    )
    if t != s.tracking:
        step.put(track(s, t))


def on_handler_waits(step: StepEdits, signal: sig.HandlerWaits) -> None:
    """A call of an SDK run waits on our handler: needs-input with what it asks, hooks or none
    (with none, the PID file's ``waiting`` says only that something waits). The PID file
    leaving ``waiting`` ends it, as for any dialog."""
    s = step.get(signal.session_id)
    if s is None or s.ended or signal.at < s.tracking.decided_at:
        return
    t = s.tracking
    s = s.replace(
        current_tool=signal.tool_name or s.current_tool,
        tool_summary=summarize_tool(signal.tool_name, dict(signal.tool_input)),
        question=question_of(signal.tool_name, dict(signal.tool_input)),
        tracking=t.replace(tool_at=max(t.tool_at, signal.at)),
    )
    s = move(s, State.NEEDS_INPUT, "sdk:waiting", signal.at)
    step.put(s)
    step.notify(s, signal.live)
