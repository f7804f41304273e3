"""A question or a plan, away (issue 34 part 4): the notification says what is asked and, for
one single-select question, carries its options as buttons; a plan's are Approve / Keep
planning. An option's button redeems the same single-use, dialog-bound, expiring token as
Allow once, with its label. The pure rules (``core.remote_answer``), the tokens
(``notify.answers``), the payload's words, then a real hub's channel and push.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pmux_widget.core.model import Session, State, Tracking
from pmux_widget.core.question import Ask, Option, Question, question_of
from pmux_widget.core.remote_answer import (
    PERMISSION_BUTTONS,
    PLAN_BUTTONS,
    phone_options,
    push_buttons,
    refusal,
)
from pmux_widget.demo.scripts import COLOUR_QUESTION
from pmux_widget.notify.answers import TOKEN_TTL_MS, AnswerTokens
from pmux_widget.notify.config import edit_config
from pmux_widget.notify.payload import session_payload
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

from .helpers import wait_until
from .notify_servers import PushService, Recorder
from .test_hook_path import Installed, payload
from .test_notify_hubs import http, hubs, notifier, push, setup, start_hub  # noqa: F401

T0 = 1_800_000_000_000

COLOUR = COLOUR_QUESTION


def ask(question: str = "Which colour?", labels: tuple[str, ...] = ("Purple", "Amber"),
        multi: bool = False) -> Ask:  # fmt: skip
    return Ask(question, multi_select=multi, options=tuple(Option(x) for x in labels))


def waiting(
    question: Question | None, sid: str = "s1", asked: int = T0, summary: str = ""
) -> Session:
    tool = {"question": "AskUserQuestion", "plan": "ExitPlanMode"}.get(
        question.kind if question else "", "Bash"
    )
    return Session(
        session_id=sid,
        state=State.NEEDS_INPUT,
        current_tool=tool,
        tool_summary=summary or None,
        question=question,
        project="ui-kit",
        tracking=Tracking(asked_at=asked),
    )


# ------------------------------------------------------------------------- the pure rules


def test_buttons_by_kind_of_dialog() -> None:
    assert push_buttons(None) == PERMISSION_BUTTONS
    assert push_buttons(Question("permission")) == PERMISSION_BUTTONS
    assert [b["title"] for b in push_buttons(Question("plan", plan="1. x"))] == [
        "Approve",
        "Keep planning",
        "Open",
    ]
    assert push_buttons(Question("plan"), words=False) == PLAN_BUTTONS  # no words in them
    one = Question("question", (ask(),))
    assert push_buttons(one) == (
        {"action": "answer:Purple", "title": "Purple", "option": "Purple"},
        {"action": "answer:Amber", "title": "Amber", "option": "Amber"},
    )
    # the labels are what the question says: none under generic / redact
    assert push_buttons(one, words=False) == ()
    # several questions, a multi-select, no options: a tap opens the row instead
    assert push_buttons(Question("question", (ask(), ask("Size?", ("S", "M"))))) == ()
    assert push_buttons(Question("question", (ask(multi=True),))) == ()
    assert push_buttons(Question("question", (ask(labels=()),))) == ()
    assert push_buttons(Question("question")) == ()
    assert all("always" not in json.dumps(b).lower() for b in PERMISSION_BUTTONS + PLAN_BUTTONS)


def test_refusal_fits_the_action_to_the_dialog() -> None:
    one = Question("question", (ask(),))
    assert refusal(one, "answer", "Amber") is None
    assert refusal(one, "answer", "Red") == "'Red' is not an option (Purple / Amber)"
    assert refusal(one, "answer", None) is not None
    assert refusal(one, "approve", None) is not None and refusal(one, "deny", None) is not None
    assert refusal(Question("question", (ask(multi=True),)), "answer", "Amber") is not None
    for dialog in (None, Question("permission"), Question("plan", plan="p")):
        assert refusal(dialog, "approve", None) is None
        assert refusal(dialog, "deny", None) is None
        assert refusal(dialog, "answer", "Amber") is not None
        assert refusal(dialog, "approve", "Amber") is not None
        assert refusal(dialog, "always", None) is not None


labels = st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4, unique=True)


@given(
    asks=st.lists(st.tuples(labels, st.booleans()), min_size=1, max_size=4),
    option=st.text(max_size=12),
)
def test_a_button_is_exactly_an_answer_the_route_takes(
    asks: list[tuple[list[str], bool]], option: str
) -> None:
    """Every button a question's push carries is accepted, and nothing else is: any label
    the route takes is one of the buttons."""
    question = Question(
        "question", tuple(ask(f"q{i}", tuple(ls), m) for i, (ls, m) in enumerate(asks))
    )
    buttons = push_buttons(question)
    for button in buttons:
        assert refusal(question, "answer", button["option"]) is None
    shown = {b["option"] for b in buttons}
    assert (refusal(question, "answer", option) is None) == (option in shown)
    assert bool(buttons) == (len(asks) == 1 and not asks[0][1])
    assert phone_options(question) == tuple(b["option"] for b in buttons)


# --------------------------------------------------------------------------------- tokens


@pytest.fixture
def tokens(tmp_path: Path) -> Iterator[AnswerTokens]:
    store = AnswerTokens(tmp_path / "notify.db")
    yield store
    store.close()


def redeem(
    tokens: AnswerTokens,
    token: str,
    session: Session,
    action: str = "answer",
    option: str | None = "Amber",
    *,
    now: int = T0,
    typed: list[tuple[str, str, tuple[str, ...]]] | None = None,
) -> Any:
    out = typed if typed is not None else []
    return tokens.answer(
        token,
        action,
        host="h",
        device="pixel",
        session_of=lambda sid: session if sid == session.session_id else None,
        act=lambda sid, name, options: out.append((sid, name, options)),
        now=now,
        option=option,
    )


def test_an_option_answers_once_with_its_label(tokens: AnswerTokens) -> None:
    s = waiting(question_of("AskUserQuestion", COLOUR))
    token = tokens.issue("h", s, T0)
    typed: list[tuple[str, str, tuple[str, ...]]] = []
    # a label not in that question, or approve on a question: refused, nothing typed, and
    # the token is not spent by the mistake
    bad = redeem(tokens, token, s, option="Red", typed=typed)
    assert bad.status == 400 and "not an option" in bad.reason and "Purple / Amber" in bad.reason
    assert redeem(tokens, token, s, "approve", None, typed=typed).status == 400
    assert typed == []
    assert redeem(tokens, token, s, typed=typed).status == 202
    assert typed == [("s1", "answer", ("Amber",))]
    again = redeem(tokens, token, s, option="Purple", typed=typed)
    assert (again.status, again.reason) == (409, "already used") and len(typed) == 1
    outcomes = [(a["action"], a["outcome"]) for a in tokens.history("s1")]
    assert outcomes == [
        ("answer: Red", f"400 {bad.reason}"),
        ("approve", outcomes[1][1]),
        ("answer: Amber", "202 answered"),
        ("answer: Purple", "409 already used"),
    ]


def test_a_token_is_bound_to_its_question_and_expires(tokens: AnswerTokens) -> None:
    s = waiting(question_of("AskUserQuestion", COLOUR))
    token = tokens.issue("h", s, T0)
    typed: list[tuple[str, str, tuple[str, ...]]] = []
    late = redeem(tokens, token, s, now=T0 + TOKEN_TTL_MS + 1, typed=typed)
    assert (late.status, late.reason) == (410, "expired")
    token = tokens.issue("h", s, T0)
    # the same session now asks another question (other options, same tool and summary)
    other = dict(COLOUR)
    other["questions"] = [{**COLOUR["questions"][0], "options": [{"label": "Amber"},
                                                                 {"label": "Teal"}]}]  # fmt: skip
    changed = waiting(question_of("AskUserQuestion", other))
    assert redeem(tokens, token, changed, typed=typed).reason == "answered meanwhile"
    # another dialog's token (another session's question) does not answer this one
    theirs = tokens.issue("h", waiting(question_of("AskUserQuestion", COLOUR), sid="s2"), T0)
    assert redeem(tokens, theirs, s, typed=typed).reason == "answered meanwhile"
    assert typed == []


def test_a_plan_is_approved_or_kept_planning(tokens: AnswerTokens) -> None:
    plan = waiting(question_of("ExitPlanMode", {"plan": "1. Add the badge."}))
    typed: list[tuple[str, str, tuple[str, ...]]] = []
    token = tokens.issue("h", plan, T0)
    assert redeem(tokens, token, plan, "answer", "Approve", typed=typed).status == 400
    assert redeem(tokens, token, plan, "deny", None, typed=typed).status == 202
    assert typed == [("s1", "deny", ())]
    # a new plan (the feedback taken in) is another dialog: the old token does not approve it
    again = waiting(question_of("ExitPlanMode", {"plan": "1. Add the badge.\n2. Test it."}))
    token = tokens.issue("h", plan, T0)
    assert redeem(tokens, token, again, "approve", None, typed=typed).status == 409


# ------------------------------------------------------------------------------- the words


def test_the_payload_says_the_question_and_its_options() -> None:
    s = waiting(question_of("AskUserQuestion", COLOUR))
    payload = session_payload(s, host="h")
    assert payload["title"] == "Needs you · ui-kit"
    assert payload["body"] == "asks: Which colour should the badge use? — Purple / Amber"
    plan = waiting(question_of("ExitPlanMode", {"plan": "1. Add the badge.\n2. Test it."}))
    assert session_payload(plan, host="h")["body"].startswith("plan ready: 1. Add the badge.")
    # redact: the kind of dialog, never the tool's name nor what it asks
    assert session_payload(s, host="h", redact=True)["body"] == "asks a question"
    assert session_payload(plan, host="h", redact=True)["body"] == "plan ready"
    assert "Purple" not in session_payload(s, host="h", generic=True)["body"]


# ----------------------------------------------------------- a real hub: channel and push


def dialog_through_a_hub(
    installed: Installed, started: list[Hub], homes: Any, sid: str, tool: str, tool_input: Any
) -> Hub:
    """A hub with actions on; the installed hook script fires the dialog's PermissionRequest."""
    with edit_config(homes.pmux) as box:
        box[0] = box[0].with_settings(actions=True)
    hub = start_hub(started)
    body = payload("PermissionRequest", session_id=sid, tool_name=tool)
    body["tool_input"] = tool_input
    installed.fire(body)
    return hub


