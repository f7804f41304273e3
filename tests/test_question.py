"""What a waiting session asks (issue 34): the contract's ``question`` and the row's words.

The tool inputs are the shapes Claude Code passes to ``PermissionRequest`` (recorded in
docs/claude-code-behaviour.md, "Questions and plans"): ``AskUserQuestion`` with ``questions``
(``multiSelect`` in camelCase) and ``ExitPlanMode`` with ``plan`` (2.1.197) or without it.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmux_widget.core.contract import row
from pmux_widget.core.model import Session, State
from pmux_widget.core.question import PLAN_LIMIT, Question, question_of
from pmux_widget.core.wording import asks, notification_text
from tests.test_tracker import SID, Run

COLOUR = {
    "question": "Which colour should the badge use?",
    "header": "Colour",
    "multiSelect": False,
    "options": [
        {"label": "Purple", "description": "the brand's"},
        {"label": "Amber", "description": "stands out"},
    ],
}
PARTS = {
    "question": "Which parts need tests?",
    "header": "Tests",
    "multiSelect": True,
    "options": [{"label": "Parser", "description": ""}, {"label": "Widget", "description": ""}],
}


def asked(tool: str, tool_input: dict) -> Session:
    run = Run()
    run.hook("SessionStart", at=1, source="startup")
    run.hook("UserPromptSubmit", at=2, prompt="go")
    run.hook("PermissionRequest", at=3, tool_name=tool, tool_input=tool_input)
    return run.fleet[SID]


def test_a_question_is_read_with_its_options() -> None:
    s = asked("AskUserQuestion", {"questions": [COLOUR]})
    assert s.state is State.NEEDS_INPUT
    assert s.question is not None and s.question.kind == "question"
    [ask] = s.question.questions
    assert (ask.question, ask.header, ask.multi_select) == (COLOUR["question"], "Colour", False)
    assert ask.labels == ("Purple", "Amber")
    assert asks(s) == "asks: Which colour should the badge use? — Purple / Amber"
    assert "AskUserQuestion" not in asks(s)


def test_several_questions_are_counted_and_multi_select_kept() -> None:
    s = asked("AskUserQuestion", {"questions": [COLOUR, PARTS]})
    assert s.question is not None
    assert [a.multi_select for a in s.question.questions] == [False, True]
    assert asks(s).startswith("asks 2 questions: Which colour should the badge use? — Purple")
    assert "Which parts need tests? — Parser / Widget" in asks(s)


def test_a_plan_says_plan_ready_with_its_text_or_without() -> None:
    s = asked("ExitPlanMode", {"plan": "1. Add the badge.\n2. Test it."})
    assert s.question == Question(kind="plan", plan="1. Add the badge.\n2. Test it.")
    assert asks(s) == "plan ready: 1. Add the badge. 2. Test it."
    bare = asked("ExitPlanMode", {})
    assert bare.question == Question(kind="plan", plan=None)
    assert asks(bare).startswith("plan ready")
    assert "ExitPlanMode" not in asks(bare)


def test_a_permission_is_a_permission() -> None:
    s = asked("Bash", {"command": "pytest -q"})
    assert s.question == Question(kind="permission")
    assert asks(s) == "asks to run: pytest -q"


@pytest.mark.parametrize(
    ("event", "fields", "state"),
    [
        ("PostToolUse", {"tool_name": "AskUserQuestion"}, State.BUSY),
        ("Stop", {}, State.REVIEW),
        ("SessionEnd", {"reason": "other"}, State.IDLE),
    ],
)
def test_the_question_ends_with_the_wait(event: str, fields: dict, state: State) -> None:
    run = Run()
    run.hook("SessionStart", at=1, source="startup")
    run.hook("UserPromptSubmit", at=2, prompt="go")
    run.hook(
        "PermissionRequest", at=3, tool_name="AskUserQuestion", tool_input={"questions": [COLOUR]}
    )
    run.hook(event, at=4, **fields)
    s = run.fleet[SID]
    assert s.state is state
    assert s.question is None
    assert s.to_json()["question"] is None


def test_needs_input_without_a_permission_request_is_still_a_kind() -> None:
    """A PID file's waiting (no hooks) opens a wait too: its kind comes from the tool the
    transcript named, a permission when none is known."""
    run = Run()
    run.pid("busy", at=1)
    run.pid("waiting", at=2, waiting_for="permission prompt")
    s = run.fleet[SID]
    assert s.state is State.NEEDS_INPUT
    assert s.question == Question(kind="permission")


def test_the_question_travels_in_json_store_and_row() -> None:
    s = asked("AskUserQuestion", {"questions": [COLOUR, PARTS]})
    data = s.to_json()
    assert data["question"] == {
        "kind": "question",
        "questions": [
            {
                "question": COLOUR["question"],
                "header": "Colour",
                "multi_select": False,
                "options": COLOUR["options"],
            },
            {
                "question": PARTS["question"],
                "header": "Tests",
                "multi_select": True,
                "options": PARTS["options"],
            },
        ],
        "plan": None,
    }
    assert Session.from_record(json.loads(json.dumps(s.to_record()))).question == s.question
    r = row(s)
    assert r["question"] == data["question"]
    assert r["asks"] == asks(s)
    title, body = notification_text(s)
    assert "needs you" in title
    assert body == asks(s)


def test_a_long_plan_is_capped_by_the_contract() -> None:
    q = question_of("ExitPlanMode", {"plan": "x" * 5000})
    assert q.plan is not None and len(q.plan) == PLAN_LIMIT
    assert len(asks(Session("a", state=State.NEEDS_INPUT, question=q))) <= 160


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda c: st.lists(c) | st.dictionaries(st.text(), c),
        max_leaves=20,
    )
)
def test_any_tool_input_is_read_without_an_error(junk: object) -> None:
    """The tool input is the model's: whatever it holds, a question of the right kind."""
    for tool, kind in (
        ("AskUserQuestion", "question"),
        ("ExitPlanMode", "plan"),
        ("Bash", "permission"),
    ):
        q = question_of(tool, {"questions": junk, "plan": junk})
        assert q.kind == kind
        assert Question.from_json(json.loads(json.dumps(q.to_json()))) == q
        asks(Session("a", state=State.NEEDS_INPUT, question=q))
