"""Claude Code's question and plan dialogs as the terminal draws them (pure: text in, facts out).

Recorded on 2.1.197, 2.1.332 and 2.1.337 (``tests/fixtures/screens/<version>-questions/``;
the three draw them alike):

* ``AskUserQuestion``: a tab bar (`` ☐ Colour`` for one question; ``←  ☐ Colour  ☐ Size  ✔
  Submit  →`` for several or a multi-select; ``☒`` once answered), the question, numbered
  options (``❯`` marks the selection; ``[ ]`` / ``[✔]`` for a multi-select) each with its
  description below, then "Type something." — the free-text "Other", which shows the typed
  text once typed — a multi-select's "Submit" row, a rule, "Chat about this", and the footer
  "Enter to select · … · Esc to cancel". Several questions or a multi-select end on a
  "Review your answers" page: "1. Submit answers" / "2. Cancel".
* ``ExitPlanMode`` with a plan file: "Ready to code?", "Here is Claude's plan:", the plan
  between dashed borders, then "Would you like to proceed?" (2.1.337; "Claude has written up
  a plan and is ready to execute. Would you like to proceed?" on 2.1.197 and 2.1.332) with
  "1. Yes, and use auto mode" / "2. Yes, manually approve edits" / "3. Tell Claude what to
  change" (a text field: the typed feedback replaces its label). With no plan file: "Exit plan
  mode?" / "Claude wants to exit plan mode" / "1. Yes, and switch to default (ask each time)
  for this session" / "2. No".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pmux_widget.core.screen_text import dialog_fingerprint

__all__ = [
    "AskOption",
    "PlanDialog",
    "QuestionDialog",
    "arrows_to",
    "parse_plan",
    "parse_question",
    "row_of",
    "selected_row",
]

_TAB_BAR = re.compile(r"^\s*(?:←\s+)?[☐☒✔]\s+\S")
_OPTION = re.compile(r"^(\s*)(❯)?\s*(\d+)\.\s+(?:\[([ ✔✓x×])\]\s+)?(\S.*?)\s*$")
_SUBMIT_ROW = re.compile(r"^\s*(❯)?\s+Submit\s*$")
_RULE = re.compile(r"^\s*[─━]{20,}\s*$")
_FOOTER = re.compile(r"Enter to select|Esc to cancel")
_REVIEW = "Review your answers"
_CHAT = "Chat about this"
_PLAN_PROMPTS = re.compile(r"Would you like to proceed\?\s*$|^\s*Exit plan mode\?\s*$")
_PLAN_BORDER = re.compile(r"^\s*╌{10,}\s*$")


@dataclass(frozen=True, slots=True)
class AskOption:
    """One row of a question dialog: ``other`` is the free-text row ("Type something." or the
    text typed into it); ``checked`` is None outside a multi-select."""

    index: int
    number: int
    label: str
    selected: bool
    checked: bool | None = None
    other: bool = False


@dataclass(frozen=True, slots=True)
class QuestionDialog:
    """An ``AskUserQuestion`` dialog on screen: one question's page, or the review page
    (``kind == "review"``: options "Submit answers" / "Cancel", ``question`` empty)."""

    kind: Literal["question", "review"]
    tabs: str
    question: str
    options: tuple[AskOption, ...]
    multi_select: bool
    #: the multi-select's Submit row is selected
    submit_selected: bool
    has_submit: bool
    fingerprint: str

    def option(self, label: str) -> AskOption | None:
        return next((o for o in self.options if not o.other and o.label == label), None)

    @property
    def other(self) -> AskOption | None:
        return next((o for o in self.options if o.other), None)

    @property
    def selected(self) -> AskOption | None:
        return next((o for o in self.options if o.selected), None)


@dataclass(frozen=True, slots=True)
class PlanChoice:
    index: int
    number: int
    label: str
    selected: bool


@dataclass(frozen=True, slots=True)
class PlanDialog:
    """``ExitPlanMode``'s dialog: ``title`` "Ready to code?" or "Exit plan mode?", the plan's
    text as drawn (empty when none is shown), the numbered choices, the plan file it names."""

    title: str
    plan: str
    choices: tuple[PlanChoice, ...]
    plan_file: str | None
    fingerprint: str

    @property
    def selected(self) -> PlanChoice | None:
        return next((c for c in self.choices if c.selected), None)


def arrows_to(selected: int, target: int) -> list[str]:
    """The arrow keys that move a dialog's selection from row ``selected`` to row ``target``
    (a question's rows: its options in order, the free-text row, then a multi-select's Submit
    row). Arrows only move; Enter or Space comes once the screen shows the selection there."""
    step = "Down" if target > selected else "Up"
    return [step] * abs(target - selected)


def row_of(page: QuestionDialog, label: str | None) -> int | None:
    """The row of the option with this label (``None``: the Submit row; the free-text row is
    found by ``page.other``), or None when the screen shows no such option."""
    if label is None:
        return len(page.options) if page.has_submit else None
    option = page.option(label)
    return option.index if option is not None else None


def selected_row(page: QuestionDialog) -> int:
    if page.submit_selected:
        return len(page.options)
    return page.selected.index if page.selected is not None else 0


def parse_question(lines: list[str]) -> QuestionDialog | None:
    """The question dialog at the foot of a screen's lines, if one is drawn."""
    bar = next((i for i in range(len(lines) - 1, -1, -1) if _TAB_BAR.match(lines[i])), None)
    if bar is None:
        return None
    tail = lines[bar + 1 :]
    if not any(_FOOTER.search(line) for line in tail) and not any(_REVIEW in line for line in tail):
        return None
    text_at = next((i for i, line in enumerate(tail) if line.strip()), None)
    if text_at is None:
        return None
    review = tail[text_at].strip() == _REVIEW
    question_lines: list[str] = []
    options: list[AskOption] = []
    submit_selected = has_submit = multi = False
    after_rule = False
    for line in tail[text_at:]:
        if _FOOTER.search(line):
            break
        if _RULE.match(line):
            after_rule = True
            continue
        match = _OPTION.match(line)
        if match is not None:
            _, cursor, number, box, label = match.groups()
            if label == _CHAT or after_rule:
                continue  # "Chat about this" leaves the dialog for a conversation: never ours
            if box is not None:
                multi = True
            options.append(
                AskOption(
                    index=len(options),
                    number=int(number),
                    label=label,
                    selected=cursor is not None,
                    checked=None if box is None else box != " ",
                )
            )
            continue
        if (submit := _SUBMIT_ROW.match(line)) is not None and options:
            has_submit = True
            submit_selected = submit.group(1) is not None
            continue
        if not options and line.strip() and not review:
            question_lines.append(line.strip())
    if not options:
        return None
    if not review:
        # The free-text row is the last option before the rule: "Type something." until text
        # is typed into it, then that text.
        last = options[-1]
        options[-1] = AskOption(
            last.index, last.number, last.label, last.selected, last.checked, other=True
        )
    question = " ".join(question_lines)
    tabs = lines[bar].strip()
    fixed = [o.label for o in options if not o.other]
    return QuestionDialog(
        kind="review" if review else "question",
        tabs=tabs,
        question=question,
        options=tuple(options),
        multi_select=multi,
        submit_selected=submit_selected,
        has_submit=has_submit,
        fingerprint=dialog_fingerprint(["review" if review else question, *fixed]),
    )


