"""The edits the tracker's rules share: move a session's state, end it, name it, record why.

Split out of ``tracker.py`` so each rule family (``rules_hooks``, ``rules_files``,
``rules_process``) sees the same few primitives; they are pure functions of sessions and
tracking (plus the step being built, for ``retire_others``).
"""

from __future__ import annotations

import posixpath
from typing import Protocol

from .model import (
    ACTION_WINDOW_MS,
    Cause,
    Session,
    State,
    Tracking,
    TranscriptEnding,
    action_source,
    source_text,
)
from .question import Question, kind_of_tool


class StepEdits(Protocol):
    """The step being built (``tracker._Builder``) as the rules see it: read the fleet as it
    stands, replace sessions, flag notifications."""

    now: int

    def get(self, session_id: str) -> Session | None: ...

    def put(self, session: Session) -> None: ...

    def all(self) -> list[Session]: ...

    def notify(self, session: Session, live: bool) -> None: ...


#: PID-file ``entrypoint``s and ``kind``s of runs nobody sits at (``-p``: ``sdk-cli``).
NON_INTERACTIVE_KINDS = frozenset({"daemon", "daemon-worker"})

WORK_STATES = frozenset({State.BUSY, State.NEEDS_INPUT, State.UNKNOWN})


def track(session: Session, tracking: Tracking) -> Session:
    return session.replace(tracking=tracking)


def because(session: Session, cause: Cause, event: str | None) -> Session:
    """Record why the session is in its state: the typed cause and the JSON's text."""
    return session.replace(
        source=source_text(cause, event), tracking=session.tracking.replace(cause=cause)
    )


def move(
    session: Session, state: State, cause: Cause, at: int, event: str | None = None
) -> Session:
    """Set the state (and when/why) if it differs; ``decided_at`` always advances.

    ``event``: the hook's name, when ``cause`` is a hook."""
    t = session.tracking
    decided = max(t.decided_at, at)
    if session.state is state:
        return track(session, t.replace(decided_at=decided))
    if state is State.BUSY:
        t = t.replace(decided_at=decided, cause=cause, turn_started_at=at)
    elif state is State.NEEDS_INPUT:
        t = t.replace(decided_at=decided, cause=cause, asked_at=at)
    else:
        t = t.replace(decided_at=decided, cause=cause)
    source = source_text(cause, event)
    # What a dialog asks lives as long as the wait: a question never outlives its answer.
    question = session.question if state is State.NEEDS_INPUT else None
    if state is State.NEEDS_INPUT and question is None:
        question = Question(kind=kind_of_tool(session.current_tool))
    if t.action is not None:
        # The first state change after an action is the action's doing: say so. The cause
        # stays the signal's (the rules branch on it); only the shown source changes.
        if 0 <= at - t.action_at <= ACTION_WINDOW_MS:
            source = action_source(t.action, t.action_origin)
        t = t.replace(action=None, action_at=0, action_origin="")
    return session.replace(
        state=state, state_since=at, source=source, question=question, tracking=t
    )


def answered_since_asked(t: Tracking) -> bool:
    """The transcript ends with a finished answer written after the last dialog opened: the
    dialog was approved and the turn ran to its end (a denial or Esc ends with a marker)."""
    return (
        t.transcript_end == "clean"
        and 0 < t.asked_at < t.transcript_at
        and t.interrupt_at < t.asked_at
    )


def turn_ended_quietly(ending: TranscriptEnding | None) -> bool:
    """The transcript says the last busy period was no answer: Esc, /clear, /compact…"""
    return ending in ("interrupt", "meta")


def project_of(cwd: str | None) -> str | None:
    """The fallback name, for a signal the runtime did not name (it names them all)."""
    if not cwd:
        return None
    return posixpath.basename(cwd.rstrip("/")) or cwd


def named(s: Session, project: str | None) -> Session:
    """The one naming rule: the project is the runtime's name for the folder (its git root's
    name, else its own: ``system.projects``); the workspace is the tmux session once the
    session is located in one, else the project. So the two never disagree for one folder."""
    if not project:
        return s
    workspace = (s.workspace or project) if s.tmux is not None else project
    return s.replace(project=project, workspace=workspace)


def retire_others(step: StepEdits, keep: str, pid: int | None, pane: str | None, at: int) -> None:
    """End other live sessions of the same Claude process (a /clear or session switch)."""
    for other in step.all():
        if other.session_id == keep or other.ended:
            continue
        same_pid = pid is not None and other.pid == pid
        other_pane = other.tmux.pane if other.tmux is not None else other.tracking.pane
        same_pane = pane is not None and other_pane == pane
        if same_pid or same_pane:
            step.put(end(other, "retired", at))


def end(session: Session, cause: Cause, at: int, event: str | None = None) -> Session:
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
    if cause == "retired" or session.state in WORK_STATES:
        ended = move(ended, State.IDLE, cause, at, event)
    if ended.state is State.IDLE:
        ended = because(ended, cause, event)  # why it is idle now: it ended
    return ended


def interactive_of(entrypoint: str | None, kind: str | None = None) -> bool | None:
    """Who sits at the session, from a PID file's ``entrypoint`` and ``kind`` or a hook's
    ``CLAUDE_CODE_ENTRYPOINT``: False for ``claude -p`` and SDK runs (``sdk-*``) and daemons;
    None when neither is known."""
    if entrypoint is None and kind is None:
        return None
    return not ((entrypoint or "").startswith("sdk-") or kind in NON_INTERACTIVE_KINDS)


def finished(t: Tracking) -> State:
    """The state a finished turn leaves: review, unless nobody sits at the session (then no
    "finished" notification either: it waits for no one)."""
    return State.IDLE if t.interactive is False else State.REVIEW


def compaction_over(s: Session) -> Session:
    """Clear the compacting indicator (PostCompact, SessionStart "compact", the turn's end)."""
    if not s.compacting and not s.tracking.compacting_since:
        return s
    return s.replace(compacting=False, tracking=s.tracking.replace(compacting_since=0))
