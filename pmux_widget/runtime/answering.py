"""Answering Claude's questions and plans with keys: the ``answer`` action, and ``approve`` /
``deny`` on a plan (called by ``runtime.actions``, after its checks 1–3).

What the CLIs draw is in ``agents.claude.ask_screen`` (recorded on 2.1.197, 2.1.332, 2.1.337). Keys
follow what the screen shows, never a position: the selection is moved with arrows onto the
option with that label, and Enter comes only once the screen shows the selection there. A
multi-select's box is ticked with the digit the screen draws beside that label (the three
CLIs tick that box and leave the selection where it is), then the screen must show that box
ticked before the next key; its answer goes to the review page with → (the next tab:
"Submit") unless Other's text was typed (→ would move in the text), else by its Submit row. A
question's page must show that very question (its text, as the ``PermissionRequest`` carried
it) before any key; several questions are answered page by page, each page checked again;
several questions or a multi-select end on the review page's "Submit answers". Anything
unexpected stops with :class:`ActionError` (a refusal before the first key types nothing).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pmux_widget.agents.claude.ask_screen import (
    PlanDialog,
    QuestionDialog,
    arrows_to,
    row_of,
    selected_row,
)
from pmux_widget.agents.claude.screen import Screen, parse_screen
from pmux_widget.core.model import ActionName, Session
from pmux_widget.core.question import Answer, AnswerRefused, options_said, resolve_answer
from pmux_widget.system import keys
from pmux_widget.system.keys import Target

from .action_outcome import ActionError, ActionResult

__all__ = ["PLAN_MODES", "Order", "answer_plan", "answer_question", "order_for"]

#: How long the screen may take to show a key's effect (a moved selection, typed text, the
#: next page).
STEP_TIMEOUT_S = 2.0
_POLL_S = 0.01
#: A terminal's screen is read again on its next output, or after this (nothing drawn)
_TERMINAL_WAIT_S = 0.05
MAX_TEXT = 2_000

#: A plan's approve ``mode`` → what its choice's label says. ``default`` (None) is the choice
#: that keeps asking for each edit: "Yes, manually approve edits" (a plan file) or "Yes, and
#: switch to default (ask each time) for this session" (none).
PLAN_MODES: dict[str, tuple[str, ...]] = {
    "default": ("manually approve", "(ask each time)"),
    "auto": ("auto mode",),
    "acceptEdits": ("accept edits", "auto-accept"),
    "bypassPermissions": ("bypass",),
}
#: The plan dialog's feedback row (a text field: the typed text replaces the label).
FEEDBACK = "Tell Claude what to change"


@dataclass(frozen=True, slots=True)
class Order:
    """What one action asks, checked against the session's question before any key."""

    name: ActionName
    text: str | None = None
    answer: Answer | None = None
    plan: bool = False
    mode: str | None = None


def order_for(
    session: Session,
    name: ActionName,
    text: str | None,
    options: Sequence[str] | None,
    answers: Mapping[str, Sequence[str]] | None,
    mode: str | None,
) -> Order:
    """The action fitted to what the session asks (pure checks: nothing is read or typed)."""
    asked = session.question
    kind = asked.kind if asked is not None else None
    if name == "answer":
        if asked is None or kind != "question":
            what = "a plan" if kind == "plan" else "a permission"
            raise ActionError(
                f"{session.name} asks for {what}, not a question: approve or deny it"
                if kind is not None
                else f"{session.name}: no question is known to wait (answer it in the terminal)"
            )
        if not asked.questions:
            raise ActionError(
                f"{session.name}: its question is not known yet (its PermissionRequest has not "
                "come); look again"
            )
        try:
            answer = resolve_answer(asked, options or (), answers, text)
        except AnswerRefused as refused:
            raise ActionError(f"{session.name}: {refused}") from None
        return Order(name, text, answer)
    if name in ("approve", "deny") and asked is not None and kind == "question":
        raise ActionError(
            f"{session.name} asks a question, not a permission: answer it ({options_said(asked)})"
        )
    if name in ("approve", "deny") and kind == "plan":
        if name == "approve" and mode is not None and mode not in PLAN_MODES:
            raise ActionError(f"unknown mode {mode!r} (one of {', '.join(PLAN_MODES)})")
        if name == "deny" and text is not None:
            text = text.strip() or None
            if text is not None and (len(text) > MAX_TEXT or any(ord(c) < 32 for c in text)):
                raise ActionError(f"the feedback must be one line of at most {MAX_TEXT} characters")
        return Order(name, text if name == "deny" else None, plan=True, mode=mode)
    if mode is not None:
        raise ActionError("a mode is named only when approving a plan")
    return Order(name, text)


