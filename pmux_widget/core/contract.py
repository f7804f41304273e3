"""The kernel ↔ browser contract of the widget, defined once: the shapes Python sends, the
messages the browser answers with, the state names, the counts' keys and the source labels.

``js/src/contract.gen.ts`` is generated from this module (:mod:`core.contract_ts`, ``npm run
contract``, see docs/development.md) and tests/test_contract.py fails when the committed file
differs, so the TypeScript types can never drift from what Python sends. The words a row
uses come from :mod:`core.wording`. Pure: values and types.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal, TypedDict, Union

from pmux_widget.core.agents import Agent
from pmux_widget.core.model import Session, State, count_states
from pmux_widget.core.wording import (
    AUTO_COMPACT_AT,
    CONTEXT_WARN_AT,
    NEED_YOU_STATES,
    NEED_YOU_WORDS,
    activity,
    answer,
    asks,
    context_window,
    non_interactive,
    notification_text,
    pane_title,
)

__all__ = [
    "AUTO_COMPACT_AT",
    "CONTEXT_WARN_AT",
    "COUNT_KEYS",
    "NEED_YOU_STATES",
    "NEED_YOU_WORDS",
    "SOURCE_LABELS",
    "SOURCE_PREFIXES",
    "ActionMessage",
    "ActionName",
    "ActionResultMessage",
    "AskJSON",
    "AttachMessage",
    "AttachResultMessage",
    "BackgroundJSON",
    "Counts",
    "DismissMessage",
    "Env",
    "FrontendMessage",
    "History",
    "HostJSON",
    "HubInfo",
    "InstallHooksMessage",
    "InstallResult",
    "InstallResultMessage",
    "KernelMessage",
    "NotificationJSON",
    "NotifyMessage",
    "OptionJSON",
    "PatchMessage",
    "PeekMessage",
    "PeekResultMessage",
    "QuestionJSON",
    "Row",
    "SeenMessage",
    "SessionJSON",
    "Snapshot",
    "StateName",
    "TerminalJSON",
    "Traits",
    "TransitionJSON",
    "activity",
    "answer",
    "asks",
    "context_window",
    "counts",
    "describe_source",
    "notification_text",
    "row",
]

# --------------------------------------------------------------------------- names

#: The state strings (core.model.State's values; tests/test_contract.py pins the two together).
StateName = Literal["idle", "busy", "needs-input", "review", "unknown"]
#: ``StatusWidget.mode``: the whole widget, or sidebar()'s stand-in left in the cell.
Mode = Literal["full", "sidebar-stub"]

#: The keys of ``counts``: one per state, plus attention (needs-input + review).
COUNT_KEYS: tuple[str, ...] = (*(state.value for state in State), "attention")

Counts = TypedDict(
    "Counts",
    {
        "idle": int,
        "busy": int,
        "needs-input": int,
        "review": int,
        "unknown": int,
        "attention": int,
    },
)

# --------------------------------------------------------------------------- rows


class TokensJSON(TypedDict):
    input: int
    output: int
    cache_read: int
    cache_creation: int


class TmuxJSON(TypedDict):
    session: str
    window: str
    pane: str
    title: str


class TerminalJSON(TypedDict):
    """The JupyterLab terminal a session runs in (issue 21): its name."""

    name: str


class BackgroundTaskJSON(TypedDict):
    """A task a turn left running (2.1.332+): a background agent, a shell."""

    type: str
    description: str
    status: str


class BackgroundJSON(TypedDict):
    """A background session of Claude Code's own (issue 26): its job id and name."""

    job: str
    name: str


class OptionJSON(TypedDict):
    """One option of a question: its label (what an answer names) and what it means."""

    label: str
    description: str


class AskJSON(TypedDict):
    """One question of Claude's ``AskUserQuestion`` dialog (1–4 a dialog)."""

    question: str
    header: str
    multi_select: bool
    options: list[OptionJSON]


class QuestionJSON(TypedDict):
    """DESIGN.md ``question``: what exactly waits on the user while a session is needs-input:
    a permission, questions with their options (kind question), or a plan's text (kind plan;
    null when the CLI keeps it off the dialog)."""

    kind: Literal["permission", "question", "plan"]
    questions: list[AskJSON]
    plan: str | None