def test_a_hub_says_the_question_on_channels_and_pushes_its_options(
    setup: Installed,  # noqa: F811
    hubs: list[Hub],  # noqa: F811
    http: Recorder,  # noqa: F811
    push: PushService,  # noqa: F811
    homes: Any,
) -> None:
    """The installed hook script fires AskUserQuestion's PermissionRequest at a real hub with
    a json:// channel and a subscribed browser (actions on): the channel's message and the
    push say the question and its options; the push carries one button per option and a
    token (never the channel), and the token answers with a label once."""
    hub = dialog_through_a_hub(setup, hubs, homes, "s-q", "AskUserQuestion", COLOUR)
    wait_until(lambda: http.count() >= 1 and push.delivered, what="the channel and the push")
    said = "asks: Which colour should the badge use? — Purple / Amber"
    message = http.requests[0].json()
    assert message["title"] == "Needs you · acme-api" and message["message"] == said
    assert "token" not in json.dumps(message) and "answer:" not in json.dumps(message)
    pushed = push.delivered[0].payload
    assert pushed["body"] == said
    assert pushed["actions"] == [
        {"action": "answer:Purple", "title": "Purple", "option": "Purple"},
        {"action": "answer:Amber", "title": "Amber", "option": "Amber"},
    ]
    typed: list[tuple[str, str, tuple[str, ...]]] = []

    def answer(option: str) -> Any:
        return notifier(hub).answers.answer(
            pushed["token"], "answer", host=hub.host_name, device="phone",
            session_of=hub.fleet.get, act=lambda sid, a, o: typed.append((sid, a, o)),
            now=now_ms(), option=option,
        )  # fmt: skip

    assert answer("Teal").status == 400 and typed == []
    assert answer("Amber").status == 202 and typed == [("s-q", "answer", ("Amber",))]
    assert answer("Purple").status == 409 and len(typed) == 1


def test_a_plan_pushes_approve_and_keep_planning(
    setup: Installed,  # noqa: F811
    hubs: list[Hub],  # noqa: F811
    http: Recorder,  # noqa: F811
    push: PushService,  # noqa: F811
    homes: Any,
) -> None:
    plan = {"plan": "1. Add the badge.\n2. Test it."}
    dialog_through_a_hub(setup, hubs, homes, "s-p", "ExitPlanMode", plan)
    wait_until(lambda: http.count() >= 1 and push.delivered, what="the channel and the push")
    assert http.requests[0].json()["message"].startswith("plan ready: 1. Add the badge.")
    pushed = push.delivered[0].payload
    assert pushed["body"].startswith("plan ready: 1. Add the badge.")
    assert [a["title"] for a in pushed["actions"]] == ["Approve", "Keep planning", "Open"]
    assert pushed["token"]