# --------------------------------------------------------------------------- questions


def answer_question(
    pane: Target,
    session: Session,
    screen: Screen,
    answer: Answer,
    seen: str | None,
    grace: Callable[[], None],
    deciding: Callable[[], None],
) -> ActionResult:
    page = screen.question
    first = answer.choices[0][0]
    if page is None or page.kind != "question":
        raise ActionError(f"{session.name}: no question on its screen (answered already?)")
    if page.question != first:
        raise ActionError(
            f"{session.name}: its screen asks {page.question!r}, not {first!r}; look again"
        )
    if seen is not None and page.fingerprint != seen:
        raise ActionError(f"{session.name}: the question changed since it was shown; look again")
    _check_page(session, page, answer.labels_for(first), answer.text_for(first))
    grace()
    typed: list[str] = []
    last = len(answer.choices) - 1
    for i, (asked, labels) in enumerate(answer.choices):
        if i > 0:
            page = _wait_page(pane, session, _asks(asked))
            _check_page(session, page, labels, answer.text_for(asked))
        typed += _answer_page(
            pane, session, page, labels, answer.text_for(asked), i == last, deciding
        )
    return ActionResult(
        session.session_id,
        "answer",
        tuple(typed),
        dialog=screen.question.fingerprint if screen.question else None,
    )


def _check_page(
    session: Session, page: QuestionDialog, labels: Sequence[str], text: str | None
) -> None:
    shown = [o.label for o in page.options if not o.other]
    missing = [label for label in labels if page.option(label) is None]
    if missing:
        raise ActionError(
            f"{session.name}: its screen offers {' / '.join(shown)}, not {', '.join(missing)}"
        )
    if text is not None and page.other is None:
        raise ActionError(f"{session.name}: its screen offers no free-text answer")


def _answer_page(
    pane: Target,
    session: Session,
    page: QuestionDialog,
    labels: Sequence[str],
    text: str | None,
    last: bool,
    deciding: Callable[[], None],
) -> list[str]:
    typed: list[str] = []
    fingerprint = page.fingerprint
    if page.multi_select:
        for label in labels:
            page = _tick(pane, session, page, label, typed)
        if text is None and last and page.has_submit and _SUBMIT_TAB.search(page.tabs):
            # → opens the review page (one key, where the Submit row takes arrows and Enter).
            keys.send_keys(pane, "Right")
            typed.append("Right")
            review = _wait_page(pane, session, lambda q: q.kind == "review")
            return [*typed, *_submit_review(pane, session, review, deciding)]
        if text is not None:
            typed += _type_other(pane, session, page, text)
            page = _wait_page(pane, session, lambda q: q.question == page.question)
        page = _select(pane, session, page, _row(session, page, None), typed)
    elif text is not None:
        typed += _type_other(pane, session, page, text)
    else:
        page = _select(pane, session, page, _row(session, page, labels[0]), typed)
    if last:
        deciding()  # this Enter answers (or reaches the review page, whose Submit does)
    keys.send_keys(pane, "Enter")
    typed.append("Enter")
    after = _wait_screen(
        pane,
        session,
        lambda s: s.question is None or s.question.fingerprint != fingerprint,
        "the question stayed on its screen after Enter",
        ENTER_TIMEOUT_S,
    )
    if last and after.question is not None and after.question.kind == "review":
        typed += _submit_review(pane, session, after.question, lambda: None)
    return typed


