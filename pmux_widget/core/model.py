"""Plain data shared by every part of pmux-widget: states, sessions, changes, notifications.

Nothing here does I/O or knows the time; these are values. A :class:`Session` is frozen, so a
snapshot handed to a cell, a subscriber or the widget stays valid while the tracker moves on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, TypeVar, get_args

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "ACTION_NAMES",
    "ACTION_WINDOW_MS",
    "ATTENTION_STATES",
    "CAUSES",
    "PID_STATUSES",
    "PRIORITY",
    "TRANSCRIPT_ENDINGS",
    "ActionName",
    "BackgroundTask",
    "Cause",
    "Change",
    "HookEvent",
    "Notification",
    "PidStatus",
    "Session",
    "State",
    "TmuxLocation",
    "Tokens",
    "Tracking",
    "TranscriptEnding",
    "Transition",
    "as_ending",
    "as_pid_status",
    "cause_of",
    "count_states",
    "most_urgent",
    "priority_rank",
    "set_session_handler",
    "source_text",
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


@dataclass(frozen=True, slots=True)
class BackgroundTask:
    """A task a turn left running (a ``Stop`` hook's ``background_tasks``, Claude Code ≥ 2.1.198):
    a background sub-agent (``subagent``; also ``workflow``, ``teammate``) or a ``shell``."""

    type: str
    description: str = ""
    status: str = "running"

    @property
    def is_shell(self) -> bool:
        return self.type == "shell"

    def to_json(self) -> dict[str, str]:
        return {"type": self.type, "description": self.description, "status": self.status}

    @classmethod
    def from_json(cls, data: object) -> BackgroundTask | None:
        """Lenient: a task with no string ``type`` is none (unknown fields are ignored)."""
        if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
            return None
        text = {k: data.get(k) for k in ("description", "status")}
        return cls(
            type=str(data["type"]),
            description=text["description"] if isinstance(text["description"], str) else "",
            status=text["status"] if isinstance(text["status"], str) else "running",
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
    "host",
    "permission_mode",
    "background_tasks",
)


# ---------------------------------------------------------------------------- vocabulary
# The words signals and the tracker speak, as Literal types: the checker rejects a misspelt
# status or a comparison that can never hold, and values stay the plain strings of the files
# and the JSON.

#: A PID file's ``status`` (``shell``: since 2.1.332, a ``!`` shell command runs).
PidStatus = Literal["busy", "waiting", "idle", "shell"]
#: How a transcript's last main-thread record ends: ``interrupt`` (an Esc marker), ``clean``
#: (a finished answer), ``meta`` (a harness record: /clear, /compact…), ``open`` (anything else).
TranscriptEnding = Literal["interrupt", "clean", "meta", "open"]
#: The hook events the installer registers, in the contract's order.
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
    "process:gone",
    "poll:stale-busy",
    "poll:unknown-timeout",
    "user:dismiss",
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
]

#: What a user can do to a session from the widget, the API, the CLI or HTTP.
ActionName = Literal["approve", "deny", "interrupt", "send"]
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


def cause_of(source: object) -> Cause | None:
    """Inverse of :func:`source_text` (None for an unknown or empty source)."""
    if isinstance(source, str) and source.startswith("hook:"):
        return "hook"
    return _CAUSE.get(source) if isinstance(source, str) else None


# ------------------------------------------------------------------------------ sessions


@dataclass(frozen=True)
class Tracking:
    """The tracker's bookkeeping for one session: never in the JSON, persisted with it.

    Times are ms epoch event times: they let the tracker order signals that overtake each
    other on different paths, and decide later signals from earlier ones.
    """

    #: when this hub first saw the session (the 5 s boot window counts from here)
    first_seen: int = 0
    #: event time of the newest signal that decided the state; older signals may not undo it
    decided_at: int = 0
    #: what decided the state (the JSON's ``source`` as a value the tracker can branch on)
    cause: Cause | None = None
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
    #: the PID file's last ``status`` and its ``waitingFor``
    pid_status: PidStatus | None = None
    waiting_for: str | None = None
    #: how the transcript's last main-thread record ends
    transcript_end: TranscriptEnding | None = None
    #: event time of the transcript's newest record (what ``transcript_end`` describes)
    transcript_at: int = 0
    compacting_since: int = 0
    #: consecutive process checks that found the Claude process dead
    gone_checks: int = 0
    #: the session ended (SessionEnd, process gone, or retired by /clear or a resume)
    ended: bool = False
    #: StopFailure's details, or the API error text, shown next to ``error``
    error_detail: str | None = None
    #: ids of the sub-agents running now (the session's ``subagents`` is their count)
    subagent_ids: tuple[str, ...] = ()
    #: when the session last became busy (the start of the current or last turn)
    turn_started_at: int = 0
    #: when the session last entered needs-input (the latest dialog opened)
    asked_at: int = 0
    #: the tmux pane id its hooks came from ($TMUX_PANE), before the poller locates it
    pane: str | None = None
    #: an earlier session of the same Claude process sent hooks: this one's will come too
    process_hooked: bool = False
    #: the last action delivered to this session and when: the state it leads to shows it
    action: ActionName | None = None
    action_at: int = 0
    #: True: an interactive CLI (its PID file says so); False: ``claude -p``, an SDK run or a
    #: daemon, whose finished turn waits for nobody; None: not known (no PID file seen)
    interactive: bool | None = None

    @property
    def hooked(self) -> bool:
        """True once any hook arrived for this session (or its process): hooks decide."""
        return self.last_hook_at > 0 or self.process_hooked

    def replace(self, **changes: Unpack[TrackingChanges]) -> Tracking:
        """A copy with ``changes``; fast for the same reason as :meth:`Session.replace`."""
        return _fast_replace(self, _TRACKING_FIELDS, changes)

    def to_record(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _TRACKING_FIELDS}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Tracking:
        """Read :meth:`to_record`'s keys from ``record``; unknown or missing ones are defaulted.

        Records written before the tracker kept ``cause`` get it from their ``source``."""
        known = {k: v for k, v in record.items() if k in _TRACKING_FIELDS}
        known["subagent_ids"] = tuple(str(a) for a in known.get("subagent_ids") or ())
        known["pid_status"] = as_pid_status(known.get("pid_status"))
        known["transcript_end"] = as_ending(known.get("transcript_end"))
        known["cause"] = cause_of(known.get("cause") or record.get("source"))
        action = known.get("action")
        known["action"] = next((a for a in ACTION_NAMES if a == action), None)
        return cls(**known)


@dataclass(frozen=True)
class Session:
    """One Claude Code conversation, keyed by its ``session_id``.

    The fields are the contract's session JSON, plus ``tracking``: the tracker's bookkeeping,
    persisted but never shown. A reader needs a few of its facts (``ended``, ``hooked``,
    ``waiting_for``, ``error_detail``): they are read-only properties here.
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
    #: the machine the session runs on (the fleet's hosts; None: this one, unnamed)
    host: str | None = None
    #: the permission mode its hooks report (default, auto, acceptEdits, plan, …)
    permission_mode: str | None = None
    #: tasks its last turn left running (background agents, shells)
    background_tasks: tuple[BackgroundTask, ...] = ()
    tracking: Tracking = field(default_factory=Tracking)

    @property
    def ended(self) -> bool:
        """The session is over (SessionEnd, process gone, or retired by /clear or a resume)."""
        return self.tracking.ended

    @property
    def hooked(self) -> bool:
        """True once any hook arrived for this session (or its process): hooks decide."""
        return self.tracking.hooked

    @property
    def waiting_for(self) -> str | None:
        """What the open dialog asks, as the PID file or a Notification hook put it."""
        return self.tracking.waiting_for

    @property
    def error_detail(self) -> str | None:
        """StopFailure's details, or the API error text, shown next to ``error``."""
        return self.tracking.error_detail

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

    def replace(self, **changes: Unpack[SessionChanges]) -> Session:
        """A copy with ``changes`` (field names only). The tracker calls this several times per
        signal: a dict merge is ~20x faster than ``dataclasses.replace``, which re-runs
        ``__init__`` over all fields."""
        return _fast_replace(self, _SESSION_FIELDS, changes)

    def dismiss(self) -> None:
        """Mark this finished session as seen: review → idle, through the running hub."""
        _handler().dismiss(self.session_id)

    def approve(self) -> None:
        """Choose "Yes" in the permission dialog on this session's screen (never "Yes, and
        don't ask again"). Raises ``pmux_widget.ActionError`` with the reason when refused:
        then nothing was typed."""
        _handler().act(self.session_id, "approve", None)

    def deny(self) -> None:
        """Choose "No" in the permission dialog on this session's screen."""
        _handler().act(self.session_id, "deny", None)

    def interrupt(self) -> None:
        """Press Esc: stops a running turn, or dismisses a dialog."""
        _handler().act(self.session_id, "interrupt", None)

    def send(self, text: str) -> None:
        """Type ``text`` into the session's prompt box and submit it (idle or review; while
        busy the CLI queues it)."""
        _handler().act(self.session_id, "send", text)

    def ask(self, text: str | None = None, timeout: float | None = None) -> Any:
        """Send ``text`` (None: send nothing) and wait until the turn ends: ``await`` it, or
        call ``.result()``. Gives the answer (the last assistant text), or says it waits for
        permission (then ``approve()`` and ``await session.ask()`` again)."""
        return _handler().ask(self.session_id, text, timeout)

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
            "host": self.host,
            "permission_mode": self.permission_mode,
            "background_tasks": [task.to_json() for task in self.background_tasks],
        }

    def to_record(self) -> dict[str, Any]:
        """What the store persists: the JSON and the bookkeeping's fields, in one flat object
        (the shape earlier versions wrote and read)."""
        return {**self.to_json(), **self.tracking.to_record()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Session:
        """Inverse of :meth:`to_record`; unknown keys are ignored, missing ones defaulted."""
        known = {k: v for k, v in record.items() if k in _JSON_FIELD_SET}
        known["state"] = State(known.get("state", State.IDLE.value))
        known["tokens"] = Tokens.from_json(known.get("tokens"))
        known["tmux"] = TmuxLocation.from_json(known.get("tmux"))
        known["ports"] = tuple(int(p) for p in known.get("ports") or ())
        tasks = (BackgroundTask.from_json(task) for task in known.get("background_tasks") or ())
        known["background_tasks"] = tuple(task for task in tasks if task is not None)
        return cls(**known, tracking=Tracking.from_record(record))


class TrackingChanges(TypedDict, total=False):
    """The keyword arguments of :meth:`Tracking.replace` (a test keeps it in step)."""

    first_seen: int
    decided_at: int
    cause: Cause | None
    last_hook_at: int
    interrupt_at: int
    tool_at: int
    prompt_at: int
    assistant_at: int
    active_at: int
    pid_status: PidStatus | None
    waiting_for: str | None
    transcript_end: TranscriptEnding | None
    transcript_at: int
    compacting_since: int
    gone_checks: int
    ended: bool
    error_detail: str | None
    subagent_ids: tuple[str, ...]
    turn_started_at: int
    asked_at: int
    pane: str | None
    process_hooked: bool
    action: ActionName | None
    action_at: int
    interactive: bool | None


class SessionChanges(TypedDict, total=False):
    """The keyword arguments of :meth:`Session.replace` (a test keeps it in step)."""

    session_id: str
    state: State
    running: bool
    state_since: int
    cwd: str | None
    project: str | None
    workspace: str | None
    pid: int | None
    tmux: TmuxLocation | None
    transcript_path: str | None
    model: str | None
    current_tool: str | None
    tool_summary: str | None
    last_assistant: str | None
    last_prompt: str | None
    tokens: Tokens
    context_tokens: int
    compacting: bool
    subagents: int
    error: str | None
    ports: tuple[int, ...]
    source: str
    host: str | None
    permission_mode: str | None
    background_tasks: tuple[BackgroundTask, ...]
    tracking: Tracking


_T = TypeVar("_T", Session, Tracking)


def _fast_replace(value: _T, names: frozenset[str], changes: Mapping[str, object]) -> _T:
    """A copy of a frozen dataclass with ``changes``, by merging ``__dict__``s."""
    unknown = changes.keys() - names
    if unknown:
        raise TypeError(f"{type(value).__name__} has no field(s) {sorted(unknown)}")
    new = object.__new__(type(value))
    object.__setattr__(new, "__dict__", {**value.__dict__, **changes})
    return new


class SessionHandler(Protocol):
    """What a session's own methods (dismiss, approve, …) call: installed by the API when its
    hub starts, so that data can ask for its own dismissal without this module depending on
    the hub (data flows one way)."""

    def dismiss(self, session_id: str) -> None: ...

    def act(self, session_id: str, action: ActionName, text: str | None) -> None: ...

    def ask(self, session_id: str, text: str | None, timeout: float | None) -> Any: ...


_session_handler: SessionHandler | None = None


def set_session_handler(handler: SessionHandler | None) -> None:
    global _session_handler
    _session_handler = handler


def _handler() -> SessionHandler:
    if _session_handler is None:
        raise RuntimeError("no pmux-widget hub is running: call pmux_widget.start() first")
    return _session_handler


_SESSION_FIELDS = frozenset(f.name for f in dataclasses.fields(Session))
_TRACKING_FIELDS = frozenset(f.name for f in dataclasses.fields(Tracking))
_JSON_FIELD_SET = frozenset(JSON_FIELDS)


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
