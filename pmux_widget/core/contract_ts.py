"""The TypeScript of the kernel ↔ browser contract, generated from :mod:`core.contract`:
``js/src/contract.gen.ts`` (the types) and ``js/testing/contract-sample.gen.ts`` (a fleet with
what Python makes of it, for the browser's own tests). ``npm run contract`` writes both;
tests/test_contract.py fails when a committed file differs from what this generates.
"""

from __future__ import annotations

import json
import re
import sys
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from pmux_widget.core.agents import AGENTS, DEFAULT_AGENT, FACTS
from pmux_widget.core.contract import (
    COUNT_KEYS,
    NEED_YOU_STATES,
    NEED_YOU_WORDS,
    SOURCE_LABELS,
    SOURCE_PREFIXES,
    ActionMessage,
    ActionName,
    ActionResultMessage,
    AskJSON,
    AttachMessage,
    AttachResultMessage,
    BackgroundJSON,
    BackgroundTaskJSON,
    Counts,
    DismissMessage,
    Env,
    FrontendMessage,
    History,
    HostJSON,
    HubInfo,
    InstallHooksMessage,
    InstallResult,
    InstallResultMessage,
    KernelMessage,
    Mode,
    NotificationJSON,
    NotifyMessage,
    OptionJSON,
    OriginJSON,
    PatchMessage,
    PeekMessage,
    PeekResultMessage,
    QuestionJSON,
    Row,
    SeenMessage,
    SessionJSON,
    Snapshot,
    StateName,
    TerminalJSON,
    TmuxJSON,
    TokensJSON,
    Traits,
    TransitionJSON,
    counts,
    describe_source,
    row,
)
from pmux_widget.core.model import (
    Background,
    Session,
    State,
    TerminalLocation,
    TmuxLocation,
    Tokens,
    Tracking,
)
from pmux_widget.core.question import Ask, Option, Question
from pmux_widget.core.wording import (
    AGENT_NAMES,
    AUTO_COMPACT_AT,
    CONTEXT_WARN_AT,
    CONTEXT_WINDOWS,
    DEFAULT_CONTEXT_WINDOW,
    agent_mark,
    context_window,
    need_you,
    need_you_sentence,
    needs_you,
    title_prefix,
)

__all__ = ["GENERATED", "sample", "sample_typescript", "typescript"]


# --------------------------------------------------------------------------- TypeScript

#: The types generated, in order (a type is declared before its users, for the reader).
_TYPES: tuple[tuple[str, Any], ...] = (
    ("Counts", Counts),
    ("Tokens", TokensJSON),
    ("TmuxLocation", TmuxJSON),
    ("TerminalLocation", TerminalJSON),
    ("BackgroundTask", BackgroundTaskJSON),
    ("Background", BackgroundJSON),
    ("QuestionOption", OptionJSON),
    ("Ask", AskJSON),
    ("Question", QuestionJSON),
    ("SessionJSON", SessionJSON),
    ("Origin", OriginJSON),
    ("Row", Row),
    ("Host", HostJSON),
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
    ("AttachResultMessage", AttachResultMessage),
    ("DismissMessage", DismissMessage),
    ("InstallHooksMessage", InstallHooksMessage),
    ("ActionMessage", ActionMessage),
    ("PeekMessage", PeekMessage),
    ("AttachMessage", AttachMessage),
    ("SeenMessage", SeenMessage),
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
    optional: frozenset[str] = getattr(typed_dict, "__optional_keys__", frozenset())
    fields = "".join(
        f"  {_ts_key(key)}{'?' if key in optional else ''}: {_ts_type(tp)};\n"
        for key, tp in hints.items()
    )
    return f"{head}export interface {name} {{\n{fields}}}\n"


def typescript() -> str:
    """The text of js/src/contract.gen.ts."""
    parts = [HEADER]
    for name, alias in _ALIASES:
        parts.append(f"export type {name} = {_ts_type_literal(alias)};\n")
    states, count_keys = json.dumps(get_args(StateName)), json.dumps(COUNT_KEYS)
    parts.append(f"export const STATES: readonly State[] = {states};\n")
    parts.append(f"export const COUNT_KEYS: readonly (keyof Counts)[] = {count_keys};\n")
    need_states = json.dumps([state.value for state in NEED_YOU_STATES])
    words = json.dumps(dict(NEED_YOU_WORDS), indent=2, ensure_ascii=False)
    parts.append(
        '/** "Need you", one meaning everywhere: the states counted (`attention`), most urgent\n'
        " * first, and the words of the count, the sentence, the section and the tab title\n"
        " * (`{n}`: the count; core/wording.py). */\n"
        f"export const NEED_YOU_STATES: readonly State[] = {need_states};\n"
        f"export const NEED_YOU_WORDS = {words} as const;\n"
    )
    names = json.dumps(dict(AGENT_NAMES), indent=2, ensure_ascii=False)
    parts.append(
        "/** What each agent is called where a session's agent is said (core/wording.py); a row\n"
        f" * of another agent than {DEFAULT_AGENT!r} carries a mark with its name. */\n"
        f'export const DEFAULT_AGENT = "{DEFAULT_AGENT}";\n'
        f"export const AGENT_NAMES = {names} as const;\n"
    )
    can = {
        agent: {
            "background": FACTS[agent].background_sessions,
            "mode": FACTS[agent].permission_modes,
        }
        for agent in AGENTS
    }
    parts.append(
        "/** What a new session of each agent can be started with (core/agents.py FACTS): the\n"
        " * background (``claude --bg``), a permission mode on its command line. */\n"
        f"export const AGENT_CAN = {json.dumps(can, indent=2)} as const;\n"
    )
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
    "action:approve",
    "action:deny@Pixel 8 (Web Push)",
    "action:something@x",
)


