"""A Codex rollout (``sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl``) read as it grows: what
it says of its thread — the turn (``task_started`` → running, ``task_complete``,
``turn_aborted``), the prompt and the answer, the tool call in flight, the tokens — for rows
whether or not Codex's hooks run (recorded shapes: ``docs/codex-behaviour.md``).

No record says that an approval or a question is on screen: a call with no output yet is all
there is. A Plan-mode ``request_user_input`` always waits for the user; an ``exec_command``
asking ``require_escalated`` under an approval policy that asks (not ``never``) is the
approval dialog's command — unless it starts with a prefix approved for good ("don't ask
again for commands that start with …", ``p``: the thread's ``world_state`` lists
``permissions.approved_command_prefixes``, a new thread's from its first record on), which
Codex runs without asking; any other call is a tool at work.

:class:`RolloutFacts` folds records (pure); :class:`RolloutTailer` reads the appended bytes
(blocking: a worker thread's).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from pmux_widget.core.question import QUESTION_TOOL, Question, question_of
from pmux_widget.core.session_parts import Tokens
from pmux_widget.core.summaries import summarize_tool

__all__ = ["RolloutFacts", "RolloutTailer", "Turn"]

Turn = Literal["running", "complete", "aborted"]
#: The tool names Codex's hooks give its calls (``exec_command`` is "Bash" there).
_HOOK_NAMES = {"exec_command": "Bash"}
_QUESTION_CALL = "request_user_input"
#: What makes a command line more than one plain command.
_SHELL_OPERATORS = re.compile(r"[;&|`$<>()\n]")
#: A longer line is skipped, not parsed (a rollout's first line holds the base
#: instructions: tens of kB).
MAX_LINE = 8 * 1024 * 1024


def _ms(stamp: object) -> int | None:
    if not isinstance(stamp, str):
        return None
    with contextlib.suppress(ValueError):
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    return None


def _texts(content: object) -> str:
    parts = content if isinstance(content, list) else []
    return "\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call with no output yet: its name and arguments."""

    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RolloutFacts:
    """What a rollout says of its thread so far."""

    thread_id: str | None = None
    cwd: str | None = None
    model: str | None = None
    approval_policy: str | None = None
    turn: Turn | None = None
    #: when the turn last changed (ms epoch of its record)
    turn_at: int = 0
    last_prompt: str | None = None
    last_assistant: str | None = None
    pending: tuple[Call, ...] = ()
    tokens: Tokens = field(default_factory=Tokens)
    context_tokens: int = 0
    last_record_at: int | None = None
    #: command prefixes approved for good (the thread's ``world_state``)
    approved_prefixes: tuple[tuple[str, ...], ...] = ()

    def fold(self, record: object) -> RolloutFacts:
        """These facts and one more record."""
        if not isinstance(record, dict):
            return self
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(payload, dict):
            return self
        at = _ms(record.get("timestamp"))
        facts = self if at is None else replace(self, last_record_at=at)
        if kind == "session_meta":
            cwd = payload.get("cwd")
            tid = payload.get("id")
            return replace(
                facts,
                thread_id=tid if isinstance(tid, str) else facts.thread_id,
                cwd=cwd if isinstance(cwd, str) else facts.cwd,
            )
        if kind == "turn_context":
            model, policy = payload.get("model"), payload.get("approval_policy")
            return replace(
                facts,
                model=model if isinstance(model, str) else facts.model,
                approval_policy=policy if isinstance(policy, str) else facts.approval_policy,
            )
        if kind == "world_state":
            return facts._world(payload.get("state"))
        if kind == "response_item":
            return facts._item(payload)
        if kind == "event_msg":
            return facts._event(payload, at or facts.turn_at)
        return facts

    def _world(self, state: object) -> RolloutFacts:
        """A ``world_state`` (whole, or the parts that changed): its approved prefixes."""
        permissions = state.get("permissions") if isinstance(state, dict) else None
        prefixes = (
            permissions.get("approved_command_prefixes") if isinstance(permissions, dict) else None
        )
        if not isinstance(prefixes, list):
            return self
        approved = tuple(
            tuple(p)
            for p in prefixes
            if isinstance(p, list) and p and all(isinstance(w, str) for w in p)
        )
        return replace(self, approved_prefixes=approved)

    def approved_for_good(self, command: str) -> bool:
        """``command`` starts with a prefix approved for good, and is one plain command (a
        command line with shell operators may hold another that Codex asks about: it is
        taken as asking, the safe side for a row without hooks)."""
        if not self.approved_prefixes or _SHELL_OPERATORS.search(command):
            return False
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return any(tuple(words[: len(p)]) == p for p in self.approved_prefixes)

    def _item(self, item: dict[str, Any]) -> RolloutFacts:
        call_id = item.get("call_id")
        if item.get("type") == "function_call" and isinstance(call_id, str):
            try:
                args = json.loads(item.get("arguments") or "{}")
            except (TypeError, ValueError):
                args = {}
            name = item.get("name")
            call = Call(
                call_id,
                name if isinstance(name, str) else "",
                args if isinstance(args, dict) else {},
            )
            return replace(self, pending=(*self.pending, call))
        if item.get("type") == "function_call_output" and isinstance(call_id, str):
            return replace(self, pending=tuple(c for c in self.pending if c.call_id != call_id))
        return self

    def _event(self, event: dict[str, Any], at: int) -> RolloutFacts:
        kind = event.get("type")
        if kind == "task_started":
            return replace(self, turn="running", turn_at=at, pending=())
        if kind in ("task_complete", "turn_aborted"):
            answer = event.get("last_agent_message")
            return replace(
                self,
                turn="complete" if kind == "task_complete" else "aborted",
                turn_at=at,
                pending=(),
                last_assistant=answer
                if isinstance(answer, str) and answer
                else self.last_assistant,
            )
        if kind == "item_completed":
            item = event.get("item")
            if isinstance(item, dict) and item.get("type") in ("UserMessage", "AgentMessage"):
                text = _texts(item.get("content"))
                if text and item["type"] == "UserMessage":
                    return replace(self, last_prompt=text)
                if text:
                    return replace(self, last_assistant=text)
            return self
        if kind == "token_count":
            return self._tokens(event.get("info"))
        return self

    def _tokens(self, info: object) -> RolloutFacts:
        if not isinstance(info, dict):
            return self
        total, last = info.get("total_token_usage"), info.get("last_token_usage")

        def n(usage: object, key: str) -> int:
            value = usage.get(key) if isinstance(usage, dict) else None
            return value if isinstance(value, int) else 0

        cached = n(total, "cached_input_tokens")
        tokens = Tokens(
            input=max(0, n(total, "input_tokens") - cached),
            output=n(total, "output_tokens"),
            cache_read=cached,
            cache_creation=n(total, "cache_write_input_tokens"),
        )
        return replace(self, tokens=tokens, context_tokens=n(last, "input_tokens"))

    # ---- what the row shows

    @property
    def call(self) -> Call | None:
        """The call in flight (the newest without output), while a turn runs."""
        return self.pending[-1] if self.pending and self.turn == "running" else None

    @property
    def tool_name(self) -> str | None:
        call = self.call
        return None if call is None else _HOOK_NAMES.get(call.name, call.name) or None

    @property
    def tool_input(self) -> dict[str, Any]:
        call = self.call
        if call is None:
            return {}
        if call.name == "exec_command":
            return {"command": call.arguments.get("cmd") or ""}
        return dict(call.arguments)

    @property
    def tool_summary(self) -> str | None:
        name = self.tool_name
        return None if name is None else summarize_tool(name, self.tool_input)

    @property
    def waits(self) -> Question | None:
        """What the call in flight waits on the user for (see the module doc), else None."""
        call = self.call
        if call is None:
            return None
        if call.name == _QUESTION_CALL:
            return question_of(QUESTION_TOOL, call.arguments)
        escalated = call.arguments.get("sandbox_permissions") == "require_escalated"
        if call.name == "exec_command" and escalated and self.approval_policy != "never":
            command = call.arguments.get("cmd")
            if isinstance(command, str) and self.approved_for_good(command):
                return None
            return question_of(self.tool_name, self.tool_input)
        return None


class RolloutTailer:
    """Follows one rollout: :meth:`poll` reads what was appended and says whether the facts
    changed."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.offset = 0
        self.partial = b""
        self.facts = RolloutFacts()

    def poll(self) -> bool:
        """Read the new complete lines; True when the facts changed. A file that shrank
        (replaced) is read again from its start."""
        try:
            size = os.stat(self.path).st_size
        except OSError:
            return False
        if size < self.offset:
            self.offset, self.partial, self.facts = 0, b"", RolloutFacts()
        if size == self.offset:
            return False
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read(size - self.offset)
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        if len(self.partial) > MAX_LINE:
            self.partial = b""  # skipped: no record of ours is that long
        before = self.facts
        facts = before
        for line in lines:
            if not line.strip() or len(line) > MAX_LINE:
                continue
            with contextlib.suppress(ValueError):
                facts = facts.fold(json.loads(line))
        self.facts = facts
        return facts != before
