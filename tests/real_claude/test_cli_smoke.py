"""Smoke tests of the harness itself: the real CLI, driven in tmux, against the scripted model.

They need no hub from pmux-widget: they check that the pieces later end-to-end tests rely on
work (a prompt gets the scripted answer on screen, the recorder hook sees the events, the PID
file moves busy → idle, a permission dialog can be answered from tmux, token usage declared by
the model reaches the transcript). Each runs in a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from devtools.record import Observer
from pmux_widget.agents.claude.paths import encode_project_dir
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.demo.scenario_plans import load_scenarios
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until

# Tests using the CLI fixtures are marked ``real_claude`` by conftest; the harness unit tests at
# the end need no CLI.


def _statuses(observer: Observer) -> list[str]:
    out: list[str] = []
    for e in observer.events:
        if e["source"] == "pid" and e["data"] and "status" in e["data"]:
            s = e["data"]["status"]
            if not out or out[-1] != s:
                out.append(s)
    return out


@pytest.mark.all_versions
def test_prompt_answer_hooks_pid_and_tokens(
    tmux_claude: TmuxClaude, claude_env: ClaudeEnv, scripted_model: ScriptedModel
) -> None:
    observer = Observer(claude_env).start()
    try:
        assert tmux_claude.wait_status("idle", 15)
        tmux_claude.type_prompt("say hi")
        tmux_claude.wait_for_screen(r"Hi! I am the scripted model", 30)
        wait_until(lambda: "Stop" in claude_env.hook_events(), 15, what="Stop hook")
        tmux_claude.wait_status("idle", 15)
    finally:
        observer.stop()
    events = claude_env.hook_events()
    assert events[:3] == ["SessionStart", "UserPromptSubmit", "Stop"]
    hooks = claude_env.hooks()
    sid = tmux_claude.session_id()
    assert {h["payload"]["session_id"] for h in hooks} == {sid}
    assert all(h["pane"] == tmux_claude.pane.pane_id for h in hooks)  # $TMUX_PANE reaches hooks
    assert _statuses(observer)[-3:] == ["idle", "busy", "idle"]

    # The declared usage and the request id of the answer reach the transcript.
    req = next(r for r in scripted_model.messages_requests("scenario") if r.scenario == "plain")
    declared = next(s for s in load_scenarios() if s["name"] == "plain")["turns"][0]["usage"]
    records = wait_until(
        lambda: [r for r in tmux_claude.transcript() if r.get("type") == "assistant"],
        10,
        what="assistant record",
    )
    assert records[-1]["requestId"] == req.request_id
    assert records[-1]["message"]["id"] == req.message_id
    usage = records[-1]["message"]["usage"]
    assert {k: usage[k] for k in declared} == declared


@pytest.mark.all_versions
def test_permission_dialog_approve(tmux_claude: TmuxClaude, claude_env: ClaudeEnv) -> None:
    tmux_claude.type_prompt("please run the command")
    tmux_claude.wait_dialog(30)
    info = tmux_claude.wait_status("waiting", 15)
    assert info["waitingFor"] == "permission prompt"
    # (the CLI's own reminder, Notification ~6 s after the dialog, may come on a slow run: ci16)
    shown = [e for e in claude_env.hook_events() if e != "Notification"]
    assert shown[-2:] == ["PreToolUse", "PermissionRequest"]
    tmux_claude.approve()
    wait_until(lambda: "Stop" in claude_env.hook_events(), 30, what="Stop hook")
    tmux_claude.wait_status("idle", 15)
    assert "PostToolUse" in claude_env.hook_events()
    assert list(claude_env.cwd.glob("sim-*.txt"))  # the approved `touch` really ran


@pytest.mark.all_versions
def test_escape_on_dialog_writes_marker_without_hook(
    tmux_claude: TmuxClaude, claude_env: ClaudeEnv
) -> None:
    tmux_claude.type_prompt("please run the command")
    tmux_claude.wait_dialog(30)
    tmux_claude.wait_status("waiting", 15)

    def keyed() -> list[str]:
        # the CLI's own reminder (Notification, ~6 s after a dialog) is no key's doing
        return [e for e in claude_env.hook_events() if e != "Notification"]

    # the dialog's own hook may land after the dialog is drawn (its script is slower than the
    # CLI on a loaded machine: CI counted it as Esc's once)
    wait_until(lambda: "PermissionRequest" in keyed(), 15, what=lambda: f"{keyed()}")
    n_hooks = len(keyed())
    tmux_claude.escape()
    tmux_claude.wait_status("idle", 15)
    tmux_claude.wait_user_record("[Request interrupted by user for tool use]", 10)
    assert len(keyed()) == n_hooks, keyed()  # Esc fires no hook at all


# --------------------------------------------------------------------------- harness units


def test_env_is_seeded_and_sealed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "leaked-real-key")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "leaked")
    env = ClaudeEnv("http://127.0.0.1:9", root=tmp_path / "c", extra_env={"PMUX_X": "1"})
    state = json.loads(env.state_file.read_text())
    assert state["hasCompletedOnboarding"] is True
    assert state["customApiKeyResponses"]["approved"] == [env.api_key[-20:]]
    assert state["projects"][os.path.realpath(env.cwd)]["hasTrustDialogAccepted"] is True
    e = env.env()
    assert e["CLAUDE_CONFIG_DIR"] == str(env.config_dir) and e["HOME"] == str(env.home)
    assert e["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9" and e["ANTHROPIC_API_KEY"] == env.api_key
    for k in (
        "DISABLE_TELEMETRY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
    ):
        assert e[k] == "1"
    assert "CLAUDE_CODE_SESSION_ID" not in e and e["PMUX_X"] == "1"
    assert str(env.config_dir).startswith(str(tmp_path))  # never the real ~/.claude


def test_settings_merge_and_recorder_script(tmp_path: Path) -> None:
    env = ClaudeEnv("http://127.0.0.1:9", root=tmp_path / "c")
    env.merge_settings({"theme": "dark", "hooks": {"Stop": [{"hooks": []}]}})
    log = env.add_recorder_hooks(["Stop", "SessionStart"])
    settings = json.loads(env.settings_file.read_text())
    assert settings["theme"] == "dark" and len(settings["hooks"]["Stop"]) == 2
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    payload = {"hook_event_name": "Stop", "session_id": "s", "text": "a\nb"}
    out = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == ""  # a hook must print nothing
    assert [h["payload"] for h in env.hooks()] == [payload]
    assert env.hook_events() == ["Stop"] and log.read_text().count("\n") == 1


def test_project_dir_encoding() -> None:
    assert encode_project_dir("/home/alice/src/my-app") == "-home-alice-src-my-app"
    assert encode_project_dir("/Users/bob/.dotfiles") == "-Users-bob--dotfiles"
    long = encode_project_dir("/x" * 150)
    assert len(long) > 201 and long[200] == "-" and long[:200] == "-x" * 100


def test_env_seeds_what_each_version_needs(tmp_path: Path) -> None:
    def seeded(**kw: object) -> tuple[dict, dict]:
        env = ClaudeEnv(
            "http://127.0.0.1:9", root=tmp_path / str(len(list(tmp_path.iterdir()))), **kw
        )  # type: ignore[arg-type]
        settings = json.loads(env.settings_file.read_text()) if env.settings_file.exists() else {}
        return json.loads(env.state_file.read_text()), settings

    state, settings = seeded(version="2.1.197")
    assert "hasSeenAutoDefaultNudge" not in state and "permissions" not in settings
    assert state["lastOnboardingVersion"] == "2.1.197"
    # 2.1.332 defaults to auto mode: manual mode is asked for, and its startup nudge skipped.
    state, settings = seeded(version="2.1.332")
    assert state["hasSeenAutoDefaultNudge"] is True
    assert settings["permissions"] == {"defaultMode": "default"}
    state, settings = seeded(version="2.1.332", auto_mode=True)
    assert "permissions" not in settings and state["hasSeenAutoDefaultNudge"] is True
    state, settings = seeded(version="2.1.332", startup_dialog=True)
    assert "hasSeenAutoDefaultNudge" not in state
    assert settings["permissions"] == {"defaultMode": "default"}


# Screens captured from the real CLIs (trimmed).
SCREEN_332_MANUAL = """\
 Tip: auto mode handles these prompts for you — choose "switch to auto mode" below
 Do you want to proceed?
 ❯ 1. Yes
   2. Yes, and always allow access to /tmp/x/home/project from this project
   3. Yes, and switch to auto mode · auto mode handles these prompts for you
   4. No
 Esc to cancel · Tab to amend
