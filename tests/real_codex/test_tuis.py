"""Real Codex, a real hub (issue 36, parts 3 and 4): two TUIs in two panes of one tmux server
share one daemon (every hook carries the first TUI's pane and the daemon as parent), yet each
row belongs to its own TUI — its pid, its pane — and is acted on there: approve, deny,
interrupt and send type into that pane only after its screen shows what they answer."""

from __future__ import annotations

import json

import pytest

from pmux_widget.agents.codex.screen_proof import same_text
from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import APPROVAL, QUESTION, TmuxCodex
from pmux_widget.demo.codex_env import CodexEnv
from pmux_widget.demo.scripted_responses import HELLO, ScriptedResponses
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.boot import recovery_signal
from pmux_widget.runtime.hub import Hub

from .conftest import HubPlace


def _rows(hub: Hub) -> list[Session]:
    return [s for s in hub.sessions() if s.agent == "codex"]


def _in_pane(hub: Hub, pane: str) -> Session | None:
    found = [s for s in _rows(hub) if s.tmux is not None and s.tmux.pane == pane]
    return found[0] if len(found) == 1 else None


def _state(hub: Hub, pane: str, state: State) -> Session | None:
    s = _in_pane(hub, pane)
    return s if s is not None and s.state is state else None


def test_two_tuis_each_row_in_its_own_pane(hub: Hub, tmux_codex: TmuxCodex) -> None:
    tc = tmux_codex
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _state(hub, first, State.REVIEW), 60, what="row one in its pane")
    assert one.pid == tc.pids[0]
    tc.open_another(timeout=90)
    second = tc.pane
    assert second != first
    tc.type_prompt("hello two", pane=second)
    two = wait_until(lambda: _state(hub, second, State.REVIEW), 60, what="row two in its pane")
    assert two.pid == tc.pids[1]
    assert two.session_id != one.session_id
    rows = _rows(hub)
    assert len(rows) == 2  # the daemon, its helper and the title threads are no rows
    assert {s.pid for s in rows} == set(tc.pids)

    # acted on in its own pane: send to the second, then its approval
    sent = act(hub, two.session_id, "send", text="please SHELL now")
    assert sent.keys == ("<text>", "Enter")
    asked = wait_until(lambda: _state(hub, second, State.NEEDS_INPUT), 60, what="needs-input")
    assert asked.session_id == two.session_id
    tc.wait_for_screen(APPROVAL, pane=second)
    assert APPROVAL.search(tc.screen(first)) is None
    with pytest.raises(ActionError, match="is review: there is no permission prompt"):
        act(hub, one.session_id, "approve")  # the first shows no dialog: nothing typed
    approved = act(hub, two.session_id, "approve")
    assert approved.keys == ("y",)
    done = wait_until(lambda: _state(hub, second, State.REVIEW), 60, what="review after approve")
    assert done.last_assistant and done.last_assistant.startswith("Done.")

    # deny on the first pane: Esc, "tell Codex what to do differently"
    act(hub, one.session_id, "send", text="again SHELL please")
    wait_until(lambda: _state(hub, first, State.NEEDS_INPUT), 60, what="needs-input one")
    denied = act(hub, one.session_id, "deny")
    assert denied.keys == ("Escape",)
    idle = wait_until(lambda: _state(hub, first, State.IDLE), 60, what="idle after deny")
    assert idle.source == "hook:Interrupt"
    tc.wait_for_screen("Conversation interrupted", 30, pane=first)

    # interrupt a turn while its text streams
    act(hub, one.session_id, "send", text="please SLOW now")
    wait_until(lambda: _state(hub, first, State.BUSY), 60, what="busy")
    tc.wait_for_screen("This answer", 30, pane=first)
    stopped = act(hub, one.session_id, "interrupt")
    assert stopped.keys == ("Escape",)
    wait_until(lambda: _state(hub, first, State.IDLE), 60, what="idle after interrupt")
    assert HELLO in tc.screen(second)  # the other pane untouched


def _prompts(env: CodexEnv) -> list[str]:
    return [
        h["payload"].get("prompt", "")
        for h in env.hooks()
        if h["payload"].get("hook_event_name") == "UserPromptSubmit"
    ]


