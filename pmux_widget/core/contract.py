"""The kernel ↔ browser contract of the widget, defined once: the shapes Python sends, the
messages the browser answers with, the state names, the counts' keys and the source labels.

``js/src/contract.gen.ts`` is generated from this module (``python -m
pmux_widget.core.contract --ts``, see docs/development.md) and tests/test_contract.py fails when
the committed file differs, so the TypeScript types can never drift from what Python sends.
Pure: values, types and text; the ``__main__`` block only prints.
"""

from __future__ import annotations

import json
import re
import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypedDict, Union, get_args, get_origin, get_type_hints

from pmux_widget.core.model import Session, State, TmuxLocation, Tokens, Tracking, count_states

__all__ = [
    "AUTO_COMPACT_AT",
    "CONTEXT_WARN_AT",
    "COUNT_KEYS",
    "SOURCE_LABELS",
    "SOURCE_PREFIXES",
    "ActionMessage",
    "ActionName",
    "ActionResultMessage",
    "Counts",
    "DismissMessage",
    "Env",
    "FrontendMessage",
    "History",
    "HubInfo",
    "InstallHooksMessage",
    "InstallResult",
    "InstallResultMessage",
    "KernelMessage",
    "NotificationJSON",
    "NotifyMessage",
    "PatchMessage",
    "PeekMessage",
    "PeekResultMessage",
    "Row",
    "SessionJSON",
    "Snapshot",
    "StateName",
    "Traits",
    "TransitionJSON",
    "activity",
    "answer",
    "asks",
    "context_window",
    "counts",
    "describe_source",
    "notification_text",
    "relative_paths",
    "row",
    "sample",
    "typescript",
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


class BackgroundTaskJSON(TypedDict):
    """A task a turn left running (2.1.332+): a background agent, a shell."""

    type: str
    description: str
    status: str


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
    permission_mode: str | None
    background_tasks: list[BackgroundTaskJSON]


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


def counts(sessions: Iterable[Session]) -> Counts:
    """The counts sent with the rows: core.model.count_states over the sessions not ended."""
    return count_states(s for s in sessions if not s.ended)  # type: ignore[return-value]


def row(session: Session, token: str = "") -> Row:
    """The widget's row of ``session``; ``token`` is runtime.actions.dialog_token(session)
    (the widget adds it: core cannot import the runtime), which a click sends back so a stale
    click never acts on a newer dialog."""
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
    }


# --------------------------------------------------------------------------- what a session does

#: A path longer than this is shortened in the middle; its file name is always kept.
PATH_LIMIT = 40
_PATH = re.compile(r"(?<![\w.:/-])(/[^\s\"'`]+)")


def relative_paths(text: str, cwd: str | None) -> str:
    """``text`` with absolute paths under ``cwd`` made relative to it, and every path longer than
    :data:`PATH_LIMIT` shortened in the middle (``src/…/pay/payments.py``): the file name is the
    part a reader needs, so it is never what gets cut."""
    root = (cwd or "").rstrip("/")

    def one(match: re.Match[str]) -> str:
        path = match.group(1)
        if root and path == root:
            path = "."
        elif root and path.startswith(root + "/"):
            path = path[len(root) + 1 :]
        return shorten_path(path)

    return _PATH.sub(one, text) if "/" in text else text


def shorten_path(path: str, limit: int = PATH_LIMIT) -> str:
    """``path`` cut in the middle to about ``limit`` characters, keeping its first directory and
    as many of its last parts as fit (the file name always)."""
    if len(path) <= limit:
        return path
    parts = path.split("/")
    first = 2 if path.startswith("/") else 1
    head, middle, tail = "/".join(parts[:first]), parts[first:-1], parts[-1]
    if not middle:
        return path
    for part in reversed(middle):
        if len(head) + len(part) + len(tail) + 4 > limit:
            break
        tail = f"{part}/{tail}"
    return f"{head}/…/{tail}"


def activity(session: Session) -> str | None:
    """The current tool and what it works on, paths relative to the session's folder."""
    tool, summary = session.current_tool, session.tool_summary
    if not tool and not summary:
        return None
    text = summary or tool or ""
    if tool and summary and not summary.lower().startswith(tool.lower()):
        text = f"{tool} {summary}"
    return relative_paths(text, session.cwd)


#: What a tool asks for, in words: ``{}`` is its argument (the summary without the tool name).
_ASKS: Mapping[str, str] = {
    "Bash": "asks to run: {}",
    "Edit": "asks to edit {}",
    "MultiEdit": "asks to edit {}",
    "Write": "asks to write {}",
    "Read": "asks to read {}",
    "NotebookEdit": "asks to edit {}",
    "WebFetch": "asks to fetch {}",
    "WebSearch": "asks to search the web for {}",
    "Grep": "asks to search for {}",
    "Glob": "asks to list {}",
}


