"""Hook signals: one typed value per Claude Code hook event, and :func:`parse_hook`, which
turns a raw hook payload into one (or an :class:`~.signal_base.Invalid` with the reason).

Split out of ``signals.py``, which re-exports every name here: ``signals`` stays the one
module the tracker and the sources read signals from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, get_args

from .agents import Agent, agent_of
from .model import BackgroundTask, HookEvent
from .signal_base import Invalid, Signal

__all__ = [
    "HOOK_EVENTS",
    "HookSignal",
    "Notification",
    "OtherHook",
    "PermissionRequest",
    "PostCompact",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
    "PreToolUse",
    "SessionEnd",
    "SessionStart",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "UserPromptSubmit",
    "parse_hook",
]


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
    #: the agent CLI that ran the hook, when its command named one (Codex's do; Claude's not)
    agent: Agent | None = None

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
    #: pairs the call's PreToolUse and PostToolUse (async hooks may arrive out of order)
    tool_use_id: str | None = None


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
    tool_use_id: str | None = None


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

#: The 14 events of the contract, in its order: what the hub reads (``install`` registers
#: all but the per-tool ones: ``hooks.registered_events``).
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
    agent: str | None = None,
) -> HookSignal | Invalid:
    """Turn a raw hook payload (decoded JSON, or bytes/str of it) into a typed hook signal.

    ``at`` is when the hook was sent (ms epoch). Required: a JSON object with non-empty string
    ``session_id`` and ``hook_event_name``. Optional fields must have their documented types
    when present (``null`` counts as absent). Unknown events become :class:`OtherHook`.
    ``agent``: what the hook's command named (``X-Pmux-Agent``); an unknown name is dropped.
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
    fields["agent"] = agent_of(agent)
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
    if issubclass(cls, PreToolUse | PostToolUse) and isinstance(payload.get("tool_use_id"), str):
        fields["tool_use_id"] = payload["tool_use_id"] or None
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
