"""Plain data shared by every part of pmux-widget: states, sessions, changes, notifications.

Nothing here does I/O or knows the time; these are values. A :class:`Session` is frozen, so a
snapshot handed to a cell, a subscriber or the widget stays valid while the tracker moves on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

__all__ = [
    "ATTENTION_STATES",
    "PRIORITY",
    "Change",
    "Notification",
    "Session",
    "State",
    "TmuxLocation",
    "Tokens",
    "Transition",
    "count_states",
    "most_urgent",
    "priority_rank",
]

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


def count_states(sessions: Iterable[Session]) -> dict[str, int]:
    """Counts per state plus ``attention`` (needs-input + review; unknown is not counted)."""
    counts = {state.value: 0 for state in State}
    for session in sessions:
        counts[session.state.value] += 1
    counts["attention"] = counts[State.NEEDS_INPUT.value] + counts[State.REVIEW.value]
    return counts


def clip(text: str | None, limit: int = SNIPPET_LIMIT) -> str | None:
    """Collapse whitespace and cut to ``limit`` characters (with an ellipsis), None if empty."""
    if text is None:
        return None
    flat = " ".join(text.split())
    if not flat:
        return None
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Tokens:
    """Token totals of a session's main thread, deduplicated per API response."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Tokens:
        if not data:
            return cls()
        return cls(**{f: int(data.get(f, 0) or 0) for f in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class TmuxLocation:
    """Where a session's Claude runs in tmux: session name, window index, pane id, pane title."""

    session: str
    window: str
    pane: str
    title: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "session": self.session,
            "window": self.window,
            "pane": self.pane,
            "title": self.title,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TmuxLocation | None:
        if not data:
            return None
        return cls(
            session=str(data.get("session", "")),
            window=str(data.get("window", "")),
            pane=str(data.get("pane", "")),
            title=str(data.get("title", "")),
        )


#: The keys of the session JSON, in the contract's order.
JSON_FIELDS = (
    "session_id",
    "state",
    "running",
    "state_since",
    "cwd",
    "project",
    "workspace",
    "pid",
    "tmux",
    "transcript_path",
    "model",
    "current_tool",
    "tool_summary",
    "last_assistant",
    "last_prompt",
    "tokens",
    "context_tokens",
    "compacting",
    "subagents",
    "error",
    "ports",
    "source",
)


@dataclass(frozen=True)
class Session:
    """One Claude Code conversation, keyed by its ``session_id``.

    The first block of fields is the contract's session JSON. The second block is the
    tracker's bookkeeping: times in ms epoch that let it order signals that overtake each other,
    and facts it needs to decide later signals. They are persisted, never shown in the JSON.
    """

    session_id: str
    state: State = State.IDLE
    running: bool = False
    state_since: int = 0
    cwd: str | None = None
    project: str | None = None
    workspace: str | None = None
    pid: int | None = None
    tmux: TmuxLocation | None = None
    transcript_path: str | None = None
    model: str | None = None
    current_tool: str | None = None
    tool_summary: str | None = None
    last_assistant: str | None = None
    last_prompt: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    context_tokens: int = 0
    compacting: bool = False
    subagents: int = 0
    error: str | None = None
    ports: tuple[int, ...] = ()
    source: str = ""

    # -- bookkeeping --------------------------------------------------------------------
    #: when this hub first saw the session (the 5 s boot window counts from here)
    first_seen: int = 0
    #: event time of the newest signal that decided the state; older signals may not undo it
    decided_at: int = 0
    #: event time of the newest hook; 0 means no hook ever arrived (zero-install mode)
    last_hook_at: int = 0
    #: event time of the newest interrupt marker already acted upon
    interrupt_at: int = 0
    #: event time of the newest current-tool information
    tool_at: int = 0
    #: event time of the newest prompt (UserPromptSubmit): older API errors are stale
    prompt_at: int = 0
    #: event time of the newest answer text (a Stop hook's last_assistant_message)
    assistant_at: int = 0
    #: event time of the newest sign of work (hook, transcript record, PID-file status)
    active_at: int = 0
    #: the PID file's last ``status`` (busy / waiting / idle / shell) and its ``waitingFor``
    pid_status: str | None = None
    waiting_for: str | None = None
    #: how the transcript's last main-thread record ends: "interrupt", "clean" or "open"
    transcript_end: str | None = None
    #: event time of the transcript's newest record (what ``transcript_end`` describes)
    transcript_at: int = 0
    compacting_since: int = 0
    #: consecutive process checks that found the Claude process dead
    gone_checks: int = 0
    #: the session ended (SessionEnd, process gone, or retired by /clear or a resume)
    ended: bool = False
    #: StopFailure's details, or the API error text, shown next to ``error``
    error_detail: str | None = None
    #: ids of the sub-agents running now (``subagents`` is their count)
    subagent_ids: tuple[str, ...] = ()
    #: when the session last became busy (the start of the current or last turn)
    turn_started_at: int = 0
    #: when the session last entered needs-input (the latest dialog opened)
    asked_at: int = 0
    #: the tmux pane id its hooks came from ($TMUX_PANE), before the poller locates it
    pane: str | None = None
    #: an earlier session of the same Claude process sent hooks: this one's will come too
    process_hooked: bool = False

    @property
    def hooked(self) -> bool:
        """True once any hook arrived for this session (or its process): hooks decide."""
        return self.last_hook_at > 0 or self.process_hooked

    @property
    def needs_attention(self) -> bool:
        return self.state in ATTENTION_STATES

    @property
    def name(self) -> str:
        """A short human name: the project, plus the tmux window.pane when known."""
        base = self.project or (self.cwd.rstrip("/").rsplit("/", 1)[-1] if self.cwd else None)
        base = base or self.session_id[:8]
        if self.tmux:
            return f"{base} ({self.tmux.session}:{self.tmux.window}.{self.tmux.pane})"
        return base

    def replace(self, **changes: Any) -> Session:
        """A copy with ``changes`` (field names only). The tracker calls this several times per
        signal: a dict merge is ~20x faster than ``dataclasses.replace``, which re-runs
        ``__init__`` over all fields."""
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"Session has no field(s) {sorted(unknown)}")
        new = object.__new__(Session)
        object.__setattr__(new, "__dict__", {**self.__dict__, **changes})
        return new

    def dismiss(self) -> None:
        """Mark this finished session as seen: review → idle, through the running hub."""
        if _dismiss_handler is None:
            raise RuntimeError("no pmux-widget hub is running: call pmux_widget.start() first")
        _dismiss_handler(self.session_id)

    def to_json(self) -> dict[str, Any]:
        """The contract's session JSON, exactly its keys, in its order."""
        return {
            "session_id": self.session_id,
            "state": self.state.value,
            "running": self.running,
            "state_since": self.state_since,
            "cwd": self.cwd,
            "project": self.project,
            "workspace": self.workspace,
            "pid": self.pid,
            "tmux": self.tmux.to_json() if self.tmux else None,
            "transcript_path": self.transcript_path,
            "model": self.model,
            "current_tool": self.current_tool,
            "tool_summary": self.tool_summary,
            "last_assistant": self.last_assistant,
            "last_prompt": self.last_prompt,
            "tokens": self.tokens.to_json(),
            "context_tokens": self.context_tokens,
            "compacting": self.compacting,
            "subagents": self.subagents,
            "error": self.error,
            "ports": list(self.ports),
            "source": self.source,
        }

    def to_record(self) -> dict[str, Any]:
        """Every field, JSON-ready: what the store persists."""
        record = self.to_json()
        for name in _BOOKKEEPING:
            record[name] = getattr(self, name)
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Session:
        """Inverse of :meth:`to_record`; unknown keys are ignored, missing ones defaulted."""
        known = {k: v for k, v in record.items() if k in cls.__dataclass_fields__}
        known["state"] = State(known.get("state", State.IDLE.value))
        known["tokens"] = Tokens.from_json(known.get("tokens"))
        known["tmux"] = TmuxLocation.from_json(known.get("tmux"))
        known["ports"] = tuple(int(p) for p in known.get("ports") or ())
        known["subagent_ids"] = tuple(str(a) for a in known.get("subagent_ids") or ())
        return cls(**known)


_dismiss_handler: Callable[[str], None] | None = None


def set_dismiss_handler(handler: Callable[[str], None] | None) -> None:
    """Installed by the API when its hub starts, so that data can ask for its own dismissal
    without this module depending on the hub (data flows one way)."""
    global _dismiss_handler
    _dismiss_handler = handler


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Session))
_BOOKKEEPING = tuple(
    f.name for f in dataclasses.fields(Session) if f.name not in frozenset(JSON_FIELDS)
)