"""
SCREEN_332_AUTO = """\
 Auto mode can't check actions in this session, so this one needs your approval
 Do you want to proceed?
 ❯ No
   Yes
 Esc to cancel · Tab to amend
"""


def test_dialog_options_are_read_by_label(tmp_path: Path) -> None:
    tc = TmuxClaude(ClaudeEnv("http://127.0.0.1:9", root=tmp_path / "c"), "claude")
    assert tc.dialog_options(SCREEN_332_MANUAL) == [
        ("Yes", "1", True),
        ("Yes, and always allow access to /tmp/x/home/project from this project", "2", False),
        ("Yes, and switch to auto mode · auto mode handles these prompts for you", "3", False),
        ("No", "4", False),
    ]
    assert tc.dialog_options(SCREEN_332_AUTO) == [("No", None, True), ("Yes", None, False)]
    assert tc.dialog_options("❯ \n  ? for shortcuts\n") == []


def test_upgrade_cli_repins_only_the_newest() -> None:
    from devtools.upgrade_cli import CLI_MODULE, repin
    from pmux_widget.demo.claude_env import CLI_VERSIONS

    source = CLI_MODULE.read_text()
    out = repin(source, "9.9.9")
    changed = [(a, b) for a, b in zip(source.splitlines(), out.splitlines(), strict=True) if a != b]
    assert len(changed) == 1, changed
    # every pin but the newest kept (the oldest, and 2.1.332 whose recordings stay)
    kept = ", ".join(f'"{version}"' for version in (*CLI_VERSIONS[:-1], "9.9.9"))
    assert changed[0][1].endswith(f"({kept})"), changed