#: The tab bar's last tab: → from a question's page goes there (the review page).
_SUBMIT_TAB = re.compile(r"✔\s+Submit\s+→\s*$")


def _submit_review(
    pane: Target, session: Session, review: QuestionDialog, deciding: Callable[[], None]
) -> list[str]:
    """The review page's "Submit answers", once the screen shows the selection on it."""
    typed: list[str] = []
    review = _select(pane, session, review, _row(session, review, "Submit answers"), typed)
    deciding()
    keys.send_keys(pane, "Enter")
    typed.append("Enter")
    _wait_screen(
        pane,
        session,
        lambda s: s.question is None,
        "the review page stayed after Submit",
        ENTER_TIMEOUT_S,
    )
    return typed


def _tick(
    pane: Target, session: Session, page: QuestionDialog, label: str, typed: list[str]
) -> QuestionDialog:
    """The box of the option with ``label`` ticked: its digit as drawn beside that label on
    this page (arrows and Space when it has none of one digit); the page once it shows it
    ticked, the same question, every other box as it was."""
    option = page.option(label)
    if option is None:
        raise ActionError(f"{session.name}: its screen shows no {label!r} option")
    if option.checked:
        return page
    if 1 <= option.number <= 9:
        key = str(option.number)
    else:
        page = _select(pane, session, page, option.index, typed)
        key = "Space"
    others = {o.label: o.checked for o in page.options if o.label != label}
    keys.send_keys(pane, key)
    typed.append(key)
    after = _wait_page(pane, session, _checked(page.question, label))
    changed = [o.label for o in after.options if o.label in others and o.checked != others[o.label]]
    if changed:
        raise ActionError(f"{session.name}: ticking {label!r} changed {', '.join(changed)} too")
    return after


def _asks(question: str) -> Callable[[QuestionDialog], bool]:
    return lambda q: q.kind == "question" and q.question == question


def _checked(question: str, label: str) -> Callable[[QuestionDialog], bool]:
    return lambda q: q.question == question and bool((o := q.option(label)) and o.checked)


def _type_other(pane: Target, session: Session, page: QuestionDialog, text: str) -> list[str]:
    typed: list[str] = []
    other = page.other
    if other is None:
        raise ActionError(f"{session.name}: its screen offers no free-text answer")
    page = _select(pane, session, page, other.index, typed)
    keys.send_keys(pane, text, literal=True)
    tail = text[-20:]
    _wait_page(pane, session, lambda q: bool((o := q.other) and tail in o.label))
    return [*typed, "<text>"]


def _select(
    pane: Target,
    session: Session,
    page: QuestionDialog,
    row: int,
    typed: list[str],
) -> QuestionDialog:
    """Onto ``row`` one arrow at a time, each checked on the screen before the next (a key
    sent in a burst was seen lost on 2.1.197 under load): the page once it shows it there."""
    for _ in range(2 * (len(page.options) + 2)):
        current = selected_row(page)
        if current == row:
            return page
        (arrow,) = arrows_to(current, row)[:1]
        keys.send_keys(pane, arrow)
        typed.append(arrow)
        page = _wait_page(pane, session, _moved_from(current))
    raise ActionError(f"{session.name}: the selection did not reach row {row + 1}")


def _moved_from(row: int) -> Callable[[QuestionDialog], bool]:
    return lambda q: selected_row(q) != row


def _row(session: Session, page: QuestionDialog, label: str | None) -> int:
    row = row_of(page, label)
    if row is None:
        raise ActionError(f"{session.name}: its screen shows no {label or 'Submit'!r} row")
    return row


def _wait_page(
    pane: Target, session: Session, ok: Callable[[QuestionDialog], bool]
) -> QuestionDialog:
    screen = _wait_screen(
        pane,
        session,
        lambda s: s.question is not None and ok(s.question),
        "the question's page did not show the expected selection",
    )
    assert screen.question is not None
    return screen.question


# --------------------------------------------------------------------------- plans


