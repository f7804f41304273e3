"""Claude Code's question and plan dialogs, read from screens recorded on the pinned CLIs
(``tests/fixtures/screens/<version>-questions/``), and the answer → labels → keys mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmux_widget.agents.claude.ask_screen import arrows_to, row_of, selected_row
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.core.question import AnswerRefused, Question, question_of, resolve_answer

SCREENS = Path(__file__).parent / "fixtures" / "screens"
VERSIONS = ("2.1.197", "2.1.332", "2.1.337")
COLOUR = "Which colour should the badge use?"
SIZE = "Which size should the badge have?"
CHECKS = "Which checks should run before the release?"


def screen(version: str, name: str) -> str:
    return (SCREENS / f"{version}-questions" / f"{name}.txt").read_text()


@pytest.mark.parametrize("version", VERSIONS)
def test_one_question_reads_as_its_question_and_labels(version: str) -> None:
    parsed = parse_screen(screen(version, "question-one"))
    page = parsed.question
    assert page is not None and page.kind == "question"
    assert page.question == COLOUR
    assert [o.label for o in page.options if not o.other] == ["Purple", "Amber"]
    assert page.other is not None and page.other.label == "Type something."
    assert page.selected is not None and page.selected.label == "Purple"
    assert not page.multi_select
    # not a permission dialog, nor a prompt box: approve/deny/send see no dialog of theirs
    assert parsed.dialog is None and parsed.plan is None and parsed.prompt_text is None
    assert parsed.asking


@pytest.mark.parametrize("version", VERSIONS)
def test_multi_select_has_boxes_and_a_submit_row(version: str) -> None:
    page = parse_screen(screen(version, "question-multi")).question
    assert page is not None and page.multi_select and page.has_submit
    assert page.question == CHECKS
    assert [(o.label, o.checked) for o in page.options if not o.other] == [
        ("Lint", False),
        ("Types", False),
        ("Tests", False),
    ]
    assert row_of(page, None) == 4  # after the three options and the free-text row


def test_a_ticked_box_and_the_selection_on_it() -> None:
    page = parse_screen(screen("2.1.337", "question-multi-toggled")).question
    assert page is not None
    assert [o.label for o in page.options if o.checked] == ["Lint", "Tests"]
    assert page.selected is not None and page.selected.label == "Tests"


@pytest.mark.parametrize("version", ["2.1.332", "2.1.337"])
def test_the_review_page(version: str) -> None:
    page = parse_screen(screen(version, "question-multi-review")).question
    assert page is not None and page.kind == "review"
    assert [o.label for o in page.options] == ["Submit answers", "Cancel"]
    assert page.other is None


def test_several_questions_page_by_page() -> None:
    first = parse_screen(screen("2.1.337", "question-several")).question
    second = parse_screen(screen("2.1.337", "question-several-second")).question
    assert first is not None and second is not None
    assert (first.question, second.question) == (COLOUR, SIZE)
    assert first.fingerprint != second.fingerprint
    review = parse_screen(screen("2.1.337", "question-several-review")).question
    assert review is not None and review.kind == "review"


def test_other_shows_the_typed_text_in_its_row() -> None:
    page = parse_screen(screen("2.1.337", "question-other-typed")).question
    assert page is not None and page.other is not None
    assert page.other.label == "Teal please" and page.other.selected
    chosen = parse_screen(screen("2.1.337", "question-other-selected")).question
    assert chosen is not None and chosen.fingerprint == page.fingerprint


@pytest.mark.parametrize(
    "name", ["question-other-answered", "question-esc", "plan-approved", "plan-after-feedback"]
)
def test_after_the_answer_no_dialog_is_read(name: str) -> None:
    parsed = parse_screen(screen("2.1.337", name))
    assert parsed.question is None and parsed.plan is None and parsed.dialog is None
    assert parsed.prompt_text == ""


@pytest.mark.parametrize("version", VERSIONS)
def test_the_plan_dialog(version: str) -> None:
    parsed = parse_screen(screen(version, "plan"))
    plan = parsed.plan
    assert plan is not None and parsed.dialog is None and parsed.question is None
    assert plan.title == "Ready to code?"
    assert plan.plan == "Badge\n\n1. Add the badge.\n2. Colour it amber."
    assert [c.label for c in plan.choices] == [
        "Yes, and use auto mode",
        "Yes, manually approve edits",
        "Tell Claude what to change",
    ]
    assert plan.plan_file is not None and plan.plan_file.endswith(".md")


def test_the_typed_feedback_keeps_the_plan_fingerprint() -> None:
    before = parse_screen(screen("2.1.337", "plan")).plan
    typed = parse_screen(screen("2.1.337", "plan-feedback-typed")).plan
    assert before is not None and typed is not None
    assert typed.choices[2].label == "Make it purple" and typed.selected == typed.choices[2]
    assert typed.fingerprint == before.fingerprint


def test_exit_plan_mode_without_a_plan_file() -> None:
    parsed = parse_screen(screen("2.1.337", "plan-exit"))
    plan = parsed.plan
    assert plan is not None and plan.title == "Exit plan mode?" and plan.plan == ""
    assert [c.label for c in plan.choices] == [
        "Yes, and switch to default (ask each time) for this session",
        "No",
    ]


# ------------------------------------------------------------------ label → keys


def test_arrows_move_from_the_selection_to_the_label_never_by_number() -> None:
    page = parse_screen(screen("2.1.337", "question-one")).question
    assert page is not None
    assert arrows_to(selected_row(page), row_of(page, "Amber") or 0) == ["Down"]
    assert arrows_to(selected_row(page), row_of(page, "Purple") or 0) == []
    assert row_of(page, "Teal") is None
    toggled = parse_screen(screen("2.1.337", "question-multi-toggled")).question
    assert toggled is not None
    assert arrows_to(selected_row(toggled), row_of(toggled, "Lint") or 0) == ["Up", "Up"]
    assert arrows_to(selected_row(toggled), row_of(toggled, None) or 0) == ["Down", "Down"]


# ------------------------------------------------------------------ answers by label

ONE = question_of(
    "AskUserQuestion",
    {
        "questions": [
            {
                "question": COLOUR,
                "options": [{"label": "Purple"}, {"label": "Amber"}],
                "multiSelect": False,
            }
        ]
    },
)
TWO = question_of(
    "AskUserQuestion",
    {
        "questions": [
            {"question": COLOUR, "options": [{"label": "Purple"}, {"label": "Amber"}]},
            {"question": SIZE, "options": [{"label": "Small"}, {"label": "Amber"}]},
        ]
    },
)
MULTI = question_of(
    "AskUserQuestion",
    {
        "questions": [
            {
                "question": CHECKS,
                "multiSelect": True,
                "options": [{"label": "Lint"}, {"label": "Types"}, {"label": "Tests"}],
            }
        ]
    },
)


def test_a_label_answers_its_question() -> None:
    assert resolve_answer(ONE, ["Amber"]).choices == ((COLOUR, ("Amber",)),)
    assert resolve_answer(MULTI, ["Lint", "Tests"]).choices == ((CHECKS, ("Lint", "Tests")),)
    other = resolve_answer(ONE, text="Teal please")
    assert other.choices == ((COLOUR, ()),) and other.text_for(COLOUR) == "Teal please"


def test_a_mapping_names_the_question() -> None:
    answer = resolve_answer(TWO, answers={COLOUR: ["Purple"], SIZE: ["Amber"]})
    assert answer.labels_for(SIZE) == ("Amber",)
    placed = resolve_answer(TWO, ["Purple"], text="Huge")
    assert placed.text_for(SIZE) == "Huge"


@pytest.mark.parametrize(
    ("question", "options", "text", "said"),
    [
        (ONE, ["Teal"], None, "'Teal' is not an option"),
        (ONE, ["Purple", "Amber"], None, "takes one answer"),
        (TWO, ["Amber"], None, "several questions"),
        (TWO, ["Purple"], None, "is not answered"),
        (ONE, [], None, "is not answered"),
        (ONE, [], "two\nlines", "line break"),
        (Question(kind="plan", plan="1. x"), ["Yes"], None, "no question"),
    ],
)
def test_refusals_name_the_options(
    question: Question, options: list[str], text: str | None, said: str
) -> None:
    with pytest.raises(AnswerRefused) as refused:
        resolve_answer(question, options, text=text)
    assert said in str(refused.value)
    if question.kind == "question" and "line break" not in said:
        assert "Purple / Amber" in str(refused.value)
