"""One scripted Claude Code session of the demo (:class:`SimSession`): the hooks the real CLI
fires for each action, through the INSTALLED hook command (:class:`InstalledHooks`), and the
transcript lines it writes. Shapes and orders follow the recordings in
``tests/fixtures/real/``.
"""

from __future__ import annotations

import json
import random
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from pmux_widget.agents.claude.paths import encode_project_dir

from .hook_runner import InstalledHooks
from .sim_records import CLI_VERSION, iso_now, random_id, record_tail, usage_record

__all__ = ["CLI_VERSION", "InstalledHooks", "SimSession", "iso_now", "log", "random_id"]


def log(message: str) -> None:
    print(f"[fleet] {message}", file=sys.stderr, flush=True)


class SimSession:
    """One scripted Claude Code session: its ids, transcript, and the actions of a turn.

    Each action fires the hooks the real CLI fires for it (in the recorded order) and appends
    the transcript records it writes. ``session_id`` changes on :meth:`start` (a new process or
    ``/clear``), like the real one.

    ``virtual``: while set (epoch seconds), the session's clock for a backdated history: hooks
    are stamped with it (1 ms apart, to keep their order) and so are transcript records.
    """

    def __init__(
        self,
        hooks: InstalledHooks,
        claude_dir: Path,
        cwd: Path,
        pane: str | None,
        model: str,
        rng: random.Random,
        context: int,
    ) -> None:
        self.hooks = hooks
        self.claude_dir = claude_dir
        self.cwd = str(cwd)
        self.pane = pane
        self.model = model
        self.rng = rng
        self.context = context
        self.session_id = ""
        self.transcript = Path()
        self.live = False
        self.prompt_id: str | None = None
        self.parent: str | None = None
        self.turn_started = 0.0
        self.pending: list[tuple[str, str, dict[str, Any]]] = []  # (tool_use_id, name, input)
        self.done: list[dict[str, Any]] = []  # PostToolBatch tool_calls
        self.response: tuple[str, str, dict[str, Any]] | None = None  # (msg id, req id, usage)
        self.virtual: float | None = None

    #: What a live session's process needs to go on with a session seeded in-process.
    _CARRIED = ("session_id", "prompt_id", "parent", "context", "live", "turn_started")

    def snapshot(self) -> dict[str, Any]:
        """The session's ids and counters, for :meth:`restore` in another process."""
        state = {name: getattr(self, name) for name in self._CARRIED}
        state["transcript"] = str(self.transcript) if self.live else ""
        return state

    def restore(self, state: dict[str, Any]) -> None:
        """Go on with a session from :meth:`snapshot` (its transcript, its uuid chain)."""
        for name in self._CARRIED:
            if name in state:
                setattr(self, name, state[name])
        self.transcript = Path(state.get("transcript") or "")
        self.pending, self.done, self.response = [], [], None

    def now(self) -> float:
        """Epoch seconds: the history's clock while one is seeded, else the real one."""
        return time.time() if self.virtual is None else self.virtual

    # ------------------------------------------------------------------ plumbing

    def _payload(
        self,
        event: str,
        *,
        prompt: bool = True,
        mode: bool = True,
        effort: bool = True,
        agent: tuple[str, str] | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A payload in the CLI's key order: common keys, then the event's own."""
        body: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(self.transcript),
            "cwd": self.cwd,
        }
        if prompt and self.prompt_id:
            body["prompt_id"] = self.prompt_id
        if mode:
            body["permission_mode"] = "default"
        if agent is not None:
            body["agent_id"], body["agent_type"] = agent
        if effort:
            body["effort"] = {"level": "high"}
        body["hook_event_name"] = event
        body.update(fields)
        return body

    def _fire(self, event: str, **kwargs: Any) -> None:
        at_ms = None
        if self.virtual is not None:
            at_ms = int(self.virtual * 1000)
            self.virtual += 0.001
        self.hooks.fire(self._payload(event, **kwargs), self.pane, self.cwd, at_ms)

    def _write(self, *records: dict[str, Any]) -> None:
        lines = "".join(
            json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records
        )
        with open(self.transcript, "a", encoding="utf-8") as handle:
            handle.write(lines)

    def _record(self, body: dict[str, Any]) -> dict[str, Any]:
        uid = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        record = {"parentUuid": self.parent, "isSidechain": False, **body}
        record.setdefault("uuid", uid)
        record.setdefault("timestamp", iso_now(self.now()))
        record.update(record_tail(self.cwd, self.session_id))
        self.parent = record["uuid"]
        return record

    def _usage(self, output: int) -> dict[str, Any]:
        fresh = self.rng.randint(120, 2400)
        usage = usage_record(self.rng.randint(1, 9), fresh, self.context, output)
        self.context += fresh + output
        return usage

    def _assistant(self, block: dict[str, Any], stop_reason: str) -> None:
        """One content block of the current API response (a new response if none is open)."""
        if self.response is None:
            output = self.rng.randint(40, 900)
            self.response = (
                random_id("msg_01", self.rng, 22),
                random_id("req_01", self.rng, 22),
                self._usage(output),
            )
        msg_id, req_id, usage = self.response
        message = {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [block],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage,
            "stop_details": None,
        }
        self._write(self._record({"message": message, "requestId": req_id, "type": "assistant"}))

    # ------------------------------------------------------------------ actions

    def ensure_started(self) -> None:
        """Go on with the live session (one seeded with a history), or start one."""
        if not self.live:
            self.start()

    def start(self, source: str = "startup") -> None:
        """A new session id (a fresh ``claude`` or ``/clear``): SessionStart → idle."""
        self.session_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        project_dir = self.claude_dir / "projects" / encode_project_dir(self.cwd)
        project_dir.mkdir(parents=True, exist_ok=True)
        self.transcript = project_dir / f"{self.session_id}.jsonl"
        self.prompt_id = None
        self.parent = None
        self.pending, self.done, self.response = [], [], None
        self.live = True
        self._write(
            {"type": "mode", "mode": "normal", "sessionId": self.session_id},
            {"type": "permission-mode", "permissionMode": "default", "sessionId": self.session_id},
        )
        model = f"{self.model}[1m]" if "opus" in self.model else self.model
        self._fire(
            "SessionStart", prompt=False, mode=False, effort=False, source=source, model=model
        )

    def prompt(self, text: str) -> None:
        """The user typed a prompt: UserPromptSubmit → busy; the user record."""
        self.prompt_id = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        self.turn_started = self.now()
        self.response = None
        self._fire("UserPromptSubmit", effort=False, prompt=text)
        self._write(
            self._record(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": text},
                    "permissionMode": "default",
                    "origin": {"kind": "human"},
                    "promptSource": "typed",
                }
            )
        )

    def say(self, text: str) -> None:
        """A text block of the answer (tokens and context grow)."""
        self._assistant({"type": "text", "text": text}, "tool_use")

    def tool(self, name: str, tool_input: dict[str, Any]) -> str:
        """A tool call: PreToolUse (busy, current tool), then its tool_use record."""
        tool_id = random_id("toolu_01", self.rng, 22)
        self.pending.append((tool_id, name, tool_input))
        self._fire("PreToolUse", tool_name=name, tool_input=tool_input, tool_use_id=tool_id)
        self._assistant(
            {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}, "tool_use"
        )
        return tool_id

    def ask(self) -> None:
        """The newest pending tool needs permission: PermissionRequest → needs-input."""
        _, name, tool_input = self.pending[-1]
        suggestions = [
            {"type": "addDirectories", "directories": [self.cwd], "destination": "session"},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        ]
        self._fire(
            "PermissionRequest",
            tool_name=name,
            tool_input=tool_input,
            permission_suggestions=suggestions,
        )

    def remind(self) -> None:
        """The dialog stayed open ~6 s: the permission Notification (as recorded)."""
        self._fire(
            "Notification",
            mode=False,
            effort=False,
            message="Claude needs your permission",
            notification_type="permission_prompt",
        )

    def tool_done(self, output: str, is_error: bool = False) -> None:
        """The oldest pending tool finished (approved, or needed no dialog): PostToolUse, its
        tool_result record, and PostToolBatch once no tool of the batch is pending."""
        tool_id, name, tool_input = self.pending.pop(0)
        response: Any = {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        if name != "Bash":
            response = {"type": "text", "text": output}
        self._fire(
            "PostToolUse",
            tool_name=name,
            tool_input=tool_input,
            tool_response=response,
            tool_use_id=tool_id,
            duration_ms=self.rng.randint(40, 4000),
        )
        self.done.append(
            {"tool_name": name, "tool_input": tool_input, "tool_use_id": tool_id,
             "tool_response": output}
        )  # fmt: skip
        content = {"tool_use_id": tool_id, "type": "tool_result", "content": output,
                   "is_error": is_error}  # fmt: skip
        self._write(
            self._record(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": [content]},
                    "toolUseResult": response,
                }
            )
        )
        self.response = None
        if not self.pending:
            self._fire("PostToolBatch", tool_calls=self.done)
            self.done = []

    def agents_start(self, *agent_types: str) -> list[tuple[str, str]]:
        """Sub-agents start (after their Agent tool calls): SubagentStart each."""
        agents = [(f"a{self.rng.getrandbits(64):016x}"[:17], kind) for kind in agent_types]
        for agent in agents:
            self._fire("SubagentStart", mode=False, effort=False, agent=agent)
        return agents

    def agent_tool(self, agent: tuple[str, str], name: str, tool_input: dict[str, Any]) -> None:
        """A sub-agent's own tool call (it does not change the parent's current tool)."""
        tool_id = random_id("toolu_01", self.rng, 22)
        self._fire(
            "PreToolUse", agent=agent, tool_name=name, tool_input=tool_input, tool_use_id=tool_id
        )
        self._fire(
            "PostToolUse",
            agent=agent,
            tool_name=name,
            tool_input=tool_input,
            tool_response={"type": "text", "text": "…"},
            tool_use_id=tool_id,
            duration_ms=self.rng.randint(30, 300),
        )

    def agent_stop(self, agent: tuple[str, str], answer: str) -> None:
        """A sub-agent answered: SubagentStop."""
        path = self.transcript.with_suffix("") / "subagents" / f"agent-{agent[0]}.jsonl"
        self._fire(
            "SubagentStop",
            agent=agent,
            stop_hook_active=False,
            agent_transcript_path=str(path),
            last_assistant_message=answer,
            background_tasks=[],
            session_crons=[],
        )

    def finish(self, text: str) -> None:
        """The final answer: Stop → review (with its snippet), then the records."""
        self.pending, self.done = [], []
        self._fire(
            "Stop",
            stop_hook_active=False,
            last_assistant_message=text,
            background_tasks=[],
            session_crons=[],
        )
        self.response = None
        self._assistant({"type": "text", "text": text}, "end_turn")
        self.response = None
        self._turn_duration()

    def fail(self, error: str, text: str, status: int) -> None:
        """The API gave up: StopFailure → review with the error; the API-error record."""
        self.pending, self.done, self.response = [], [], None
        self._fire("StopFailure", mode=False, error=error, last_assistant_message=text)
        zero = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0}  # fmt: skip
        message = {
            "id": str(uuid.UUID(int=self.rng.getrandbits(128), version=4)),
            "container": None,
            "model": "<synthetic>",
            "role": "assistant",
            "stop_details": None,
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "type": "message",
            "usage": zero,
            "content": [{"type": "text", "text": text}],
            "context_management": None,
        }
        self._write(
            self._record(
                {
                    "type": "assistant",
                    "message": message,
                    "requestId": random_id("req_01", self.rng, 22),
                    "error": error,
                    "isApiErrorMessage": True,
                    "apiErrorStatus": status,
                }
            )
        )
        self._turn_duration()

    def stream(self, text: str) -> None:
        """Part of an answer streamed so far (no hook: streaming fires none)."""
        self.response = None
        self._assistant({"type": "text", "text": text}, "end_turn")

    def reject(self) -> None:
        """ "No" (or Esc) on the permission dialog, or Esc while a tool runs: no hook at all;
        each pending tool gets the rejection ``tool_result``, then the "for tool use" marker
        (as recorded: ``deny``, ``esc_dialog``, ``esc_during_tool``) → idle."""
        text = (
            "The user doesn't want to proceed with this tool use. The tool use was rejected "
            "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what "
            "you are doing and wait for the user to tell you how to proceed."
        )
        pending, self.pending, self.done, self.response = self.pending, [], [], None
        for tool_id, _, _ in pending:
            content = {"type": "tool_result", "content": text, "is_error": True,
                       "tool_use_id": tool_id}  # fmt: skip
            self._write(
                self._record(
                    {
                        "promptId": self.prompt_id,
                        "type": "user",
                        "message": {"role": "user", "content": [content]},
                        "toolUseResult": "User rejected tool use",
                    }
                )
            )
        marker = {"type": "text", "text": "[Request interrupted by user for tool use]"}
        self._write(
            self._record(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": [marker]},
                }
            )
        )

    def interrupt(self) -> None:
        """Esc while it streams: no hook at all, only the transcript marker → idle."""
        self.pending, self.done, self.response = [], [], None
        marker = {"type": "text", "text": "[Request interrupted by user]"}
        self._write(
            self._record(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": [marker]},
                }
            )
        )

    def compact_start(self, trigger: str = "auto") -> None:
        """Compaction begins: PreCompact (the compacting indicator)."""
        self._fire(
            "PreCompact", mode=False, effort=False, trigger=trigger, custom_instructions=None
        )

    def compact_end(self, trigger: str = "auto") -> None:
        """Compaction done: the summarizer's SubagentStop, SessionStart(compact), PostCompact,
        then the boundary and summary records; the context shrinks."""
        summary = (
            "<analysis>Condensed the earlier work.</analysis>\n<summary>\n1. Primary Request: "
            "see the last prompt.\n2. Pending Tasks: continue.\n</summary>"
        )
        agent = (f"a{self.rng.getrandbits(64):016x}"[:17], "")
        self.agent_stop(agent, summary)
        self._fire(
            "SessionStart", mode=False, effort=False, source="compact", model=f"{self.model}"
        )
        self._fire(
            "PostCompact", mode=False, effort=False, trigger=trigger, compact_summary=summary
        )
        before, self.context = self.context, self.rng.randint(14_000, 22_000)
        boundary = self._record(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "isMeta": False,
                "level": "info",
                "compactMetadata": {"trigger": trigger, "preTokens": before},
            }
        )
        boundary["parentUuid"] = None
        text = "This session is being continued from a previous conversation that ran out of "
        self._write(
            boundary,
            self._record(
                {
                    "promptId": self.prompt_id,
                    "type": "user",
                    "message": {"role": "user", "content": text + "context.\n\n" + summary},
                    "isVisibleInTranscriptOnly": True,
                    "isCompactSummary": True,
                }
            ),
        )
        self.response = None

    def end(self, reason: str = "prompt_input_exit") -> None:
        """The session ends (``/exit``, Ctrl+D, ``/clear`` …): SessionEnd."""
        if self.live:
            self._fire("SessionEnd", mode=False, effort=False, reason=reason)
        self.live = False

    def _turn_duration(self) -> None:
        ms = int((self.now() - self.turn_started) * 1000) if self.turn_started else 0
        self._write(
            self._record({"type": "system", "subtype": "turn_duration", "durationMs": ms,
                          "isMeta": False})
        )  # fmt: skip
