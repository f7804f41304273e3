"""What a phone may answer from a notification, by the kind of dialog (pure: no I/O).

A permission: Allow once / Deny (never "always allow"). A plan: Approve (the choice that
keeps asking for each edit) / Keep planning. A question: one button per option, only when the
dialog is one single-select question: a button answers it whole. Several questions, a
multi-select or a question without options get no buttons: a tap opens the page at the row.
The browser shows at most ``Notification.maxActions`` buttons (2 on Chromium); the service
worker drops every option button rather than show some of them (``jupyter/sw.js``).

Each button posts the notification's single-use token with its ``action`` and, for an option,
the ``option``'s label: :func:`refusal` says whether that fits the dialog the token is bound to.
"""

from __future__ import annotations

from .question import Question

__all__ = [
    "ANSWER_PREFIX",
    "PERMISSION_BUTTONS",
    "PHONE_ACTIONS",
    "PLAN_BUTTONS",
    "phone_options",
    "push_buttons",
    "refusal",
]

#: what a phone may send: a permission's or a plan's approve / deny, a question's answer
PHONE_ACTIONS = ("approve", "deny", "answer")

PERMISSION_BUTTONS: tuple[dict[str, str], ...] = (
    {"action": "approve", "title": "Allow once"},
    {"action": "deny", "title": "Deny"},
    {"action": "open", "title": "Open"},
)
PLAN_BUTTONS: tuple[dict[str, str], ...] = (
    {"action": "approve", "title": "Approve"},
    {"action": "deny", "title": "Keep planning"},
    {"action": "open", "title": "Open"},
)
#: an option button's ``action`` is this and its label (a notification's actions are told
#: apart by that string; what is posted is the ``option`` label itself, never a position)
ANSWER_PREFIX = "answer:"


def phone_options(question: Question | None) -> tuple[str, ...]:
    """The labels a phone may answer with: those of a dialog's only question, when it is
    single-select; else none."""
    if question is None or question.kind != "question" or len(question.questions) != 1:
        return ()
    ask = question.questions[0]
    return () if ask.multi_select else ask.labels


def push_buttons(question: Question | None, *, words: bool = True) -> tuple[dict[str, str], ...]:
    """The buttons of a dialog's notification (none: a tap opens the page at the row).
    ``words`` False (the ``generic`` or ``redact`` settings): no option labels, which are
    what the question says, so a question gets no buttons."""
    kind = question.kind if question is not None else "permission"
    if kind == "permission":
        return PERMISSION_BUTTONS
    if kind == "plan":
        return PLAN_BUTTONS
    if not words:
        return ()
    return tuple(
        {"action": ANSWER_PREFIX + label, "title": label, "option": label}
        for label in phone_options(question)
    )


def refusal(question: Question | None, action: str, option: str | None) -> str | None:
    """Why ``action`` (with ``option`` for an answer) does not fit the dialog, else None."""
    kind = question.kind if question is not None else "permission"
    if action not in PHONE_ACTIONS:
        return f"a phone answers {', '.join(PHONE_ACTIONS)} only"
    if kind == "question":
        labels = phone_options(question)
        if action != "answer":
            return "a question is answered by one of its options, not approved or denied"
        if not labels:
            return "this question is answered on the page, not from a notification"
        if option not in labels:
            return f"{option!r} is not an option ({' / '.join(labels)})"
        return None
    if action == "answer" or option is not None:
        return f"a {kind} is approved or denied, not answered with an option"
    return None
