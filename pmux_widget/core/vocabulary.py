"""The words pmux-widget speaks: the states and their priority, and the Literal vocabularies
signals and the tracker use (PID statuses, transcript endings, hook events, causes, actions).

Split out of ``model.py``, which re-exports every name here: they are values only, and the
type checker rejects a misspelt status or a comparison that can never hold.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import Literal, get_args

SNIPPET_LIMIT = 200


class State(str, Enum):
    """The work state of a session. The values are the contract's strings, exactly."""

    IDLE = "idle"
    BUSY = "busy"
    NEEDS_INPUT = "needs-input"
    REVIEW = "review"
    UNKNOWN = "unknown"

    def __str__(self) -> str:
        return self.value


#: Most urgent first: workspace dots and sorting follow this order.
PRIORITY: tuple[State, ...] = (
    State.NEEDS_INPUT,
    State.REVIEW,
    State.BUSY,
    State.UNKNOWN,
    State.IDLE,
)
_RANK = {state: rank for rank, state in enumerate(PRIORITY)}

#: States that count towards the attention number (the bell, the tab title).
ATTENTION_STATES = frozenset({State.NEEDS_INPUT, State.REVIEW})


def priority_rank(state: State) -> int:
    """0 for the most urgent state; sort by this to put what needs you first."""
    return _RANK[state]


def most_urgent(states: Iterable[State]) -> State:
    """The highest-priority state among ``states`` (idle when there are none)."""
    return min(states, key=priority_rank, default=State.IDLE)


def clip(text: str | None, limit: int = SNIPPET_LIMIT) -> str | None:
    """Collapse whitespace and cut to ``limit`` characters (with an ellipsis), None if empty."""
    if text is None:
        return None
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---------------------------------------------------------------------------- vocabulary
# The words signals and the tracker speak, as Literal types: the checker rejects a misspelt
# status or a comparison that can never hold, and values stay the plain strings of the files
# and the JSON.

#: A PID file's ``status`` (``shell``: since 2.1.332, a ``!`` shell command runs).
PidStatus = Literal["busy", "waiting", "idle", "shell"]
#: How a transcript's last main-thread record ends: ``interrupt`` (an Esc marker), ``clean``
#: (a finished answer), ``meta`` (a harness record: /clear, /compact…), ``open`` (anything else).
TranscriptEnding = Literal["interrupt", "clean", "meta", "open"]
#: The contract's hook events, in its order (the hub reads them all; ``install`` registers
#: all but the per-tool ones since issue 28).
HookEvent = Literal[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "Notification",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "StopFailure",
    "PreCompact",
    "PostCompact",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
]
#: What decided a session's current state. The JSON's ``source`` is the same string, except
#: for ``hook``, which the JSON spells ``hook:<event name>``.
Cause = Literal[
    "hook",
    "pid:found",
    "pid:busy",
    "pid:waiting",
    "pid:idle",
    "pid:shell",
    "transcript:interrupt",
    "transcript:answer",
    "transcript:tool-result",
    "sdk:waiting",
    "process:gone",
    "poll:stale-busy",
    "poll:unknown-timeout",
    "user:dismiss",
    "user:seen",
    "restart",
    "retired",
    "recovery:process-gone",
    "recovery:transcript",
    "recovery:interrupt",
    "recovery:meta",
    "recovery:pid:busy",
    "recovery:pid:waiting",
    "recovery:pid:idle",
    "recovery:pid:shell",
    "wait:background-agent",
    "background:stopped",
    "background:removed",
    "pid:spare",
    "rollout:running",
    "rollout:waiting",
    "rollout:complete",
    "rollout:aborted",
]

#: What a user can do to a session from the widget, the API, the CLI or HTTP (``stop`` and
#: ``remove``: a Claude Code background session only, ``claude stop`` / ``claude rm``).
ActionName = Literal["approve", "deny", "interrupt", "send", "answer", "stop", "remove"]
ACTION_NAMES: tuple[ActionName, ...] = get_args(ActionName)
#: An action is the source of the state it leads to if that state comes within this time.
ACTION_WINDOW_MS = 30_000

PID_STATUSES: frozenset[PidStatus] = frozenset(get_args(PidStatus))
TRANSCRIPT_ENDINGS: frozenset[TranscriptEnding] = frozenset(get_args(TranscriptEnding))
CAUSES: frozenset[Cause] = frozenset(get_args(Cause))
_PID_STATUS: dict[object, PidStatus] = {s: s for s in PID_STATUSES}
_ENDING: dict[object, TranscriptEnding] = {e: e for e in TRANSCRIPT_ENDINGS}
_CAUSE: dict[object, Cause] = {c: c for c in CAUSES}


def as_pid_status(value: object) -> PidStatus | None:
    """``value`` if it is a known PID-file status, else None."""
    return _PID_STATUS.get(value) if isinstance(value, str) else None


def as_ending(value: object) -> TranscriptEnding | None:
    """``value`` if it is a known transcript ending, else None."""
    return _ENDING.get(value) if isinstance(value, str) else None


def source_text(cause: Cause, event: str | None = None) -> str:
    """The JSON's ``source`` for ``cause`` (``event``: the hook's name, for ``hook``)."""
    return f"hook:{event}" if cause == "hook" else cause


#: The longest origin kept in a source: a device's name, not a message.
MAX_ORIGIN = 60


def action_source(action: str, origin: str = "") -> str:
    """The source of the state an action led to: ``action:approve``, or with where the
    answer came from when not from here, ``action:approve@Pixel 8 (Web Push)`` (one line,
    at most :data:`MAX_ORIGIN` characters of it)."""
    where = " ".join("".join(ch if ch.isprintable() else " " for ch in origin).split())
    return f"action:{action}@{where[:MAX_ORIGIN]}" if where else f"action:{action}"


def cause_of(source: object) -> Cause | None:
    """Inverse of :func:`source_text` (None for an unknown or empty source)."""
    if isinstance(source, str) and source.startswith("hook:"):
        return "hook"
    return _CAUSE.get(source) if isinstance(source, str) else None
