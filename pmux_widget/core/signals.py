"""Typed signals: everything the tracker reacts to, and the parsers that make them.

A signal is a plain frozen value stamped with ``at``, the time (ms epoch) the thing *happened*
(the hook's ``X-Pmux-Sent``, a PID file's ``statusUpdatedAt``, a transcript record's
``timestamp``), so the tracker can order signals that overtake each other on different paths.
``live`` is False for replays and recovery: those never notify.

Parsers never raise on bad input: they return :class:`Invalid` with a reason a human can act on.

The hook signals and :func:`parse_hook` live in ``hook_signals.py``, the base types in
``signal_base.py``; this module re-exports them, so ``signals`` names every signal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from .hook_signals import (
    HOOK_EVENTS,
    HookSignal,
    Notification,
    OtherHook,
    PermissionRequest,
    PostCompact,
    PostToolUse,
    PostToolUseFailure,
    PreCompact,
    PreToolUse,
    SessionEnd,
    SessionStart,
    Stop,
    StopFailure,
    SubagentStart,
    SubagentStop,
    UserPromptSubmit,
    parse_hook,
)
from .model import (
    PID_STATUSES,
    ActionName,
    Background,
    PidStatus,
    Session,
    TerminalLocation,
    TmuxLocation,
    Tokens,
    TranscriptEnding,
    as_pid_status,
)
from .question import Question
from .signal_base import Invalid, Signal

#: A Codex turn as its rollout tells it (see :class:`RolloutTurn`).
RolloutState = Literal["running", "waiting", "complete", "aborted"]

__all__ = [
    "HOOK_EVENTS",
    "PID_STATUSES",
    "ActionTaken",
    "BackgroundGone",
    "Dismiss",
    "HandlerWaits",
    "HookSignal",
    "HubRestart",
    "InTerminal",
    "Invalid",
    "Locate",
    "Notification",
    "Origin",
    "OtherHook",
    "PermissionRequest",
    "PidFile",
    "PidRecord",
    "PollTick",
    "PostCompact",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PreToolUse",
    "ProcessGone",
    "Recover",
    "RolloutState",
    "RolloutTurn",
    "Seen",
    "SessionEnd",
    "SessionStart",
    "Signal",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "TranscriptInterrupt",
    "TranscriptUpdate",
    "TuiShows",
    "UserPromptSubmit",
    "parse_hook",
    "parse_pid_record",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptInterrupt(Signal):
    """The transcript got an interrupt marker (Esc): no hook fires for it."""

    session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class TranscriptUpdate(Signal):
    """What the transcript says now about a session (``at``: its newest record's time).

    ``ending`` tells how the last main-thread record ends: ``"interrupt"`` (a marker),
    ``"clean"`` (an assistant record with a final stop reason and text), or ``"open"``.
    """

    session_id: str
    transcript_path: str | None = None
    model: str | None = None
    current_tool: str | None = None
    tool_summary: str | None = None
    last_assistant: str | None = None
    last_prompt: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    context_tokens: int = 0
    api_error: str | None = None
    ending: TranscriptEnding | None = None
    cwd: str | None = None
    #: the project the runtime names ``cwd`` by (as for hooks and PID files)
    project: str | None = None


@dataclass(frozen=True, slots=True)
class PidRecord:
    """A parsed ``<config>/sessions/<pid>.json`` (old shape: only the first four fields)."""

    pid: int
    session_id: str
    cwd: str | None
    started_at: int | None
    proc_start: str | None = None
    version: str | None = None
    kind: str | None = None
    entrypoint: str | None = None
    name: str | None = None
    status: PidStatus | None = None
    waiting_for: str | None = None
    updated_at: int | None = None
    status_updated_at: int | None = None
    #: a background worker's job (``kind: "bg"``: what ``claude attach|stop|rm`` take)
    job_id: str | None = None
    #: a pre-warmed background worker no job claims: the PID file's ``spare: true``, or (the
    #: runtime tells, 2.1.197 writes no flag) a ``bg`` worker whose job has no folder
    spare: bool = False

    @property
    def background(self) -> Background | None:
        """The background session this PID file is the worker of (None: not one, or a
        spare)."""
        if self.kind != "bg" or not self.job_id or self.spare:
            return None
        return Background(job=self.job_id, name=self.name or self.job_id)

    @property
    def event_time(self) -> int:
        """When the status was written: statusUpdatedAt, else updatedAt, else startedAt."""
        return self.status_updated_at or self.updated_at or self.started_at or 0


def parse_pid_record(data: object) -> PidRecord | Invalid:
    """Parse a PID file's JSON (bytes, str or decoded). Unknown fields are ignored."""
    if isinstance(data, bytes | bytearray | str):
        try:
            data = json.loads(data)
        except (ValueError, UnicodeDecodeError) as exc:
            return Invalid(f"PID file is not valid JSON: {exc}")
        except RecursionError:
            return Invalid("PID file is nested too deeply to be one")
    if not isinstance(data, dict):
        return Invalid(f"PID file must hold a JSON object, not {type(data).__name__}")
    pid, session_id = data.get("pid"), data.get("sessionId")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return Invalid("pid: missing or not a positive integer")
    if not isinstance(session_id, str) or not session_id:
        return Invalid("sessionId: missing or not a string")

    def opt_int(key: str) -> int | None:
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return int(value) if math.isfinite(value) else None  # json reads Infinity, NaN

    def opt_str(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) and value else None

    status = as_pid_status(data.get("status"))
    return PidRecord(
        pid=pid,
        session_id=session_id,
        cwd=opt_str("cwd"),
        started_at=opt_int("startedAt"),
        proc_start=str(data["procStart"]) if data.get("procStart") not in (None, "") else None,
        version=opt_str("version"),
        kind=opt_str("kind"),
        entrypoint=opt_str("entrypoint"),
        name=opt_str("name"),
        status=status,
        waiting_for=opt_str("waitingFor") if status == "waiting" else None,
        updated_at=opt_int("updatedAt"),
        status_updated_at=opt_int("statusUpdatedAt"),
        job_id=opt_str("jobId"),
        spare=data.get("spare") is True,
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class PidFile(Signal):
    """A live Claude process's PID file, as last read (``at``: when its status was written).

    The hub sends it only for a process it checked alive (pid exists, procStart matches).
    """

    record: PidRecord
    project: str | None = None

    @property
    def session_id(self) -> str:
        return self.record.session_id


@dataclass(frozen=True, kw_only=True, slots=True)
class ProcessGone(Signal):
    """One check found the session's Claude process dead (PID file removed, or pid gone)."""

    session_id: str
    pid: int


@dataclass(frozen=True, kw_only=True, slots=True)
class BackgroundGone(Signal):
    """A background session's job is gone (``claude rm``: its folder under ``jobs/`` was
    removed; no hook fires). A stopped or killed one only stops running: this ends it."""

    session_id: str
    job: str


@dataclass(frozen=True, kw_only=True, slots=True)
class PollTick(Signal):
    """The periodic safety net. ``alive``: per session id, was its Claude process found?

    ``True`` found, ``False`` looked for and not found, absent/None: could not tell.
    """

    alive: Mapping[str, bool | None] = field(default_factory=dict)
    #: the pid each ``alive`` answer is about: the probe runs on a worker thread, and a
    #: session may have moved to another process (a respawned worker) before it is applied
    pids: Mapping[str, int] = field(default_factory=dict)
    #: sessions known only by their tmux pane (no pid) whose pane no longer runs Claude
    exited: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True, slots=True)
class Dismiss(Signal):
    """The user dismissed a finished session (widget button or ``Session.dismiss()``)."""

    session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Seen(Signal):
    """The user looked at the session (issue 34): its JupyterLab terminal tab is focused in a
    visible page, an attached tmux client shows its pane, or its row's peek or attach opened.
    A review ends there, silently; nothing else changes."""

    session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ActionTaken(Signal):
    """Keys for ``action`` were delivered to the session's pane (``runtime.actions``): the
    state it leads to shows ``action:<name>`` as its source (``action:<name>@<origin>`` when
    the answer came from elsewhere: a phone's notification names its device)."""

    session_id: str
    action: ActionName
    origin: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class HubRestart(Signal):
    """A hub starts with the sessions persisted by an earlier one."""

    sessions: tuple[Session, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Recover(Signal):
    """Facts gathered at hub start to re-verify a session left ``unknown`` by a restart."""

    session_id: str
    process_running: bool | None = None
    pid_status: PidStatus | None = None
    transcript_ending: TranscriptEnding | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class InTerminal(Signal):
    """Which JupyterLab terminal runs the session's Claude process ``pid`` (None: none, or
    its terminal closed). Matched by the process tree, so it holds only for that pid."""

    session_id: str
    pid: int
    terminal: TerminalLocation | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TuiShows(Signal):
    """A Codex TUI (``pid``) shows this session's thread now, as its screen proves
    (``core/codex_tui.place_by_screens``): the row takes the pid, and a live row that held it
    is the thread the TUI left (``/new``, ``/resume``)."""

    session_id: str
    pid: int


@dataclass(frozen=True, kw_only=True, slots=True)
class HandlerWaits(Signal):
    """An Agent SDK run's permission call waits on our handler (``pmux_widget.can_use_tool``):
    what it asks, from the call itself (a run with no hooks has no PermissionRequest)."""

    session_id: str
    tool_name: str
    tool_input: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Origin(Signal):
    """The program that runs an Agent SDK run (its CLI's parent): its name, and for a
    Jupyter kernel its id and the notebook its server says it runs."""

    session_id: str
    program: str
    kernel_id: str | None = None
    notebook: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class RolloutTurn(Signal):
    """Where a Codex thread's turn is by its rollout (``at``: the record that said so):
    ``running`` (``task_started``), ``waiting`` (a call in flight that waits on the user:
    ``question`` says what it asks), ``complete`` (``task_complete``), ``aborted``
    (``turn_aborted``). With ``pid`` (the TUI that shows the thread) it makes the row of a
    thread whose hooks do not run; hooks, once any arrive, decide the state instead."""

    session_id: str
    turn: RolloutState
    pid: int | None = None
    transcript_path: str | None = None
    cwd: str | None = None
    project: str | None = None
    tool_name: str | None = None
    tool_summary: str | None = None
    question: Question | None = None
    #: the thread's prompt and model, for a row it makes (the rest follows at once, as a
    #: TranscriptUpdate: a row that tells what it waits on already says what it was asked)
    last_prompt: str | None = None
    model: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Locate(Signal):
    """Where a session runs (from the poller: tmux pane, listening ports, workspace name)."""

    session_id: str
    tmux: TmuxLocation | None = None
    ports: tuple[int, ...] = ()
    workspace: str | None = None
    pid: int | None = None
    #: the pane's current folder: the session's cwd while no other signal named one
    cwd: str | None = None
    #: the runtime's project name for ``cwd``
    project: str | None = None
