"""Demo fleets: Claude Code sessions for ``make demo``, behind one small interface.

A *fleet* is anything with ``start()`` / ``stop()`` / ``describe()`` (:class:`Fleet`). The demo
(:mod:`pmux_widget.demo`) only talks to that interface, so the fleet is replaceable:

* :class:`ScriptedFleet` (the default; no Claude account, no network, no CLI): five scripted
  sessions, one thread each, that pipe realistic hook payloads through the INSTALLED hook
  command (``/bin/sh -c '<command from settings.json>'``, payload on stdin, ``$TMUX_PANE``
  set for the "tmux" ones) exactly as Claude Code runs it, and append transcript lines to
  ``<claude>/projects/<encoded cwd>/<session>.jsonl``. Payload shapes, key orders and event
  orders follow the recordings in ``tests/fixtures/real/*/hooks.jsonl``; transcript records
  follow ``tests/fixtures/real/*/transcripts``. Each session loops over its own script with
  jittered pauses; together they show, within ~15 s and then again every minute or so: idle,
  busy with a current tool, needs-input (PermissionRequest, then the permission Notification),
  review with the last answer, a StopFailure error, compaction (PreCompact … PostCompact),
  sub-agents, token and context counts, an Esc interrupt (transcript marker, no hook), an exit
  (SessionEnd) and a ``/clear``.
* :class:`RealFleet` (``--real``): real Claude Code CLIs in private tmux servers against the
  scripted model (:mod:`pmux_widget.demo.scripted_model`), driven by keystrokes.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from pmux_widget.claude.home import encode_project_dir

__all__ = ["Fleet", "InstalledHooks", "RealFleet", "ScriptedFleet", "SimSession"]

CLI_VERSION = "2.1.197"


class Fleet(Protocol):
    """What the demo runs. ``start()`` returns once the sessions are under way; ``stop()``
    ends them and every process the fleet started, and may be called twice."""

    kind: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def describe(self) -> list[str]: ...


def _log(message: str) -> None:
    print(f"[fleet] {message}", file=sys.stderr, flush=True)


# ============================================================================ hook firing


class InstalledHooks:
    """Our hook commands as installed in a Claude ``settings.json``; fires them like Claude.

    Claude Code runs each command with ``/bin/sh -c``, the payload (one JSON line) on stdin,
    the session's cwd as working directory, ``CLAUDE_PROJECT_DIR`` set and ``$TMUX_PANE``
    inherited from its pane. Events without a command of ours are not fired (Claude only runs
    configured hooks).
    """

    def __init__(self, settings_file: Path, home: Path) -> None:
        from pmux_widget.hooks import is_our_command

        settings = json.loads(Path(settings_file).read_text())
        self.commands: dict[str, str] = {}
        for event, groups in (settings.get("hooks") or {}).items():
            for group in groups or []:
                for hook in group.get("hooks") or []:
                    if is_our_command(hook.get("command")):
                        self.commands[event] = hook["command"]
        if not self.commands:
            raise RuntimeError(f"no pmux-widget hooks installed in {settings_file}")
        base = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.env = {**base, "PMUX_WIDGET_HOME": str(home), "CLAUDECODE": "1"}
        self.fired: Counter[str] = Counter()
        self._lock = threading.Lock()

    def fire(
        self, payload: dict[str, Any], pane: str | None = None, cwd: str | None = None
    ) -> bool:
        command = self.commands.get(payload["hook_event_name"])
        if command is None:
            return False
        env = dict(self.env)
        if pane:
            env["TMUX_PANE"] = pane
        if cwd:
            env["CLAUDE_PROJECT_DIR"] = cwd
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        try:
            subprocess.run(
                ["/bin/sh", "-c", command],
                input=data,
                env=env,
                cwd=cwd if cwd and os.path.isdir(cwd) else None,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            _log(f"hook {payload['hook_event_name']} failed: {exc}")
            return False
        with self._lock:
            self.fired[payload["hook_event_name"]] += 1
        return True


# ============================================================================ one session


def _iso(epoch: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if epoch is None else epoch, tz=timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rand(prefix: str, rng: random.Random, length: int = 24) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return prefix + "".join(rng.choice(alphabet) for _ in range(length))


class SimSession:
    """One scripted Claude Code session: its ids, transcript, and the actions of a turn.

    Each action fires the hooks the real CLI fires for it (in the recorded order) and appends
    the transcript records it writes. ``session_id`` changes on :meth:`start` (a new process or
    ``/clear``), like the real one.
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
        self.hooks.fire(self._payload(event, **kwargs), self.pane, self.cwd)

    def _tail(self) -> dict[str, Any]:
        return {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": CLI_VERSION,
            "gitBranch": "main",
        }

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
        record.setdefault("timestamp", _iso())
        record.update(self._tail())
        self.parent = record["uuid"]
        return record

    def _usage(self, output: int) -> dict[str, Any]:
        fresh = self.rng.randint(120, 2400)
        usage = {
            "input_tokens": self.rng.randint(1, 9),
            "cache_creation_input_tokens": fresh,
            "cache_read_input_tokens": self.context,
            "output_tokens": output,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
            "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": fresh},
            "inference_geo": "",
            "iterations": [],
            "speed": "standard",
        }
        self.context += fresh + output
        return usage

    def _assistant(self, block: dict[str, Any], stop_reason: str) -> None:
        """One content block of the current API response (a new response if none is open)."""
        if self.response is None:
            output = self.rng.randint(40, 900)
            self.response = (
                _rand("msg_01", self.rng, 22),
                _rand("req_01", self.rng, 22),
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
        self.turn_started = time.time()
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
        tool_id = _rand("toolu_01", self.rng, 22)
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
        tool_id = _rand("toolu_01", self.rng, 22)
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
                    "requestId": _rand("req_01", self.rng, 22),
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
        ms = int((time.time() - self.turn_started) * 1000) if self.turn_started else 0
        self._write(
            self._record({"type": "system", "subtype": "turn_duration", "durationMs": ms,
                          "isMeta": False})
        )  # fmt: skip


# ============================================================================ the scripts

#: A script: a generator that acts on its session and yields the pause (s) before its next step.
Script = Callable[[SimSession], Iterator[float]]


def _script_tests(s: SimSession) -> Iterator[float]:
    """acme-api: permission dialogs (needs-input), a current tool, then review."""
    src = f"{s.cwd}/src/acme/pagination.py"
    tasks = [
        ("run the test suite and fix whatever fails", "2 failed, 140 passed in 8.31s"),
        ("the export job is flaky, find out why", "1 failed, 141 passed in 8.12s"),
    ]
    s.start()
    yield 1.5
    n = 0
    while True:
        prompt, first_run = tasks[n % len(tasks)]
        n += 1
        s.prompt(prompt)
        yield 1.0
        s.say("I'll run the test suite first.")
        s.tool("Bash", {"command": "uv run pytest -q", "description": "Run the test suite"})
        yield 0.4
        s.ask()
        yield 6.2
        s.remind()
        yield 2.5
        s.tool_done("....F......F....\n" + first_run)
        yield 2.5
        s.tool("Read", {"file_path": src})
        yield 1.0
        s.tool_done("def page_slice(items, page, size):\n    last = page * size\n    ...")
        yield 1.2
        s.say("The last page is dropped: `page_slice()` compares with `<` where it needs `<=`.")
        s.tool(
            "Edit", {"file_path": src, "old_string": "if i < last:", "new_string": "if i <= last:"}
        )
        yield 0.3
        s.ask()
        yield 4.5
        s.tool_done(f"The file {src} has been updated successfully.")
        yield 0.8
        s.tool("Bash", {"command": "uv run pytest -q", "description": "Run the test suite again"})
        yield 3.5
        s.tool_done("................\n142 passed in 8.02s")
        yield 1.2
        s.finish(
            "All 142 tests pass. The last page was cut off by an off-by-one in `page_slice()` "
            "(`<` → `<=`); I added a regression test for it."
        )
        yield 13


def _script_subagents(s: SimSession) -> Iterator[float]:
    """web-frontend: two sub-agents at once, a dialog, then review."""
    s.start()
    yield 2.5
    while True:
        s.prompt("audit the bundle and remove unused dependencies")
        yield 1.2
        s.say("I'll split this: one agent maps the imports, another reads the bundle stats.")
        s.tool(
            "Agent",
            {"description": "Map imports", "prompt": "List every package imported under src/",
             "subagent_type": "Explore"},
        )  # fmt: skip
        s.tool(
            "Agent",
            {"description": "Read bundle stats", "prompt": "Summarize dist/stats.json by size",
             "subagent_type": "general-purpose"},
        )  # fmt: skip
        agents = s.agents_start("Explore", "general-purpose")
        yield 1.5
        s.agent_tool(agents[0], "Grep", {"pattern": "from '[^.]", "path": "src"})
        yield 1.8
        s.agent_tool(agents[1], "Read", {"file_path": f"{s.cwd}/dist/stats.json"})
        yield 2.2
        s.agent_tool(agents[0], "Read", {"file_path": f"{s.cwd}/package.json"})
        yield 1.6
        s.agent_stop(agents[0], "lodash, moment and left-pad are never imported.")
        s.tool_done("lodash, moment and left-pad are never imported.")
        yield 1.4
        s.agent_stop(agents[1], "moment (68 kB) and lodash (71 kB) are the biggest chunks.")
        s.tool_done("moment (68 kB) and lodash (71 kB) are the biggest chunks.")
        yield 1.0
        s.tool("Bash", {"command": "npm uninstall lodash moment left-pad",
                        "description": "Remove unused dependencies"})  # fmt: skip
        yield 0.3
        s.ask()
        yield 4.0
        s.tool_done("removed 3 packages, and audited 812 packages in 3s")
        yield 1.5
        s.tool("Bash", {"command": "npm run build", "description": "Build the bundle"})
        yield 3.0
        s.tool_done("dist/assets/index.js  296.4 kB │ gzip: 94.1 kB\n✓ built in 2.91s")
        yield 1.0
        s.finish(
            "Removed 3 unused dependencies (lodash, moment, left-pad): the bundle went from "
            "412 kB to 296 kB."
        )
        yield 14


def _script_errors(s: SimSession) -> Iterator[float]:
    """data-pipeline (not in tmux): a long command, then the API gives up (StopFailure)."""
    failures = [
        ("rate_limit", 429, "API Error: Request rejected (429) · Rate limited, try again later"),
        ("server_error", 529, "API Error: Repeated 529 Overloaded errors. The API is at capacity"),
    ]
    s.start()
    yield 1.8
    n = 0
    while True:
        error, status, text = failures[n % len(failures)]
        n += 1
        s.prompt("backfill the events table for March")
        yield 0.8
        s.say("Running the backfill for 2026-03.")
        s.tool(
            "Bash",
            {"command": "python -m pipeline.backfill --table events --month 2026-03",
             "description": "Backfill March events"},
        )  # fmt: skip
        yield 4.0
        s.tool_done("backfilled 1,284,112 rows in 4.2s")
        yield 1.0
        s.fail(error, text, status)
        yield 12
        s.prompt("try again and verify the row counts")
        yield 1.0
        s.tool("Bash", {"command": "python -m pipeline.verify --month 2026-03",
                        "description": "Verify March"})  # fmt: skip
        yield 3.5
        s.tool_done("31/31 days ok · 1,284,112 rows · checksums match")
        yield 1.0
        s.finish("March is backfilled and verified: 1,284,112 rows, no gaps, checksums match.")
        yield 12


def _script_compact(s: SimSession) -> Iterator[float]:
    """infra: a long turn that auto-compacts, then an Esc interrupt."""
    s.start()
    yield 2.0
    while True:
        s.context = max(s.context, s.rng.randint(150_000, 168_000))
        s.prompt("plan the terraform upgrade to 1.9 for every environment")
        yield 1.0
        s.say("Let me look at the current plan for production first.")
        s.tool("Bash", {"command": "terraform -chdir=envs/prod plan -no-color",
                        "description": "Plan production"})  # fmt: skip
        yield 2.5
        s.tool_done("Plan: 0 to add, 41 to change, 0 to destroy.")
        yield 0.6
        s.compact_start("auto")
        yield 4.5
        s.compact_end("auto")
        yield 1.2
        s.tool("Read", {"file_path": f"{s.cwd}/envs/staging/versions.tf"})
        yield 1.2
        s.tool_done('terraform {\n  required_version = "~> 1.7"\n}')
        yield 1.0
        s.finish(
            "Upgrade plan ready: 3 environments, 41 resources updated in place, no "
            "replacements. Details in UPGRADE.md."
        )
        yield 10
        s.prompt("apply it to staging")
        yield 1.2
        s.stream("I'll apply the plan to staging. First I'll check the state lock and")
        yield 2.5
        s.interrupt()  # Esc
        yield 9


def _script_lifecycle(s: SimSession) -> Iterator[float]:
    """docs-site: an Esc, a quick turn, an exit and a fresh start, and a /clear."""
    s.start()
    yield 0.8
    while True:
        s.prompt("why is the search index stale?")
        yield 1.0
        s.stream("The index is rebuilt by the `docs:index` job, which last ran")
        yield 2.2
        s.interrupt()  # Esc
        yield 3.0
        s.prompt("fix the broken links in the changelog")
        yield 0.8
        s.tool("Grep", {"pattern": r"\]\(https?://", "path": "CHANGELOG.md",
                        "output_mode": "content"})  # fmt: skip
        yield 1.2
        s.tool_done("CHANGELOG.md:12: [docs](https://old.example.dev/guide)\n…")
        yield 0.6
        s.tool("Edit", {"file_path": f"{s.cwd}/CHANGELOG.md", "old_string": "old.example.dev",
                        "new_string": "docs.example.dev"})  # fmt: skip
        yield 1.0
        s.tool_done("The file CHANGELOG.md has been updated successfully.")
        yield 0.8
        s.finish("Fixed 4 broken links in CHANGELOG.md (two moved guide pages, two dead PR links).")
        yield 5.0
        s.end("prompt_input_exit")  # the user quit claude …
        yield 4.0
        s.start()  # … and started it again in the same pane: a new session
        yield 5.0
        s.prompt("rebuild the search index")
        yield 0.8
        s.tool("Bash", {"command": "npm run docs:index", "description": "Rebuild the index"})
        yield 3.0
        s.tool_done("indexed 214 pages in 2.7s")
        yield 0.6
        s.finish("Rebuilt the search index: 214 pages, including the 12 added this week.")
        yield 10
        s.end("clear")  # /clear: a new session id in the same process and pane
        s.start("clear")
        yield 6


@dataclass(frozen=True)
class Persona:
    """One demo session: its project, its tmux pane (None: not in tmux) and its script."""

    project: str
    pane: str | None
    model: str
    script: Script
    about: str


PERSONAS: tuple[Persona, ...] = (
    Persona("acme-api", "%1", "claude-opus-4-8", _script_tests,
            "permission dialogs → needs-input, then review"),
    Persona("web-frontend", "%2", "claude-opus-4-8", _script_subagents,
            "two sub-agents, a dialog, review"),
    Persona("data-pipeline", None, "claude-sonnet-4-5-20250929", _script_errors,
            "StopFailure errors (429, 529), then a retry"),
    Persona("infra", "%3", "claude-opus-4-8", _script_compact,
            "auto-compaction, then an Esc interrupt"),
    Persona("docs-site", "%4", "claude-sonnet-4-5-20250929", _script_lifecycle,
            "an Esc, exit + restart, /clear"),
)  # fmt: skip


def _make_project(root: Path, name: str) -> Path:
    """A working directory that looks like a git checkout (the project name is its root's)."""
    path = root / name
    (path / ".git").mkdir(parents=True, exist_ok=True)
    readme = path / "README.md"
    if not readme.exists():
        readme.write_text(f"# {name}\n\nA project of the pmux-widget demo.\n")
    return path


# ============================================================================ scripted fleet


class ScriptedFleet:
    """The default demo fleet: :data:`PERSONAS`, one thread each, hooks through the script.

    ``claude_dir``/``home``: the demo's ``CLAUDE_CONFIG_DIR`` and ``PMUX_WIDGET_HOME`` (our
    hooks must be installed in ``claude_dir/settings.json``); ``work_dir``: where the
    sessions' working directories are created. ``speed`` > 1 shortens every pause.
    """

    kind = "scripted"

    def __init__(
        self,
        claude_dir: Path,
        home: Path,
        work_dir: Path,
        *,
        sessions: int = len(PERSONAS),
        seed: int | None = None,
        speed: float = 1.0,
    ) -> None:
        self.claude_dir = Path(claude_dir)
        self.home = Path(home)
        self.work_dir = Path(work_dir)
        self.personas = PERSONAS[: max(1, min(sessions, len(PERSONAS)))]
        self.seed = seed
        self.speed = speed
        self.hooks: InstalledHooks | None = None
        self.sessions: list[SimSession] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def describe(self) -> list[str]:
        lines = []
        for persona in self.personas:
            where = f"tmux pane {persona.pane}" if persona.pane else "no tmux"
            lines.append(f"{persona.project:<14} {where:<14} {persona.about}")
        return lines

    def start(self) -> None:
        self.hooks = InstalledHooks(self.claude_dir / "settings.json", self.home)
        master = random.Random(self.seed)
        for index, persona in enumerate(self.personas):
            rng = random.Random(master.getrandbits(64))
            session = SimSession(
                self.hooks,
                self.claude_dir,
                _make_project(self.work_dir, persona.project),
                persona.pane,
                persona.model,
                rng,
                context=rng.randint(18_000, 60_000),
            )
            self.sessions.append(session)
            thread = threading.Thread(
                target=self._run,
                args=(session, persona, index * 0.3),
                name=f"demo-{persona.project}",
                daemon=True,
            )
            self._threads.append(thread)
        for thread in self._threads:
            thread.start()

    def _run(self, session: SimSession, persona: Persona, offset: float) -> None:
        if self._stop.wait(offset / self.speed):
            return
        while not self._stop.is_set():
            steps = persona.script(session)
            try:
                for pause in steps:
                    jitter = session.rng.uniform(0.8, 1.25)
                    if self._stop.wait(pause * jitter / self.speed):
                        return
            except Exception as exc:  # a script bug must not end the demo silently
                _log(f"{persona.project}: {exc!r}; restarting its script")
                if self._stop.wait(2.0):
                    return

    def stop(self) -> None:
        """Stop every script, then end the live sessions (SessionEnd), like exiting Claude."""
        self._stop.set()
        for thread in self._threads:
            thread.join(15)
        for session in self.sessions:
            with contextlib.suppress(Exception):
                session.end("other")
        self.sessions = []
        self._threads = []

    @property
    def fired(self) -> int:
        return sum(self.hooks.fired.values()) if self.hooks is not None else 0


# ============================================================================ real fleet

#: (project, pane script): the keystrokes each real session cycles through. Each step is
#: (action, argument, pause after it in seconds).
_REAL_SCRIPTS: dict[str, list[tuple[str, str, float]]] = {
    "acme-api": [
        ("prompt", "please run the command", 0),
        ("dialog", "", 6),
        ("approve", "", 0),
        ("idle", "", 12),
        ("prompt", "please run the command", 0),
        ("dialog", "", 4),
        ("deny", "", 8),
    ],
    "web-frontend": [
        ("prompt", "use a subagent please", 0),
        ("idle", "", 12),
        ("prompt", "read both in parallel", 0),
        ("idle", "", 10),
    ],
    "data-pipeline": [
        ("prompt", "please fail with 429", 0),
        ("idle", "", 12),
        ("prompt", "stream slowly", 2.5),
        ("escape", "", 8),
        ("prompt", "read the readme", 0),
        ("idle", "", 10),
    ],
    "infra": [
        ("prompt", "say hi", 0),
        ("idle", "", 3),
        ("prompt", "read the readme", 0),
        ("idle", "", 3),
        ("command", "/compact", 0),
        ("idle", "", 8),
        ("prompt", "run a long command", 0),
        ("dialog", "", 3),
        ("approve", "", 0),
        ("idle", "", 12),
    ],
}


class RealFleet:
    """Real Claude Code CLIs (``ensure_cli``) in private tmux servers, against the scripted
    model, driven by keystrokes: prompts, approvals, denials, Esc and ``/compact``.

    ``start()`` raises :class:`~pmux_widget.demo.claude_cli.CliUnavailable` (or OSError) when
    the CLI or tmux cannot be had; the demo then falls back to :class:`ScriptedFleet`.
    """

    kind = "real"

    def __init__(self, claude_dir: Path, home: Path, work_dir: Path, *, sessions: int = 4) -> None:
        self.claude_dir = Path(claude_dir)
        self.home = Path(home)
        self.work_dir = Path(work_dir)
        self.projects = list(_REAL_SCRIPTS)[: max(1, min(sessions, len(_REAL_SCRIPTS)))]
        self.model: Any = None
        self.panes: list[Any] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def describe(self) -> list[str]:
        return [
            f"{name:<14} real claude in tmux  " + ", ".join(a for a, _, _ in _REAL_SCRIPTS[name])
            for name in self.projects
        ]

    def start(self) -> None:
        import shutil

        from .claude_cli import ClaudeEnv, CliUnavailable, TmuxClaude, ensure_cli
        from .scripted_model import ScriptedModel

        if shutil.which("tmux") is None:
            raise CliUnavailable("tmux is not installed")
        cli = ensure_cli(timeout=300)
        self.model = ScriptedModel()
        self.model.start()
        try:
            env = ClaudeEnv(
                self.model.base_url, root=self.work_dir / ".claude-env", seed_files=False
            )
            # The demo's config dir (with our hooks), not the env's own: seed it the same way.
            env.config_dir = self.claude_dir
            env.extra_env["CLAUDE_CONFIG_DIR"] = str(self.claude_dir)
            env._seed_state()
            cwds = {name: _make_project(self.work_dir, name) for name in self.projects}
            for cwd in cwds.values():
                (cwd / "notes.txt").write_text("This is a draft note.\n")
                (cwd / "README.md").write_text("# Demo project\n\nHello from the README.\n")
                # All trusted before the first start: a running CLI (2.1.332) rewrites
                # .claude.json from memory, dropping what was added after it started.
                env.trust(cwd)
            for name, cwd in cwds.items():
                pane = TmuxClaude(env, cli, cwd=cwd, socket_name=f"pmux-demo-{os.getpid()}-{name}")
                self.panes.append(pane)
                pane.start(timeout=90)
                # One tmux session name for all: the widget groups them as one workspace.
                subprocess.run(
                    ["tmux", "-L", pane.socket_name, "rename-session", "-t", "claude", "demo"],
                    capture_output=True,
                    check=False,
                )
        except Exception:
            self.stop()
            raise
        for name, pane in zip(self.projects, self.panes, strict=True):
            thread = threading.Thread(
                target=self._run, args=(name, pane), name=f"demo-real-{name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _run(self, name: str, pane: Any) -> None:
        steps = _REAL_SCRIPTS[name]
        while not self._stop.is_set():
            for action, argument, pause in steps:
                if self._stop.is_set():
                    return
                try:
                    if action == "prompt":
                        pane.type_prompt(argument)
                    elif action == "command":
                        pane.command_line(argument)
                    elif action == "dialog":
                        pane.wait_dialog(60)
                    elif action == "approve":
                        pane.approve()
                    elif action == "deny":
                        pane.deny()
                    elif action == "escape":
                        pane.escape()
                    elif action == "idle":
                        pane.wait_status("idle", 120)
                except Exception as exc:
                    if self._stop.is_set():
                        return
                    _log(f"{name}: {action} failed ({exc.__class__.__name__}); going on")
                    pane.escape()
                if self._stop.wait(pause):
                    return

    def stop(self) -> None:
        """``/exit`` in every pane (SessionEnd, like a user quitting), then kill what is left:
        the CLIs and their tmux servers."""
        self._stop.set()
        for pane in self.panes:
            with contextlib.suppress(Exception):
                pane.escape()
                pane.command_line("/exit", timeout=3)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(p.alive() for p in self.panes):
            time.sleep(0.1)
        for pane in self.panes:
            with contextlib.suppress(Exception):
                pane.close()
        for thread in self._threads:
            thread.join(5)
        if self.model is not None:
            self.model.stop()
        self.panes, self._threads, self.model = [], [], None
