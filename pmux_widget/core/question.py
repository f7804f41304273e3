"""What a waiting session asks: a permission, a question, or a plan (the contract's ``question``).

Claude Code fires ``PermissionRequest`` for all three kinds of dialog; only the tool tells them
apart: ``AskUserQuestion`` (1–4 questions, each with 2–4 options, single or multi-select, and
always a free-text "Other") and ``ExitPlanMode`` (plan mode's "Exit plan mode?"). The values
here are read from the tool's input, leniently: a field of the wrong type is dropped, never an
error, because the input is the model's and may be anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

QuestionKind = Literal["permission", "question", "plan"]

#: The tools whose dialog is not a permission.
QUESTION_TOOL = "AskUserQuestion"
PLAN_TOOL = "ExitPlanMode"

#: The contract caps the plan's text (a row travels with every change: P9).
PLAN_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Option:
    label: str
    description: str = ""

    def to_json(self) -> dict[str, str]:
        return {"label": self.label, "description": self.description}

    @classmethod
    def from_json(cls, data: object) -> Option | None:
        if not isinstance(data, Mapping) or not _text(data.get("label")):
            return None
        return cls(label=str(data["label"]), description=_text(data.get("description")))


@dataclass(frozen=True, slots=True)
class Ask:
    """One question of an ``AskUserQuestion`` dialog."""

    question: str
    header: str = ""
    multi_select: bool = False
    options: tuple[Option, ...] = ()

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(option.label for option in self.options)

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "header": self.header,
            "multi_select": self.multi_select,
            "options": [option.to_json() for option in self.options],
        }

    @classmethod
    def from_json(cls, data: object) -> Ask | None:
        """The contract's form (``multi_select``) or the tool input's (``multiSelect``)."""
        if not isinstance(data, Mapping) or not _text(data.get("question")):
            return None
        multi = data.get("multi_select", data.get("multiSelect"))
        raw = data.get("options")
        options = (Option.from_json(o) for o in raw) if isinstance(raw, list) else ()
        return cls(
            question=str(data["question"]),
            header=_text(data.get("header")),
            multi_select=multi is True,
            options=tuple(o for o in options if o is not None),
        )


@dataclass(frozen=True, slots=True)
class Question:
    """What exactly waits on the user (needs-input only)."""

    kind: QuestionKind
    questions: tuple[Ask, ...] = ()
    plan: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "questions": [ask.to_json() for ask in self.questions],
            "plan": self.plan,
        }

    @classmethod
    def from_json(cls, data: object) -> Question | None:
        if not isinstance(data, Mapping) or data.get("kind") not in _KINDS:
            return None
        raw = data.get("questions")
        asks = (Ask.from_json(a) for a in raw) if isinstance(raw, list) else ()
        plan = data.get("plan")
        return cls(
            kind=data["kind"],
            questions=tuple(a for a in asks if a is not None),
            plan=_clip_plan(plan) if isinstance(plan, str) else None,
        )

    def find(self, question: str) -> Ask | None:
        """The question with this exact text, or a unique one that starts with it."""
        for ask in self.questions:
            if ask.question == question:
                return ask
        starts = [ask for ask in self.questions if ask.question.startswith(question)]
        return starts[0] if len(starts) == 1 else None


_KINDS = frozenset({"permission", "question", "plan"})


def question_of(tool_name: str | None, tool_input: Mapping[str, Any] | None) -> Question:
    """The dialog a ``PermissionRequest`` (or a waiting callback) opens for this tool call."""
    data = tool_input if isinstance(tool_input, Mapping) else {}
    if tool_name == QUESTION_TOOL:
        raw = data.get("questions")
        asks = (Ask.from_json(a) for a in raw) if isinstance(raw, list) else ()
        return Question(kind="question", questions=tuple(a for a in asks if a is not None))
    if tool_name == PLAN_TOOL:
        plan = data.get("plan")
        return Question(kind="plan", plan=_clip_plan(plan) if isinstance(plan, str) else None)
    return Question(kind="permission")


def kind_of_tool(tool_name: str | None) -> QuestionKind:
    if tool_name == QUESTION_TOOL:
        return "question"
    if tool_name == PLAN_TOOL:
        return "plan"
    return "permission"


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _clip_plan(plan: str) -> str | None:
    plan = plan.strip()
    if not plan:
        return None
    return plan if len(plan) <= PLAN_LIMIT else plan[: PLAN_LIMIT - 1] + "…"


# ------------------------------------------------------------------------------ answering


class AnswerRefused(ValueError):
    """An answer that does not fit the question asked: the message names its options."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What to choose in each question, by label (the canonical form), and the free-text
    "Other" answer with the question it answers."""

    choices: tuple[tuple[str, tuple[str, ...]], ...]
    other: tuple[str, str] | None = None

    def labels_for(self, question: str) -> tuple[str, ...]:
        return next((labels for asked, labels in self.choices if asked == question), ())

    def text_for(self, question: str) -> str | None:
        return self.other[1] if self.other is not None and self.other[0] == question else None


def options_said(question: Question) -> str:
    """``"Which colour…? — Purple / Amber"`` for each question, for a refusal's words."""
    return "; ".join(f"{ask.question} — {' / '.join(ask.labels)}" for ask in question.questions)


