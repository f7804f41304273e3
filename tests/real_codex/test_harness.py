"""The real Codex TUI through the harness: the reference's facts (``docs/codex-behaviour.md``)
checked on every run — hooks and their order, rollouts, the shared daemon, the dialogs and
the keys that answer them. If Codex changes, these fail first."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psutil

from pmux_widget.demo.claude_env import read_jsonl, wait_until
from pmux_widget.demo.codex_cli import APPROVAL, QUESTION, TmuxCodex, codex_processes
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.demo.scripted_responses import HELLO, ScriptedResponses


def _events_after(env: CodexEnv, start: int) -> list[str]:
    return env.hook_events()[start:]


def _rollout_types(env: CodexEnv) -> list[str]:
    """The ``event_msg`` payload types of the newest rollout."""
    [*_, newest] = env.rollouts()
    return [
        line["payload"].get("type", "")
        for line in read_jsonl(newest)
        if line.get("type") == "event_msg" and isinstance(line.get("payload"), dict)
    ]


def _hook(env: CodexEnv, event: str) -> dict[str, Any]:
    return next(h for h in reversed(env.hooks()) if h["payload"].get("hook_event_name") == event)


def test_a_plain_turn(tmux_codex: TmuxCodex, codex_env: CodexEnv) -> None:
    tc = tmux_codex
    assert codex_env.rollouts() == []  # created on the first turn, not at start
    tc.type_prompt("hello there")
    tc.wait_for_screen(HELLO)
    wait_until(lambda: "Stop" in codex_env.hook_events(), 15, what="the Stop hook")
    assert codex_env.hook_events() == ["SessionStart", "UserPromptSubmit", "Stop"]
    start = _hook(codex_env, "SessionStart")["payload"]
    assert start["source"] == "startup"
    stop = _hook(codex_env, "Stop")["payload"]
    assert stop["last_assistant_message"] == HELLO
    [rollout] = codex_env.rollouts()
    assert stop["transcript_path"] == str(rollout)
    assert rollout.name.endswith(f"-{stop['session_id']}.jsonl")
    assert {"session_id", "transcript_path", "cwd", "hook_event_name", "model", "turn_id"} <= set(
        stop
    )
    wait_until(lambda: "task_complete" in _rollout_types(codex_env), 10, what="task_complete")
    assert _rollout_types(codex_env)[0] == "task_started"
    # The shared daemon ran the turn and the hooks: their parent is the daemon, not the TUI.
    info = codex_env.daemon_info()
    assert info is not None
    daemon = psutil.Process(info["pid"])
    assert "--managed-daemon" in daemon.cmdline()
    assert daemon.pid != tc.pid
    assert {h["ppid"] for h in codex_env.hooks()} == {daemon.pid}
    helpers = [p for p in codex_processes(codex_env) if "pid-update-loop" in p.cmdline()]
    assert len(helpers) == 1
    # The title the TUI has generated after the first turn: a request with no tools, no hook.
    # (it follows the turn's end: a moment later on a loaded machine)
    wait_until(
        lambda: [r for r in tc_requests(codex_env) if not r.tool_names()],
        30,
        what="the title-generation request",
    )


def tc_requests(env: CodexEnv) -> list[Any]:
    server: ScriptedResponses = env.server  # type: ignore[attr-defined]
    return server.responses()


def test_an_approval_answered_y(tmux_codex: TmuxCodex, codex_env: CodexEnv) -> None:
    tc = tmux_codex
    tc.type_prompt("please SHELL now")
    tc.wait_for_screen(APPROVAL)
    # PermissionRequest came before the dialog was seen on screen.
    assert _events_after(codex_env, 0) == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
    ]
    asked = _hook(codex_env, "PermissionRequest")["payload"]
    assert asked["tool_name"] == "Bash"
    assert asked["tool_input"]["command"] == "touch approved.txt"
    screen = tc.screen()
    for label in ("Yes, proceed (y)", "No, and tell Codex what to do differently (esc)"):
        assert label in screen
    tc.send_keys("y")
    wait_until(lambda: "Stop" in codex_env.hook_events(), 20, what="Stop after y")
    assert codex_env.hook_events()[-2:] == ["PostToolUse", "Stop"]
    assert (codex_env.cwd / "approved.txt").exists()


def test_an_approval_denied_with_esc_interrupts(tmux_codex: TmuxCodex, codex_env: CodexEnv) -> None:
    tc = tmux_codex
    tc.type_prompt("please SHELL now")
    tc.wait_for_screen(APPROVAL)
    tc.send_keys("Escape")
    wait_until(lambda: "Interrupt" in codex_env.hook_events(), 20, what="Interrupt after Esc")
    tc.wait_for_screen("Conversation interrupted")
    assert "Stop" not in codex_env.hook_events()
    wait_until(lambda: "turn_aborted" in _rollout_types(codex_env), 10, what="turn_aborted")
    assert not (codex_env.cwd / "approved.txt").exists()


def test_a_question_in_plan_mode(tmux_codex: TmuxCodex, codex_env: CodexEnv) -> None:
    tc = tmux_codex
    tc.plan_mode()
    tc.type_prompt("please ASK me")
    tc.wait_for_screen(QUESTION)
    pre = _hook(codex_env, "PreToolUse")["payload"]
    assert pre["tool_name"] == "request_user_input"
    assert "PermissionRequest" not in codex_env.hook_events()
    assert "Red (Recommended)" in json.dumps(pre["tool_input"])
    assert "Red (Recommended)" in tc.screen()
    tc.send_keys("Enter")
    wait_until(lambda: "Stop" in codex_env.hook_events(), 20, what="Stop after the answer")
    assert codex_env.hook_events()[-2:] == ["PostToolUse", "Stop"]


def test_two_tuis_share_one_daemon_and_its_pane(tmux_codex: TmuxCodex, codex_env: CodexEnv) -> None:
    tc = tmux_codex
    tc.open_another()
    first, second = tc.panes
    assert first != second and tc.pids[0] != tc.pids[1]
    tc.type_prompt("hello from the second", pane=second)
    tc.wait_for_screen(HELLO, pane=second)
    wait_until(lambda: "Stop" in codex_env.hook_events(), 15, what="the Stop hook")
    panes = {h["pane"] for h in codex_env.hooks()}
    # The hooks of the second TUI's turn carry the pane the daemon was started from.
    assert panes == {first}
    daemons = [p for p in codex_processes(codex_env) if "--managed-daemon" in p.cmdline()]
    assert len(daemons) == 1


def test_no_daemon_hooks_carry_their_own_pane(
    codex_cli: Path, codex_env: CodexEnv, tmux_codex: TmuxCodex
) -> None:
    tc = tmux_codex
    tc.open_another(["--no-daemon"])
    assert tc.panes[0] != tc.pane
    tc.type_prompt("hello without a daemon", pane=tc.pane)
    tc.wait_for_screen(HELLO, pane=tc.pane)
    wait_until(lambda: "Stop" in codex_env.hook_events(), 15, what="the Stop hook")
    stop = _hook(codex_env, "Stop")
    assert stop["pane"] == tc.pane
    # Its parent is the TUI itself, which runs its turns in-process (not the shared daemon).
    assert stop["ppid"] == tc.pid
