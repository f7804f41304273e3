"""Record what the real Claude Code CLI does, per user action, into golden fixtures and a doc.

Why: every rule of the monitor (which hook means what, when the PID file changes, which
transcript records mark an interrupt) must come from observation, not from reading minified
code. This module drives the real CLI (:mod:`pmux_widget.demo.claude_cli`) against the scripted
model (:mod:`pmux_widget.demo.scripted_model`) through every user path, and records with receive
times:

* every hook payload (a recorder hook on all events),
* every PID-file content change (``<config>/sessions/<pid>.json``, polled every 20 ms),
* every transcript record as it appears (main and sub-agent files),
* every request the model server answered, and every keystroke the driver sent.

Refresh the fixtures and the generated doc (takes a few minutes per version; runs the real
CLIs)::

    .venv/bin/python -m devtools.record --version all --out tests/fixtures/real \\
        --doc docs/claude-code-behaviour.md [scenario ...]

Each pinned version (``--version``, default the newest) records the scenarios that exist on it
(:data:`ONLY_ON`). Output per version and scenario (``<out>/<version>/<scenario>/``), with temp
paths replaced by placeholders
(``/home/dev``, ``/home/dev/.claude``, ``/home/dev/project``) and the CLI pid by ``4242``:

* ``hooks.jsonl``       the hook payloads exactly as Claude wrote them (one per line)
* ``pid-files.jsonl``   each distinct PID-file content (``null`` = file removed)
* ``transcripts/``      the transcript files as they were at the end (``<sid>.jsonl``,
  ``<sid>/subagents/agent-<id>.jsonl`` …)
* ``timeline.json``     everything above merged, with ms since the scenario started
* ``requests.jsonl``    the model requests (kind, scenario, step, status, usage, request id)

``--keep DIR`` keeps the raw recordings (``DIR/<scenario>.raw.json``); ``--from-raw DIR``
rewrites the fixtures from them without running the CLI; ``--doc-only`` only regenerates the
doc from the fixtures.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from devtools.background_acting_notes import ACTING_ON_BACKGROUND
from devtools.background_notes import BACKGROUND_SESSIONS
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    CLI_VERSIONS,
    NEWEST,
    OLDEST,
    ClaudeEnv,
    auto_mode_default,
    encode_project_dir,
    ensure_cli,
    read_jsonl,
    version_key,
    wait_until,
)
from pmux_widget.demo.scenario_plans import system_text
from pmux_widget.demo.scripted_model import ScriptedModel

__all__ = ["SCENARIOS", "Observer", "Run", "main", "record_scenario"]

PLACEHOLDER_HOME = "/home/dev"
PLACEHOLDER_PID = 4242


def _now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------- observation


class Observer:
    """Polls a :class:`ClaudeEnv`'s PID files and transcripts on a thread, logging changes.

    Events are dicts ``{"t": ms epoch, "source": "pid" | "transcript", ...}`` appended to
    ``events`` in the order they were seen.
    """

    def __init__(self, env: ClaudeEnv, interval: float = 0.02) -> None:
        self.env = env
        self.interval = interval
        self.events: list[dict[str, Any]] = []
        self._pid_seen: dict[str, str] = {}
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="observer", daemon=True)

    def start(self) -> Observer:
        """Start polling."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Poll one last time and stop."""
        self._stop.set()
        self._thread.join(5)
        self.poll()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def poll(self) -> None:
        """One pass over the PID files and transcripts."""
        now = _now_ms()
        sessions = self.env.sessions_dir
        current: dict[str, str] = {}
        if sessions.is_dir():
            for f in sessions.iterdir():
                if re.fullmatch(r"\d+\.json", f.name):
                    with contextlib.suppress(OSError):
                        current[f.name] = f.read_text()
        for name, text in current.items():
            if self._pid_seen.get(name) != text:
                try:
                    data = json.loads(text)
                except ValueError:
                    continue  # torn write: see it on the next pass
                self._pid_seen[name] = text
                self.events.append({"t": now, "source": "pid", "file": name, "data": data})
        for name in list(self._pid_seen):
            if name not in current:
                del self._pid_seen[name]
                self.events.append({"t": now, "source": "pid", "file": name, "data": None})
        projects = self.env.config_dir / "projects"
        if projects.is_dir():
            for f in sorted(projects.rglob("*.jsonl")):
                self._tail(f, now)

    def _tail(self, path: Path, now: int) -> None:
        off = self._offsets.get(path, 0)
        try:
            with open(path, "rb") as fh:
                fh.seek(off)
                chunk = fh.read()
        except OSError:
            return
        if not chunk:
            return
        self._offsets[path] = off + len(chunk)
        data = self._partial.pop(path, b"") + chunk
        lines = data.split(b"\n")
        if lines[-1]:
            self._partial[path] = lines[-1]
        rel = str(path.relative_to(self.env.config_dir))
        for line in lines[:-1]:
            if line.strip():
                with contextlib.suppress(ValueError):
                    self.events.append(
                        {"t": now, "source": "transcript", "file": rel, "record": json.loads(line)}
                    )


# --------------------------------------------------------------------------- a run


@dataclass
class Run:
    """One recorded scenario: the live objects while driving, and what was seen."""

    name: str
    env: ClaudeEnv
    model: ScriptedModel
    tmux: TmuxClaude | None
    observer: Observer
    started_ms: int
    cli: Path | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def act(self, what: str, fn: Callable[[], Any] | None = None) -> Any:
        """Log a user action (with its time), then perform it."""
        self.actions.append({"t": _now_ms(), "source": "action", "action": what})
        return fn() if fn else None

    # --- waiting helpers used by the drivers

    def hook_names(self) -> list[str]:
        """Recorded hook event names so far."""
        return self.env.hook_events()

    def wait_hook(self, name: str, timeout: float = 60.0, count: int = 1) -> None:
        """Wait until ``name`` has fired ``count`` times."""
        wait_until(lambda: self.hook_names().count(name) >= count, timeout, what=f"hook {name}")

    def pid_status(self) -> str | None:
        """The live PID file's status."""
        info = self.tmux.pid_info() if self.tmux else None
        return info.get("status") if info else None

    def wait_status(self, status: str, timeout: float = 60.0) -> None:
        """Wait for a PID-file status."""
        assert self.tmux is not None
        self.tmux.wait_status(status, timeout)

    def wait_transcript(
        self,
        pred: Callable[[dict[str, Any]], bool],
        timeout: float = 30.0,
        what: str = "transcript record",
    ) -> None:
        """Wait until a transcript record (observed by the observer) satisfies ``pred``."""
        wait_until(
            lambda: any(
                e["source"] == "transcript" and pred(e["record"])
                for e in list(self.observer.events)
            ),
            timeout,
            what=what,
        )

    def settle(self, quiet: float = 1.5, timeout: float = 20.0) -> None:
        """Wait until no new hook, PID or transcript event arrived for ``quiet`` seconds.

        Used at the end of a scenario so late writes (flushes, metadata) are captured.
        """

        def count() -> int:
            return len(self.observer.events) + len(self.hook_names())

        last = count()
        last_change = time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.1)
            c = count()
            if c != last:
                last, last_change = c, time.monotonic()
            elif time.monotonic() - last_change >= quiet:
                return


# --------------------------------------------------------------------------- scenarios


def _is_marker(rec: dict[str, Any], text: str = "[Request interrupted by user") -> bool:
    if rec.get("type") != "user":
        return False
    content = rec.get("message", {}).get("content")
    if isinstance(content, str):
        return content.startswith(text)
    return (
        isinstance(content, list)
        and len(content) == 1
        and str(content[0].get("text", "")).startswith(text)
    )


def sc_start_exit(r: Run) -> None:
    """Start the CLI, wait, then /exit."""
    r.act("start (CLI at its prompt)")
    r.settle(1.0)
    r.act("/exit", r.tmux.exit)
    wait_until(lambda: not r.tmux.alive(), 30, what="CLI exit")


def sc_plain(r: Run) -> None:
    """A prompt answered with plain text."""
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_approve(r: Run) -> None:
    """Bash `touch` needs permission; approve with "1. Yes"."""
    r.act(
        "type 'please run the command' + Enter",
        lambda: r.tmux.type_prompt("please run the command"),
    )
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_approve_after_notification(r: Run) -> None:
    """Like approve, but leave the dialog open until the Notification hook fires (~6 s)."""
    r.act(
        "type 'please run the command' + Enter",
        lambda: r.tmux.type_prompt("please run the command"),
    )
    r.tmux.wait_dialog()
    r.wait_hook("Notification", timeout=30)
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_deny(r: Run) -> None:
    """Bash `touch` needs permission; choose "3. No"."""
    r.act(
        "type 'please run the command' + Enter",
        lambda: r.tmux.type_prompt("please run the command"),
    )
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("choose 'No'", r.tmux.deny)
    r.wait_status("idle")
    r.wait_transcript(_is_marker, what="interrupt marker")


def sc_esc_dialog(r: Run) -> None:
    """Esc on the permission dialog, then a new prompt (arrives with the rejected result)."""
    r.act(
        "type 'please run the command' + Enter",
        lambda: r.tmux.type_prompt("please run the command"),
    )
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("press Esc on the dialog", r.tmux.escape)
    r.wait_status("idle")
    r.wait_transcript(_is_marker, what="interrupt marker")
    r.settle(1.0)
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_esc_stream(r: Run) -> None:
    """Esc while the answer streams slowly."""
    r.act("type 'stream slowly' + Enter", lambda: r.tmux.type_prompt("stream slowly"))
    r.tmux.wait_for_screen(r"line 3 of", 20)
    r.act("press Esc while streaming", r.tmux.escape)
    r.wait_status("idle")
    r.wait_transcript(_is_marker, what="interrupt marker")


def sc_long_command(r: Run) -> None:
    """Approve an 8 s command; the PID file turns busy before PostToolUse."""
    r.act("type 'long command' + Enter", lambda: r.tmux.type_prompt("run the long command"))
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_status("busy")
    r.wait_hook("Stop", timeout=60)
    r.wait_status("idle")


