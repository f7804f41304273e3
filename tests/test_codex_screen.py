"""Codex's screen (agents/codex/screen.py) on screens recorded from the real TUI 0.171.0
(tests/fixtures/codex_screens/, captured by ``tmux capture-pane -p``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmux_widget.agents.codex.screen import Screen, composer_holds, parse_screen

SCREENS = Path(__file__).parent / "fixtures" / "codex_screens"


def screen(name: str) -> Screen:
    return parse_screen((SCREENS / f"{name}.txt").read_text())


def test_the_approval_dialog_by_label_with_its_printed_keys() -> None:
    s = screen("approval")
    assert s.dialog is not None and s.dialog.kind == "permission"
    assert s.dialog.question == "Would you like to run the following command?"
    assert "$ touch approved.txt" in s.dialog.body
    yes, no = s.dialog.choice("yes"), s.dialog.choice("no")
    assert yes is not None and (yes.label, yes.key) == ("Yes, proceed", "y")
    assert no is not None and (no.label, no.key) == (
        "No, and tell Codex what to do differently",
        "esc",
    )
    assert s.dialog.selected == yes
    assert s.prompt_text is None and not s.busy


def test_a_plan_mode_question_and_its_options() -> None:
    s = screen("question")
    assert s.dialog is not None and s.dialog.kind == "question"
    assert s.dialog.question == "Which color should the banner be?"
    assert [c.label for c in s.dialog.choices] == ["Red (Recommended)", "Blue", "None of the above"]
    assert s.dialog.choices[0].description == "Warm and loud."
    assert s.dialog.choice("yes") is None  # a question is no approval
    assert s.dialog.option("Blue") is not None


@pytest.mark.parametrize(
    ("name", "busy", "prompt"),
    [
        ("empty", False, ""),  # the placeholder: an empty composer
        ("plan_empty", False, ""),
        ("typed", False, "some text"),
        ("busy", True, ""),  # text streams: no "Worked for" after the last prompt
        ("busy3", True, ""),
        ("interrupted", False, ""),
    ],
)
def test_running_turn_and_composer(name: str, busy: bool, prompt: str) -> None:
    s = screen(name)
    assert s.dialog is None
    assert (s.busy, s.prompt_text) == (busy, prompt)


def test_the_working_line_is_a_running_turn() -> None:
    text = "\n".join(
        ["› hi", "", "• Working (0s • esc to interrupt)", "", "› Ask Codex to do anything", ""]
    )
    assert parse_screen(text).busy
    assert not parse_screen("").busy and parse_screen("").prompt_text is None


@pytest.mark.parametrize(
    ("name", "sent"),
    [
        ("approval", "please SHELL now"),  # above the dialog
        ("question", "please ASK now"),
        ("typed", "please SLOW now"),  # above the composer, whatever it holds
        ("busy", "please SLOW now"),
        ("busy3", "please SLOW again"),
        ("interrupted", "please SLOW again"),
        ("empty", None),  # a new conversation: nothing sent yet
    ],
)
def test_the_last_prompt_sent_on_screen(name: str, sent: str | None) -> None:
    assert screen(name).sent == sent


def test_a_wrapped_prompt_is_read_whole_and_an_approvals_command() -> None:
    text = "› a long prompt that\n  wraps onto two lines\n\n• Hello.\n\n› \n\n  footer\n"
    assert parse_screen(text).sent == "a long prompt that wraps onto two lines"
    approval = screen("approval").dialog
    assert approval is not None and approval.command == "touch approved.txt"
    question = screen("question").dialog
    assert question is not None and question.command is None


def test_a_screen_is_read_from_its_last_header() -> None:
    # /new (or /resume) draws a header above the conversation it opens: anything above it
    # is another thread's, whose prompt must never be taken for this one's
    old = (SCREENS / "interrupted.txt").read_text()
    fresh = (SCREENS / "empty.txt").read_text()
    assert parse_screen(old).sent == "please SLOW again"
    assert parse_screen(old + fresh).sent is None
    assert parse_screen(fresh + old).sent == "please SLOW again"


def test_an_answer_longer_than_the_screen_keeps_its_prompt_above_it() -> None:
    # recorded (0.171.0, a 60-line answer in a 40-line pane): the prompt stays at the top,
    # the answer's last lines right under it, with no blank line between
    assert screen("long_answer").sent == "please LONG now"


@pytest.mark.parametrize(
    ("name", "composer"),
    [
        ("pasted_lines", "line one\nline two\nline three"),  # each line of the paste
        ("pasted_long", "[Pasted Content 1204 chars]"),  # Codex's placeholder
    ],
)
def test_a_composer_holding_a_paste(name: str, composer: str) -> None:
    assert screen(name).prompt_text == composer


def test_what_a_paste_shows_is_recognised_and_nothing_else() -> None:
    wrapped = "please " + "x" * 300 + " END"
    assert composer_holds(screen("pasted_wrapped").prompt_text, wrapped)  # wrapped over lines
    assert composer_holds(screen("pasted_long").prompt_text, "y" * 1200 + " END")
    assert not composer_holds(screen("pasted_long").prompt_text, "y" * 1201 + " END")
    assert composer_holds(screen("pasted_lines").prompt_text, "line one\nline two\nline three")
    assert not composer_holds(screen("pasted_lines").prompt_text, "line one\nline four")
    assert not composer_holds(screen("empty").prompt_text, "some text")
    assert not composer_holds(None, "some text")
    assert not composer_holds("", "   ")  # nothing to look for is never shown