def asks(session: Session) -> str:
    """What a needs-input session asks, in full words: the tool with its command or file
    (relative to the session's folder), else Claude's own words, else that it waits."""
    tool, summary = session.current_tool, session.tool_summary
    if tool:
        arg = summary or ""
        if arg.lower().startswith(tool.lower()):
            arg = arg[len(tool) :].strip()
        if tool == "Bash" and arg.startswith("$ "):
            arg = arg[2:]
        arg = relative_paths(arg, session.cwd)
        if not arg:
            return f"asks to use {tool}"
        return _ASKS.get(tool, f"asks to use {tool}: {{}}").format(arg)
    if session.waiting_for:
        return relative_paths(session.waiting_for, session.cwd)
    return "waits for your answer"


def answer(session: Session) -> str | None:
    """The last answer, unless a newer prompt came after it (then it answers an older turn)."""
    if not session.last_assistant:
        return None
    t = session.tracking
    if t.prompt_at and t.assistant_at and t.assistant_at < t.prompt_at:
        return None
    if session.state in (State.BUSY, State.NEEDS_INPUT):
        return None  # a turn is under way: whatever was said before belongs to the last one
    return session.last_assistant


def notification_text(session: Session) -> tuple[str, str]:
    """The (title, body) of a desktop notification, in the rows' words (for core.tracker)."""
    name = session.name
    if session.state is State.NEEDS_INPUT:
        return f"{name} needs you", asks(session)
    if session.error:
        body = session.error_detail or "the turn ended with an error"
        return f"{name} stopped: {session.error}", body
    return f"{name} finished its turn", answer(session) or "ready for review"


# --------------------------------------------------------------------------- context window

#: The context window by model id, first match wins: the 1M-context variants are named with
#: a "[1m]" suffix (or "1M context" in their display name); every current Claude model has
#: 200k otherwise.
CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("[1m]", 1_000_000),
    ("1m context", 1_000_000),
    ("-1m", 1_000_000),
)
DEFAULT_CONTEXT_WINDOW = 200_000
#: Claude Code compacts on its own when the context reaches about 92-95% of the window; the
#: lower end is taken, so the warning can come early but never late.
AUTO_COMPACT_AT = 0.92
#: The share of the window from which a row warns that compaction is near (about 24k tokens,
#: one or two turns that read files, before AUTO_COMPACT_AT on a 200k window).
CONTEXT_WARN_AT = 0.80


def context_window(model: str | None) -> int:
    """The context window (tokens) of ``model``; 200k when unknown."""
    name = (model or "").lower()
    for marker, window in CONTEXT_WINDOWS:
        if marker in name:
            return window
    return DEFAULT_CONTEXT_WINDOW


# --------------------------------------------------------------------------- kernel → browser


class Snapshot(TypedDict):
    """The ``snapshot`` trait: the whole fleet at ``seq``; ``now`` is the kernel's clock (ms)."""

    seq: int
    sessions: dict[str, Row]
    counts: Counts
    now: int


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
    """One coalesced change: the touched rows, the removed ids, the new counts."""

    type: Literal["patch"]
    seq: int
    upsert: list[Row]
    remove: list[str]
    counts: Counts
    now: int


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
ActionName = Literal["approve", "deny", "interrupt", "send"]


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


