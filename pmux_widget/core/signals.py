"""Typed signals: everything the tracker reacts to, and the parsers that make them.

A signal is a plain frozen value stamped with ``at``, the time (ms epoch) the thing *happened*
(the hook's ``X-Pmux-Sent``, a PID file's ``statusUpdatedAt``, a transcript record's
``timestamp``), so the tracker can order signals that overtake each other on different paths.
``live`` is False for replays and recovery: those never notify.

Parsers never raise on bad input: they return :class:`Invalid` with a reason a human can act on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, get_args

from .model import (
    PID_STATUSES,
    ActionName,
    BackgroundTask,
    HookEvent,
    PidStatus,
    Session,
    TmuxLocation,
    Tokens,
    TranscriptEnding,
    as_pid_status,
)

__all__ = [
    "HOOK_EVENTS",
    "PID_STATUSES",
    "ActionTaken",
    "Dismiss",
    "HookSignal",
    "HubRestart",
    "Invalid",
    "Locate",
    "Notification",
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
    "SessionEnd",
    "SessionStart",
    "Signal",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "TranscriptInterrupt",
    "TranscriptUpdate",
    "UserPromptSubmit",
    "parse_hook",
    "parse_pid_record",
]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A rejected input and why (e.g. ``"session_id: missing"``)."""

    reason: str

    def __bool__(self) -> bool:  # lets callers write ``if not result: ...``
        return False


@dataclass(frozen=True, kw_only=True, slots=True)
class Signal:
    """Base of all signals. ``at``: when it happened (ms epoch); ``live``: may notify."""

    at: int
    live: bool = True


# --------------------------------------------------------------------------- hook signals


@dataclass(frozen=True, kw_only=True, slots=True)
class HookSignal(Signal):
    """A Claude Code hook. ``pid`` and ``project`` are filled in by the hub when it knows them."""

    #: the event this class stands for (None: :class:`OtherHook`, named by its ``name``)
    event: ClassVar[HookEvent | None] = None
    session_id: str
    transcript_path: str | None = None
    cwd: str | None = None
    agent_id: str | None = None
    pane: str | None = None
    pid: int | None = None
    project: str | None = None
    #: the session's permission mode as the hook reports it (``default``, ``auto`` …)
    permission_mode: str | None = None
    #: the hook's ``CLAUDE_CODE_ENTRYPOINT`` (the CLI's, inherited), when the hub read it
    entrypoint: str | None = None

    @property
    def event_name(self) -> str:
        """The hook event's name as Claude Code sent it."""
        return self.event or ""

    @property
    def from_subagent(self) -> bool:
        """Fired inside a sub-agent: it shares the parent's session_id but not its turn."""
        return self.agent_id is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionStart(HookSignal):
    event: ClassVar[HookEvent | None] = "SessionStart"
    source: str = "startup"
    model: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class UserPromptSubmit(HookSignal):
    event: ClassVar[HookEvent | None] = "UserPromptSubmit"
    prompt: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PreToolUse(HookSignal):
    event: ClassVar[HookEvent | None] = "PreToolUse"
    tool_name: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class PermissionRequest(HookSignal):
    event: ClassVar[HookEvent | None] = "PermissionRequest"
    tool_name: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class Notification(HookSignal):
    event: ClassVar[HookEvent | None] = "Notification"
    notification_type: str | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PostToolUse(HookSignal):
    event: ClassVar[HookEvent | None] = "PostToolUse"
    tool_name: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class PostToolUseFailure(PostToolUse):
    event: ClassVar[HookEvent | None] = "PostToolUseFailure"
    error: str | None = None
    is_interrupt: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Stop(HookSignal):
    event: ClassVar[HookEvent | None] = "Stop"
    last_assistant_message: str | None = None
    #: tasks the turn leaves running (2.1.198+); read leniently, unknown kinds kept by name
    background_tasks: tuple[BackgroundTask, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class StopFailure(HookSignal):
    event: ClassVar[HookEvent | None] = "StopFailure"
    error: str = "unknown"
    error_details: str | None = None
    last_assistant_message: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PreCompact(HookSignal):
    event: ClassVar[HookEvent | None] = "PreCompact"
    trigger: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class PostCompact(HookSignal):
    event: ClassVar[HookEvent | None] = "PostCompact"
    trigger: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentStart(HookSignal):
    event: ClassVar[HookEvent | None] = "SubagentStart"
    agent_type: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SubagentStop(HookSignal):
    event: ClassVar[HookEvent | None] = "SubagentStop"
    agent_type: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionEnd(HookSignal):
    event: ClassVar[HookEvent | None] = "SessionEnd"
    reason: str = "other"


@dataclass(frozen=True, kw_only=True, slots=True)
class OtherHook(HookSignal):
    """Any other event (Setup, CwdChanged, …): proof of life, no effect on the state."""

    name: str = ""

    @property
    def event_name(self) -> str:
        return self.name


_HOOK_CLASSES: dict[str, type[HookSignal]] = {
    cls.event: cls
    for cls in (
        SessionStart,
        UserPromptSubmit,
        PreToolUse,
        PermissionRequest,
        Notification,
        PostToolUse,
        PostToolUseFailure,
        Stop,
        StopFailure,
        PreCompact,
        PostCompact,
        SubagentStart,
        SubagentStop,
        SessionEnd,
    )
    if cls.event is not None
}

#: The 14 events the installer registers, in the contract's order.
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)