class SessionJSON(TypedDict):
    """DESIGN.md "Session JSON": ``Session.to_json()``, exactly its keys."""

    session_id: str
    state: StateName
    running: bool
    state_since: int
    cwd: str | None
    project: str | None
    workspace: str | None
    pid: int | None
    tmux: TmuxJSON | None
    terminal: TerminalJSON | None
    transcript_path: str | None
    model: str | None
    current_tool: str | None
    tool_summary: str | None
    last_assistant: str | None
    last_prompt: str | None
    tokens: TokensJSON
    context_tokens: int
    compacting: bool
    subagents: int
    error: str | None
    ports: list[int]
    source: str
    host: str | None
    agent: Agent
    permission_mode: str | None
    background_tasks: list[BackgroundTaskJSON]
    background: BackgroundJSON | None
    question: QuestionJSON | None


class Row(SessionJSON):
    """A widget row: the session JSON plus what the view needs to explain it, in the words the
    notifications and ``status`` use too (paths relative to the session's folder). Two long
    texts the view never shows are null in a row: ``transcript_path``, and ``last_assistant``
    except when it is the ``answer`` (P9)."""

    ended: bool
    waiting_for: str | None
    error_detail: str | None
    name: str
    #: busy: the current tool and its argument ("Bash $ pytest -q", "Edit src/a.py (+1, -0)")
    activity: str | None
    #: needs-input: what is asked, in full words ("asks to run: pytest -q")
    asks: str | None
    #: the last answer, only when it answers the latest prompt (never a previous turn's)
    answer: str | None
    #: what an action on this row names (runtime.actions.dialog_token); "" when unknown
    dialog_token: str
    #: nobody sits at it: how it was started ("claude -p", "SDK", "background"), the row's
    #: badge; its finished turns are idle, never review. Null: interactive, or not known.
    non_interactive: str | None
    #: an Agent SDK run: the program that runs it, and for a notebook's kernel the notebook
    #: (server-relative path: the panel opens it on a click); null for any other session
    origin: OriginJSON | None
    #: the tmux pane's title when it tells something (a title the user gave the pane, or
    #: the topic Claude Code names it by, without its glyph); null when it is tmux's default
    #: (the machine's name) or says nothing the row does not (core.wording.pane_title)
    pane_title: str | None


def counts(sessions: Iterable[Session]) -> Counts:
    """The counts sent with the rows: core.model.count_states over the sessions not ended."""
    return count_states(s for s in sessions if not s.ended)  # type: ignore[return-value]


def row(session: Session, token: str = "", machine: str | None = None) -> Row:
    """The widget's row of ``session``; ``token`` is runtime.actions.dialog_token(session)
    (the widget adds it: core cannot import the runtime), which a click sends back so a stale
    click never acts on a newer dialog. ``machine``: this machine's name, tmux's default pane
    title (the widget adds it too: core reads nothing of the system)."""
    base: SessionJSON = session.to_json()  # type: ignore[assignment]  # keys pinned by a test
    shown = answer(session)
    # Every byte of a row travels with each of its changes (P9: ≤ 2 KB a change, measured on
    # the websocket): the two longest texts the view never shows stay out of it. The
    # transcript's path is read by the kernel only; an answer shows only as ``answer``, and
    # only while it answers the latest prompt. The API's session JSON keeps both.
    base["transcript_path"] = None
    base["last_assistant"] = shown
    return {
        **base,
        "ended": session.ended,
        "waiting_for": session.waiting_for,
        "error_detail": session.error_detail,
        "name": session.name,
        "activity": activity(session),
        "asks": asks(session) if session.state is State.NEEDS_INPUT else None,
        "answer": shown,
        "dialog_token": token,
        "non_interactive": non_interactive(session),
        "pane_title": pane_title(session, machine),
        "origin": origin(session),
    }


class OriginJSON(TypedDict):
    """Where an Agent SDK run comes from: ``program`` (``ipykernel``, ``my_script.py``),
    ``kernel_id`` and ``notebook`` when a Jupyter kernel runs it and its server said which."""

    program: str
    kernel_id: str | None
    notebook: str | None


def origin(session: Session) -> OriginJSON | None:
    """The row's ``origin`` (an SDK run whose program is known), else None."""
    t = session.tracking
    if t.program is None:
        return None
    return {"program": t.program, "kernel_id": t.kernel_id, "notebook": t.notebook}


# --------------------------------------------------------------------------- kernel → browser


class HostJSON(TypedDict):
    """A fleet host (DESIGN.md "Fleet"): beating or not, and its last beat (ms epoch, 0: never).
    ``last_seen`` is sent when ``online`` changes, not on every beat: it dates an offline host."""

    online: bool
    last_seen: int