_SAMPLE_MODELS = (
    "",
    "claude-sonnet-4-5-20250929",
    "claude-sonnet-4-5[1m]",
    "Sonnet 4.5 (1M context)",
    "claude-opus-4-1",
)


def _sample_question(i: int) -> Question:
    """Each kind of dialog: a permission, a question (single or multi-select), a plan."""
    options = (Option("Purple", "the brand's"), Option("Amber", "stands out"))
    if i % 3 == 0:
        return Question(kind="permission")
    if i % 3 == 1:
        ask = Ask("Which colour should the badge use?", "Colour", i % 2 == 0, options)
        return Question(kind="question", questions=(ask,))
    return Question(kind="plan", plan="1. Add the badge.\n2. Test it.")


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
            terminal=TerminalLocation(str(i)) if i % 4 == 2 else None,
            # a background session is in no pane and no terminal
            background=Background(f"job{i:02d}", f"bg-{i}") if i % 12 == 4 else None,
            tokens=Tokens(input=i, output=2 * i),
            source="hook:Stop",
            agent="codex" if i % 5 == 3 else "claude",
            question=_sample_question(i) if state is State.NEEDS_INPUT else None,
            tracking=Tracking(ended=ended),
        )
        for i, (state, ended) in enumerate(
            # a different number of live sessions per state, so a miscount cannot hide
            [(state, False) for n, state in enumerate(State) for _ in range(n + 1)]
            + [(state, True) for state in State]
        )
    ]
    need = {str(n): [need_you(n), need_you_sentence(n), title_prefix(n)] for n in (0, 1, 2, 12)}
    return {
        "rows": [row(s) for s in sessions],
        "counts": counts(sessions),
        "need_you": need,
        "needs_you_ids": [s.session_id for s in sessions if needs_you(s)],
        "sources": {source: describe_source(source) for source in _SAMPLE_SOURCES},
        "windows": {model: context_window(model) for model in _SAMPLE_MODELS},
        "agent_marks": {agent: agent_mark(agent) for agent in AGENTS},
    }


def sample_typescript() -> str:
    """The text of js/testing/contract-sample.gen.ts."""
    data = sample()
    rows = "".join(f"    {json.dumps(r, ensure_ascii=False)},\n" for r in data["rows"])
    tally = json.dumps(data["counts"])
    sources = json.dumps(data["sources"], indent=4, ensure_ascii=False).replace("\n}", "\n  }")
    windows = json.dumps(data["windows"], indent=4).replace("\n}", "\n  }")
    need = json.dumps(data["need_you"], ensure_ascii=False)
    need_ids = json.dumps(data["needs_you_ids"])
    marks = json.dumps(data["agent_marks"])
    return (
        HEADER
        + 'import type { Counts, Row } from "../src/contract.gen";\n\n'
        + "type Sample = {\n"
        + "  rows: Row[];\n  counts: Counts;\n  sources: Record<string, string>;\n"
        + "  windows: Record<string, number>;\n"
        + "  /** n → [count, sentence, tab title prefix], as Python words them */\n"
        + "  need_you: Record<string, [string, string, string]>;\n"
        + "  /** the rows the count counts and the Needs you section lists */\n"
        + "  needs_you_ids: string[];\n"
        + "  /** agent → the mark its rows carry (null: none) */\n"
        + "  agent_marks: Record<string, string | null>;\n};\n"
        + "export const SAMPLE: Sample = {\n"
        + f"  rows: [\n{rows}  ],\n  counts: {tally},\n  sources: {sources},\n"
        + f"  windows: {windows},\n"
        + f"  need_you: {need},\n  needs_you_ids: {need_ids},\n  agent_marks: {marks},\n}};\n"
    )


#: The generated files, relative to the repository root, and how to make each.
GENERATED = {
    "js/src/contract.gen.ts": typescript,
    "js/testing/contract-sample.gen.ts": sample_typescript,
}

if __name__ == "__main__":
    flags = {"--ts": "js/src/contract.gen.ts", "--sample": "js/testing/contract-sample.gen.ts"}
    if len(sys.argv) != 2 or sys.argv[1] not in flags:
        sys.exit("usage: python -m pmux_widget.core.contract_ts --ts | --sample  (prints the file)")
    sys.stdout.write(GENERATED[flags[sys.argv[1]]]())