def answer_plan(
    pane: Target,
    session: Session,
    screen: Screen,
    order: Order,
    seen: str | None,
    grace: Callable[[], None],
    deciding: Callable[[], None],
) -> ActionResult:
    shown = screen.plan
    if shown is None:
        raise ActionError(f"{session.name}: no plan dialog on its screen (answered already?)")
    if seen is not None and shown.fingerprint != seen:
        raise ActionError(f"{session.name}: the plan changed since it was shown; look again")
    labels = " / ".join(c.label for c in shown.choices)
    if order.name == "approve":
        wanted = PLAN_MODES[order.mode or "default"]
        target = next(
            (
                c
                for c in shown.choices
                if c.label.startswith("Yes") and any(w in c.label for w in wanted)
            ),
            None,
        )
        if target is None:
            raise ActionError(
                f"{session.name}: the plan dialog has no choice for mode "
                f"{order.mode or 'default'} ({labels})"
            )
    else:
        target = next((c for c in shown.choices if c.label == FEEDBACK), None)
        if target is None:
            target = next((c for c in shown.choices if c.label == "No"), None)
            if target is not None and order.text is not None:
                raise ActionError(
                    f"{session.name}: this plan dialog takes no feedback ({labels}): "
                    "deny it without text"
                )
        if target is None:
            raise ActionError(
                f"{session.name}: the plan dialog has no way to keep planning ({labels})"
            )
    grace()
    typed: list[str] = []
    index = target.index
    plan = _move_plan(pane, session, shown, index, typed)
    if order.name == "deny" and order.text is not None:
        keys.send_keys(pane, order.text, literal=True)
        typed.append("<text>")
        tail = order.text[-20:]
        _wait_screen(
            pane,
            session,
            lambda s: s.plan is not None and tail in s.plan.choices[index].label,
            "the typed feedback did not appear in the plan dialog; pressed no Enter",
        )
    deciding()
    keys.send_keys(pane, "Enter")
    typed.append("Enter")
    _wait_screen(
        pane,
        session,
        lambda s: s.plan is None or s.plan.fingerprint != plan.fingerprint,
        "the plan dialog stayed on its screen after Enter",
        ENTER_TIMEOUT_S,
    )
    return ActionResult(session.session_id, order.name, tuple(typed), dialog=shown.fingerprint)


def _move_plan(
    pane: Target, session: Session, shown: PlanDialog, index: int, typed: list[str]
) -> PlanDialog:
    """Onto choice ``index`` one arrow at a time, each seen on the screen (as ``_select``)."""
    plan = shown
    for _ in range(2 * len(shown.choices) + 2):
        current = plan.selected.index if plan.selected else 0
        if current == index:
            return plan
        (arrow,) = arrows_to(current, index)[:1]
        keys.send_keys(pane, arrow)
        typed.append(arrow)
        screen = _wait_screen(
            pane,
            session,
            _plan_moved_from(current),
            "the selection did not move in the plan dialog; pressed no Enter",
        )
        assert screen.plan is not None
        plan = screen.plan
    raise ActionError(f"{session.name}: the selection did not reach the plan's choice")


def _plan_moved_from(index: int) -> Callable[[Screen], bool]:
    return lambda s: (
        s.plan is not None and s.plan.selected is not None and s.plan.selected.index != index
    )


#: After Enter, how long the page may stay: the CLI redraws only once the tool's hooks ran
#: (measured under load 25: more than 1.5 s). An Enter is never pressed twice: a second one
#: would answer the next page, or land in the prompt box.
ENTER_TIMEOUT_S = 10.0


def _wait_screen(
    pane: Target,
    session: Session,
    ok: Callable[[Screen], bool],
    failure: str,
    timeout: float = STEP_TIMEOUT_S,
) -> Screen:
    deadline = time.monotonic() + timeout
    while True:
        mark = keys.output_mark(pane)
        screen = parse_screen(keys.capture(pane))
        if ok(screen):
            return screen
        if time.monotonic() >= deadline:
            raise ActionError(f"{session.name}: {failure}")
        # a terminal's next output wakes us at once; a tmux pane is read every _POLL_S
        keys.wait_output(pane, mark, _POLL_S if mark is None else _TERMINAL_WAIT_S)