class Snapshot(TypedDict):
    """The ``snapshot`` trait: the whole fleet at ``seq``; ``now`` is the kernel's clock (ms).
    ``hosts``: the fleet's hosts by name; empty for a widget over this machine's hub."""

    seq: int
    sessions: dict[str, Row]
    counts: Counts
    now: int
    hosts: dict[str, HostJSON]


class TransitionJSON(TypedDict):
    """A session entered ``state`` at ``at`` (ms epoch) because of ``source``."""

    at: int
    state: StateName
    source: str


class History(TypedDict):
    """The ``history`` trait: each session's transitions from ``since`` (ms epoch; 24 h before
    the widget was made, the longest range a strip shows) on, oldest first, with the one before
    ``since`` that says the state the session was in then. Sent once with the model; after that
    the browser appends a transition from each patched row whose ``state_since`` moved, so
    patches carry no history (P9)."""

    since: int
    sessions: dict[str, list[TransitionJSON]]


class PatchMessage(TypedDict):
    """One coalesced change: the touched rows, the removed ids, the new counts; ``hosts``: all
    the fleet's hosts when one went online or offline (or came, or went), else null."""

    type: Literal["patch"]
    seq: int
    upsert: list[Row]
    remove: list[str]
    counts: Counts
    now: int
    hosts: dict[str, HostJSON] | None


class NotificationJSON(TypedDict):
    session_id: str
    state: StateName
    title: str
    body: str
    at: int


class NotifyMessage(TypedDict):
    type: Literal["notify"]
    notification: NotificationJSON


class InstallResult(TypedDict):
    ok: bool
    message: str


class InstallResultMessage(TypedDict):
    type: Literal["install_result"]
    ok: bool
    message: str


#: What the browser may ask of a session (runtime.actions.ACTIONS).
ActionName = Literal["approve", "deny", "interrupt", "send", "answer", "stop", "remove"]


class ActionResultMessage(TypedDict):
    """The answer to an ``action``: delivered (``ok``), or refused with the reason."""

    type: Literal["action_result"]
    session_id: str
    action: str
    ok: bool
    message: str
    queued: bool


class PeekResultMessage(TypedDict):
    """The answer to a ``peek``: the pane's last lines (read-only), or why they cannot be read."""

    type: Literal["peek_result"]
    session_id: str
    ok: bool
    lines: list[str]
    dialog: str | None
    message: str


class AttachResultMessage(TypedDict):
    """The answer to an ``attach``: the tmux window running ``claude attach <job>``
    (``target`` is ``session:window``, ``command`` what shows it: ``tmux attach -t …``;
    ``opened`` false when it was open already), or why not (``ok`` false, ``message``)."""

    type: Literal["attach_result"]
    session_id: str
    ok: bool
    target: str | None
    command: str | None
    opened: bool
    message: str


KernelMessage = Union[  # noqa: UP007
    PatchMessage,
    NotifyMessage,
    InstallResultMessage,
    ActionResultMessage,
    PeekResultMessage,
    AttachResultMessage,
]


class HubInfo(TypedDict):
    """The hub the widget listens to: its port, its process id, and its own id string."""

    port: int
    pid: int
    hub_id: str


class Env(TypedDict):
    """The ``env`` trait: which screen to show (no Claude, hooks missing, the list)."""

    claude_installed: bool
    claude_dir: str
    hooks_installed: bool
    hooks_problem: str | None
    hub: HubInfo | None
    install_result: InstallResult | None


class Traits(TypedDict):
    """The synced traits of ``StatusWidget`` (besides anywidget's and ipywidgets' own)."""

    snapshot: Snapshot
    history: History
    env: Env
    title_prefix: bool
    desktop_notifications: bool
    sidebar_note: str
    mode: Mode
    #: rows of sessions nobody sits at (claude -p, SDK): shown, hidden, or null for the
    #: browser's remembered choice (shown by default)
    show_non_interactive: bool | None


# --------------------------------------------------------------------------- browser → kernel


class DismissMessage(TypedDict):
    type: Literal["dismiss"]
    session_id: str


class InstallHooksMessage(TypedDict):
    type: Literal["install_hooks"]


class _AnswerFields(TypedDict, total=False):
    options: list[str]
    mode: str


class ActionMessage(_AnswerFields):
    """Approve, deny, interrupt, send (``text``) or answer (``options``: labels; ``text``: the
    free-text "Other") to a session; a plan's approve may name ``mode``, its deny gives
    ``text`` as feedback. ``token`` is the row's ``dialog_token`` as shown when clicked (a
    changed state refuses the action)."""

    type: Literal["action"]
    session_id: str
    action: ActionName
    text: str | None
    token: str | None


