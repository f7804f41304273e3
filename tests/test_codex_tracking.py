"""Codex sessions in the one state machine (issue 36): the hooks Codex sends
(``docs/codex-behaviour.md``, recorded payloads) drive the same states as Claude's, by facts
kept as data (``core/agents.py``), and the session says ``"agent": "codex"``."""

from __future__ import annotations

from typing import Any

import pytest

from pmux_widget.core import signals as s
from pmux_widget.core.agents import FACTS
from pmux_widget.core.model import Session, State
from pmux_widget.core.tracker import reduce
from pmux_widget.core.wording import asks

SID = "01a24e41-8761-75e1-a52a-a6952be4d80d"
CWD = "/home/dev/project"
ROLLOUT = f"/home/dev/.codex/sessions/2026/12/07/rollout-2026-12-07T02-07-27-{SID}.jsonl"


class Run:
    def __init__(self) -> None:
        self.fleet: dict[str, Session] = {}
        self.now = 100_000

    def hook(
        self, event: str, agent: str | None = "codex", sent: int | None = None, **fields: Any
    ) -> Session:
        """``sent``: the hook's send time when it is not now (an async hook that lagged)."""
        self.now += 10
        payload = {
            "session_id": SID,
            "hook_event_name": event,
            "cwd": CWD,
            "transcript_path": ROLLOUT,
            "model": "gpt-5",
            "permission_mode": "default",
            **fields,
        }
        pane = payload.pop("pane", "%0")
        signal = s.parse_hook(
            payload, at=self.now if sent is None else sent, pane=pane, agent=agent
        )
        assert not isinstance(signal, s.Invalid), signal
        self.fleet = reduce(self.fleet, signal, self.now).sessions
        return self.fleet[SID]


def test_an_approval_turn() -> None:
    run = Run()
    assert run.hook("SessionStart", source="startup").state is State.IDLE
    assert run.fleet[SID].agent == "codex"
    assert run.hook("UserPromptSubmit", prompt="touch a file").state is State.BUSY
    bash = {"tool_name": "Bash", "tool_input": {"command": "touch approved.txt"}}
    run.hook("PreToolUse", tool_use_id="call_1", **bash)
    asked = run.hook("PermissionRequest", **bash)
    assert asked.state is State.NEEDS_INPUT and asked.tool_summary
    assert run.hook("PostToolUse", tool_use_id="call_1", tool_response="", **bash).state is (
        State.BUSY
    )
    done = run.hook("Stop", stop_hook_active=False, last_assistant_message="Done.")
    assert done.state is State.REVIEW and done.last_assistant == "Done."
    assert done.agent == "codex" and done.to_json()["agent"] == "codex"


def test_a_declined_approval_is_an_interrupt_and_goes_idle() -> None:
    run = Run()
    run.hook("UserPromptSubmit", prompt="touch a file")
    run.hook("PermissionRequest", tool_name="Bash", tool_input={"command": "touch x"})
    gone = run.hook("Interrupt")
    assert gone.state is State.IDLE and gone.current_tool is None
    assert gone.source == "hook:Interrupt"


def test_a_plan_mode_question_waits_until_answered() -> None:
    run = Run()
    run.hook("UserPromptSubmit", prompt="ask me")
    question = {"tool_name": "request_user_input", "tool_input": {"questions": []}}
    assert run.hook("PreToolUse", tool_use_id="c2", **question).state is State.NEEDS_INPUT
    answered = run.hook("PostToolUse", tool_use_id="c2", tool_response="{}", **question)
    assert answered.state is State.BUSY


def test_a_plan_mode_question_says_what_it_asks() -> None:
    run = Run()
    run.hook("UserPromptSubmit", prompt="ask me")
    ask = {
        "id": "color",
        "header": "Colour",
        "question": "Which color should the banner be?",
        "options": [
            {"label": "Red (Recommended)", "description": "Warm and loud."},
            {"label": "Blue", "description": "Calm."},
        ],
    }
    question = {"tool_name": "request_user_input", "tool_input": {"questions": [ask]}}
    asked = run.hook("PreToolUse", tool_use_id="c3", **question)
    assert asked.question is not None and asked.question.kind == "question"
    (only,) = asked.question.questions
    assert only.question == "Which color should the banner be?" and only.header == "Colour"
    assert only.labels == ("Red (Recommended)", "Blue")
    assert asks(asked).startswith("asks: Which color should the banner be? — Red")
    answered = run.hook("PostToolUse", tool_use_id="c3", tool_response="{}", **question)
    assert answered.question is None


def test_codex_hooks_do_not_give_the_session_the_daemons_pane() -> None:
    run = Run()
    session = run.hook("UserPromptSubmit", prompt="hi", pane="%0")
    assert session.tracking.pane is None  # every TUI's hooks carry the daemon's TMUX_PANE
    claude = Run()
    assert claude.hook("UserPromptSubmit", agent=None, prompt="hi").tracking.pane == "%0"


def test_claude_sessions_stay_claude_and_ignore_codex_only_facts() -> None:
    run = Run()
    run.hook("UserPromptSubmit", agent=None, prompt="hi")
    assert run.fleet[SID].agent == "claude"
    # an event Claude does not have is proof of life only for it
    assert run.hook("Interrupt", agent=None).state is State.BUSY
    ask = {"tool_name": "request_user_input", "tool_input": {}}
    assert run.hook("PreToolUse", agent=None, **ask).state is State.BUSY


