"""Scenarios and planning: which scripted answer the server gives to a Messages API request.

Split out of :mod:`.scripted_model` (the HTTP server): loading the scenario files, reading a
request (typed text, tool results, the system prompt), and :class:`Planner`, the part of
:class:`~.scripted_model.ScriptedModel` that decides and fills a turn without any I/O.

How a response is chosen (see :meth:`Planner.plan`):

1. Side requests (session title, summaries of tool use, …: a request with no ``tools``) get
   a short text, except a conversation-summary request (``/compact``), which gets a summary.
2. The *scenario* is chosen by a keyword in the typed text of the last user message. After Esc
   or a rejected tool, the next prompt arrives in the same user message as the rejected
   ``tool_result``, so typed text is looked at first; after an API error the next prompt is
   merged into the failed prompt's message, so its last text block is the one that counts. If
   the last user message carries only ``tool_result`` blocks, the scenario is the one of the
   most recent typed prompt.
3. The *step* within the scenario is the number of tool rounds since that prompt (user
   messages carrying ``tool_result`` blocks).

Scenario file format (one JSON object per file, see ``scenarios/README.md``)::

    {"name": "bash_permission", "keywords": ["run the command"],
     "turns": [
        {"content": [{"type": "text", "text": "I'll run it."},
                     {"type": "tool_use", "name": "Bash", "input": {"command": "touch x"}}],
         "usage": {"input_tokens": 11, "cache_creation_input_tokens": 120,
                   "cache_read_input_tokens": 1300, "output_tokens": 42}},
        {"content": [{"type": "text", "text": "Done."}]}]}

A turn may instead be ``{"error": {"status": 429, "type": "rate_limit_error", "message": …,
"headers": {…}}}``. ``"delay"`` (seconds between deltas) and ``"chunks"`` (number of pieces a
text is split into) make slow streams. Strings may contain ``{cwd}`` (the CLI's working dir,
read from its system prompt) and ``{marker}`` (a file name unique per response).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

__all__ = [
    "COMPACT_MARKERS",
    "Plan",
    "Planner",
    "RequestRecord",
    "has_tool_result",
    "load_scenarios",
    "newest_typed_text",
    "system_text",
    "typed_text",
]

COMPACT_MARKERS = (
    "create a detailed summary of the conversation",
    "summary of the conversation so far",
    "your task is to create a detailed summary",
)
"""Phrases (lower case) that mark the CLI's conversation-summary request (``/compact``)."""

_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
#: Plan mode on 2.1.332+: "create your plan at <config>/plans/<slug>.md using the Write tool"
#: (the plan lives in that file; ExitPlanMode's input is then empty).
_PLAN_FILE = re.compile(r"(/\S+/plans/[^\s`'\"]+?\.md)\b")
_CWD_PATTERNS = (
    re.compile(r"Primary working directory: (\S+)"),
    re.compile(r"Working directory: (\S+)"),
)


