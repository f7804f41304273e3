"""A Codex thread's turn from its rollout (:class:`~.signals.RolloutTurn`): the rows of Codex
sessions whose hooks do not run (not installed, not trusted). The rollout's turn records give
the state as hooks would — ``task_started`` busy, a call waiting on the user needs-input,
``task_complete`` review, ``turn_aborted`` idle — and the TUI that shows the thread its pid.
Once a hook of the session arrives, hooks decide and the rollout only fills in fields
(``rules_files.on_transcript``).
"""

from __future__ import annotations

from . import signals as sig
from .model import Cause, Session, State, Tracking, clip, source_text
from .transitions import StepEdits, move, named, project_of, track

__all__ = ["on_rollout_turn"]

_MOVES: dict[sig.RolloutState, tuple[State, Cause]] = {
    "running": (State.BUSY, "rollout:running"),
    "waiting": (State.NEEDS_INPUT, "rollout:waiting"),
    "complete": (State.REVIEW, "rollout:complete"),
    "aborted": (State.IDLE, "rollout:aborted"),
}


def _resumed(s: Session, signal: sig.RolloutTurn) -> bool:
    """``s`` ended "retired" (its TUI moved on) and ``signal`` is a newer turn of it, placed
    in a TUI (the runtime gives a pid only where the screen shows the thread)."""
    return (
        s.agent == "codex"
        and not s.hooked
        and s.tracking.cause == "retired"
        and signal.pid is not None
        and signal.at > s.state_since
    )


def on_rollout_turn(step: StepEdits, signal: sig.RolloutTurn) -> None:
    s = step.get(signal.session_id)
    if s is None:
        if signal.pid is None:
            return  # a thread no live TUI shows: an old rollout, never a row
        s = Session(
            session_id=signal.session_id,
            agent="codex",
            state=State.IDLE,
            state_since=signal.at,
            running=True,
            pid=signal.pid,
            last_prompt=clip(signal.last_prompt),
            model=signal.model,
            source=source_text(_MOVES[signal.turn][1]),
            tracking=Tracking(first_seen=step.now),
        )
    elif s.ended and _resumed(s, signal):
        # a thread a TUI left (/new) and went back to (/resume): its new turn, in the TUI
        # whose screen shows it, brings the row back there
        s = s.replace(running=True, pid=signal.pid, tmux=None, terminal=None)
        s = track(s, s.tracking.replace(ended=False, gone_checks=0))
    elif s.ended or (s.hooked and s.state is not State.UNKNOWN):
        return  # an ended row stays ended; a hooked one follows its hooks (but after a
        # restart left it unknown: no hook comes until its next event)
    if s.pid is None and signal.pid is not None:
        s = s.replace(pid=signal.pid, running=True)
    s = s.replace(
        transcript_path=s.transcript_path or signal.transcript_path, cwd=s.cwd or signal.cwd
    )
    if not s.project:
        s = named(s, signal.project or project_of(signal.cwd))
    at = signal.at
    if s.state is State.UNKNOWN:
        at = max(at, s.tracking.decided_at)  # re-verified: the rollout is where it is now
    elif at < s.tracking.decided_at:
        step.put(s)
        return
    state, cause = _MOVES[signal.turn]
    if state is State.NEEDS_INPUT:
        s = s.replace(
            current_tool=signal.tool_name,
            tool_summary=signal.tool_summary,
            question=signal.question,
        )
    s = move(s, state, cause, at)
    step.put(s)
    step.notify(s, signal.live)