def sc_esc_during_tool(r: Run) -> None:
    """Approve the 8 s command, then press Esc while it runs."""
    r.act("type 'run the long command' + Enter", lambda: r.tmux.type_prompt("run the long command"))
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_status("busy")
    r.tmux.wait_for_screen(r"Running|esc to interrupt", 10)
    time.sleep(1.0)  # let the command really run for a moment (this is the scenario)
    r.act("press Esc while the command runs", r.tmux.escape)
    r.wait_status("idle")
    r.wait_transcript(_is_marker, what="interrupt marker")


def sc_prompt_while_busy(r: Run) -> None:
    """Approve the 8 s command, then type another prompt while it runs (a queued prompt)."""
    r.act("type 'run the long command' + Enter", lambda: r.tmux.type_prompt("run the long command"))
    r.tmux.wait_dialog()
    r.wait_status("waiting")
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_status("busy")
    r.tmux.wait_for_screen(r"Running|esc to interrupt", 10)
    r.act("type 'say hi' + Enter while the command runs", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop", timeout=60)
    r.wait_status("idle")
    r.settle(2.0)
    # 2.1.197 answers the queued prompt in a turn of its own (a second Stop); 2.1.332 fires
    # its UserPromptSubmit at once and answers it in the same turn (one Stop).
    if r.pid_status() != "idle":
        r.wait_hook("Stop", timeout=60, count=2)
        r.wait_status("idle")


def sc_tools(r: Run) -> None:
    """Read (no dialog); then Read+Edit (Edit asks); then Write (asks); approve all."""
    r.act("type 'read the readme' + Enter", lambda: r.tmux.type_prompt("read the readme"))
    r.wait_hook("Stop")
    r.wait_status("idle")
    r.act("type 'edit the notes' + Enter", lambda: r.tmux.type_prompt("edit the notes"))
    r.tmux.wait_dialog()
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_hook("Stop", count=2)
    r.wait_status("idle")
    r.act("type 'write a file' + Enter", lambda: r.tmux.type_prompt("write a file"))
    r.tmux.wait_dialog()
    r.act("choose '1. Yes'", r.tmux.approve)
    r.wait_hook("Stop", count=3)
    r.wait_status("idle")


def sc_parallel(r: Run) -> None:
    """Two tool_use blocks (two Reads) in one response."""
    r.act(
        "type 'read both in parallel' + Enter", lambda: r.tmux.type_prompt("read both in parallel")
    )
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_subagent(r: Run) -> None:
    """The Agent tool: a sub-agent that reads a file and answers."""
    r.act("type 'use a subagent' + Enter", lambda: r.tmux.type_prompt("use a subagent please"))
    r.wait_hook("Stop", timeout=90)
    r.wait_status("idle")


def sc_clear(r: Run) -> None:
    """A prompt, then /clear (new session id in the same process)."""
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")
    r.act("/clear", r.tmux.clear)
    r.wait_hook("SessionStart", count=2)
    r.settle(1.0)
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop", count=2)
    r.wait_status("idle")


def sc_compact(r: Run) -> None:
    """Three prompts (compaction needs a few message groups), then /compact."""
    for i, prompt in enumerate(["say hi", "read the readme", "say hi again"], start=1):
        r.act(f"type {prompt!r} + Enter", lambda p=prompt: r.tmux.type_prompt(p))
        r.wait_hook("Stop", count=i)
        r.wait_status("idle")
    r.act("/compact", r.tmux.compact)
    r.wait_hook("PostCompact", timeout=60)
    r.wait_status("idle")


def _error_scenario(code: int, retried: bool = False) -> Callable[[Run], None]:
    prompt = f"please fail after retries with {code}" if retried else f"please fail with {code}"

    def sc(r: Run) -> None:
        r.act(f"type {prompt!r} + Enter", lambda: r.tmux.type_prompt(prompt))
        r.wait_hook("StopFailure", timeout=400)
        r.wait_status("idle")

    sc.__doc__ = f"The model answers HTTP {code} to every attempt until the CLI gives up" + (
        " (no retry headers: the CLI's default retry schedule)."
        if retried
        else " (`x-should-retry: false`)."
    )
    return sc


def sc_kill9(r: Run) -> None:
    """A prompt, then SIGKILL: no SessionEnd; is the PID file left behind?"""
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")
    r.wait_transcript(lambda rec: rec.get("type") == "assistant", what="assistant record")
    r.act("kill -9 <pid>", r.tmux.kill9)
    wait_until(lambda: not r.tmux.alive(), 10, what="CLI dead")


def sc_print(r: Run) -> None:
    """``claude -p 'say hi'`` (print mode, no tmux)."""
    assert r.cli is not None
    proc = r.act("claude -p 'say hi'", lambda: r.env.run_print(r.cli, "say hi"))
    r.notes.append(f"exit status {proc.returncode}, stdout {proc.stdout.strip()!r}")


def sc_auto_safe(r: Run) -> None:
    """Auto mode: Bash `touch` (a call the CLI deems safe) runs with no dialog."""
    r.act(
        "type 'please run the command' + Enter",
        lambda: r.tmux.type_prompt("please run the command"),
    )
    r.wait_hook("Stop")
    r.wait_status("idle")


def sc_auto_blocked(r: Run) -> None:
    """Auto mode: `curl … | sh` needs the classifier, which cannot run through our gateway:
    the "can't check" dialog (left open 10 s), Enter (stay in auto mode), its permission
    dialog (left open until a Notification, ≤ 20 s), then "Yes" chosen by label."""
    r.act("type 'please install the tool' + Enter", lambda: r.tmux.type_prompt("install the tool"))
    r.tmux.wait_for_screen(r.tmux.AUTO_CANT_CHECK, 60)
    time.sleep(10)  # what fires while the dialog waits (this is the scenario)
    r.act("Enter on auto mode's dialog (stay in auto mode)", r.tmux.stay_in_auto_mode)
    screen = r.tmux.wait_dialog()
    r.notes.append("permission dialog options (top to bottom): " + repr(r.tmux.dialog_options()))
    n = r.hook_names().count("Notification")
    with contextlib.suppress(TimeoutError):
        r.wait_hook("Notification", timeout=20, count=n + 1)
    del screen
    r.act("choose 'Yes' (by label)", r.tmux.approve)
    r.wait_hook("Stop", timeout=60)
    r.wait_status("idle")


def sc_background_agent(r: Run) -> None:
    """The Agent tool with a slow (~20 s) sub-agent; wait until everything is idle."""
    r.act(
        "type 'start a background agent' + Enter",
        lambda: r.tmux.type_prompt("start a background agent please"),
    )
    r.wait_hook("Stop", timeout=120)
    r.settle(2.0)
    if r.pid_status() != "idle":  # the agent outlives the turn: wait for its end
        r.wait_status("idle", timeout=120)
    r.settle(2.0)


def sc_background_shell(r: Run) -> None:
    """Bash `sleep 600` with `run_in_background`: the shell outlives the turn."""
    r.act(
        "type 'start a background shell' + Enter",
        lambda: r.tmux.type_prompt("start a background shell please"),
    )
    r.wait_hook("Stop", timeout=60)
    r.settle(3.0)
    info = r.tmux.pid_info() or {}
    r.notes.append(f"PID-file status 3 s after Stop: {info.get('status')!r}")
    r.notes.append("screen after Stop: " + _screen_tail(r.tmux, 3))


def sc_resume(r: Run) -> None:
    """A prompt, /clear, then /resume and Enter on the first session listed."""
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")
    r.act("/clear", r.tmux.clear)
    r.wait_hook("SessionStart", count=2)
    r.settle(1.0)
    r.act("/resume", lambda: r.tmux.command_line("/resume"))
    r.tmux.wait_for_screen(r"(?i)resume|search", 20)
    r.settle(1.0)
    r.notes.append("the /resume picker: " + _screen_tail(r.tmux, 12))
    r.act("Enter (the first session listed)", lambda: r.tmux.send_keys("Enter"))
    r.settle(2.0)
    r.act("type 'say hi again' + Enter", lambda: r.tmux.type_prompt("say hi again"))
    r.wait_hook("Stop", count=2)
    r.wait_status("idle")


def sc_fork(r: Run) -> None:
    """A prompt, /exit, then `claude --resume <id> --fork-session` and a prompt there."""
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")
    sid = r.tmux.session_id()
    r.act("/exit", r.tmux.exit)
    wait_until(lambda: not r.tmux.alive(), 30, what="CLI exit")
    r.tmux.close()
    r.tmux = TmuxClaude(r.env, r.tmux.cli, ["--resume", str(sid), "--fork-session"])
    r.act("start claude --resume <id> --fork-session", r.tmux.start)
    r.wait_hook("SessionStart", count=2)
    r.act("type 'say hi again' + Enter", lambda: r.tmux.type_prompt("say hi again"))
    r.wait_hook("Stop", count=2)
    r.wait_status("idle")
    r.notes.append(f"forked from {sid}; the new process's session: {r.tmux.session_id()}")


def sc_startup_dialog(r: Run) -> None:
    """2.1.332 in manual mode without `hasSeenAutoDefaultNudge`: the startup dialog "Make
    auto mode your default permission mode?", answered with Esc, then a prompt."""
    r.tmux.wait_for_screen(r"(?i)auto mode", 60)
    r.settle(2.0)
    r.notes.append("startup screen: " + _screen_tail(r.tmux, 12))
    r.act("press Esc on the startup dialog", r.tmux.escape)
    r.tmux.wait_for_screen(r.tmux.READY, 30)
    r.settle(1.0)
    r.act("type 'say hi' + Enter", lambda: r.tmux.type_prompt("say hi"))
    r.wait_hook("Stop")
    r.wait_status("idle")


def _screen_tail(tmux: TmuxClaude, n: int) -> str:
    lines = [ln.rstrip() for ln in tmux.screen().splitlines() if ln.strip()]
    return " ⏎ ".join(ln.strip() for ln in lines[-n:])


def _api_error_scenario(code: int, prompt: str = "") -> Callable[[Run], None]:
    prompt = prompt or f"please fail with {code}"

    def sc(r: Run) -> None:
        r.act(f"type {prompt!r} + Enter", lambda: r.tmux.type_prompt(prompt))
        wait_until(
            lambda: {"Stop", "StopFailure"} & set(r.hook_names()), 120, what="Stop or StopFailure"
        )
        r.wait_status("idle")

    sc.__doc__ = (
        f"The model answers HTTP {code}"
        + (" and an `error` event in the stream" if code == 200 else "")
        + ": which hook ends the turn (Stop or StopFailure)?"
    )
    return sc


SCENARIOS: dict[str, Callable[[Run], None]] = {
    "start_exit": sc_start_exit,
    "plain": sc_plain,
    "approve": sc_approve,
    "approve_after_notification": sc_approve_after_notification,
    "deny": sc_deny,
    "esc_dialog": sc_esc_dialog,
    "esc_stream": sc_esc_stream,
    "long_command": sc_long_command,
    "esc_during_tool": sc_esc_during_tool,
    "prompt_while_busy": sc_prompt_while_busy,
    "tools": sc_tools,
    "parallel": sc_parallel,
    "subagent": sc_subagent,
    "clear": sc_clear,
    "compact": sc_compact,
    "error_429": _error_scenario(429),
    "error_529": _error_scenario(529),
    "error_500": _error_scenario(500),
    "error_500_retried": _error_scenario(500, retried=True),
    "kill9": sc_kill9,
    "print": sc_print,
    "error_400": _api_error_scenario(400),
    "error_in_stream": _api_error_scenario(200, "please fail in the stream"),
    "auto_safe": sc_auto_safe,
    "auto_blocked": sc_auto_blocked,
    "background_agent": sc_background_agent,
    "background_shell": sc_background_shell,
    "resume": sc_resume,
    "fork": sc_fork,
    "startup_dialog": sc_startup_dialog,
}
"""Scenario name → driver. Each driver gets a started :class:`Run` (CLI at its prompt)."""

#: Scenarios that exist only on some CLI versions: name → (applies to version?, why not).
ONLY_ON: dict[str, tuple[Callable[[str], bool], str]] = {
    "auto_safe": (auto_mode_default, "no auto permission mode by default"),
    "auto_blocked": (auto_mode_default, "no auto permission mode by default"),
    "startup_dialog": (auto_mode_default, "no auto-mode startup dialog"),
}
#: ClaudeEnv options per scenario (default: manual permission mode, no startup dialog).
ENV_OPTIONS: dict[str, dict[str, Any]] = {
    "auto_safe": {"auto_mode": True},
    "auto_blocked": {"auto_mode": True},
    "startup_dialog": {"startup_dialog": True},
}


def applies(name: str, version: str) -> bool:
    """Whether scenario ``name`` exists on CLI ``version``."""
    only = ONLY_ON.get(name)
    return only is None or only[0](version)


def record_scenario(
    name: str,
    cli: Path,
    workdir: Path,
    model: ScriptedModel | None = None,
    version: str = NEWEST,
) -> dict[str, Any]:
    """Drive one scenario against a fresh env for CLI ``version``; return the raw
    (un-normalized) recording."""
    driver = SCENARIOS[name]
    own_model = model is None
    model = model or ScriptedModel()
    model.start()
    first_request = len(model.requests)
    root = workdir / name
    shutil.rmtree(root, ignore_errors=True)
    env = ClaudeEnv(model.base_url, root=root, version=version, **ENV_OPTIONS.get(name, {}))
    env.add_recorder_hooks()
    observer = Observer(env).start()
    tmux = None if name == "print" else TmuxClaude(env, cli)
    run = Run(name, env, model, tmux, observer, _now_ms(), cli=cli)
    error: str | None = None
    try:
        if tmux is not None:
            ready = name != "startup_dialog"  # its dialog hides the prompt
            run.act("start claude in tmux", lambda: tmux.start(wait_ready=ready))
            run.wait_hook("SessionStart")
        driver(run)
        run.settle()
    except Exception as exc:  # keep what was recorded; report the failure
        error = f"{type(exc).__name__}: {exc}"
        if tmux is not None:
            with contextlib.suppress(Exception):
                run.notes.append("screen at failure:\n" + tmux.screen())
    finally:
        tmux = run.tmux  # a driver may have started another CLI (fork)
        pid = tmux._pid if tmux else None
        # PID files still there once the scenario itself ended the CLI (exit, kill -9, -p);
        # None when the CLI was still running (the recorder kills it: not a finding).
        ended = tmux is None or not tmux.alive()
        leftover = (
            sorted(p.name for p in env.sessions_dir.glob("*.json"))
            if ended and env.sessions_dir.is_dir()
            else []
            if ended
            else None
        )
        if tmux is not None:
            tmux.close()
        observer.stop()
        if own_model:
            model.stop()
    return {
        "name": name,
        "version": version,
        "doc": (driver.__doc__ or "").strip(),
        "root": str(env.root),
        "config_dir": str(env.config_dir),
        "cwd": str(env.cwd),
        "pid": pid,
        "started_ms": run.started_ms,
        "error": error,
        "notes": run.notes,
        "hooks": env.hooks(),
        "actions": run.actions,
        "observed": observer.events,
        "requests": [_request_summary(r) for r in model.requests[first_request:]],
        "transcripts": {
            str(p.relative_to(env.config_dir)): read_jsonl(p)
            for p in sorted((env.config_dir / "projects").rglob("*.jsonl"))
        }
        if (env.config_dir / "projects").is_dir()
        else {},
        "meta_files": {
            str(p.relative_to(env.config_dir)): json.loads(p.read_text())
            for p in sorted((env.config_dir / "projects").rglob("*.meta.json"))
        }
        if (env.config_dir / "projects").is_dir()
        else {},
        "leftover_pid_files": leftover,
    }


def _request_summary(r: Any) -> dict[str, Any]:
    body = r.body if isinstance(r.body, dict) else {}
    return {
        "t": int(r.received_at * 1000),
        "t_end": int(r.finished_at * 1000) if r.finished_at else None,
        "method": r.method,
        "path": r.path,
        "kind": r.kind,
        "scenario": r.scenario,
        "step": r.plan.step if r.plan else None,
        "status": r.status,
        "completed": r.completed,
        "request_id": r.request_id,
        "message_id": r.message_id,
        "usage": r.usage,
        "retry_count": r.headers.get("x-stainless-retry-count"),
        "model": body.get("model"),
        "n_tools": len(body.get("tools") or []),
        "n_messages": len(body.get("messages") or []),
        "system_head": _system_head(body),
    }


def _system_head(body: dict[str, Any]) -> str:
    text = system_text(body)
    text = re.sub(r"^x-anthropic-billing-header:[^\n]*\n?", "", text)
    return text.strip()[:80]


# --------------------------------------------------------------------------- normalization


def normalizer(rec: dict[str, Any]) -> Callable[[Any], Any]:
    """A function that replaces this run's temp paths and pid by placeholders, recursively."""
    root = rec["root"]
    home = root + "/home"
    pairs = [
        (home + "/.claude", PLACEHOLDER_HOME + "/.claude"),
        (home + "/project", PLACEHOLDER_HOME + "/project"),
        (home, PLACEHOLDER_HOME),
        (root, PLACEHOLDER_HOME + "/.sim"),
        (encode_project_dir(home + "/project"), encode_project_dir(PLACEHOLDER_HOME + "/project")),
        (encode_project_dir(home), encode_project_dir(PLACEHOLDER_HOME)),
    ]
    pid = rec.get("pid")

    def fix_str(s: str) -> str:
        for a, b in pairs:
            s = s.replace(a, b)
        if pid:
            s = re.sub(rf"\b{pid}\.json\b", f"{PLACEHOLDER_PID}.json", s)
        return s

    def fix(v: Any, key: str | None = None) -> Any:
        if isinstance(v, str):
            return fix_str(v)
        if isinstance(v, list):
            return [fix(x) for x in v]
        if isinstance(v, dict):
            return {fix_str(k): fix(x, k) for k, x in v.items()}
        if pid and key == "pid" and v == pid:
            return PLACEHOLDER_PID
        return v

    return fix


def _summarize(ev: dict[str, Any]) -> str:
    """A one-line description of a timeline event."""
    src = ev["source"]
    if src == "action":
        return ev["action"]
    if src == "hook":
        p = ev["payload"] or {}
        name = p.get("hook_event_name", "?")
        bits = []
        for k in (
            "source",
            "reason",
            "tool_name",
            "notification_type",
            "error",
            "trigger",
            "agent_type",
            "agent_id",
            "is_interrupt",
        ):
            if k in p:
                val = p[k]
                if k == "agent_id":
                    val = "…" + str(val)[-4:]
                bits.append(f"{k}={val}")
        if p.get("permission_mode") not in (None, "default"):
            bits.append(f"permission_mode={p['permission_mode']}")
        if "background_tasks" in p:
            tasks = p["background_tasks"] or []
            bits.append(
                "background_tasks=["
                + ", ".join(f"{t.get('type')}:{t.get('status')}" for t in tasks)
                + "]"
            )
        if name == "UserPromptSubmit" and str(p.get("prompt", "")).startswith("<task-notif"):
            bits.append("prompt=<task-notification>")
        if name == "Notification":
            bits.append(repr(p.get("message")))
        return f"{name}({', '.join(bits)})" if bits else name
    if src == "pid":
        d = ev["data"]
        if d is None:
            return "PID file removed"
        s = d.get("status", "(no status)")
        if d.get("waitingFor"):
            s += f" ({d['waitingFor']})"
        return f"status={s}"
    if src == "transcript":
        return _summarize_record(ev["record"], ev["file"])
    if src == "request":
        u = ev.get("usage") or {}
        what = ev.get("kind") or ev["path"]
        if ev.get("scenario"):
            what += f" {ev['scenario']}#{ev['step']}"
        status = ev["status"] or "-"
        end = "" if ev["completed"] else " (client went away)"
        return f"{ev['method']} {ev['path']} → {status} [{what}]{end}" + (
            f" out={u.get('output_tokens')}" if u else ""
        )
    return src


def _content_desc(content: Any) -> str:
    if isinstance(content, str):
        return "text " + repr(content[:60])
    parts = []
    for b in content or []:
        t = b.get("type")
        if t == "text":
            parts.append("text " + repr(str(b.get("text"))[:60]))
        elif t == "tool_use":
            parts.append(f"tool_use {b.get('name')}")
        elif t == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = " ".join(str(x.get("text", "")) for x in c if isinstance(x, dict))
            err = " is_error" if b.get("is_error") else ""
            parts.append(f"tool_result{err} {str(c)[:60]!r}")
        else:
            parts.append(str(t))
    return " + ".join(parts)


def _summarize_record(r: dict[str, Any], file: str) -> str:
    t = r.get("type")
    where = " [sub-agent file]" if "/subagents/" in file else ""
    if t == "assistant":
        m = r.get("message", {})
        u = m.get("usage", {})
        mid = str(m.get("id", ""))
        mid = mid[:8] + "…" if mid.startswith("msg_") else "uuid " + mid[:8] + "…"
        return (
            f"assistant {_content_desc(m.get('content'))} stop={m.get('stop_reason')} "
            f"out={u.get('output_tokens')} id={mid}{where}"
        )
    if t == "user":
        m = r.get("message", {})
        flags = [f for f in ("isMeta", "isCompactSummary") if r.get(f)]
        return (
            f"user {_content_desc(m.get('content'))}{' ' + ','.join(flags) if flags else ''}{where}"
        )
    if t == "system":
        return f"system {r.get('subtype')}{where}"
    return f"{t}{where}"


def timeline(rec: dict[str, Any]) -> list[dict[str, Any]]:
    """All events of a recording, ordered by time, each with ``ms`` since the start.

    Times: actions when the keystroke was sent; hooks when the recorder hook started; model
    requests when received; transcript records when the poller saw them; PID-file changes at
    the file's own ``statusUpdatedAt`` when that changed (the CLI's write time; the poller can
    lag under load), else when the poller saw them.
    """
    evs: list[dict[str, Any]] = []
    evs.extend(rec["actions"])
    for h in rec["hooks"]:
        evs.append({"t": h["t"], "source": "hook", "payload": h["payload"]})
    last_stamp: dict[str, Any] = {}
    for e in rec["observed"]:
        if e["source"] == "pid" and e["data"]:
            stamp = e["data"].get("statusUpdatedAt")
            if stamp is not None and stamp != last_stamp.get(e["file"]):
                last_stamp[e["file"]] = stamp
                e = {**e, "t": int(stamp), "seen": e["t"]}
        evs.append(e)
    for q in rec["requests"]:
        evs.append({**q, "source": "request"})
    order = {"action": 0, "request": 1, "hook": 2, "pid": 3, "transcript": 4}
    evs.sort(key=lambda e: (e["t"], order.get(e["source"], 9)))
    t0 = rec["started_ms"]
    return [
        {"ms": e["t"] - t0, "source": e["source"], "key": _key(e), "what": _summarize(e)}
        for e in evs
    ]


def _key(ev: dict[str, Any]) -> str:
    """A short machine-readable label of a timeline event (used by the doc's measurements).

    ``hook:<Event>``, ``pid:<status>`` / ``pid:removed`` / ``pid:none``,
    ``transcript:<type>[:<subtype>]`` (``transcript:marker`` for interrupt markers,
    ``transcript:sub:…`` in sub-agent files), ``request:<kind>:<status>``, ``action``.
    """
    src = ev["source"]
    if src == "hook":
        return "hook:" + str((ev["payload"] or {}).get("hook_event_name"))
    if src == "pid":
        d = ev["data"]
        return "pid:removed" if d is None else "pid:" + str(d.get("status", "none"))
    if src == "transcript":
        r = ev["record"]
        sub = "sub:" if "/subagents/" in ev["file"] else ""
        if _is_marker(r):
            return f"transcript:{sub}marker"
        t = str(r.get("type"))
        if t == "system":
            t += ":" + str(r.get("subtype"))
        elif t == "assistant" and r.get("isApiErrorMessage"):
            t += ":api_error"
        return f"transcript:{sub}{t}"
    if src == "request":
        return f"request:{ev.get('kind') or ev['path']}:{ev['status']}"
    return src


def write_fixtures(rec: dict[str, Any], out: Path) -> None:
    """Write one recording as normalized golden fixtures under ``out/<name>/``."""
    fix = normalizer(rec)
    d = out / rec["name"]
    shutil.rmtree(d, ignore_errors=True)
    (d / "transcripts").mkdir(parents=True)
    with open(d / "hooks.jsonl", "w") as fh:
        for h in rec["hooks"]:
            fh.write(json.dumps(fix(h["payload"]), separators=(",", ":")) + "\n")
    with open(d / "pid-files.jsonl", "w") as fh:
        for e in rec["observed"]:
            if e["source"] == "pid":
                fh.write(json.dumps(fix(e["data"]), separators=(",", ":")) + "\n")
    for rel, records in rec["transcripts"].items():
        rel_fixed = fix(rel).removeprefix("projects/")
        rel_fixed = rel_fixed.split("/", 1)[1] if "/" in rel_fixed else rel_fixed
        p = d / "transcripts" / rel_fixed
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "w") as fh:
            for r in records:
                fh.write(json.dumps(fix(r), separators=(",", ":"), ensure_ascii=False) + "\n")
    for rel, meta in rec["meta_files"].items():
        rel_fixed = fix(rel).removeprefix("projects/").split("/", 1)[1]
        p = d / "transcripts" / rel_fixed
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(fix(meta), indent=1) + "\n")
    with open(d / "requests.jsonl", "w") as fh:
        for q in rec["requests"]:
            fh.write(json.dumps(fix(q), separators=(",", ":")) + "\n")
    info = {
        "scenario": rec["name"],
        "description": rec["doc"],
        "cli_version": rec.get("version", OLDEST),
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(rec["started_ms"] / 1000)),
        "error": rec["error"],
        "notes": fix(rec["notes"]),
        "leftover_pid_files": fix(rec["leftover_pid_files"]),  # None: CLI still ran
        "timeline": fix(timeline(rec)),
    }
    (d / "timeline.json").write_text(json.dumps(info, indent=1, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- contradictions
# Each entry: (title, explanation, check). A check reads the recordings ({scenario: timeline
# info, with "_hooks" = the payloads}) and returns the evidence, or None when this recording
# does not show the behaviour any more (the doc then says so, so a new CLI version is noticed).

Tls = dict[str, dict[str, Any]]


def _tl(tls: Tls, name: str) -> list[dict[str, Any]]:
    return tls.get(name, {}).get("timeline", [])


def _after_action(tls: Tls, name: str, text: str) -> list[dict[str, Any]]:
    """Events after the first action containing ``text``, up to the next action."""
    tl = _tl(tls, name)
    act = _first(tl, "action", pred=lambda e: text in e["what"])
    if act is None:
        return []
    out = []
    for e in tl[tl.index(act) + 1 :]:
        if e["source"] == "action":
            break
        out.append(e)
    return out


def _gap_ms(tls: Tls, name: str, a: str, b: str, after: str) -> int | None:
    """ms from the first ``a`` to the first later ``b`` (keys, or ``action``) after an action.

    ``a == "action"`` measures from the action itself.
    """
    tl = _tl(tls, name)
    act = _first(tl, "action", pred=lambda e: after in e["what"])
    if act is None:
        return None
    evs = [act, *_after_action(tls, name, after)]
    ea = act if a == "action" else next((e for e in evs if e["key"] == a), None)
    if ea is None:
        return None
    rest = tl[tl.index(ea) + 1 :] if ea in tl else evs  # ``b`` may come after the next action
    eb = next((e for e in rest if e["key"] == b), None)
    return eb["ms"] - ea["ms"] if eb else None


def _chk_marker_after_pid_idle(tls: Tls) -> str | None:
    found = []
    for name, act in (
        ("esc_stream", "Esc"),
        ("esc_dialog", "Esc"),
        ("deny", "No"),
        ("esc_during_tool", "Esc"),
    ):
        g = _gap_ms(tls, name, "pid:idle", "transcript:marker", act)
        if g is not None and g > 0:
            found.append(f"`{name}` marker {g} ms after PID `idle`")
    return "; ".join(found) or None


def _chk_no_hook_after(name: str, action: str) -> Callable[[Tls], str | None]:
    def check(tls: Tls) -> str | None:
        evs = _after_action(tls, name, action)
        if not evs:
            return None
        hooks = [e["what"] for e in evs if e["source"] == "hook"]
        pid = _dedup([e["key"].removeprefix("pid:") for e in evs if e["source"] == "pid"])
        marker = any(e["key"] == "transcript:marker" for e in evs)
        if hooks or not marker:
            return None
        return f"`{name}`: no hook after the keystroke; PID {' → '.join(pid)}; marker written"

    return check


def _chk_pid_busy_without_turn(tls: Tls) -> str | None:
    found = []
    for name, act in (("clear", "/clear"), ("compact", "/compact")):
        evs = _after_action(tls, name, act)
        pid = _dedup([e["key"].removeprefix("pid:") for e in evs if e["source"] == "pid"])
        hooks = [e["what"] for e in evs if e["source"] == "hook"]
        upto = [h for h in hooks if not h.startswith(("UserPromptSubmit", "Stop"))]
        if "busy" in pid and "Stop" not in " ".join(upto):
            found.append(f"`{name}`: PID {' → '.join(pid[:3])} with hooks {', '.join(upto[:4])}")
    return "; ".join(found) or None


def _chk_compact(tls: Tls) -> str | None:
    evs = _after_action(tls, "compact", "/compact")
    hooks = [e["what"] for e in evs if e["source"] == "hook"]
    if not any(h.startswith("SubagentStop") for h in hooks):
        return None
    seq = [
        e["what"] if e["source"] == "hook" else e["key"].removeprefix("transcript:")
        for e in evs
        if e["source"] == "hook"
        or e["key"] in ("transcript:system:compact_boundary", "transcript:user")
    ]
    return "`compact`: " + " → ".join(_dedup(seq)[:8])


def _chk_529(tls: Tls) -> str | None:
    evs = _tl(tls, "error_529")
    sf = next((e for e in evs if e["key"] == "hook:StopFailure"), None)
    n = sum(1 for e in evs if e["key"].startswith("request:scenario:529"))
    if not sf or "overloaded" in sf["what"]:
        return None
    return f"`error_529`: {n} attempts, then {sf['what']}"


def _chk_esc_tool_no_failure_hook(tls: Tls) -> str | None:
    evs = _after_action(tls, "esc_during_tool", "Esc")
    if not evs or any(e["source"] == "hook" for e in evs):
        return None
    res = next((e["what"] for e in evs if "tool_result" in e["what"]), "?")
    return f"`esc_during_tool`: no hook; transcript {res!r}"


def _chk_partial_block_kept(tls: Tls) -> str | None:
    evs = _after_action(tls, "esc_stream", "Esc")
    rec = next((e["what"] for e in evs if e["key"] == "transcript:assistant"), None)
    return f"`esc_stream`: {rec}" if rec and "id=uuid" in rec else None


def _chk_queued_prompt(tls: Tls) -> str | None:
    hooks = [h.get("hook_event_name") for h in tls.get("prompt_while_busy", {}).get("_hooks", [])]
    if not hooks or hooks.count("UserPromptSubmit") != 1:
        return None
    return (
        f"`prompt_while_busy`: hooks {', '.join(hooks)} (one UserPromptSubmit, one Stop "
        "for two prompts)"
    )


def _chk_status_before_start(tls: Tls) -> str | None:
    for name, info in tls.items():
        for p in info.get("_pid_files", []):
            if p and "statusUpdatedAt" in p and p["statusUpdatedAt"] < p["startedAt"]:
                return (
                    f"`{name}`: first status `{p['status']}` has statusUpdatedAt "
                    f"{p['statusUpdatedAt'] - p['startedAt']} ms relative to startedAt"
                )
    return None


def _chk_fields(
    event: str, present: tuple[str, ...] = (), absent: tuple[str, ...] = ()
) -> Callable[[Tls], str | None]:
    def check(tls: Tls) -> str | None:
        seen = [
            h
            for info in tls.values()
            for h in info.get("_hooks", [])
            if h.get("hook_event_name") == event
        ]
        if not seen:
            return None
        bad_p = [k for k in present if all(k in h for h in seen)]
        bad_a = [k for k in absent if all(k not in h for h in seen)]
        if len(bad_p) != len(present) or len(bad_a) != len(absent):
            return None
        bits = [f"`{k}` always present" for k in bad_p] + [f"`{k}` never present" for k in bad_a]
        return f"{len(seen)} {event} payloads: " + ", ".join(bits)

    return check


def _chk_stop_before_records(tls: Tls) -> str | None:
    late, total, worst = 0, 0, 0
    for info in tls.values():
        tl = info["timeline"]
        for i, e in enumerate(tl):
            if e["key"] != "hook:Stop":
                continue
            total += 1
            for later in tl[i + 1 :]:
                if later["source"] == "action" or later["key"] == "hook:UserPromptSubmit":
                    break
                if later["key"] == "transcript:assistant":
                    late += 1
                    worst = max(worst, later["ms"] - e["ms"])
                    break
    if not late:
        return None
    return (
        f"in {late} of {total} recorded turns the final assistant record was seen after "
        f"the Stop hook (up to {worst} ms later)"
    )


def _chk_error_record_order(tls: Tls) -> str | None:
    user_after, hook_first = [], []
    for name in ("error_429", "error_529", "error_500", "error_500_retried"):
        tl = _tl(tls, name)
        keys = [e["key"] for e in tl if e["source"] == "transcript"]
        if "transcript:assistant:api_error" in keys:
            i = keys.index("transcript:assistant:api_error")
            if "transcript:user" in keys[i:]:
                user_after.append(f"`{name}`")
        sf = _first(tl, "hook:StopFailure")
        rec = _first(tl, "transcript:assistant:api_error")
        if sf and rec and rec["ms"] > sf["ms"]:
            hook_first.append(f"`{name}` {rec['ms'] - sf['ms']} ms")
    if not user_after:
        return None
    return (
        "prompt record appended after the API-error record in "
        + ", ".join(user_after)
        + "; StopFailure ahead of the API-error record in "
        + (", ".join(hook_first) or "none")
    )


def _chk_kill9(tls: Tls) -> str | None:
    info = tls.get("kill9")
    if not info or not info.get("leftover_pid_files"):
        return None
    hooks = [h.get("hook_event_name") for h in info.get("_hooks", [])]
    if "SessionEnd" in hooks:
        return None
    return (
        f"`kill9`: left {info['leftover_pid_files']} (last status "
        f"`{(info['_pid_files'][-1] or {}).get('status')}`), no SessionEnd"
    )


#: Intermittent behaviours the recorder's single runs cannot show, each seen in the real-CLI
#: end-to-end suite (tests/real_claude/) and kept as evidence where named.
SEEN_IN_E2E: list[tuple[str, str]] = [
    (
        "A session's first turn can be written before its prompt.",
        "About 1 run in 4 the assistant text and tool_use records of the first turn precede the "
        "user prompt record in the file (the prompt's timestamp is older). Evidence: "
        "`tests/fixtures/transcripts/out_of_order_first_turn.jsonl` (captured from "
        "`test_zero_install_permission_and_escape`); the tailer keeps the pending tool "
        "(`test_first_turn_written_before_its_prompt_keeps_the_pending_tool`).",
    ),
    (
        "A fast turn may leave no PID-file status at all.",
        "About 1 first turn in 10 the PID file kept its start-up `idle` through the whole turn "
        "(sampled every 10-20 ms), and a `busy` of 100-300 ms can be rewritten before a file "
        "watcher reads it. Without hooks, the transcript's finished answer decides review "
        "(`test_zero_install_permission_and_escape` records which path each run took in "
        "test-output/real_claude_timings.json).",
    ),
    (
        "After `/clear` the PID file names the new session id while `busy`.",
        "The new id appears in the PID file tens of ms before SessionStart(clear); "
        "`test_clear_starts_a_new_session` checks the new session never flashes busy.",
    ),
    (
        "Esc before the first token leaves no trace but the PID file.",
        "On both versions, Esc while the model has sent nothing yet puts the prompt back in "
        "the prompt box, fires no hook and writes no marker (the transcript ends with the "
        "prompt); only the PID file turns `idle`, 0.4-1.2 s after the key. A hooked session "
        "would stay busy for good: a hooked busy session whose PID file says idle after its "
        "last decision, once hooks had a second to land, goes idle "
        "(`test_escape_before_the_first_token`, the `slow_start` scenario).",
    ),
    (
        "2.1.332 ignores keys for a moment after it draws a dialog.",
        "An Enter sent as soon as the permission dialog was first captured was dropped 4 "
        "times in 4; 100 ms later, 2 in 4; from 200 ms on, never (12 tries); 2.1.197 took it "
        "at once every time. Actions give a dialog that asks since less than a second 300 ms "
        "before their first key, and press Enter once more only if the same dialog, selection "
        "unmoved, still shows a second later (`runtime/actions.py`, `DIALOG_INPUT_GRACE_S`).",
    ),
]

CONTRADICTIONS: list[tuple[str, str, Callable[[Tls], str | None]]] = [
    (
        "The PID file says `idle` before the interrupt marker reaches the transcript.",
        'DESIGN (PID-file rules) decides "idle after busy → review, unless the transcript '
        'ends with an interrupt marker (→ idle)" and "for `idle`: → idle (dismissed with '
        'Esc …)". After Esc or a rejection the PID file turns `idle` tens to hundreds of ms '
        "*before* the transcript flush (100 ms timer) writes the marker, so a monitor that "
        "looks at the transcript the moment the PID file changes sees no marker yet and would "
        "call an interrupt `review`. Wait for the next transcript flush (≥ 250 ms) before "
        "deciding, or let a later marker turn review → idle.",
        _chk_marker_after_pid_idle,
    ),
    (
        'Choosing "No" in a permission dialog fires no hook at all (like Esc).',
        "DESIGN only names Esc as the hook-less way out of a dialog, and facts §2.7 expects at "
        'most a PostToolUseFailure. Option "3. No" fires no PostToolUseFailure, no '
        "PermissionDenied, no Stop; the transcript gets the rejection tool_result and the "
        "`[Request interrupted by user for tool use]` marker; PID `waiting` → `idle`.",
        _chk_no_hook_after("deny", "No"),
    ),
    (
        "Esc while an approved tool runs fires no PostToolUseFailure.",
        'Facts §2.7: "At most a PostToolUseFailure with is_interrupt: true arrives"; facts '
        "§5.8 expects a cancelled shell to leave \"The user doesn't want to take this action "
        'right now…" or an "Exit code … interrupted" result. Observed for an 8 s Bash '
        "command interrupted after 1 s: no hook at all, PID `busy` → `idle`, and the "
        "tool_result is the *rejection* text plus the `…for tool use]` marker.",
        _chk_esc_tool_no_failure_hook,
    ),
    (
        "Esc during streaming keeps the partial text block.",
        'Facts §5.8: "Blocks already completed are in the file; the partial block is not." '
        "Observed: the partial text is written as a synthetic assistant record (`message.id` a "
        "UUID, `output_tokens` 0, stop_reason `stop_sequence`) right before the marker "
        "(as real-claude-offline.md says).",
        _chk_partial_block_kept,
    ),
    (
        "`/clear` and `/compact` turn the PID file `busy` → `idle` without any turn.",
        'DESIGN\'s PID rule for hook-less sessions ("idle after busy → review") would '
        "report `review` after every /clear (the PID file is busy while the old session ends "
        "and the new id is set) and every /compact. No UserPromptSubmit/Stop brackets these; "
        "with hooks, SessionStart(clear)/PostCompact arrive instead.",
        _chk_pid_busy_without_turn,
    ),
    (
        "Compaction fires SubagentStop without SubagentStart, and the hooks come before the "
        "boundary records.",
        "DESIGN counts `subagents` ±1 on SubagentStart/SubagentStop: compaction sends an "
        "unmatched SubagentStop (empty `agent_type`, `last_assistant_message` = the summary, an "
        "`agent_transcript_path` that is never written), so a running real sub-agent would be "
        "undercounted. Facts §5.9 lists boundary + summary records before "
        "SessionStart(compact) and PostCompact; in the file they appear after both hooks.",
        _chk_compact,
    ),
    (
        "Repeated 529 ends as StopFailure `error: server_error`, not `overloaded`.",
        'DESIGN\'s example errors "(rate_limit, overloaded, …)" and facts §2.7 list '
        "`overloaded`; with the default (Opus) model the CLI gives up after 3 consecutive "
        '529s ("Repeated 529 Overloaded errors") and reports `server_error`. It retries 529 '
        "even with `x-should-retry: false`.",
        _chk_529,
    ),
    (
        "A prompt typed while a tool runs fires no UserPromptSubmit.",
        "DESIGN: UserPromptSubmit sets the last user prompt. A prompt typed while the turn "
        "runs is queued (`queue-operation` enqueue), then handed to the model inside the same "
        "turn as a `queued_command` attachment: no UserPromptSubmit, a single Stop for both.",
        _chk_queued_prompt,
    ),
    (
        "The first PID-file status is stamped before `startedAt`.",
        "DESIGN orders signals by `statusUpdatedAt`. The initial `idle` carries a "
        "`statusUpdatedAt` up to a few hundred ms *earlier* than the file's own `startedAt` (and "
        "before the SessionStart hook), and the very first write has no `status` at all.",
        _chk_status_before_start,
    ),
    (
        "Hazard: the Stop hook can arrive before the turn's records are in the transcript.",
        "Not a contradiction (facts §5.2: 100 ms flush timer), but DESIGN's Stop handling "
        '("last assistant message", tokens) must not assume the transcript already holds '
        "the answer: use the Stop payload's `last_assistant_message` and let the tailer catch "
        "up. A kill -9 within ~100 ms of Stop can lose the turn's records entirely.",
        _chk_stop_before_records,
    ),
    (
        "Hazard: after an API error the transcript can end with the user prompt.",
        "Restart recovery (DESIGN step 4) and facts §5.11 read the last record: after a "
        "StopFailure the prompt's `user` record may be appended *after* the synthetic "
        'API-error assistant record, so the file looks like "prompt submitted, never '
        'answered". Look for an `isApiErrorMessage` record in the last turn, not only at '
        "the end.",
        _chk_error_record_order,
    ),
    (
        "kill -9 leaves the PID file behind with its last status (as facts §3 says).",
        'Consistent with facts §3; listed because DESIGN\'s "process gone" needs the pid '
        "check (the file alone still says `idle`/`busy`).",
        _chk_kill9,
    ),
    (
        "PermissionRequest carries no `tool_use_id`; Notification has no `permission_mode`.",
        "Consistent with facts §2.7/§2.6 (listed here because DESIGN keys the needs-input "
        "detail on the tool): match a PermissionRequest to its PreToolUse by order and "
        "`tool_input`, not by id.",
        _chk_fields(
            "PermissionRequest", present=("tool_name", "tool_input"), absent=("tool_use_id",)
        ),
    ),
]


# --------------------------------------------------------------------------- the doc

_META_TYPES = {
    "transcript:mode",
    "transcript:permission-mode",
    "transcript:file-history-snapshot",
    "transcript:attachment",
    "transcript:queue-operation",
    "transcript:last-prompt",
    "transcript:ai-title",
    "transcript:custom-title",
    "transcript:sub:attachment",
}


def _load_timelines(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for name in SCENARIOS:
        f = out / name / "timeline.json"
        if f.exists():
            info = json.loads(f.read_text())
            info["_hooks"] = [h for h in read_jsonl(out / name / "hooks.jsonl") if h]
            info["_pid_files"] = read_jsonl(out / name / "pid-files.jsonl")
            found[name] = info
    return found


def _first(
    tl: list[dict[str, Any]],
    key: str,
    after: int = -(10**9),
    pred: Callable[[dict[str, Any]], bool] | None = None,
) -> dict[str, Any] | None:
    for e in tl:
        if e["ms"] >= after and e["key"] == key and (pred is None or pred(e)):
            return e
    return None


def _dedup(seq: list[str]) -> list[str]:
    out: list[str] = []
    for x in seq:
        if not out or out[-1] != x:
            out.append(x)
    return out


def _cell(items: list[str]) -> str:
    return " → ".join(items).replace("|", "\\|") or "—"


def summary_row(info: dict[str, Any]) -> tuple[str, str, str, str]:
    """(hooks, PID statuses, transcript records, model requests) of one scenario."""
    tl = info["timeline"]
    hooks = [e["what"] for e in tl if e["source"] == "hook"]
    pid = _dedup([e["what"].removeprefix("status=") for e in tl if e["source"] == "pid"])
    tr = _dedup(
        [
            e["key"].removeprefix("transcript:")
            for e in tl
            if e["source"] == "transcript" and e["key"] not in _META_TYPES
        ]
    )
    reqs = [
        e["key"].removeprefix("request:")
        for e in tl
        if e["source"] == "request" and e["key"] != "request:/:404"
    ]
    return _cell(hooks), _cell(pid), _cell(tr), _cell(_dedup_count(reqs))


def _dedup_count(seq: list[str]) -> list[str]:
    out: list[list[Any]] = []
    for x in seq:
        if out and out[-1][0] == x:
            out[-1][1] += 1
        else:
            out.append([x, 1])
    return [f"{x} ×{n}" if n > 1 else x for x, n in out]


MEASUREMENTS: list[tuple[str, str, str, str, str]] = [
    # (scenario, after action containing, from key, to key, label)
    (
        "approve",
        "please run",
        "hook:PermissionRequest",
        "pid:waiting",
        "PermissionRequest hook → PID `waiting`",
    ),
    (
        "approve",
        "please run",
        "hook:PermissionRequest",
        "transcript:assistant",
        "PermissionRequest hook → the tool_use record in the transcript",
    ),
    ("approve", "1. Yes", "action", "pid:busy", "approval keystroke → PID `busy`"),
    ("approve", "1. Yes", "action", "hook:PostToolUse", "approval keystroke → PostToolUse"),
    ("approve", "1. Yes", "hook:Stop", "pid:idle", "Stop hook → PID `idle`"),
    ("long_command", "1. Yes", "action", "pid:busy", "approval keystroke → PID `busy`"),
    (
        "long_command",
        "1. Yes",
        "action",
        "hook:PostToolUse",
        "approval keystroke → PostToolUse (8 s command)",
    ),
    (
        "approve_after_notification",
        "please run",
        "hook:PermissionRequest",
        "hook:Notification",
        "PermissionRequest → Notification(permission_prompt)",
    ),
    ("esc_stream", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    ("esc_stream", "Esc", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("esc_dialog", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    ("esc_dialog", "Esc", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("deny", "No", "action", "pid:idle", '"No" → PID `idle`'),
    ("deny", "No", "pid:idle", "transcript:marker", "PID `idle` → interrupt marker seen"),
    ("esc_during_tool", "Esc", "action", "pid:idle", "Esc → PID `idle`"),
    (
        "esc_during_tool",
        "Esc",
        "pid:idle",
        "transcript:marker",
        "PID `idle` → interrupt marker seen",
    ),
    (
        "plain",
        "say hi",
        "hook:Stop",
        "transcript:assistant",
        "Stop hook → assistant record seen (negative: seen before Stop)",
    ),
    (
        "clear",
        "/clear",
        "hook:SessionEnd",
        "hook:SessionStart",
        "SessionEnd(clear) → SessionStart(clear)",
    ),
    ("start_exit", "/exit", "pid:removed", "hook:SessionEnd", "PID file removed → SessionEnd"),
]


def measurements(tls: Tls) -> list[tuple[str, str]]:
    """Timings computed from the recordings: (what, measured value)."""
    rows: list[tuple[str, str]] = []
    for name, after, a, b, label in MEASUREMENTS:
        if name not in tls:
            continue
        g = _gap_ms(tls, name, a, b, after)
        rows.append((f"`{name}`: {label}", f"{g:+d} ms" if g is not None else "not seen"))
    for name in ("error_429", "error_529", "error_500", "error_500_retried"):
        t = _tl(tls, name)
        errs = [e for e in t if e["source"] == "request" and e["key"].startswith("request:scen")]
        stop = _first(t, "hook:StopFailure")
        if errs:
            span = errs[-1]["ms"] - errs[0]["ms"]
            gaps = [b["ms"] - a["ms"] for a, b in itertools.pairwise(errs)]
            fail = f"; StopFailure {stop['ms'] - errs[0]['ms']} ms after the first" if stop else ""
            more = f" (gaps {', '.join(str(g) for g in gaps)} ms)" if gaps else ""
            rows.append((f"`{name}`: attempts", f"{len(errs)} over {span} ms{more}{fail}"))
    return rows


# --------------------------------------------------------------------------- differences
# Each entry: (what is observed, the rule a monitor follows, check). A check reads the
# recordings of every version ({version: {scenario: timeline info}}) and returns the evidence
# (which versions, which scenario, what exactly), or None when no recording shows it.

Versions = dict[str, Tls]


def _hooks_of(info: dict[str, Any] | None, event: str) -> list[dict[str, Any]]:
    return [h for h in (info or {}).get("_hooks", []) if h.get("hook_event_name") == event]


def _where(by: Versions, pred: Callable[[str, Tls], str | None]) -> str | None:
    found = [(v, e) for v, tls in by.items() if (e := pred(v, tls))]
    if not found:
        return None
    absent = [v for v in by if v not in dict(found)]
    text = "; ".join(f"{v}: {e}" for v, e in found)
    return text + (f"; not on {', '.join(absent)}" if absent else "")


def _diff_background_agent(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("background_agent")
        stops = _hooks_of(info, "Stop")
        busy = [
            h
            for h in stops
            if any(t.get("status") == "running" for t in h.get("background_tasks") or [])
        ]
        if not busy:
            return None
        tasks = busy[0]["background_tasks"]
        pids = _dedup([p.get("status") for p in (info or {}).get("_pid_files", []) if p])
        return (
            f"`background_agent`: Stop with background_tasks "
            f"{[(t.get('type'), t.get('status')) for t in tasks]}, PID statuses {pids}"
        )

    return _where(by, pred)


def _diff_task_notification(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        ups = [
            h
            for h in _hooks_of(tls.get("background_agent"), "UserPromptSubmit")
            if str(h.get("prompt", "")).startswith("<task-notification>")
        ]
        if not ups:
            return None
        return f"`background_agent`: UserPromptSubmit prompt {ups[0]['prompt'][:90]!r}…"

    return _where(by, pred)


def _diff_final_stop(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        stops = _hooks_of(tls.get("background_agent"), "Stop")
        if len(stops) < 2:
            return None
        last = stops[-1].get("background_tasks")
        return f"`background_agent`: last Stop's background_tasks = {last!r}"

    return _where(by, pred)


def _diff_background_shell(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("background_shell")
        stops = _hooks_of(info, "Stop")
        shells = [
            t for h in stops for t in h.get("background_tasks") or [] if t.get("type") == "shell"
        ]
        statuses = _dedup([p.get("status") for p in (info or {}).get("_pid_files", []) if p])
        if not shells and "shell" not in statuses:
            return None
        return (
            f"`background_shell`: Stop background_tasks "
            f"{[(t.get('type'), t.get('status')) for t in shells]}, PID statuses {statuses}"
        )

    return _where(by, pred)


def _diff_subagent_stop_repeats(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in ("background_agent", "subagent"):
            ids = [h.get("agent_id") for h in _hooks_of(tls.get(name), "SubagentStop")]
            rep = {i: ids.count(i) for i in ids if ids.count(i) > 1}
            if rep:
                out.append(f"`{name}`: SubagentStop ×{max(rep.values())} for one agent_id")
        return ", ".join(out) or None

    return _where(by, pred)


def _diff_agent_needs_input(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("auto_blocked")
        if not info:
            return None
        notes = [h.get("notification_type") for h in _hooks_of(info, "Notification")]
        waits = _dedup(
            [
                f"{p.get('status')}({p.get('waitingFor')})"
                for p in info.get("_pid_files", [])
                if p and p.get("waitingFor")
            ]
        )
        perm = len(_hooks_of(info, "PermissionRequest"))
        return (
            f"`auto_blocked`: Notifications {notes}, PID waits {waits}, PermissionRequest ×{perm}"
        )

    return _where(by, pred)


def _diff_no_first(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        notes = [n for n in (tls.get("auto_blocked") or {}).get("notes", []) if "options" in n]
        return f"`auto_blocked`: {notes[0]}" if notes else None

    return _where(by, pred)


def _diff_auto_safe(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("auto_safe")
        if not info:
            return None
        hooks = [h.get("hook_event_name") for h in info.get("_hooks", [])]
        modes = sorted(
            {
                str(h.get("permission_mode"))
                for h in info.get("_hooks", [])
                if "permission_mode" in h
            }
        )
        return f"`auto_safe`: hooks {hooks}, permission_mode {modes}"

    return _where(by, pred)


def _diff_api_error(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in sorted(n for n in tls if n.startswith("error_")):
            info = tls[name]
            ends = [
                h.get("hook_event_name")
                for h in info.get("_hooks", [])
                if h.get("hook_event_name") in ("Stop", "StopFailure")
            ]
            api = any(e["key"].endswith(":api_error") for e in info["timeline"])
            out.append(
                f"`{name}` → {'/'.join(ends) or 'no end hook'}"
                + (" + isApiErrorMessage record" if api else "")
            )
        return ", ".join(out) or None

    return _where(by, pred)


def _diff_pid_fields(by: Versions) -> str | None:
    keys = {
        v: sorted({k for info in tls.values() for p in info.get("_pid_files", []) if p for k in p})
        for v, tls in by.items()
    }
    if len(keys) < 2:
        return None
    versions = list(keys)
    added = sorted(set(keys[versions[-1]]) - set(keys[versions[0]]))
    removed = sorted(set(keys[versions[0]]) - set(keys[versions[-1]]))
    statuses = {
        v: sorted(
            {
                str(p.get("status"))
                for info in tls.values()
                for p in info.get("_pid_files", [])
                if p and "status" in p
            }
        )
        for v, tls in by.items()
    }
    return (
        f"{versions[-1]} adds {added}"
        + (f", drops {removed}" if removed else "")
        + "; statuses seen: "
        + "; ".join(f"{v}: {st}" for v, st in statuses.items())
    )


def _diff_hook_events(by: Versions) -> str | None:
    events = {
        v: sorted(
            {str(h.get("hook_event_name")) for info in tls.values() for h in info.get("_hooks", [])}
        )
        for v, tls in by.items()
    }
    if len(events) < 2:
        return None
    versions = list(events)
    new = sorted(set(events[versions[-1]]) - set(events[versions[0]]))
    gone = sorted(set(events[versions[0]]) - set(events[versions[-1]]))
    notes = {
        v: sorted(
            {
                str(h.get("notification_type"))
                for info in tls.values()
                for h in _hooks_of(info, "Notification")
            }
        )
        for v, tls in by.items()
    }
    return (
        f"events only on {versions[-1]}: {new or 'none'}; only on {versions[0]}: {gone or 'none'}; "
        "notification types: " + "; ".join(f"{v}: {n}" for v, n in notes.items())
    )


def _diff_startup_dialog(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("startup_dialog")
        if not info:
            return None
        waits = _dedup(
            [f"{p.get('status')}({p.get('waitingFor')})" for p in info.get("_pid_files", []) if p]
        )
        return f"`startup_dialog`: PID {waits}"

    return _where(by, pred)


def _diff_sessions(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        out = []
        for name in ("clear", "resume", "fork"):
            info = tls.get(name)
            if not info:
                continue
            starts = [
                f"{h.get('hook_event_name')}({h.get('source') or h.get('reason')})"
                for h in info.get("_hooks", [])
                if h.get("hook_event_name") in ("SessionStart", "SessionEnd")
            ]
            sids = _dedup([str(h.get("session_id"))[:8] for h in info.get("_hooks", [])])
            waits = _dedup(
                [
                    str(p.get("waitingFor"))
                    for p in info.get("_pid_files", [])
                    if p and p.get("waitingFor")
                ]
            )
            out.append(
                f"`{name}`: {' → '.join(starts)}, session ids {sids}"
                + (f", PID waits {waits}" if waits else "")
            )
        return "; ".join(out) or None

    return _where(by, pred)


def _diff_queued_prompt(by: Versions) -> str | None:
    def pred(v: str, tls: Tls) -> str | None:
        info = tls.get("prompt_while_busy")
        if not info:
            return None
        names = [str(h.get("hook_event_name")) for h in info.get("_hooks", [])]
        keep = ("UserPromptSubmit", "PostToolUse", "Stop")
        return "`prompt_while_busy`: " + " → ".join(n for n in names if n in keep)

    return _where(by, pred)


DIFFERENCES: list[tuple[str, str, Callable[[Versions], str | None]]] = [
    (
        "`Stop` whose `background_tasks` holds a running `subagent`; the PID file stays `busy`",
        "still busy: no review, no notification; show the answer so far and the running agents",
        _diff_background_agent,
    ),
    (
        "`UserPromptSubmit` whose prompt is a `<task-notification>` block (the CLI wakes itself)",
        "busy, not a user prompt (`last_prompt` keeps the user's); a background task finished",
        _diff_task_notification,
    ),
    (
        "the last `Stop` after the background agent ended",
        "`background_tasks` empty (or only shells): review, notify once",
        _diff_final_stop,
    ),
    (
        '`Stop` with a running `shell` task; PID `status: "shell"`',
        "review as usual, plus the running shells (a dev server may run for hours)",
        _diff_background_shell,
    ),
    (
        "`SubagentStop` repeated for one `agent_id`",
        "count sub-agents by id, never by SubagentStop events",
        _diff_subagent_stop_repeats,
    ),
    (
        "auto mode's \"can't check\" dialog and its permission dialog",
        "needs-input from the PID file's `waiting` (`dialog open` / `permission prompt`) and "
        "Notification `agent_needs_input`: no PermissionRequest comes for these dialogs",
        _diff_agent_needs_input,
    ),
    (
        "the order of a permission dialog's options",
        "actions choose by label, never by position or a bare Enter",
        _diff_no_first,
    ),
    (
        "auto mode runs a call it deems safe without a dialog",
        "nothing new: busy → review; `permission_mode` in payloads is informative only",
        _diff_auto_safe,
    ),
    (
        "how an API error ends the turn",
        "`StopFailure`, or a `Stop` whose turn ended in an `isApiErrorMessage` record: review "
        "with the error",
        _diff_api_error,
    ),
    (
        "the startup dialog (2.1.332 in manual mode, auto-mode nudge not seen)",
        "needs-input from the PID file (`waiting`, `dialog open`) even before any hook of a turn",
        _diff_startup_dialog,
    ),
    (
        "`/clear`, `/resume`, a fork: session ids and SessionStart/SessionEnd sources",
        "a new session id in the same process replaces the old row (`clear`/`resume`); a fork "
        "is a new session; the /resume picker is a dialog (PID `waiting`, `dialog open`)",
        _diff_sessions,
    ),
    (
        "a prompt typed while a tool runs (queued)",
        "a UserPromptSubmit inside a busy turn keeps it busy; the turn's one Stop ends both",
        _diff_queued_prompt,
    ),
    (
        "PID-file fields and statuses",
        "unknown fields are ignored safely; `shell` means the turn ended with shells still "
        "running (see the shell row)",
        _diff_pid_fields,
    ),
    (
        "hook events and notification types",
        "unknown events and notification types are ignored safely",
        _diff_hook_events,
    ),
]


def render_differences(by: Versions) -> list[str]:
    """The "differences that matter to a monitor" table: observed → evidence → rule."""
    lines = [
        "## Differences that matter to a monitor",
        "",
        "Computed from the recordings below (" + ", ".join(by) + "). *not recorded* = no "
        "recording shows it (re-record, or the scenario does not exist on that version).",
        "",
        "| Observed | Evidence (recorded) | Rule we follow |",
        "|---|---|---|",
    ]
    for observed, rule, check in DIFFERENCES:
        try:
            evidence = check(by)
        except Exception as exc:  # a malformed recording must not hide the rest
            evidence = f"check failed: {exc!r}"
        cell = (evidence or "*not recorded*").replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {observed} | {cell} | {rule} |")
    return [*lines, ""]


def version_dirs(out: Path) -> list[Path]:
    """The per-version fixture folders under ``out`` (``<out>/<x.y.z>/``), oldest first."""
    if not out.is_dir():
        return []
    found = [d for d in out.iterdir() if d.is_dir() and re.fullmatch(r"\d+\.\d+\.\d+", d.name)]
    return sorted(found, key=lambda d: version_key(d.name))


def render_doc(out: Path) -> str:
    """The markdown of docs/claude-code-behaviour.md, from the fixtures under ``out``
    (``<out>/<version>/<scenario>/``): the differences between versions that matter to a
    monitor, then a section per version."""
    by_version = {d.name: _load_timelines(d) for d in version_dirs(out)}
    lines = [
        "# What the real Claude Code CLI does, per user action",
        "",
        "<!-- GENERATED by `python -m devtools.record --doc …`: do not edit by"
        " hand; edit DIFFERENCES / CONTRADICTIONS / SCENARIOS in devtools/record.py. -->",
        "",
        "Claude Code ("
        + ", ".join(f"**{v}**" for v in by_version)
        + ", `@anthropic-ai/claude-code`), run interactively in tmux (print mode for `print`) "
        "against the scripted model (`pmux_widget.demo.scripted_model`). Every row below was "
        "observed, not inferred: hooks by a recorder hook registered for all events (receive "
        "time = when the hook process started), PID files and transcripts by polling every "
        "20 ms (time = when the change was seen), model requests by the server. Runs use manual "
        "permission mode (2.1.332: settings `permissions.defaultMode: default`) unless the "
        "scenario says auto mode.",
        "",
        "Refresh (re-records the scenarios with the real CLI, a few minutes per version):",
        "",
        "```sh",
        ".venv/bin/python -m devtools.record --version all --out tests/fixtures/real \\",
        "    --doc docs/claude-code-behaviour.md     # or --version X.Y.Z, or name scenarios",
        ".venv/bin/python -m devtools.record --doc-only \\",
        "    --out tests/fixtures/real --doc docs/claude-code-behaviour.md   # doc only",
        "```",
        "",
        "Fixtures: `tests/fixtures/real/<version>/<scenario>/` holds `hooks.jsonl` (payloads as "
        "Claude wrote them), `pid-files.jsonl` (each distinct PID-file content; `null` = "
        "removed), `transcripts/` (final transcript files), `requests.jsonl` and "
        "`timeline.json`. Temp paths are replaced by `/home/dev` (HOME), `/home/dev/.claude` "
        "(CLAUDE_CONFIG_DIR), `/home/dev/project` (cwd); the CLI pid by "
        f"`{PLACEHOLDER_PID}`.",
        "",
    ]
    lines += render_differences(by_version)
    lines += BACKGROUND_SESSIONS
    lines += ACTING_ON_BACKGROUND
    for version, tls in by_version.items():
        lines += _render_version(version, tls)
    return "\n".join(lines)


def _render_version(version: str, tls: Tls) -> list[str]:
    recorded = sorted({i["recorded_at"][:10] for i in tls.values()})
    lines = [
        f"## Claude Code {version}",
        "",
        f"Recorded on {', '.join(recorded)}.",
        "",
        "### Summary",
        "",
        "| Scenario | Hooks, in order | PID-file `status` | Transcript records (metadata "
        "records omitted) | Model requests |",
        "|---|---|---|---|---|",
    ]
    for name, info in tls.items():
        h, p, t, q = summary_row(info)
        flag = " **(recording failed)**" if info.get("error") else ""
        lines.append(f"| `{name}`: {info['description']}{flag} | {h} | {p} | {t} | {q} |")
    lines += ["", "### Measured timings", "", "| What | Measured |", "|---|---|"]
    for what, val in measurements(tls):
        lines.append(f"| {what} | {val} |")
    lines += [
        "",
        "### Hook payload fields (all recordings)",
        "",
        "Keys in every payload of the event; *italic* = only in some payloads.",
        "",
        "| Event | Fields |",
        "|---|---|",
    ]
    by_event: dict[str, list[dict[str, Any]]] = {}
    for info in tls.values():
        for h in info.get("_hooks", []):
            by_event.setdefault(str(h.get("hook_event_name")), []).append(h)
    for event in sorted(by_event):
        payloads = by_event[event]
        keys = sorted({k for h in payloads for k in h})
        cells = [k if all(k in h for h in payloads) else f"*{k}*" for k in keys]
        lines.append(f"| {event} ({len(payloads)}) | {', '.join(cells)} |")
    lines += ["", "### Contradictions with DESIGN.md and the facts file", ""]
    for title, body, check in CONTRADICTIONS:
        evidence = check(tls)
        status = evidence if evidence else "*(not reproduced in this recording: re-check)*"
        lines += [f"- **{title}** {body} Evidence: {status}", ""]
    lines += ["#### Also seen in the end-to-end tests", ""]
    lines += [f"- **{title}** {body}" for title, body in SEEN_IN_E2E]
    lines += [""]
    lines += [
        "### Timelines",
        "",
        "ms since the scenario started; `action` = keystroke sent by the driver.",
        "",
    ]
    for name, info in tls.items():
        lines += [f"#### `{name}` ({version})", "", info["description"], ""]
        if info.get("error"):
            lines += [f"Recording failed: `{info['error'].splitlines()[0]}`", ""]
        for note in info.get("notes", []):
            if not note.startswith("screen at failure"):
                lines += [f"Note: {note}", ""]
        if info.get("leftover_pid_files"):
            lines += [
                "PID files left behind after the run: "
                + ", ".join(f"`{x}`" for x in info["leftover_pid_files"]),
                "",
            ]
        lines += ["| ms | source | event |", "|---:|---|---|"]
        for e in info["timeline"]:
            if e["key"] in _META_TYPES:
                continue
            what = e["what"].replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {e['ms']} | {e['source']} | {what} |")
        lines.append("")
    return lines


# --------------------------------------------------------------------------- CLI


def main(argv: list[str] | None = None) -> int:
    """Record scenarios into fixtures (and regenerate the behaviour doc)."""
    parser = argparse.ArgumentParser(description="Record real Claude Code runs into fixtures.")
    parser.add_argument("scenarios", nargs="*", help=f"default: all of {', '.join(SCENARIOS)}")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("tests/fixtures/real"),
        help="fixtures root: recordings go to <out>/<version>/<scenario>/",
    )
    parser.add_argument(
        "--version",
        default=NEWEST,
        help=f"CLI version to record ({', '.join(CLI_VERSIONS)}, or 'all'; default {NEWEST})",
    )
    parser.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="regenerate this markdown file from everything under --out",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep raw recordings (temp dirs and raw.json) under this folder",
    )
    parser.add_argument("--cli", default=None, help="claude binary (default: ensure_cli(version))")
    parser.add_argument(
        "--from-raw",
        type=Path,
        default=None,
        help="rewrite fixtures from raw recordings kept earlier with --keep (no CLI run)",
    )
    parser.add_argument(
        "--doc-only",
        action="store_true",
        help="only regenerate --doc from the fixtures already under --out",
    )
    args = parser.parse_args(argv)
    if args.doc_only:
        if not args.doc:
            parser.error("--doc-only needs --doc")
        args.doc.write_text(render_doc(args.out))
        print(f"wrote {args.doc}")
        return 0
    versions = list(CLI_VERSIONS) if args.version == "all" else [args.version]
    names = args.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios: {unknown}")
    if args.from_raw:
        for version in versions:
            for name in names:
                raw = args.from_raw / version / f"{name}.raw.json"
                if raw.exists():
                    write_fixtures(json.loads(raw.read_text()), args.out / version)
                    print(f"{version} {name:28s} rewritten from {raw}")
        if args.doc:
            args.doc.write_text(render_doc(args.out))
            print(f"wrote {args.doc}")
        return 0
    failed = 0
    for version in versions:
        cli = Path(args.cli) if args.cli else ensure_cli(version)
        work = (args.keep / version) if args.keep else Path(tempfile.mkdtemp(prefix="pmux-record-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            for name in names:
                if not applies(name, version):
                    print(f"{version} {name:28s} skipped: {ONLY_ON[name][1]} on {version}")
                    continue
                t0 = time.monotonic()
                rec = record_scenario(name, cli, work, version=version)
                (work / f"{name}.raw.json").write_text(json.dumps(rec, indent=1))
                write_fixtures(rec, args.out / version)
                status = "FAILED: " + rec["error"] if rec["error"] else "ok"
                failed += bool(rec["error"])
                print(f"{version} {name:28s} {time.monotonic() - t0:6.1f}s  {status}", flush=True)
        finally:
            if args.keep is None:
                shutil.rmtree(work, ignore_errors=True)
    if args.doc:
        args.doc.write_text(render_doc(args.out))
        print(f"wrote {args.doc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