def test_a_multi_line_and_a_long_prompt_are_sent_whole(
    hub: Hub, tmux_codex: TmuxCodex, codex_env: CodexEnv
) -> None:
    """send pastes the text (bracketed) and presses Enter at once: lines stay lines, and a
    paste Codex shows as "[Pasted Content N chars]" is recognised and sent in full."""
    tc = tmux_codex
    tc.type_prompt("hello one")
    row = wait_until(lambda: _state(hub, tc.pane, State.REVIEW), 60, what="the row in review")
    for text in ["first line\nsecond line\nthird line", "word " * 250 + "END"]:
        before = len(_prompts(codex_env))
        act(hub, row.session_id, "send", text=text)
        wait_until(lambda: _prompts(codex_env)[before:], 30, what="the prompt submitted")  # noqa: B023
        assert _prompts(codex_env)[before:] == [text]
        # the hub knows the new prompt (the proof of the next send compares the screen with it)
        wait_until(
            lambda sent=text: (
                hub.fleet[row.session_id].state is State.REVIEW
                and same_text(sent, hub.fleet[row.session_id].last_prompt)
            ),
            60,
            what=lambda: f"review after the prompt: {hub.fleet[row.session_id].last_prompt!r}",
        )
    with pytest.raises(ActionError, match="control characters"):  # no end of the paste
        act(hub, row.session_id, "send", text="no \x1b[201~ inside")
    assert tc.screen().count("no ") == 0  # nothing typed


def test_a_question_row_answered_by_label_and_its_end_with_the_tui(
    hub: Hub, tmux_codex: TmuxCodex, responses: ScriptedResponses
) -> None:
    tc = tmux_codex
    pane = tc.pane
    tc.plan_mode()
    tc.type_prompt("please ASK now")
    asked = wait_until(lambda: _state(hub, pane, State.NEEDS_INPUT), 60, what="the question")
    assert asked.question is not None and asked.question.kind == "question"
    (ask,) = asked.question.questions
    assert ask.question == "Which color should the banner be?"
    assert "Blue" in ask.labels
    tc.wait_for_screen(QUESTION, pane=pane)
    with pytest.raises(ActionError, match="Purple"):
        act(hub, asked.session_id, "answer", options=["Purple"])  # in no question: refused
    assert QUESTION.search(tc.screen(pane))  # nothing typed
    typed = act(hub, asked.session_id, "answer", options=["Blue"]).keys
    assert typed == ("Down", "Enter")
    done = wait_until(lambda: _state(hub, pane, State.REVIEW), 60, what="review after answer")
    assert done.question is None
    assert any(
        "Blue" in json.dumps(r.last_input()) for r in responses.responses()
    )  # Codex got the answer

    # its TUI exits (the daemon runs on): the row ends with it
    tc.tmux("kill-pane", "-t", pane)
    sid = asked.session_id
    wait_until(lambda: hub.fleet[sid].ended or None, 30, what="the row ended with its TUI")


def test_a_restarted_hub_keeps_the_row_with_its_tui(
    hub_place: HubPlace, tmux_codex: TmuxCodex
) -> None:
    first = hub_place.start()
    tc = tmux_codex
    try:
        tc.type_prompt("please SLOW now")
        row = wait_until(lambda: _state(first, tc.pane, State.BUSY), 60, what="the row busy")
        assert row.pid == tc.pid
    finally:
        first.stop()  # while it works: the next hub re-verifies it (its TUI, not the daemon)
    # what a restarted hub asks of a row it kept busy: its process is the TUI's, and runs
    assert recovery_signal(row, None, False, None).process_running is True
    again = hub_place.start()
    try:
        back = wait_until(
            lambda: (
                ((s := again.fleet.get(row.session_id)) is not None and s.running and s) or None
            ),
            30,
            what="the row re-verified as running",
        )
        assert not back.ended and back.pid == tc.pid
        assert back.tmux is not None and back.tmux.pane == tc.pane
        done = wait_until(lambda: _state(again, tc.pane, State.REVIEW), 60, what="its Stop")
        assert done.session_id == row.session_id
    finally:
        again.stop()
    assert again.errors == 0
