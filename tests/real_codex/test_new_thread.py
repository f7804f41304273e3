"""Real Codex, a real hub: two TUIs of one home and folder, then ``/new`` in the first
(docs/codex-behaviour.md). Process facts can no longer tell which TUI shows which thread; the
screens can: the new thread's row gets the first TUI (its pid, its pane) and the row of the
thread it left ends "retired", so nothing is typed into the wrong thread, and an action on a
row whose screen shows it (its last prompt, the command its dialog asks for) goes through."""

from __future__ import annotations

import time

import pytest

from pmux_widget.agents.codex.screen import parse_screen
from pmux_widget.core.contract import describe_source
from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import wait_until
from pmux_widget.demo.codex_cli import APPROVAL, TmuxCodex
from pmux_widget.runtime.actions import ActionError, act, peek
from pmux_widget.runtime.hub import Hub


def _row(hub: Hub, prompt: str, state: State = State.REVIEW) -> Session | None:
    found = [
        s
        for s in hub.sessions()
        if s.agent == "codex" and s.last_prompt == prompt and s.state is state
    ]
    return found[0] if len(found) == 1 else None


def _in_pane(hub: Hub, session_id: str, pane: str) -> Session | None:
    s = hub.fleet.get(session_id)
    return s if s is not None and s.tmux is not None and s.tmux.pane == pane else None


def test_new_in_a_shared_folder_moves_the_row_to_what_the_screen_shows(
    hub: Hub, tmux_codex: TmuxCodex
) -> None:
    tc = tmux_codex
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _row(hub, "hello one"), 60, what="row one")
    wait_until(lambda: one.session_id in hub.fleet and hub.fleet[one.session_id].pid, 30)
    tc.open_another(timeout=90)
    second = tc.pane
    tc.type_prompt("hello two", pane=second)
    two = wait_until(lambda: _row(hub, "hello two"), 60, what="row two")
    two = wait_until(lambda: (s := hub.fleet[two.session_id]).pid and s, 30, what="its pid")
    one = hub.fleet[one.session_id]
    assert (one.pid, two.pid) == (tc.pids[0], tc.pids[1])

    # /new in the first TUI: a new thread, its mark made at once, then its first turn
    tc.new_thread("hello three", pane=first)
    three = wait_until(lambda: _row(hub, "hello three"), 60, what="row three")

    # the first TUI's screen shows thread three's last prompt, and only its: row three gets
    # that TUI's pid and pane, and row one (the thread it left) ends "retired"
    three = wait_until(lambda: _in_pane(hub, three.session_id, first), 30, what="row three's pane")
    assert three.pid == tc.pids[0] and not three.ended
    left = wait_until(lambda: (s := hub.fleet[one.session_id]).ended and s, 30, what="row one")
    assert left.source == "retired" and not left.running
    assert describe_source(left.source) == "replaced (/clear, /new or resume)"
    live = {s.session_id for s in hub.sessions() if s.agent == "codex" and not s.ended}
    assert live == {two.session_id, three.session_id}

    # row one is over: its actions are refused and type nothing into the TUI that moved on
    tc.wait_for_screen("Worked for", 30, pane=first)
    with pytest.raises(ActionError):
        act(hub, one.session_id, "send", text="typed into the wrong thread")
    time.sleep(0.5)  # not a wait for a condition: a typed key would echo within it
    assert "typed into the wrong thread" not in tc.screen(first)
    assert parse_screen(tc.screen(first)).prompt_text == ""  # the composer still empty
    with pytest.raises(ActionError):
        peek(hub, one.session_id)  # nor is another thread's screen shown as its

    # row three: its TUI's screen proves it, so a prompt goes into the first TUI
    assert act(hub, three.session_id, "send", text="hello four").keys == ("<text>", "Enter")
    four = wait_until(lambda: _row(hub, "hello four"), 60, what="review after hello four")
    assert four.session_id == three.session_id
    assert "hello four" in tc.screen(first) and "hello four" not in tc.screen(second)
    assert any("hello four" in line for line in peek(hub, three.session_id).lines)

    # row two: unchanged, in the second TUI
    two = hub.fleet[two.session_id]
    assert two.pid == tc.pids[1] and not two.ended
    assert two.tmux is not None and two.tmux.pane == second

    # row two: its TUI's screen shows its last prompt, then the command it waits on
    sent = act(hub, two.session_id, "send", text="please SHELL now")
    assert sent.keys == ("<text>", "Enter")
    wait_until(lambda: _row(hub, "please SHELL now", State.NEEDS_INPUT), 60, what="its approval")
    tc.wait_for_screen(APPROVAL, pane=second)
    assert act(hub, two.session_id, "approve").keys == ("y",)
    done = wait_until(lambda: _row(hub, "please SHELL now"), 60, what="review after y")
    assert done.session_id == two.session_id

    # an answer longer than the pane: the TUI keeps the prompt it answers on screen above it
    act(hub, two.session_id, "send", text="please LONG now")
    wait_until(lambda: _row(hub, "please LONG now"), 60, what="review after the long answer")
    shown = tc.wait_for_screen("line 60 of a long answer", 30, pane=second)
    assert "line 1 of a long answer" not in shown
    assert act(hub, two.session_id, "send", text="hello after").keys == ("<text>", "Enter")
    wait_until(lambda: _row(hub, "hello after"), 60, what="review after the last prompt")


