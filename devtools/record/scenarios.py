"""Driving the CLI: one driver per user path (:data:`SCENARIOS`), and on which versions
each exists (:data:`ONLY_ON`)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

from devtools.record.observer import Run
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    auto_mode_default,
    wait_until,
)


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