class SeenMessage(TypedDict):
    """The user looks at a session (its JupyterLab terminal tab is focused in a visible page,
    its row's peek or attach was opened): a review ends, silently (``user:seen``)."""

    type: Literal["seen"]
    session_id: str


class PeekMessage(TypedDict):
    type: Literal["peek"]
    session_id: str


class AttachMessage(TypedDict):
    """ "Attach in a terminal" where the page has no JupyterLab terminal to open: the kernel
    opens a tmux window running ``claude attach <job>`` (a background session only)."""

    type: Literal["attach"]
    session_id: str


FrontendMessage = Union[  # noqa: UP007
    DismissMessage, InstallHooksMessage, ActionMessage, PeekMessage, AttachMessage, SeenMessage
]

# --------------------------------------------------------------------------- source labels

#: The plain-language "why" of a state, per exact ``source``: what the session did, in words a
#: new user reads without knowing hooks or PID files (the raw ``source`` stays in the tooltip).
SOURCE_LABELS: Mapping[str, str] = {
    "hook:SessionStart": "started",
    "hook:UserPromptSubmit": "got a prompt",
    "hook:PreToolUse": "working",
    "hook:PermissionRequest": "asked for permission",
    "hook:Notification": "asked for your input",
    "hook:PostToolUse": "permission answered",
    "hook:PostToolUseFailure": "a tool failed",
    "hook:Stop": "finished its turn",
    "hook:StopFailure": "stopped on an error",
    "hook:SessionEnd": "ended",
    "transcript:interrupt": "interrupted",
    "transcript:answer": "finished its turn",
    "transcript:tool-result": "its tool was refused or ran: nothing waits",
    "sdk:waiting": "waits for your answer (its program asks pmux-widget)",
    "pid:busy": "working",
    "pid:waiting": "waiting for you",
    "pid:idle": "at its prompt",
    "pid:shell": "running a shell command",
    "pid:found": "found running",
    "process:gone": "its process exited",
    "poll:stale-busy": "no sign of work for 10 min",
    "poll:unknown-timeout": "state unknown for 10 min",
    "user:dismiss": "marked as seen",
    "user:seen": "seen",
    "action:approve": "approved",
    "action:deny": "denied",
    "action:interrupt": "interrupted (Esc)",
    "action:send": "got a prompt typed in",
    "action:stop": "stopped (claude stop)",
    "action:remove": "removed (claude rm)",
    "restart": "re-checking after a restart",
    "retired": "replaced (/clear, /new or resume)",
    "recovery:process-gone": "exited while the hub was down",
    "recovery:transcript": "finished while the hub was down",
    "recovery:interrupt": "interrupted while the hub was down",
    "background:stopped": "stopped",
    "background:removed": "removed (claude rm)",
    "pid:spare": "a spare worker, not a session",
    "rollout:running": "working",
    "rollout:waiting": "waiting for you",
    "rollout:complete": "finished its turn",
    "rollout:aborted": "interrupted",
    # Not sent yet: the tracker does not tell a turn that waits for a background agent apart.
    "wait:background-agent": "waiting for a background agent",
}

#: Sources not listed above, by prefix: ``{}`` is the rest ("hook:Elicitation" → "signal:
#: Elicitation"). ``recovery:`` wraps the label of the rest, which is looked up again;
#: ``action:`` is an answer from elsewhere ("action:approve@Pixel 8" → "approved from Pixel
#: 8"): the label of the action's own source, then where it came from.
SOURCE_PREFIXES: Mapping[str, str] = {
    "hook:": "signal: {}",
    "recovery:": "{} (at restart)",
    "action:": "{} from {}",
}


def describe_source(source: str) -> str:
    """The "why" of a state, from a row's ``source`` (js/src/format.ts does the same)."""
    if not source:
        return ""
    if source in SOURCE_LABELS:
        return SOURCE_LABELS[source]
    if source.startswith("hook:"):
        return SOURCE_PREFIXES["hook:"].format(source[len("hook:") :])
    if source.startswith("recovery:"):
        inner = describe_source(source[len("recovery:") :])
        return SOURCE_PREFIXES["recovery:"].format(inner) if inner else "at restart"
    if source.startswith("action:") and "@" in source:
        action, _, origin = source.partition("@")
        return SOURCE_PREFIXES["action:"].format(describe_source(action), origin)
    return source
