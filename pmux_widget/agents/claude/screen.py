"""What Claude Code's terminal shows: a permission dialog and its choices, busy, the prompt box.

Actions type into a session's pane, so they first read the pane (``tmux capture-pane``) and
act only when it shows what the action answers. The screens differ by CLI version and dialog:
2.1.197 numbers its choices with ``1. Yes`` first; 2.1.332's auto-mode permission dialog lists
``❯ No`` first with no numbers, so Enter alone denies. Choices are therefore found by their
label, never by position, and "Yes, and don't ask again" is never "Yes". Recorded screens of
both versions are the tests' fixtures (``tests/fixtures/screens/``). Pure: text in, facts out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pmux_widget.core.screen_text import dialog_fingerprint, screen_lines

from .ask_screen import PlanDialog, QuestionDialog, parse_plan, parse_question

__all__ = [
    "Choice",
    "Dialog",
    "PlanDialog",
    "QuestionDialog",
    "Screen",
    "keys_for_choice",
    "last_lines",
    "parse_screen",
]

Answer = Literal["yes", "no"]

#: A horizontal rule of the TUI (the input box's borders, the dialog's top).
_RULE = re.compile(r"^\s*[─━]{20,}\s*$")
#: A rule that carries the session's name at its right end (2.1.332 draws the prompt box's
#: upper border so for a named session, e.g. a background one: ``──── bgA ─``).
_NAMED_RULE = re.compile(r"^\s*[─━]{20,} \S.*? [─━]{1,4}\s*$")
_QUESTION = re.compile(r"^\s*(Do you want to .+\?)\s*$")
_CHOICE = re.compile(r"^\s*(❯)?\s*(?:(\d+)\.\s+)?(\S.*?)\s*$")
_DIALOG_END = re.compile(r"^\s*Esc to cancel")
#: auto mode's "can't check actions" notice (2.1.332): a dialog that is not a permission prompt.
_AUTO_NOTICE = re.compile(r"Enter to stay in auto mode|Auto mode can't check actions")
_BUSY = re.compile(r"esc to interrupt")


@dataclass(frozen=True, slots=True)
class Choice:
    """One choice of a dialog, as shown: its label, its number (if any), whether selected."""

    index: int
    label: str
    number: int | None
    selected: bool


@dataclass(frozen=True, slots=True)
class Dialog:
    """A dialog on screen.

    ``kind`` is ``permission`` (a question with choices: Bash, Edit, Write, Read, WebFetch,
    MCP tools …) or ``notice`` (auto mode's notice, which has no Yes/No). ``title`` is its
    first line (``Bash command``, ``Edit file``), ``body`` what it asks about (the command, the
    file), ``fingerprint`` a short hash of all of that: an action that names a dialog is refused
    when another dialog is on screen by then.
    """

    kind: Literal["permission", "notice"]
    title: str
    body: tuple[str, ...]
    question: str
    choices: tuple[Choice, ...]
    fingerprint: str

    def choice(self, answer: Answer) -> Choice | None:
        """The choice that answers plainly ``yes`` (exactly "Yes") or ``no`` ("No" …)."""
        for choice in self.choices:
            label = choice.label
            if answer == "yes" and label == "Yes":
                return choice
            if answer == "no" and (label == "No" or label.startswith(("No,", "No "))):
                return choice
        return None

    @property
    def selected(self) -> Choice | None:
        return next((c for c in self.choices if c.selected), None)


@dataclass(frozen=True, slots=True)
class Screen:
    """The facts an action needs from one capture of the pane."""

    dialog: Dialog | None
    #: The footer offers "esc to interrupt": a turn is running.
    busy: bool
    #: The text in the prompt box (``""`` when empty), or None when no prompt box is shown.
    prompt_text: str | None
    #: An ``AskUserQuestion`` dialog (a question's page or the review page).
    question: QuestionDialog | None = None
    #: ``ExitPlanMode``'s dialog.
    plan: PlanDialog | None = None

    @property
    def asking(self) -> bool:
        """Any dialog waits: a permission, a question, a plan (or auto mode's notice)."""
        return self.dialog is not None or self.question is not None or self.plan is not None


def parse_screen(text: str) -> Screen:
    """Read a ``capture-pane`` text: the last dialog, the busy footer, the prompt box."""
    lines = screen_lines(text)
    question = parse_question(lines)
    plan = None if question is not None else parse_plan(lines)
    return Screen(
        dialog=_dialog(lines) if question is None and plan is None else None,
        busy=any(_BUSY.search(line) for line in lines[-3:]),
        prompt_text=None if question is not None or plan is not None else _prompt_text(lines),
        question=question,
        plan=plan,
    )


def last_lines(text: str, n: int) -> tuple[str, ...]:
    """The screen's last ``n`` lines worth reading: runs of blank lines collapse to one, and
    none trail. The CLI pads between its output and the prompt box at the pane's foot (on
    2.1.332 a dozen lines and more), which would otherwise fill a peek."""
    rows: list[str] = []
    for row in text.splitlines():
        if row.strip() or (rows and rows[-1].strip()):
            rows.append(row)
    while rows and not rows[-1].strip():
        rows.pop()
    return tuple(rows[-n:]) if n > 0 else ()


def keys_for_choice(dialog: Dialog, target: Choice) -> list[str]:
    """The keys that move the selection onto ``target``: arrows from the selected choice (none
    when it is there already); the caller presses Enter once the screen shows the selection on
    it (see ``runtime.actions``). Arrows never answer by themselves, while a digit answers at
    once on 2.1.197 and may only move the selection on 2.1.332 — so a digit is used only when
    no selection is visible."""
    current = dialog.selected
    if current is None and target.number is not None:
        return [str(target.number)]
    start = current.index if current is not None else 0
    step = "Down" if target.index > start else "Up"
    return [step] * abs(target.index - start)


def _dialog(lines: list[str]) -> Dialog | None:
    rule = _last_rule(lines)
    if rule is None:
        return None
    tail = lines[rule + 1 :]
    question_at = next((i for i, line in enumerate(tail) if _QUESTION.match(line)), None)
    if question_at is None:
        if not _AUTO_NOTICE.search("\n".join(tail)):
            return None
        content = [line.strip() for line in tail if line.strip()]
        title = content[0] if content else ""
        return Dialog("notice", title, tuple(content[1:]), "", (), dialog_fingerprint(content))
    head = [line.strip() for line in tail[:question_at] if _text(line)]
    question = tail[question_at].strip()
    choices: list[Choice] = []
    for line in tail[question_at + 1 :]:
        if _DIALOG_END.match(line) or not line.strip():
            break
        match = _CHOICE.match(line)
        if match is None:
            break
        marker, number, label = match.groups()
        choices.append(
            Choice(len(choices), label, int(number) if number else None, marker is not None)
        )
    if not choices:
        return None
    title = head[0] if head else ""
    body = tuple(head[1:])
    return Dialog(
        "permission", title, body, question, tuple(choices), dialog_fingerprint([*head, question])
    )


def _last_rule(lines: list[str]) -> int | None:
    """The rule that opens the bottom panel: a dialog replaces the prompt box below it."""
    for i in range(len(lines) - 1, -1, -1):
        if _RULE.match(lines[i]):
            # The prompt box has a rule above and below: the panel starts at the upper one.
            above = next((j for j in range(i - 1, -1, -1) if _RULE.match(lines[j])), None)
            if above is not None and all(
                lines[k].lstrip().startswith("❯") or not lines[k].strip()
                for k in range(above + 1, i)
            ):
                return above
            return i
    return None


def _prompt_text(lines: list[str]) -> str | None:
    """The prompt box: a ``❯`` line between two rules, the lower one near the bottom."""
    for i in range(len(lines) - 1, 0, -1):
        if not _RULE.match(lines[i]):
            continue
        j = i - 1
        while j > 0 and not (_RULE.match(lines[j]) or _NAMED_RULE.match(lines[j])):
            j -= 1
        if j <= 0 or j == i - 1:
            return None
        box = lines[j + 1 : i]
        first = box[0].lstrip()
        if not first.startswith("❯"):
            return None
        text = "\n".join([first[1:].strip(), *(line.strip() for line in box[1:])]).strip()
        return text
    return None


def _text(line: str) -> bool:
    """A line that says something (not blank, not a dashed diff border)."""
    stripped = line.strip()
    return bool(stripped) and set(stripped) != {"╌"}