def load_scenarios(extra: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The packaged scenarios (``scenarios/*.json``, sorted by name) followed by ``extra``.

    Earlier scenarios win when several keywords match, so ``extra`` can only add keywords.
    Pass ``ScriptedModel(scenarios=[...])`` to replace the packaged set instead.
    """
    out: list[dict[str, Any]] = []
    folder = resources.files(__package__).joinpath("scenarios")
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".json"):
            out.append(json.loads(entry.read_text(encoding="utf-8")))
    out.extend(dict(s) for s in extra)
    return out


# --------------------------------------------------------------------------- request analysis


def _blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a plain string becomes one text block)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def typed_text(message: Mapping[str, Any]) -> str:
    """The text a user typed in ``message``: its text blocks minus ``<system-reminder>``s."""
    parts = [b.get("text", "") for b in _blocks(message.get("content")) if b.get("type") == "text"]
    return _SYSTEM_REMINDER.sub("", "\n".join(p for p in parts if isinstance(p, str))).strip()


def newest_typed_text(message: Mapping[str, Any]) -> str:
    """The newest prompt typed in ``message``: its last text block with typed text.

    When a turn fails before any answer (an API error), the CLI sends the next prompt merged
    into the same user message as the failed one: the newest prompt is the last block.
    """
    for block in reversed(_blocks(message.get("content"))):
        text = block.get("text") if block.get("type") == "text" else None
        if isinstance(text, str) and (typed := _SYSTEM_REMINDER.sub("", text).strip()):
            return typed
    return ""


def has_tool_result(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` carries at least one ``tool_result`` block."""
    return any(b.get("type") == "tool_result" for b in _blocks(message.get("content")))


def system_text(body: Mapping[str, Any]) -> str:
    """The request's system prompt as one string (it may be a string or a list of blocks)."""
    system = body.get("system")
    if isinstance(system, str):
        return system
    return "\n".join(b.get("text", "") for b in _blocks(system) if isinstance(b.get("text"), str))


@dataclass
class Plan:
    """What the server decided to answer for one request (kept in the request log)."""

    kind: str
    """``scenario`` (a scripted turn), ``compact`` (summary), ``side`` (no tools), ``default``."""
    scenario: str | None = None
    step: int = 0
    turn: dict[str, Any] = field(default_factory=dict)


@dataclass
class RequestRecord:
    """One request the server received, and what it answered (for test assertions)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    received_at: float
    status: int = 0
    request_id: str | None = None
    message_id: str | None = None
    plan: Plan | None = None
    usage: dict[str, int] | None = None
    stream: bool = False
    completed: bool = False
    """False when the client went away before the response ended (e.g. Esc)."""
    finished_at: float | None = None

    @property
    def scenario(self) -> str | None:
        """The scenario that answered, if any."""
        return self.plan.scenario if self.plan else None

    @property
    def kind(self) -> str | None:
        """The plan's kind (``scenario``, ``compact``, ``side``, ``default``), if any."""
        return self.plan.kind if self.plan else None


class Planner:
    """How :class:`~.scripted_model.ScriptedModel` answers: pure functions of a request body
    and its scenarios (a mixin, so ``model.plan(body)`` and ``model.scenarios`` stay)."""

    scenarios: list[dict[str, Any]]
    side_text: str
    default_text: str
    _marker_counter: Iterator[int]

    def find_scenario(self, text: str) -> dict[str, Any] | None:
        """The first scenario one of whose keywords occurs (case-insensitive) in ``text``."""
        low = text.lower()
        for scenario in self.scenarios:
            for kw in scenario.get("keywords", []):
                if kw.lower() in low:
                    return scenario
        return None

    def plan(self, body: Mapping[str, Any]) -> Plan:
        """Decide the answer to a ``/v1/messages`` request body (pure; no I/O)."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        user_msgs = [m for m in messages if m.get("role") == "user"]
        last_user = user_msgs[-1] if user_msgs else {}
        last_text = typed_text(last_user)
        if any(marker in last_text.lower() for marker in COMPACT_MARKERS):
            return Plan(kind="compact")
        if not body.get("tools"):
            return Plan(kind="side")
        # Walk back to the most recent typed prompt, counting tool rounds on the way. Typed
        # text wins over tool results in the same message (a prompt typed after a rejection).
        rounds = 0
        for msg in reversed(user_msgs):
            text = newest_typed_text(msg)
            if text:
                scenario = self.find_scenario(text)
                if scenario is None:
                    return Plan(kind="default", step=rounds)
                turns = _turns_for(scenario, plan_file(body))
                if rounds >= len(turns):  # more rounds than scripted: end the turn politely
                    return Plan(kind="default", scenario=scenario.get("name"), step=rounds)
                return Plan(
                    kind="scenario",
                    scenario=scenario.get("name"),
                    step=rounds,
                    turn=copy.deepcopy(turns[rounds]),
                )
            if has_tool_result(msg):
                rounds += 1
        return Plan(kind="default", step=rounds)

    def render_turn(self, plan: Plan, body: Mapping[str, Any]) -> dict[str, Any]:
        """The concrete turn for ``plan``: content blocks with templates filled, usage, etc."""
        if plan.kind == "scenario":
            turn = plan.turn
        elif plan.kind == "compact":
            turn = {
                "content": [
                    {
                        "type": "text",
                        "text": "<analysis>Scripted analysis.</analysis>\n<summary>\n"
                        "1. Primary Request and Intent: the user exercised the scripted "
                        "model.\n2. Pending Tasks: none.\n3. Current Work: idle.\n"
                        "</summary>",
                    }
                ],
                "usage": {
                    "input_tokens": 900,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    "output_tokens": 60,
                },
            }
        elif plan.kind == "side":
            turn = {"content": [{"type": "text", "text": self._side_answer(body)}]}
        else:
            turn = {"content": [{"type": "text", "text": self.default_text}]}
        cwd = ""
        # 2.1.197 states the working directory in the system prompt; 2.1.332 in a message
        # whose role is "system" among the messages.
        texts = [system_text(body)] + [
            b.get("text", "")
            for m in body.get("messages") or []
            if isinstance(m, dict) and m.get("role") in ("system", "user")
            for b in _blocks(m.get("content"))
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        ]
        for text in texts:
            found = next((m.group(1) for pat in _CWD_PATTERNS if (m := pat.search(text))), None)
            if found:
                cwd = found
                break
        marker = f"sim-{next(self._marker_counter)}"
        variables = {"cwd": cwd, "marker": marker, "plan_file": plan_file(body) or ""}
        filled: dict[str, Any] = _fill(copy.deepcopy(turn), variables)
        return filled

    def _side_answer(self, body: Mapping[str, Any]) -> str:
        """Short text for a side request; JSON when it asks for a JSON schema (session title)."""
        fmt = (body.get("output_config") or {}).get("format") or {}
        schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
        if not isinstance(schema, dict):
            return self.side_text
        out: dict[str, Any] = {}
        for name in schema.get("required") or list(schema.get("properties") or {}):
            kind = ((schema.get("properties") or {}).get(name) or {}).get("type")
            out[name] = {"boolean": False, "integer": 0, "number": 0, "array": []}.get(
                str(kind), self.side_text
            )
        return json.dumps(out)


def plan_file(body: Mapping[str, Any]) -> str | None:
    """The plan file plan mode asks the model to write (2.1.332+), if the request names one."""
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        for block in _blocks(message.get("content")):
            text = block.get("text")
            if isinstance(text, str) and (found := _PLAN_FILE.search(text)):
                return found.group(1)
    found = _PLAN_FILE.search(system_text(body))
    return found.group(1) if found else None


def _turns_for(scenario: Mapping[str, Any], plan_path: str | None) -> list[Any]:
    """The scenario's turns; a turn marked ``"needs": "plan_file"`` (writing the plan file)
    only when the CLI names one (2.1.197 takes the plan in ExitPlanMode's input instead)."""
    turns = scenario.get("turns") or []
    return [
        t
        for t in turns
        if not (isinstance(t, dict) and t.get("needs") == "plan_file" and not plan_path)
    ]


def _fill(value: Any, variables: Mapping[str, str]) -> Any:
    """Replace ``{name}`` placeholders in every string of ``value`` (recursively)."""
    if isinstance(value, str):
        for k, v in variables.items():
            value = value.replace("{" + k + "}", v)
        return value
    if isinstance(value, list):
        return [_fill(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, variables) for k, v in value.items()}
    return value