def test_new_in_a_lone_tui_moves_its_row_too(hub: Hub, tmux_codex: TmuxCodex) -> None:
    """One TUI, two threads of its folder after ``/new``: its screen says which it shows."""
    tc = tmux_codex
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _row(hub, "hello one"), 60, what="row one")
    one = wait_until(lambda: _in_pane(hub, one.session_id, first), 30, what="row one's pane")
    tc.new_thread("hello three", pane=first)
    three = wait_until(lambda: _row(hub, "hello three"), 60, what="row three")
    three = wait_until(lambda: _in_pane(hub, three.session_id, first), 30, what="row three's pane")
    assert three.pid == tc.pids[0]
    left = wait_until(lambda: (s := hub.fleet[one.session_id]).ended and s, 30, what="row one")
    assert left.source == "retired"
    with pytest.raises(ActionError):
        act(hub, one.session_id, "send", text="typed into the wrong thread")
    assert act(hub, three.session_id, "send", text="hello four").keys == ("<text>", "Enter")
    four = wait_until(lambda: _row(hub, "hello four"), 60, what="review after hello four")
    assert four.session_id == three.session_id
    assert "typed into the wrong thread" not in tc.screen(first)


def test_resume_brings_back_the_row_it_left(hub: Hub, tmux_codex: TmuxCodex) -> None:
    """``/resume`` of the thread a ``/new`` left (through Codex's picker, as a user does):
    nothing marks it, so its row comes back with its next prompt's hooks and the TUI's screen
    — it takes the TUI again, and the row of the thread the TUI left ends "retired"."""
    tc = tmux_codex
    first = tc.pane
    tc.type_prompt("hello one", pane=first)
    one = wait_until(lambda: _row(hub, "hello one"), 60, what="row one")
    one = wait_until(lambda: _in_pane(hub, one.session_id, first), 30, what="row one's pane")
    tc.new_thread("hello three", pane=first)
    three = wait_until(lambda: _row(hub, "hello three"), 60, what="row three")
    three = wait_until(lambda: _in_pane(hub, three.session_id, first), 30, what="its pane")
    wait_until(lambda: hub.fleet[one.session_id].ended, 30, what="row one retired")
    tc.resume("hello one", pane=first)
    tc.type_prompt("hello again", pane=first)
    back = wait_until(lambda: _row(hub, "hello again"), 60, what="row one back")
    assert back.session_id == one.session_id and not back.ended
    back = wait_until(lambda: _in_pane(hub, one.session_id, first), 30, what="row one's pane")
    assert back.pid == tc.pids[0]
    gone = wait_until(lambda: (s := hub.fleet[three.session_id]).ended and s, 30, what="three")
    assert gone.source == "retired"
    assert act(hub, one.session_id, "send", text="hello four").keys == ("<text>", "Enter")
    four = wait_until(lambda: _row(hub, "hello four"), 60, what="review after hello four")
    assert four.session_id == one.session_id
    with pytest.raises(ActionError):
        act(hub, three.session_id, "send", text="typed into the wrong thread")
