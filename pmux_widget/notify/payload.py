"""What a notification says: the contract's payload ``{"title", "body", "session_id",
"state", "host", "url", "tag"}``, in the widget's own words (``core.wording``).

Title "Needs you · project" or "Done · project" (and "· host" in a fleet); the body says what
the dialog asks (a question with its options, "plan ready: …": ``core.wording.asks``) or how the
turn ended, cut at about 120 characters. ``generic`` sends no
command text and no answer; ``redact`` sends what the fleet's ``--redact`` publishes: the tool's
name, never its input, the prompt or the answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pmux_widget.core.model import Session, State
from pmux_widget.core.wording import answer, asks, need_you_sentence

__all__ = ["BODY_LIMIT", "close_payload", "cut", "digest_payload", "session_payload"]

BODY_LIMIT = 120


def cut(text: str, limit: int = BODY_LIMIT) -> str:
    """``text`` on one line, at most ``limit`` characters (an ellipsis says it was cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _project(session: Session) -> str:
    return session.project or session.name


def _body(session: Session, *, generic: bool, redact: bool) -> str:
    if session.state is State.NEEDS_INPUT:
        if generic:
            return "A dialog waits for your answer"
        if redact:
            # a question's or a plan's words are what it asks: the kind only, never the tool
            kind = session.question.kind if session.question is not None else "permission"
            if kind != "permission":
                return "asks a question" if kind == "question" else "plan ready"
            tool = session.current_tool
            return f"asks to use {tool}" if tool else "waits for your answer"
        return asks(session)
    if session.error:
        if generic or redact:
            return f"stopped: {session.error}"
        return f"stopped: {session.error}: {session.error_detail or ''}".rstrip(": ")
    if generic or redact:
        return "Finished its turn"
    return answer(session) or "Finished its turn: ready for review"


def session_payload(
    session: Session,
    *,
    host: str,
    fleet: bool = False,
    url: str = "",
    generic: bool = False,
    redact: bool = False,
) -> dict[str, Any]:
    """The payload for a session that entered needs-input or review."""
    head = "Needs you" if session.state is State.NEEDS_INPUT else "Done"
    title = f"{head} · {_project(session)}" + (f" · {host}" if fleet and host else "")
    return {
        "title": title,
        "body": cut(_body(session, generic=generic, redact=redact)),
        "session_id": session.session_id,
        "state": session.state.value,
        "host": host,
        "url": url,
        "tag": session.session_id,
    }


def digest_payload(
    waiting: Iterable[Session], *, host: str, url: str = "", generic: bool = False
) -> dict[str, Any]:
    """One message instead of many: "3 sessions need you" and their projects."""
    sessions = list(waiting)
    n = len(sessions)
    title = need_you_sentence(n)
    names = sorted({_project(s) for s in sessions})
    body = "" if generic else cut(", ".join(names))
    return {
        "title": title,
        "body": body,
        "session_id": "",
        "state": "digest",
        "host": host,
        "url": url,
        "tag": "pmux-digest",
    }


def close_payload(session_id: str, host: str) -> dict[str, Any]:
    """Tells the service worker to close the session's notification (the dialog was answered):
    ``state`` "answered", no title. The contract's keys only, like every message."""
    return {
        "title": "",
        "body": "",
        "session_id": session_id,
        "state": "answered",
        "host": host,
        "url": "",
        "tag": session_id,
    }
