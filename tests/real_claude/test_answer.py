"""Answering the real CLI's questions and plans in tmux: the ``answer`` action (one question,
a multi-select, several questions, "Other"), a plan approved and sent back with feedback, from
the API (``act``, what ``Session.answer`` calls), the CLI and HTTP; the refusals type nothing.

What the CLI got is read from its transcript: the tool result of ``AskUserQuestion`` carries
``answers`` (question → the chosen labels, "Lint, Tests" for a multi-select, the typed text
for Other); ``ExitPlanMode``'s says approved, or rejected with the feedback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from pmux_widget.core.model import State
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.runtime.actions import ActionError, act, dialog_token

from ..helpers import request, wait_until
from .test_actions import typed_view
from .tracking import Tracked

#: The dialogs are drawn alike on the pins (tests/test_ask_screen.py); the oldest and the
#: newest are driven for real.
pytestmark = [
    pytest.mark.all_versions,
    pytest.mark.cli_versions("2.1.197", "2.1.337", reason="the oldest and the newest pins"),
]

COLOUR = "Which colour should the badge use?"
SIZE = "Which size should the badge have?"
CHECKS = "Which checks should run before the release?"


def _waiting(tr: Tracked, sid: str, prompt: str, kind: str) -> None:
    tr.tc.type_prompt(prompt)
    wait_until(
        lambda: (
            (s := tr.hub.fleet[sid]).state is State.NEEDS_INPUT
            and s.question is not None
            and s.question.kind == kind
            # PermissionRequest brings the questions; a PID file's "waiting" may come first
            and bool(s.question.questions if kind == "question" else s.question.plan)
        ),
        45,
        what=lambda: f"{kind} waiting; it is {tr.hub.fleet[sid].state}",
    )


def _left_needs_input(tr: Tracked, sid: str) -> None:
    wait_until(
        lambda: tr.hub.fleet[sid].state in (State.REVIEW, State.IDLE),
        45,
        what=lambda: f"review or idle; it is {tr.hub.fleet[sid].state}",
    )


def tool_results(tc: TmuxClaude, tool: str) -> list[Any]:
    """``toolUseResult`` of each call of ``tool`` in the transcript, oldest first."""
    names: dict[str, str] = {}
    out: list[Any] = []
    for record in tc.transcript():
        content = (record.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            if (
                block.get("type") == "tool_result"
                and names.get(str(block.get("tool_use_id"))) == tool
            ):
                out.append(record.get("toolUseResult"))
    return out


def nth_result(tc: TmuxClaude, tool: str, n: int) -> Any:
    """The ``n``-th (from 1) ``toolUseResult`` of ``tool``, once it is in the transcript."""
    return wait_until(
        lambda: (found := tool_results(tc, tool)) and len(found) >= n and found[n - 1],
        30,
        what=f"{tool} result #{n} in the transcript",
    )


def _refused(tr: Tracked, sid: str, action: str, **kw: Any) -> str:
    before = typed_view(tr.tc.screen())
    with pytest.raises(ActionError) as refused:
        act(tr.hub, sid, action, **kw)
    assert typed_view(tr.tc.screen()) == before
    return refused.value.reason


def _cli(tr: Tracked, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PMUX_WIDGET_HOME=str(tr.hub.home.root))
    return subprocess.run(
        [sys.executable, "-m", "pmux_widget", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _http(tr: Tracked, sid: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    status, raw, _ = request(
        tr.hub.port,
        "POST",
        f"/api/sessions/{sid}/actions",
        json.dumps(body).encode(),
        {"X-Pmux-Token": tr.hub.token},
        timeout=30,
    )
    return status, json.loads(raw or b"{}")


def test_each_question_form_answered_by_label(make_tracked: Any) -> None:
    tr = make_tracked()
    sid = tr.tc.session_id()
    assert sid is not None

    # One question, single select: refusals first (nothing typed), then the API.
    _waiting(tr, sid, "ask me a question", "question")
    tr.tc.wait_for_screen(COLOUR)
    assert "Purple / Amber" in _refused(tr, sid, "approve")
    assert "Purple / Amber" in _refused(tr, sid, "deny")
    assert "'Teal' is not an option" in _refused(tr, sid, "answer", options=["Teal"])
    assert "takes one answer" in _refused(tr, sid, "answer", options=["Purple", "Amber"])
    stale = dialog_token(tr.hub.fleet[sid]) + "x"
    assert "moved on" in _refused(tr, sid, "answer", options=["Amber"], token=stale)
    result = act(
        tr.hub,
        sid,
        "answer",
        options=["Amber"],
        token=dialog_token(tr.hub.fleet[sid]),
        record=tr.hub.record_action,
    )
    # Down onto "Amber" (seen there), then Enter: never a second Enter
    assert result.keys == ("Down", "Enter"), result.keys
    assert nth_result(tr.tc, "AskUserQuestion", 1)["answers"] == {COLOUR: "Amber"}
    _left_needs_input(tr, sid)
    assert "action:answer" in [t.source for t in tr.hub.history(sid)]

    # A multi-select, from the CLI: ticks by label, then Submit and the review page.
    _waiting(tr, sid, "ask me to pick several", "question")
    done = _cli(tr, "answer", sid[:8], "--option", "Lint", "--option", "Tests")
    assert done.returncode == 0, done.stderr
    assert nth_result(tr.tc, "AskUserQuestion", 2)["answers"] == {CHECKS: "Lint, Tests"}
    _left_needs_input(tr, sid)

    # Several questions, over HTTP: each label placed in its question; the review submitted.
    _waiting(tr, sid, "ask me two questions", "question")
    status, body = _http(tr, sid, {"action": "answer", "options": ["Purple"]})
    assert status == 409 and SIZE in body["error"], body  # the size is not answered
    status, body = _http(tr, sid, {"action": "answer", "options": ["Amber", "Large"]})
    assert status == 202, body
    assert nth_result(tr.tc, "AskUserQuestion", 3)["answers"] == {COLOUR: "Amber", SIZE: "Large"}
    _left_needs_input(tr, sid)

    # "Other": the typed text is the answer.
    _waiting(tr, sid, "ask me a question", "question")
    act(tr.hub, sid, "answer", text="Teal please")
    assert nth_result(tr.tc, "AskUserQuestion", 4)["answers"] == {COLOUR: "Teal please"}
    _left_needs_input(tr, sid)


def test_a_plan_kept_with_feedback_then_approved(make_tracked: Any) -> None:
    tr = make_tracked(args=["--permission-mode", "plan"])
    sid = tr.tc.session_id()
    assert sid is not None
    _waiting(tr, sid, "make a plan", "plan")
    asked = tr.hub.fleet[sid].question
    assert asked is not None and asked.plan is not None and "Add the badge." in asked.plan
    tr.tc.wait_for_screen("Tell Claude what to change")
    assert "not a question" in _refused(tr, sid, "answer", options=["Yes"])
    assert "unknown mode" in _refused(tr, sid, "approve", mode="yolo")
    # Keep planning, over HTTP, with feedback.
    status, body = _http(tr, sid, {"action": "deny", "text": "Make it purple"})
    assert status == 202, body
    rejected = nth_result(tr.tc, "ExitPlanMode", 1)
    assert "Make it purple" in str(rejected)
    _left_needs_input(tr, sid)
    # Approve from the CLI: the choice that keeps asking for each edit.
    _waiting(tr, sid, "make a plan", "plan")
    tr.tc.wait_for_screen("Tell Claude what to change")
    done = _cli(tr, "approve", sid[:8])
    assert done.returncode == 0, done.stderr
    approved = nth_result(tr.tc, "ExitPlanMode", 2)
    assert isinstance(approved, dict) and "Add the badge." in str(approved.get("plan"))
    _left_needs_input(tr, sid)
    # out of plan mode (2.1.332+ say "manual mode on": asking for each edit)
    wait_until(lambda: "plan mode on" not in tr.tc.screen(), 10, what="plan mode left")


@pytest.mark.cli_versions("2.1.197", "2.1.332", "2.1.337", reason="every pin")
def test_a_plan_approved_with_a_named_mode(make_tracked: Any) -> None:
    """``approve(mode="auto")`` picks "Yes, and use auto mode" by its label: the plan is
    approved and the CLI runs on in auto mode (its footer; the next hooks' permission_mode).
    A mode the dialog does not offer is refused, naming its choices, with nothing typed."""
    tr = make_tracked(args=["--permission-mode", "plan"])
    sid = tr.tc.session_id()
    assert sid is not None
    _waiting(tr, sid, "make a plan", "plan")
    tr.tc.wait_for_screen("Tell Claude what to change")
    refused = _refused(tr, sid, "approve", mode="bypassPermissions")
    assert "no choice for mode bypassPermissions" in refused and "use auto mode" in refused
    result = act(tr.hub, sid, "approve", mode="auto", record=tr.hub.record_action)
    assert result.keys == ("Enter",), result.keys  # "1. Yes, and use auto mode" is selected
    approved = nth_result(tr.tc, "ExitPlanMode", 1)
    assert isinstance(approved, dict) and "Add the badge." in str(approved.get("plan"))
    _left_needs_input(tr, sid)
    tr.tc.wait_for_screen("auto mode on")
    wait_until(
        lambda: tr.hub.fleet[sid].permission_mode == "auto",
        30,
        what=lambda: f"permission_mode auto; it is {tr.hub.fleet[sid].permission_mode}",
    )
    assert "action:approve" in [t.source for t in tr.hub.history(sid)]