@pytest.mark.parametrize("named", ["CODEX", "gemini", "", "codex\n"])
def test_an_unknown_agent_name_is_dropped(named: str) -> None:
    signal = s.parse_hook({"session_id": SID, "hook_event_name": "Stop"}, at=1, agent=named)
    assert not isinstance(signal, s.Invalid) and signal.agent is None


def test_the_facts_hold_for_every_agent() -> None:
    assert set(FACTS) == {"claude", "codex"}
    assert Session.from_record({"session_id": SID, "agent": "nope"}).agent == "claude"
    assert Session.from_record({"session_id": SID, "agent": "codex"}).agent == "codex"


def test_a_lagging_async_post_tool_use_moves_nothing() -> None:
    """Our PostToolUse is async for Codex (P18): its script may reach the hub after the next
    dialog's PermissionRequest or the turn's Stop. Sent before what decided the state, it
    neither ends that dialog's wait nor brings a finished turn back to busy."""
    run = Run()
    run.hook("SessionStart", source="startup")
    run.hook("UserPromptSubmit", prompt="two commands")
    first = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    sent_first = run.now + 5  # the first call's PostToolUse, sent, still on its way
    second = {"tool_name": "Bash", "tool_input": {"command": "touch b.txt"}}
    asked = run.hook("PermissionRequest", **second)
    assert asked.state is State.NEEDS_INPUT
    late = run.hook("PostToolUse", sent=sent_first, tool_use_id="call_1", tool_response="", **first)
    assert late.state is State.NEEDS_INPUT and late.state_since == asked.state_since
    answered = run.hook("PostToolUse", tool_use_id="call_2", tool_response="", **second)
    assert answered.state is State.BUSY
    sent_third = run.now + 5
    done = run.hook("Stop", stop_hook_active=False, last_assistant_message="Done.")
    assert done.state is State.REVIEW
    after = run.hook(
        "PostToolUse", sent=sent_third, tool_use_id="call_3", tool_response="", **first
    )
    assert after.state is State.REVIEW and after.state_since == done.state_since


# ------------------------------------------- a TUI's new thread (/new, /resume) retires the old


def _codex_rows(*ids: str) -> dict[str, Session]:
    fleet: dict[str, Session] = {}
    for i, sid in enumerate(ids):
        payload = {"session_id": sid, "hook_event_name": "UserPromptSubmit", "cwd": CWD}
        signal = s.parse_hook({**payload, "prompt": f"hello {sid}"}, at=1_000 + i, agent="codex")
        assert not isinstance(signal, s.Invalid)
        fleet = reduce(fleet, signal, 1_000 + i).sessions
    return fleet


def _apply(fleet: dict[str, Session], signal: s.Signal) -> dict[str, Session]:
    return reduce(fleet, signal, signal.at).sessions


def test_a_tui_shown_to_show_a_new_thread_gives_it_its_pid_and_retires_the_old_row() -> None:
    fleet = _codex_rows("x", "y", "n")
    fleet = _apply(fleet, s.Locate(at=2_000, session_id="x", pid=11))
    fleet = _apply(fleet, s.Locate(at=2_001, session_id="y", pid=12))
    assert fleet["n"].pid is None
    step = reduce(fleet, s.TuiShows(at=3_000, session_id="n", pid=11), 3_000)
    after = step.sessions
    assert after["n"].pid == 11 and not after["n"].ended
    assert after["x"].ended and not after["x"].running and after["x"].source == "retired"
    assert after["y"] == fleet["y"]  # the other TUI's row: untouched
    assert {c.after.session_id for c in step.changes} == {"n", "x"}


def test_a_tui_shows_moves_a_row_from_a_wrong_pid_and_drops_its_pane() -> None:
    fleet = _codex_rows("x", "w")
    pane = s.TmuxLocation(session="s", window="0", pane="%3")
    fleet = _apply(fleet, s.Locate(at=2_000, session_id="w", pid=12, tmux=pane))
    fleet = _apply(fleet, s.Locate(at=2_001, session_id="x", pid=11))
    after = _apply(fleet, s.TuiShows(at=3_000, session_id="w", pid=11))
    assert after["w"].pid == 11 and after["w"].tmux is None  # the Locator finds the TUI's
    assert after["x"].ended


def test_a_tui_shows_what_it_showed_already_changes_nothing() -> None:
    fleet = _apply(_codex_rows("x", "y"), s.Locate(at=2_000, session_id="x", pid=11))
    step = reduce(fleet, s.TuiShows(at=3_000, session_id="x", pid=11), 3_000)
    assert step.changes == [] and step.sessions == fleet


def test_a_tui_shows_never_revives_an_ended_row_nor_moves_a_claude_row() -> None:
    fleet = _codex_rows("x", "n")
    fleet = _apply(fleet, s.Locate(at=2_000, session_id="n", pid=11))
    fleet = _apply(fleet, s.TuiShows(at=2_500, session_id="x", pid=11))  # /resume of x
    assert fleet["n"].ended and fleet["x"].pid == 11
    assert _apply(fleet, s.TuiShows(at=3_000, session_id="n", pid=11)) == fleet
    hook = s.parse_hook({"session_id": "c", "hook_event_name": "UserPromptSubmit"}, at=1)
    assert not isinstance(hook, s.Invalid)
    claude = reduce({}, hook, 1).sessions
    assert _apply(claude, s.TuiShows(at=2, session_id="c", pid=11)) == claude
