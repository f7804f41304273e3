"""Plain data shared by every part of pmux-widget: states, sessions, changes, notifications.

Nothing here does I/O or knows the time; these are values. A :class:`Session` is frozen, so a
snapshot handed to a cell, a subscriber or the widget stays valid while the tracker moves on.

The vocabulary (states, causes, statuses…) lives in ``vocabulary.py`` and the tracker's
bookkeeping in ``tracking.py``; this module re-exports both, so the rest of the package reads
its data types from one place.

The values a session holds (tokens, its tmux pane or terminal, its background job and
tasks) live in ``session_parts.py``, re-exported here too; :class:`Session` itself (the
contract's fields, their JSON form, the action methods) stays whole in this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from .agents import DEFAULT_AGENT, Agent, agent_of
from .question import Question
from .session_parts import (
    Background,
    BackgroundTask,
    TerminalLocation,
    TmuxLocation,
    TmuxWindow,
    Tokens,
)
from .tracking import Tracking, fast_replace
from .vocabulary import (
    ACTION_NAMES,
    ACTION_WINDOW_MS,
    ATTENTION_STATES,
    CAUSES,
    PID_STATUSES,
    PRIORITY,
    SNIPPET_LIMIT,
    TRANSCRIPT_ENDINGS,
    ActionName,
    Cause,
    HookEvent,
    PidStatus,
    State,
    TranscriptEnding,
    action_source,
    as_ending,
    as_pid_status,
    cause_of,
    clip,
    most_urgent,
    priority_rank,
    source_text,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "ACTION_NAMES",
    "ACTION_WINDOW_MS",
    "ATTENTION_STATES",
    "CAUSES",
    "JSON_FIELDS",
    "PID_STATUSES",
    "PRIORITY",
    "SNIPPET_LIMIT",
    "TRANSCRIPT_ENDINGS",
    "ActionName",
    "Background",
    "BackgroundTask",
    "Cause",
    "Change",
    "HookEvent",
    "Notification",
    "PidStatus",
    "Question",
    "Session",
    "State",
    "TerminalLocation",
    "TmuxLocation",
    "TmuxWindow",
    "Tokens",
    "Tracking",
    "TranscriptEnding",
    "Transition",
    "action_source",
    "as_ending",
    "as_pid_status",
    "cause_of",
    "clip",
    "count_states",
    "most_urgent",
    "priority_rank",
    "set_session_handler",
    "source_text",
]


def count_states(sessions: Iterable[Session]) -> dict[str, int]:
    """Counts per state plus ``attention`` (needs-input + review; unknown is not counted)."""
    counts = {state.value: 0 for state in State}
    for session in sessions:
        counts[session.state.value] += 1
    counts["attention"] = counts[State.NEEDS_INPUT.value] + counts[State.REVIEW.value]
    return counts


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
    "terminal",
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
    "agent",
    "permission_mode",
    "background_tasks",
    "background",
    "question",
)


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
    #: the JupyterLab terminal it runs in (set by the server extension's mapping)
    terminal: TerminalLocation | None = None
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
    #: which agent CLI runs it ("claude" until a hook names another)
    agent: Agent = DEFAULT_AGENT
    #: the permission mode its hooks report (default, auto, acceptEdits, plan, …)
    permission_mode: str | None = None
    #: tasks its last turn left running (background agents, shells)
    background_tasks: tuple[BackgroundTask, ...] = ()
    #: a background session of Claude Code's own (its job and name); None: not one
    background: Background | None = None
    #: needs-input: what exactly waits on the user (a permission, a question, a plan)
    question: Question | None = None
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
        """A short human name: the project, plus where it runs: the tmux window.pane, the
        JupyterLab terminal, or "background" and its name (Claude Code's background session)."""
        base = self.project or (self.cwd.rstrip("/").rsplit("/", 1)[-1] if self.cwd else None)
        base = base or self.session_id[:8]
        if self.background:
            return f"{base} (background: {self.background.name or self.background.job})"
        if self.tmux:
            return f"{base} ({self.tmux.session}:{self.tmux.window}.{self.tmux.pane})"
        if self.terminal:
            return f"{base} (terminal {self.terminal.name})"
        return base

    def replace(self, **changes: Unpack[SessionChanges]) -> Session:
        """A copy with ``changes`` (field names only). The tracker calls this several times per
        signal: a dict merge is ~20x faster than ``dataclasses.replace``, which re-runs
        ``__init__`` over all fields."""
        return fast_replace(self, _SESSION_FIELDS, changes)

    def dismiss(self) -> None:
        """Mark this finished session as seen: review → idle, through the running hub."""
        _handler().dismiss(self.session_id)

    def approve(self, mode: str | None = None) -> None:
        """Choose "Yes" in the permission dialog on this session's screen (never "Yes, and
        don't ask again"); on a plan, accept it with the choice that keeps asking for each
        edit, unless ``mode`` names another permission mode (``"auto"``, ``"acceptEdits"``).
        Raises ``pmux_widget.ActionError`` with the reason when refused: then nothing was
        typed."""
        _handler().act(self.session_id, "approve", None, mode=mode)

    def deny(self, text: str | None = None) -> None:
        """Choose "No" in the permission dialog on this session's screen; on a plan, "keep
        planning", with ``text`` as the feedback Claude gets."""
        _handler().act(self.session_id, "deny", text)

    def answer(
        self,
        *choice: str | Sequence[str] | Mapping[str, str | Sequence[str]],
        text: str | None = None,
    ) -> None:
        """Answer the question on this session's screen by label, never by position:
        ``answer("Amber")``; several labels for a multi-select (``answer("Lint", "Tests")``
        or a list); a mapping question → label(s) for several questions; ``text=`` types the
        free-text "Other" answer. Raises ``pmux_widget.ActionError`` when refused (nothing
        typed): a label in no question or in two, a question left unanswered, no question
        on screen."""
        options: list[str] = []
        answers: dict[str, list[str]] = {}
        for item in choice:
            if isinstance(item, str):
                options.append(item)
            elif isinstance(item, Mapping):
                for asked, labels in item.items():
                    answers[asked] = [labels] if isinstance(labels, str) else list(labels)
            else:
                options.extend(item)
        _handler().act(self.session_id, "answer", text, options=options, answers=answers or None)

    def interrupt(self) -> None:
        """Press Esc: stops a running turn, or dismisses a dialog."""
        _handler().act(self.session_id, "interrupt", None)

    def send(self, text: str) -> None:
        """Type ``text`` into the session's prompt box and submit it (idle or review; while
        busy the CLI queues it)."""
        _handler().act(self.session_id, "send", text)

    def stop(self) -> None:
        """A Claude Code background session only: ``claude stop <job>`` (its conversation is
        kept; ``claude attach`` resumes it). Raises ``pmux_widget.ActionError`` otherwise."""
        _handler().act(self.session_id, "stop", None)

    def remove(self) -> None:
        """A Claude Code background session only: ``claude rm <job>`` (stops it if it runs,
        and deletes the job; the transcript stays)."""
        _handler().act(self.session_id, "remove", None)

    def attach(self) -> TmuxWindow:
        """A Claude Code background session only: "Attach in a terminal" outside JupyterLab,
        a window in your tmux (the default server; a detached session ``pmux-attach`` when
        none runs) running ``claude attach <job>``; the window open already is brought to the
        front instead. Returns where it is (``tmux attach -t <target>`` shows it). Raises
        ``pmux_widget.ActionError`` for any other session, or when tmux cannot open it."""
        return _handler().attach(self.session_id)

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
            "terminal": self.terminal.to_json() if self.terminal else None,
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
            "agent": self.agent,
            "permission_mode": self.permission_mode,
            "background_tasks": [task.to_json() for task in self.background_tasks],
            "background": self.background.to_json() if self.background else None,
            "question": self.question.to_json() if self.question else None,
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
        known["terminal"] = TerminalLocation.from_json(known.get("terminal"))
        known["ports"] = tuple(int(p) for p in known.get("ports") or ())
        tasks = (BackgroundTask.from_json(task) for task in known.get("background_tasks") or ())
        known["background_tasks"] = tuple(task for task in tasks if task is not None)
        known["background"] = Background.from_json(known.get("background"))
        known["question"] = Question.from_json(known.get("question"))
        known["agent"] = agent_of(known.get("agent")) or DEFAULT_AGENT  # older records: none
        return cls(**known, tracking=Tracking.from_record(record))


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
    terminal: TerminalLocation | None
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
    agent: Agent
    permission_mode: str | None
    background_tasks: tuple[BackgroundTask, ...]
    background: Background | None
    question: Question | None
    tracking: Tracking


class SessionHandler(Protocol):
    """What a session's own methods (dismiss, approve, …) call: installed by the API when its
    hub starts, so that data can ask for its own dismissal without this module depending on
    the hub (data flows one way)."""

    def dismiss(self, session_id: str) -> None: ...

    def act(
        self,
        session_id: str,
        action: ActionName,
        text: str | None,
        *,
        options: Sequence[str] | None = None,
        answers: Mapping[str, Sequence[str]] | None = None,
        mode: str | None = None,
    ) -> None: ...

    def ask(self, session_id: str, text: str | None, timeout: float | None) -> Any: ...

    def attach(self, session_id: str) -> TmuxWindow: ...


_session_handler: SessionHandler | None = None


def set_session_handler(handler: SessionHandler | None) -> None:
    global _session_handler
    _session_handler = handler


def _handler() -> SessionHandler:
    if _session_handler is None:
        raise RuntimeError("no pmux-widget hub is running: call pmux_widget.start() first")
    return _session_handler


_SESSION_FIELDS = frozenset(f.name for f in dataclasses.fields(Session))
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
