"""Real Codex, our installed hooks, a real hub (issue 36, step 4): the hub knows the session
is Codex's, and its hooks drive the states — busy, needs-input on an approval, review on
Stop, idle on an Esc — never giving it the daemon's pane."""

from __future__ import annotations

from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import APPROVAL, TmuxCodex
from pmux_widget.runtime.hub import Hub


def _codex(hub: Hub) -> Session | None:
    found = [s for s in hub.sessions() if s.agent == "codex"]
    return found[0] if len(found) == 1 else None


def _state(hub: Hub, state: State) -> Session | None:
    s = _codex(hub)
    return s if s is not None and s.state is state else None


def test_a_codex_session_through_the_hub(hub: Hub, tmux_codex: TmuxCodex) -> None:
    tc = tmux_codex
    tc.type_prompt("please SHELL now")
    asked = wait_until(lambda: _state(hub, State.NEEDS_INPUT), 30, what="needs-input")
    assert asked.current_tool == "Bash"
    tc.wait_for_screen(APPROVAL)
    tc.send_keys("y")
    done = wait_until(lambda: _state(hub, State.REVIEW), 30, what="review after y")
    assert done.last_assistant and done.last_assistant.startswith("Done.")
    assert done.tracking.pane is None  # the daemon's TMUX_PANE is not the session's
    assert done.transcript_path and "/sessions/" in done.transcript_path
    tc.type_prompt("again SHELL please")
    wait_until(lambda: _state(hub, State.NEEDS_INPUT), 30, what="needs-input again")
    tc.wait_for_screen(APPROVAL)
    tc.send_keys("Escape")
    idle = wait_until(lambda: _state(hub, State.IDLE), 30, what="idle after Esc")
    assert idle.source == "hook:Interrupt"
    assert [s.agent for s in hub.sessions()] == ["codex"]  # the title thread is no row