KernelMessage = Union[  # noqa: UP007
    PatchMessage, NotifyMessage, InstallResultMessage, ActionResultMessage, PeekResultMessage
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


# --------------------------------------------------------------------------- browser → kernel


class DismissMessage(TypedDict):
    type: Literal["dismiss"]
    session_id: str


class InstallHooksMessage(TypedDict):
    type: Literal["install_hooks"]


class ActionMessage(TypedDict):
    """Approve, deny, interrupt or send (``text``) to a session; ``token`` is the row's
    ``dialog_token`` as shown when clicked (a changed state refuses the action)."""

    type: Literal["action"]
    session_id: str
    action: ActionName
    text: str | None
    token: str | None


class PeekMessage(TypedDict):
    type: Literal["peek"]
    session_id: str


FrontendMessage = Union[  # noqa: UP007
    DismissMessage, InstallHooksMessage, ActionMessage, PeekMessage
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
    "pid:busy": "working",
    "pid:waiting": "waiting for you",
    "pid:idle": "at its prompt",
    "pid:shell": "running a shell command",
    "pid:found": "found running",
    "process:gone": "its process exited",
    "poll:stale-busy": "no sign of work for 10 min",
    "poll:unknown-timeout": "state unknown for 10 min",
    "user:dismiss": "marked as seen",
    "restart": "re-checking after a restart",
    "retired": "replaced (/clear or resume)",
    "recovery:process-gone": "exited while the hub was down",
    "recovery:transcript": "finished while the hub was down",
    "recovery:interrupt": "interrupted while the hub was down",
    # Not sent yet: the tracker does not tell a turn that waits for a background agent apart.
    "wait:background-agent": "waiting for a background agent",
}

#: Sources not listed above, by prefix: ``{}`` is the rest ("hook:Elicitation" → "signal:
#: Elicitation"). ``recovery:`` wraps the label of the rest, which is looked up again.
SOURCE_PREFIXES: Mapping[str, str] = {
    "hook:": "signal: {}",
    "recovery:": "{} (at restart)",
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
    return source


# --------------------------------------------------------------------------- TypeScript

#: The types generated, in order (a type is declared before its users, for the reader).
_TYPES: tuple[tuple[str, Any], ...] = (
    ("Counts", Counts),
    ("Tokens", TokensJSON),
    ("TmuxLocation", TmuxJSON),
    ("BackgroundTask", BackgroundTaskJSON),
    ("SessionJSON", SessionJSON),
    ("Row", Row),
    ("Snapshot", Snapshot),
    ("TransitionJSON", TransitionJSON),
    ("History", History),
    ("PatchMessage", PatchMessage),
    ("NotificationPayload", NotificationJSON),
    ("NotifyMessage", NotifyMessage),
    ("InstallResult", InstallResult),
    ("InstallResultMessage", InstallResultMessage),
    ("HubInfo", HubInfo),
    ("Env", Env),
    ("WidgetTraits", Traits),
    ("ActionResultMessage", ActionResultMessage),
    ("PeekResultMessage", PeekResultMessage),
    ("DismissMessage", DismissMessage),
    ("InstallHooksMessage", InstallHooksMessage),
    ("ActionMessage", ActionMessage),
    ("PeekMessage", PeekMessage),
)
_UNIONS: tuple[tuple[str, Any], ...] = (
    ("KernelMessage", KernelMessage),
    ("FrontendMessage", FrontendMessage),
)
_ALIASES: tuple[tuple[str, Any], ...] = (
    ("State", StateName),
    ("Mode", Mode),
    ("ActionName", ActionName),
)

HEADER = (
    "// Generated from pmux_widget/core/contract.py (npm run contract): do not edit.\n"
    "// tests/test_contract.py fails when this file and the Python contract differ.\n"
)


def _ts_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z_$][\w$]*", key) else json.dumps(key)


def _ts_type(tp: Any) -> str:
    for name, known in (*_TYPES, *_UNIONS, *_ALIASES):
        if tp is known or (get_origin(tp) is Literal and tp == known):
            return name
    origin = get_origin(tp)
    if tp is type(None):
        return "null"
    if tp is str:
        return "string"
    if tp is bool:
        return "boolean"
    if tp in (int, float):
        return "number"
    if origin is Literal:
        return _ts_type_literal(tp)
    if origin in (Union, types.UnionType):
        return " | ".join(_ts_type(arg) for arg in get_args(tp))
    if origin is list:
        (item,) = get_args(tp)
        inner = _ts_type(item)
        return f"({inner})[]" if "|" in inner else f"{inner}[]"
    if origin is dict:
        key, value = get_args(tp)
        return f"Record<{_ts_type(key)}, {_ts_type(value)}>"
    raise TypeError(f"no TypeScript for {tp!r}")


def _ts_type_literal(tp: Any) -> str:
    return " | ".join(json.dumps(arg) for arg in get_args(tp))


def _interface(name: str, typed_dict: Any) -> str:
    hints = get_type_hints(typed_dict)
    doc = (typed_dict.__doc__ or "").strip()
    # A TypedDict without its own docstring gets dict's; that is no documentation.
    doc = " ".join(doc.split()).replace("``", "`")
    head = f"/** {doc} */\n" if doc and not doc.startswith("dict(") else ""
    fields = "".join(f"  {_ts_key(key)}: {_ts_type(tp)};\n" for key, tp in hints.items())
    return f"{head}export interface {name} {{\n{fields}}}\n"


def typescript() -> str:
    """The text of js/src/contract.gen.ts."""
    parts = [HEADER]
    for name, alias in _ALIASES:
        parts.append(f"export type {name} = {_ts_type_literal(alias)};\n")
    states, count_keys = json.dumps(get_args(StateName)), json.dumps(COUNT_KEYS)
    parts.append(f"export const STATES: readonly State[] = {states};\n")
    parts.append(f"export const COUNT_KEYS: readonly (keyof Counts)[] = {count_keys};\n")
    for name, typed_dict in _TYPES:
        parts.append(_interface(name, typed_dict))
    for name, union in _UNIONS:
        parts.append(f"export type {name} = {' | '.join(_ts_type(a) for a in get_args(union))};\n")
    labels = json.dumps(dict(SOURCE_LABELS), indent=2, ensure_ascii=False)
    prefixes = json.dumps(dict(SOURCE_PREFIXES), indent=2, ensure_ascii=False)
    parts.append(
        "/** The plain-language why of a state, per exact `source`. */\n"
        f"export const SOURCE_LABELS: Readonly<Record<string, string>> = {labels};\n"
    )
    parts.append(
        "/** Sources not listed above, by prefix: `{}` is the rest; recovery: wraps a label. */\n"
        f"export const SOURCE_PREFIXES: Readonly<Record<string, string>> = {prefixes};\n"
    )
    windows = json.dumps([list(entry) for entry in CONTEXT_WINDOWS])
    parts.append(
        "/** The context window by model id: [marker, tokens], first match wins. */\n"
        f"export const CONTEXT_WINDOWS: readonly (readonly [string, number])[] = {windows};\n"
        f"export const DEFAULT_CONTEXT_WINDOW = {DEFAULT_CONTEXT_WINDOW};\n"
    )
    parts.append(
        "/** Claude Code compacts on its own near this share of the context window. */\n"
        f"export const AUTO_COMPACT_AT = {AUTO_COMPACT_AT};\n"
        "/** From this share of the window on, a row warns that compaction is near. */\n"
        f"export const CONTEXT_WARN_AT = {CONTEXT_WARN_AT};\n"
    )
    return "\n".join(parts)


# --------------------------------------------------------------------------- a shared sample

_T0 = 1_700_000_000_000
_SAMPLE_SOURCES = (
    "",
    "hook:Stop",
    "pid:busy",
    "recovery:hook:Stop",
    "recovery:process-gone",
    "recovery:",
    "hook:Elicitation",
    "something:new",
)


_SAMPLE_MODELS = (
    "",
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-5[1m]",
    "Sonnet 4.5 (1M context)",
    "claude-opus-4-1",
)


def sample() -> dict[str, Any]:
    """A fixed fleet (every state, live and ended) with what Python makes of it: rows, counts
    and source labels. Written to js/testing/contract-sample.gen.ts, so a vitest can check
    that the browser counts and labels the same rows the same way."""
    sessions = [
        Session(
            session_id=f"s{i:02d}",
            state=state,
            state_since=_T0 + i,
            cwd=f"/home/dev/p{i % 3}",
            project=f"p{i % 3}",
            workspace=f"p{i % 3}",
            tmux=TmuxLocation("work", str(i), f"%{i}") if i % 2 else None,
            tokens=Tokens(input=i, output=2 * i),
            source="hook:Stop",
            tracking=Tracking(ended=ended),
        )
        for i, (state, ended) in enumerate(
            # a different number of live sessions per state, so a miscount cannot hide
            [(state, False) for n, state in enumerate(State) for _ in range(n + 1)]
            + [(state, True) for state in State]
        )
    ]
    return {
        "rows": [row(s) for s in sessions],
        "counts": counts(sessions),
        "sources": {source: describe_source(source) for source in _SAMPLE_SOURCES},
        "windows": {model: context_window(model) for model in _SAMPLE_MODELS},
    }


def sample_typescript() -> str:
    """The text of js/testing/contract-sample.gen.ts."""
    data = sample()
    rows = "".join(f"    {json.dumps(r, ensure_ascii=False)},\n" for r in data["rows"])
    tally = json.dumps(data["counts"])
    sources = json.dumps(data["sources"], indent=4, ensure_ascii=False).replace("\n}", "\n  }")
    windows = json.dumps(data["windows"], indent=4).replace("\n}", "\n  }")
    return (
        HEADER
        + 'import type { Counts, Row } from "../src/contract.gen";\n\n'
        + "type Sample = {\n"
        + "  rows: Row[];\n  counts: Counts;\n  sources: Record<string, string>;\n"
        + "  windows: Record<string, number>;\n};\n"
        + "export const SAMPLE: Sample = {\n"
        + f"  rows: [\n{rows}  ],\n  counts: {tally},\n  sources: {sources},\n"
        + f"  windows: {windows},\n}};\n"
    )


#: The generated files, relative to the repository root, and how to make each.
GENERATED = {
    "js/src/contract.gen.ts": typescript,
    "js/testing/contract-sample.gen.ts": sample_typescript,
}

if __name__ == "__main__":
    flags = {"--ts": "js/src/contract.gen.ts", "--sample": "js/testing/contract-sample.gen.ts"}
    if len(sys.argv) != 2 or sys.argv[1] not in flags:
        sys.exit("usage: python -m pmux_widget.core.contract --ts | --sample  (prints the file)")
    sys.stdout.write(GENERATED[flags[sys.argv[1]]]())
