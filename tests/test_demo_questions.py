"""The demo's question and plan are answerable (issue 34 part 7): ui-kit asks "Which colour
should the badge use?" (AskUserQuestion), release-notes offers a plan (ExitPlanMode); the
``answer`` action picks an option by its label, ``deny`` with text keeps planning with that
feedback, ``approve`` runs the plan. The simulated CLI (``demo.sim_claude``) draws these
dialogs as 2.1.197 does and reacts to the keys as it does; the hub's checks and the keys are
``runtime.actions.act``'s, as for every action. Real tmux, hooks, hub and transcripts.
"""

from __future__ import annotations

import inspect

import pytest

from pmux_widget.core.model import Session, State
from pmux_widget.runtime.actions import act

from .helpers import wait_until
from .test_demo_actions import Demo, demo, last_tool_use, tool_result  # noqa: F401 (fixture)

pytestmark = pytest.mark.skipif(
    "options" not in inspect.signature(act).parameters,
    reason="needs the answer action of runtime.actions (issue 34, the Python side)",
)


def asks(kind: str):  # type: ignore[no-untyped-def]
    def ok(s: Session) -> bool:
        q = s.question
        return s.state is State.NEEDS_INPUT and s.running and q is not None and q.kind == kind

    return ok


@pytest.mark.timeout(150)
def test_the_demo_question_is_answered_by_its_label(demo: Demo) -> None:  # noqa: F811
    hub = demo.hub
    s = demo.wait_for("ui-kit", asks("question"), 30, "never asked its question")
    assert [o.label for o in s.question.questions[0].options] == ["Purple", "Amber"]  # type: ignore[union-attr]
    tool_id = last_tool_use(s)
    act(hub, s.session_id, "answer", options=["Amber"], record=hub.record_action)  # type: ignore[call-arg]
    result = wait_until(lambda: tool_result(s, tool_id), 15, what="the question never answered")
    assert '"Amber"' in result["content"], result
    done = demo.wait_for("ui-kit", lambda x: x.state is State.REVIEW, 20, "the turn never finished")
    assert "Amber" in (done.last_assistant or "")


@pytest.mark.timeout(150)
def test_the_demo_plan_keeps_planning_with_feedback_then_is_approved(demo: Demo) -> None:  # noqa: F811
    hub = demo.hub
    s = demo.wait_for("release-notes", asks("plan"), 30, "never offered its plan")
    assert "docs/releases.md" in (s.question.plan or "")  # type: ignore[union-attr]
    first = last_tool_use(s)
    act(hub, s.session_id, "deny", text="Also list the breaking changes.", record=hub.record_action)
    rejected = wait_until(lambda: tool_result(s, first), 15, what="the feedback never reached it")
    assert rejected["is_error"] and "Also list the breaking changes." in rejected["content"]
    again = demo.wait_for(
        "release-notes",
        lambda x: (
            asks("plan")(x) and "breaking changes" in ((x.question and x.question.plan) or "")
        ),
        20,
        "no new plan with the feedback",
    )
    second = last_tool_use(again)
    act(hub, again.session_id, "approve", record=hub.record_action)
    approved = wait_until(lambda: tool_result(again, second), 15, what="the plan never approved")
    assert not approved["is_error"] and "approved" in approved["content"]
    demo.wait_for("release-notes", lambda x: x.state is State.REVIEW, 20, "never finished")
