"""Real Codex, a hub restarted while a Codex TUI waits on an approval (issue 36, restart
recovery): the next hub brings the row back needs-input — its TUI's pid and pane, the command
it waits on — and answerable there."""

from __future__ import annotations

from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import APPROVAL, TmuxCodex
from pmux_widget.runtime.actions import act
from pmux_widget.runtime.hub import Hub

from .conftest import HubPlace


def _row(hub: Hub, state: State) -> Session | None:
    rows = [s for s in hub.sessions() if s.agent == "codex"]
    row = rows[0] if len(rows) == 1 else None
    return row if row is not None and row.state is state and row.tmux is not None else None


def test_a_restarted_hub_brings_back_a_waiting_codex_row_answerable(
    hub_place: HubPlace, tmux_codex: TmuxCodex
) -> None:
    tc = tmux_codex
    first = hub_place.start()
    try:
        tc.type_prompt("please SHELL now")
        asked = wait_until(lambda: _row(first, State.NEEDS_INPUT), 60, what="needs-input")
        tc.wait_for_screen(APPROVAL)
    finally:
        first.stop()
    assert first.errors == 0
    again = hub_place.start()
    try:
        back = wait_until(lambda: _row(again, State.NEEDS_INPUT), 30, what="the row back")
        assert back.session_id == asked.session_id and back.running and not back.ended
        assert (back.pid, back.tmux and back.tmux.pane) == (tc.pid, tc.pane)
        assert back.tool_summary == "$ touch approved.txt"
        # the next hub read its rollout (the call without output): still waiting
        [rollouts] = [s.codex_rollouts for s in again.sources if hasattr(s, "codex_rollouts")]
        wait_until(lambda: rollouts.tailers, 30, what="the rollout read")
        (tailer,) = rollouts.tailers.values()
        assert tailer.facts.waits is not None
        assert again.fleet[back.session_id].state is State.NEEDS_INPUT
        assert act(again, back.session_id, "approve").keys == ("y",)
        done = wait_until(lambda: _row(again, State.REVIEW), 60, what="review after y")
        assert done.last_assistant and done.last_assistant.startswith("Done.")
    finally:
        again.stop()
    assert again.errors == 0