def parse_plan(lines: list[str]) -> PlanDialog | None:
    """The plan dialog at the foot of a screen's lines, if one is drawn."""
    prompt = next(
        (i for i in range(len(lines) - 1, -1, -1) if _PLAN_PROMPTS.search(lines[i])), None
    )
    if prompt is None:
        return None
    exit_form = lines[prompt].strip() == "Exit plan mode?"
    title = "Exit plan mode?" if exit_form else "Ready to code?"
    plan_lines: list[str] = []
    if not exit_form:
        start = next(
            (i for i in range(prompt, -1, -1) if lines[i].strip() == "Ready to code?"), None
        )
        if start is None:
            return None
        borders = [i for i in range(start, prompt) if _PLAN_BORDER.match(lines[i])]
        if len(borders) >= 2:
            plan_lines = [lines[i].strip() for i in range(borders[0] + 1, borders[-1])]
    choices: list[PlanChoice] = []
    plan_file = None
    for line in lines[prompt + 1 :]:
        match = _OPTION.match(line)
        if match is not None:
            _, cursor, number, _box, label = match.groups()
            choices.append(PlanChoice(len(choices), int(number), label, cursor is not None))
            continue
        found = re.search(r"(\S*/plans/\S+\.md)\s*$", line)
        if found:
            plan_file = found.group(1)
    if not choices:
        return None
    plan = "\n".join(plan_lines).strip()
    # The feedback row's label is whatever is typed into it: not part of the fingerprint.
    fixed = [c.label for c in choices[:2]]
    return PlanDialog(
        title, plan, tuple(choices), plan_file, dialog_fingerprint([title, plan, *fixed])
    )
