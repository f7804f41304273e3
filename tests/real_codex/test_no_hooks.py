"""Real Codex with no hooks of ours (none installed, no hooks.json at all), a real hub: the row
still comes, from the TUI process and its thread's rollout — busy on ``task_started``,
needs-input on an escalated command waiting for its approval, review on ``task_complete``,
idle on ``turn_aborted`` — with its TUI's pid and pane, the command, the answer and the
tokens, and it is acted on in its pane."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import (
    APPROVAL,
    QUESTION,
    TmuxCodex,
    codex_processes,
    daemon_socket_dirs,
)
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.demo.scripted_responses import ScriptedResponses
from pmux_widget.runtime.actions import act, peek
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.snapshot import compute_snapshot
from pmux_widget.system.home import PmuxHome

from .conftest import unavailable


@pytest.fixture
def bare(tmp_path: Path, codex_cli: Path, responses: ScriptedResponses) -> Iterator[TmuxCodex]:
    """The TUI at its prompt, its home with no hooks.json; everything it started ended."""
    if shutil.which("tmux") is None:
        unavailable("tmux is not installed")
    env = CodexEnv(responses.base_url, root=tmp_path / "codex")
    tc = TmuxCodex(env, codex_cli)
    try:
        tc.start(timeout=90)
        yield tc
    finally:
        sockets = daemon_socket_dirs(env)
        tc.close()
        assert [p.pid for p in codex_processes(env)] == [], "Codex processes left"
        assert [s for s in sockets if s.exists()] == [], "daemon socket left under /tmp"


@pytest.fixture
def hub(tmp_path: Path, bare: TmuxCodex, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    """A hub whose own Codex home is the TUI's (as a user's hub and Codex share ~/.codex)."""
    monkeypatch.setenv("CODEX_HOME", str(bare.env.codex_home.root))
    claude = tmp_path / "claude"
    claude.mkdir()
    started = make_hub(home=PmuxHome(tmp_path / "pmux").root, claude_home=claude).start()
    yield started
    started.stop()
    assert started.errors == 0


def _row(hub: Hub, state: State) -> Session | None:
    rows = [s for s in hub.sessions() if s.agent == "codex"]
    return rows[0] if len(rows) == 1 and rows[0].state is state else None


def test_a_codex_row_without_hooks(hub: Hub, bare: TmuxCodex, tmp_path: Path) -> None:
    tc = bare
    assert not tc.env.hooks_file.exists()
    tc.type_prompt("please SHELL now")
    asked = wait_until(lambda: _row(hub, State.NEEDS_INPUT), 60, what="needs-input")
    assert asked.source == "rollout:waiting"
    assert (asked.current_tool, asked.tool_summary) == ("Bash", "$ touch approved.txt")
    assert asked.question is not None and asked.question.kind == "permission"
    assert asked.last_prompt == "please SHELL now"
    assert asked.pid == tc.pid  # the TUI's, not the daemon's
    located = wait_until(lambda: (s := _row(hub, State.NEEDS_INPUT)) and s.tmux and s, 30)
    assert located.tmux is not None and located.tmux.pane == tc.pane
    # `pmux-widget status` with no hub reads the same from the files and processes
    alone = compute_snapshot(PmuxHome(tmp_path / "no-hub"), tmp_path / "claude")["sessions"]
    assert [(s["session_id"], s["state"], s["pid"]) for s in alone] == [
        (asked.session_id, "needs-input", tc.pid)
    ]
    tc.wait_for_screen(APPROVAL)
    seen = peek(hub, asked.session_id)  # the panel's peek: its pane's screen, read-only
    assert seen.dialog == "Would you like to run the following command?"
    assert any(line.strip() == "$ touch approved.txt" for line in seen.lines)
    assert act(hub, asked.session_id, "approve").keys == ("y",)
    done = wait_until(lambda: _row(hub, State.REVIEW), 60, what="review after y")
    assert done.source in ("action:approve", "rollout:complete")
    assert done.last_assistant and done.last_assistant.startswith("Done.")
    assert done.tokens.output > 0 and done.current_tool is None

    act(hub, asked.session_id, "send", text="please SLOW now")
    wait_until(lambda: _row(hub, State.BUSY), 60, what="busy")
    tc.wait_for_screen("This answer", 30)
    assert act(hub, asked.session_id, "interrupt").keys == ("Escape",)
    idle = wait_until(lambda: _row(hub, State.IDLE), 60, what="idle after Esc")
    assert idle.source in ("action:interrupt", "rollout:aborted")
    assert [s.agent for s in hub.sessions()] == ["codex"]  # the title thread is no row


def test_a_plan_mode_question_without_hooks_answered_by_label(
    hub: Hub, bare: TmuxCodex, responses: ScriptedResponses
) -> None:
    tc = bare
    tc.plan_mode()
    tc.type_prompt("please ASK now")
    asked = wait_until(lambda: _row(hub, State.NEEDS_INPUT), 60, what="the question")
    assert asked.source == "rollout:waiting"
    assert asked.question is not None and asked.question.kind == "question"
    (ask,) = asked.question.questions
    assert ask.question == "Which color should the banner be?" and "Blue" in ask.labels
    tc.wait_for_screen(QUESTION)
    assert act(hub, asked.session_id, "answer", options=["Blue"]).keys == ("Down", "Enter")
    done = wait_until(lambda: _row(hub, State.REVIEW), 60, what="review after the answer")
    assert done.question is None
    assert any("Blue" in json.dumps(r.last_input()) for r in responses.responses())


def _prompted(hub: Hub, prompt: str) -> Session | None:
    found = [s for s in hub.sessions() if s.agent == "codex" and s.last_prompt == prompt]
    return found[0] if len(found) == 1 and found[0].state is State.REVIEW else None


@pytest.mark.parametrize("tuis", [1, 2], ids=["lone-tui", "beside-another"])
def test_new_without_hooks_makes_its_row_where_the_screen_shows_it(
    hub: Hub, bare: TmuxCodex, tuis: int
) -> None:
    """``/new`` with no hooks: process facts cannot place the new thread (two TUIs may have
    opened it; or its one TUI is still held by the row of the thread it left). Its row comes
    once the TUI's screen shows its prompt: with that TUI's pid and pane, and the row it
    left ends "retired"."""
    tc = bare
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _prompted(hub, "hello one"), 60, what="row one")
    wait_until(lambda: (s := hub.fleet[one.session_id]).pid == tc.pids[0] and s, 30)
    if tuis == 2:
        tc.open_another(timeout=90)
        tc.type_prompt("hello two", pane=tc.pane)
        two = wait_until(lambda: _prompted(hub, "hello two"), 60, what="row two")
        wait_until(lambda: hub.fleet[two.session_id].pid == tc.pids[1], 30, what="its pid")
    tc.new_thread("hello three", pane=first)
    three = wait_until(lambda: _prompted(hub, "hello three"), 60, what="row three")
    three = wait_until(
        lambda: (s := hub.fleet[three.session_id]).tmux and s.tmux.pane == first and s,
        30,
        what="row three in the first pane",
    )
    assert three.pid == tc.pids[0] and three.source.startswith("rollout:")
    left = wait_until(lambda: (s := hub.fleet[one.session_id]).ended and s, 30, what="row one")
    assert left.source == "retired"
    live = {s.session_id for s in hub.sessions() if s.agent == "codex" and not s.ended}
    assert len(live) == tuis and three.session_id in live
    assert act(hub, three.session_id, "send", text="hello four").keys == ("<text>", "Enter")
    four = wait_until(lambda: _prompted(hub, "hello four"), 60, what="review after hello four")
    assert four.session_id == three.session_id


def test_resume_without_hooks_brings_back_the_row_it_left(hub: Hub, bare: TmuxCodex) -> None:
    """``/resume`` (Codex's picker) of the thread a ``/new`` left, no hooks: the resumed
    thread's next prompt is in its rollout and on the TUI's screen, so its row comes back in
    that TUI, and the row of the thread the TUI left ends "retired"."""
    tc = bare
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _prompted(hub, "hello one"), 60, what="row one")
    wait_until(lambda: hub.fleet[one.session_id].pid == tc.pids[0], 30, what="its pid")
    tc.new_thread("hello three", pane=first)
    three = wait_until(lambda: _prompted(hub, "hello three"), 60, what="row three")
    wait_until(lambda: hub.fleet[one.session_id].ended, 30, what="row one retired")
    tc.resume("hello one", pane=first)
    tc.type_prompt("hello again", pane=first)
    back = wait_until(lambda: _prompted(hub, "hello again"), 60, what="row one back")
    assert back.session_id == one.session_id and back.pid == tc.pids[0]
    gone = wait_until(lambda: (s := hub.fleet[three.session_id]).ended and s, 30, what="three")
    assert gone.source == "retired"
    assert act(hub, one.session_id, "send", text="hello four").keys == ("<text>", "Enter")
    four = wait_until(lambda: _prompted(hub, "hello four"), 60, what="review after hello four")
    assert four.session_id == one.session_id