@dataclass(frozen=True, slots=True)
class Notification:
    """A message for the user: a session moved into needs-input or review by a live signal."""

    session_id: str
    state: State
    title: str
    body: str
    at: int

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "state": self.state.value,
            "title": self.title,
            "body": self.body,
            "at": self.at,
        }


@dataclass(frozen=True, slots=True)
class Change:
    """One session's step: ``before`` (None when new) to ``after``; a notification or silent."""

    session_id: str
    before: Session | None
    after: Session
    notification: Notification | None = None

    @property
    def silent(self) -> bool:
        return self.notification is None

    @property
    def state_changed(self) -> bool:
        return self.before is None or self.before.state is not self.after.state

    def transition(self) -> Transition | None:
        """The history row for this change, or None when the state did not move."""
        if not self.state_changed:
            return None
        return Transition(
            session_id=self.session_id,
            at=self.after.state_since,
            from_state=self.before.state if self.before else None,
            to_state=self.after.state,
            source=self.after.source,
        )


@dataclass(frozen=True, slots=True)
class Transition:
    """A row of the history: a session's state moved ``from_state`` → ``to_state`` at ``at``."""

    session_id: str
    at: int
    from_state: State | None
    to_state: State
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "at": self.at,
            "from": self.from_state.value if self.from_state else None,
            "to": self.to_state.value,
            "source": self.source,
        }