def resolve_answer(
    question: Question,
    options: Sequence[str] = (),
    answers: Mapping[str, Sequence[str]] | None = None,
    text: str | None = None,
) -> Answer:
    """Map what the caller said onto the questions asked (pure). ``answers``: question →
    labels; ``options``: a flat list of labels, each placed in the one question that has it
    (a label in no question or in two is refused); ``text``: the "Other" answer of the one
    question left without a label (or of the only question). Every question must be
    answered, a single-select with exactly one label."""
    if question.kind != "question" or not question.questions:
        raise AnswerRefused("there is no question to answer")
    said = options_said(question)
    chosen: dict[str, list[str]] = {ask.question: [] for ask in question.questions}
    for asked, labels in (answers or {}).items():
        ask = question.find(asked)
        if ask is None:
            raise AnswerRefused(f"no question {asked!r} is asked ({said})")
        for label in labels:
            if label not in ask.labels:
                raise AnswerRefused(f"{label!r} is not an option of {ask.question!r} ({said})")
            chosen[ask.question].append(label)
    for label in options:
        holders = [ask for ask in question.questions if label in ask.labels]
        if not holders:
            raise AnswerRefused(f"{label!r} is not an option ({said})")
        if len(holders) > 1:
            raise AnswerRefused(
                f"{label!r} is an option of several questions: name the question ({said})"
            )
        chosen[holders[0].question].append(label)
    other: tuple[str, str] | None = None
    if text is not None:
        text = text.strip()
        if not text:
            raise AnswerRefused("the free-text answer is empty")
        if any(ch in text for ch in "\r\n") or any(ord(ch) < 32 for ch in text):
            raise AnswerRefused("the free-text answer has a line break or control characters")
        empty = [ask for ask in question.questions if not chosen[ask.question]]
        if len(empty) == 1:
            other = (empty[0].question, text)
        elif not empty and len(question.questions) == 1 and question.questions[0].multi_select:
            other = (question.questions[0].question, text)
        else:
            raise AnswerRefused(
                "the free-text answer must answer exactly one question left without a label "
                f"({said})"
            )
    for ask in question.questions:
        labels = chosen[ask.question]
        if len(set(labels)) != len(labels):
            raise AnswerRefused(f"{ask.question!r}: a label is named twice")
        answered = bool(labels) or (other is not None and other[0] == ask.question)
        if not answered:
            raise AnswerRefused(f"{ask.question!r} is not answered ({said})")
        if (
            not ask.multi_select
            and len(labels) + (other is not None and other[0] == ask.question) > 1
        ):
            raise AnswerRefused(f"{ask.question!r} takes one answer ({said})")
    return Answer(
        tuple((ask.question, tuple(chosen[ask.question])) for ask in question.questions), other
    )