# ------------------------------------------------------------------------ hook parsing

_COMMON_STR = ("transcript_path", "cwd", "agent_id")
#: Fields read when they have the expected type and ignored otherwise: newer CLIs add them,
#: and a monitor must not refuse a hook over a field it only displays.
_LENIENT_STR = ("permission_mode",)
# field in payload -> (field on the signal, accepted types)
_SPECIFIC: dict[str, dict[str, tuple[str, tuple[type, ...]]]] = {
    "SessionStart": {"source": ("source", (str,)), "model": ("model", (str,))},
    "UserPromptSubmit": {"prompt": ("prompt", (str,))},
    "PreToolUse": {"tool_name": ("tool_name", (str,)), "tool_input": ("tool_input", (dict,))},
    "PermissionRequest": {
        "tool_name": ("tool_name", (str,)),
        "tool_input": ("tool_input", (dict,)),
    },
    "Notification": {
        "notification_type": ("notification_type", (str,)),
        "message": ("message", (str,)),
    },
    "PostToolUse": {"tool_name": ("tool_name", (str,))},
    "PostToolUseFailure": {
        "tool_name": ("tool_name", (str,)),
        "error": ("error", (str,)),
        "is_interrupt": ("is_interrupt", (bool,)),
    },
    "Stop": {"last_assistant_message": ("last_assistant_message", (str,))},
    "StopFailure": {
        "error": ("error", (str,)),
        "error_details": ("error_details", (str,)),
        "last_assistant_message": ("last_assistant_message", (str,)),
    },
    "PreCompact": {"trigger": ("trigger", (str,))},
    "PostCompact": {"trigger": ("trigger", (str,))},
    "SubagentStart": {"agent_type": ("agent_type", (str,))},
    "SubagentStop": {"agent_type": ("agent_type", (str,))},
    "SessionEnd": {"reason": ("reason", (str,))},
}
_TYPE_NAMES = {str: "a string", dict: "an object", bool: "a boolean"}


def parse_hook(
    payload: object,
    *,
    at: int,
    live: bool = True,
    pane: str | None = None,
    pid: int | None = None,
) -> HookSignal | Invalid:
    """Turn a raw hook payload (decoded JSON, or bytes/str of it) into a typed hook signal.

    ``at`` is when the hook was sent (ms epoch). Required: a JSON object with non-empty string
    ``session_id`` and ``hook_event_name``. Optional fields must have their documented types
    when present (``null`` counts as absent). Unknown events become :class:`OtherHook`.
    """
    if isinstance(payload, bytes | bytearray | str):
        try:
            payload = json.loads(payload)
        except (ValueError, UnicodeDecodeError) as exc:
            return Invalid(f"body is not valid JSON: {exc}")
        except RecursionError:  # json's C parser recurses per level: [[[[… 100k deep
            return Invalid("body is nested too deeply to be a hook payload")
    if not isinstance(payload, dict):
        return Invalid(f"payload must be a JSON object, not {type(payload).__name__}")
    fields: dict[str, Any] = {"at": at, "live": live, "pane": pane or None, "pid": pid}
    for key in ("session_id", "hook_event_name"):
        value = payload.get(key)
        if value is None:
            return Invalid(f"{key}: missing")
        if not isinstance(value, str):
            return Invalid(f"{key}: must be a string, got {type(value).__name__}")
        if not value.strip():
            return Invalid(f"{key}: empty")
    fields["session_id"] = payload["session_id"]
    event = payload["hook_event_name"]
    for key in _COMMON_STR:
        value = payload.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            return Invalid(f"{key}: must be a string, got {type(value).__name__}")
        fields[key] = value or None
    for key in _LENIENT_STR:
        value = payload.get(key)
        if isinstance(value, str) and value:
            fields[key] = value
    cls = _HOOK_CLASSES.get(event)
    if cls is None:
        return OtherHook(name=event, **fields)
    if cls is Stop and isinstance(payload.get("background_tasks"), list):
        tasks = (BackgroundTask.from_json(task) for task in payload["background_tasks"])
        fields["background_tasks"] = tuple(task for task in tasks if task is not None)
    for key, (attr, types) in _SPECIFIC[event].items():
        value = payload.get(key)
        if value is None:
            continue
        if not isinstance(value, types):
            want = " or ".join(_TYPE_NAMES[t] for t in types)
            return Invalid(f"{event}.{key}: must be {want}, got {type(value).__name__}")
        fields[attr] = value
    return cls(**fields)


# ------------------------------------------------------------------------ other signals


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
class PollTick(Signal):
    """The periodic safety net. ``alive``: per session id, was its Claude process found?

    ``True`` found, ``False`` looked for and not found, absent/None: could not tell.
    """

    alive: Mapping[str, bool | None] = field(default_factory=dict)
    #: sessions known only by their tmux pane (no pid) whose pane no longer runs Claude
    exited: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True, slots=True)
class Dismiss(Signal):
    """The user dismissed a finished session (widget button or ``Session.dismiss()``)."""

    session_id: str


@dataclass(frozen=True, kw_only=True, slots=True)
class ActionTaken(Signal):
    """Keys for ``action`` were delivered to the session's pane (``runtime.actions``): the
    state it leads to shows ``action:<name>`` as its source."""

    session_id: str
    action: ActionName


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
