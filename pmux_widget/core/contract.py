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
    "COUNT_KEYS",
    "SOURCE_LABELS",
    "SOURCE_PREFIXES",
    "Counts",
    "DismissMessage",
    "Env",
    "FrontendMessage",
    "HubInfo",
    "InstallHooksMessage",
    "InstallResult",
    "InstallResultMessage",
    "KernelMessage",
    "NotificationJSON",
    "NotifyMessage",
    "PatchMessage",
    "Row",
    "SessionJSON",
    "Snapshot",
    "StateName",
    "Traits",
    "counts",
    "describe_source",
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


class Row(SessionJSON):
    """A widget row: the session JSON plus what the view needs to explain it."""

    ended: bool
    waiting_for: str | None
    error_detail: str | None
    name: str


def counts(sessions: Iterable[Session]) -> Counts:
    """The counts sent with the rows: core.model.count_states over the sessions not ended."""
    return count_states(s for s in sessions if not s.ended)  # type: ignore[return-value]


def row(session: Session) -> Row:
    """The widget's row of ``session``."""
    base: SessionJSON = session.to_json()  # type: ignore[assignment]  # keys pinned by a test
    return {
        **base,
        "ended": session.ended,
        "waiting_for": session.waiting_for,
        "error_detail": session.error_detail,
        "name": session.name,
    }


# --------------------------------------------------------------------------- kernel → browser


class Snapshot(TypedDict):
    """The ``snapshot`` trait: the whole fleet at ``seq``; ``now`` is the kernel's clock (ms)."""

    seq: int
    sessions: dict[str, Row]
    counts: Counts
    now: int


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


KernelMessage = Union[PatchMessage, NotifyMessage, InstallResultMessage]  # noqa: UP007


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


FrontendMessage = Union[DismissMessage, InstallHooksMessage]  # noqa: UP007

# --------------------------------------------------------------------------- source labels

#: The plain-language "why" of a state, per exact ``source``.
SOURCE_LABELS: Mapping[str, str] = {
    "transcript:interrupt": "interrupted (Esc)",
    "pid:busy": "PID file says busy",
    "pid:waiting": "PID file says waiting",
    "pid:idle": "PID file says idle",
    "pid:shell": "PID file says shell",
    "pid:found": "found by its PID file",
    "process:gone": "process exited",
    "poll:stale-busy": "busy > 10 min, no process",
    "poll:unknown-timeout": "unresolved for 10 min",
    "user:dismiss": "dismissed",
    "restart": "hub restarted, re-checking",
    "retired": "replaced (/clear or resume)",
    "recovery:process-gone": "process gone at restart",
    "recovery:transcript": "transcript ended cleanly",
    "recovery:interrupt": "interrupted before restart",
}

#: Sources not listed above, by prefix: ``{}`` is the rest ("hook:Stop" → "via Stop hook").
#: ``recovery:`` wraps the label of the rest, which is looked up again.
SOURCE_PREFIXES: Mapping[str, str] = {
    "hook:": "via {} hook",
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
    ("SessionJSON", SessionJSON),
    ("Row", Row),
    ("Snapshot", Snapshot),
    ("PatchMessage", PatchMessage),
    ("NotificationPayload", NotificationJSON),
    ("NotifyMessage", NotifyMessage),
    ("InstallResult", InstallResult),
    ("InstallResultMessage", InstallResultMessage),
    ("HubInfo", HubInfo),
    ("Env", Env),
    ("WidgetTraits", Traits),
    ("DismissMessage", DismissMessage),
    ("InstallHooksMessage", InstallHooksMessage),
)
_UNIONS: tuple[tuple[str, Any], ...] = (
    ("KernelMessage", KernelMessage),
    ("FrontendMessage", FrontendMessage),
)
_ALIASES: tuple[tuple[str, Any], ...] = (("State", StateName), ("Mode", Mode))

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
    "something:new",
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
    }


def sample_typescript() -> str:
    """The text of js/testing/contract-sample.gen.ts."""
    data = sample()
    rows = "".join(f"    {json.dumps(r, ensure_ascii=False)},\n" for r in data["rows"])
    tally = json.dumps(data["counts"])
    sources = json.dumps(data["sources"], indent=4, ensure_ascii=False).replace("\n}", "\n  }")
    return (
        HEADER
        + 'import type { Counts, Row } from "../src/contract.gen";\n\n'
        + "type Sample = { rows: Row[]; counts: Counts; sources: Record<string, string> };\n"
        + "export const SAMPLE: Sample = {\n"
        + f"  rows: [\n{rows}  ],\n  counts: {tally},\n  sources: {sources},\n}};\n"
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
