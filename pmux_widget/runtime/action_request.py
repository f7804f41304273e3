"""Actions asked from elsewhere: the body of an action request, as both HTTP routes take it
(the hub's ``POST /api/sessions/<id>/actions`` and the server extension's
``POST pmux/api/actions``) and the answer they give (one parser: the two refuse the same
bodies with the same words); and a phone's answer to a notification (:func:`answer_from`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .actions import ACTIONS, ActionName, ActionResult, SessionsView, act

__all__ = ["ActionRequest", "BadActionBody", "answer_from", "answer_json", "parse_action"]

_SHAPE = (
    '"action": "approve" | "deny" | "interrupt" | "send" | "answer" | "stop" | "remove", '
    '"text"?: "...", "options"?: ["<label>", ...], "mode"?: "..."'
)


class BadActionBody(ValueError):
    """The body is refused (400): the message says what was expected."""


@dataclass(frozen=True, slots=True)
class ActionRequest:
    session_id: str
    action: ActionName
    text: str | None = None
    token: str | None = None
    dialog: str | None = None
    options: tuple[str, ...] | None = None
    mode: str | None = None

    def act(self, view: SessionsView, record: Callable[..., None] | None = None) -> ActionResult:
        """Run it: :func:`act` with every field (both HTTP routes, one call)."""
        return act(
            view,
            self.session_id,
            self.action,
            text=self.text,
            options=self.options,
            mode=self.mode,
            token=self.token,
            dialog=self.dialog,
            record=record,
        )


def parse_action(raw: bytes | None, session_id: str | None = None) -> ActionRequest:
    """``raw``: the JSON body; ``session_id``: the route's, when the path names the session
    (else the body must)."""
    try:
        body = json.loads(raw or b"null")
    except (ValueError, RecursionError):
        raise BadActionBody("body is not valid JSON") from None
    if session_id is None:
        wanted = f'body must be {{{_SHAPE}, "session_id": "..."}}'
        sid = body.get("session_id") if isinstance(body, dict) else None
    else:
        wanted, sid = f"body must be {{{_SHAPE}}}", session_id
    if not (isinstance(body, dict) and isinstance(body.get("action"), str)):
        raise BadActionBody(wanted)
    if not (isinstance(sid, str) and sid):
        raise BadActionBody(wanted)
    # A malformed request is refused before any session is looked at: an unknown action is
    # the caller's mistake (400), whatever state the session it names is in.
    action = next((known for known in ACTIONS if known == body["action"]), None)
    if action is None:
        raise BadActionBody(f"unknown action {body['action']!r} (one of {', '.join(ACTIONS)})")
    fields = {name: body.get(name) for name in ("text", "token", "dialog", "mode")}
    if not all(v is None or isinstance(v, str) for v in fields.values()):
        raise BadActionBody('"text", "token", "dialog" and "mode" must be strings')
    options = body.get("options")
    if options is not None and not (
        isinstance(options, list) and all(isinstance(o, str) for o in options)
    ):
        raise BadActionBody('"options" must be a list of strings (option labels)')
    return ActionRequest(
        sid, action, options=tuple(options) if options is not None else None, **fields
    )


def answer_json(result: ActionResult) -> dict[str, Any]:
    """The 202's body."""
    return {
        "session_id": result.session_id,
        "action": result.action,
        "queued": result.queued,
        "dialog": result.dialog,
    }


def answer_from(
    view: SessionsView, device: str, record: Callable[..., None]
) -> Callable[[str, str, tuple[str, ...]], None]:
    """How a remote answer types (a phone's notification: ``notify.answers`` calls it once its
    token holds, with the option's label for a question): :func:`act` with every check, and
    the history's source names the device (``record(session_id, action, origin=...)``:
    ``action:approve@Pixel 8 (notification)``)."""

    def typing(session_id: str, action: str, options: tuple[str, ...]) -> None:
        def recorded(sid: str, name: ActionName) -> None:
            record(sid, name, origin=f"{device} (notification)")

        act(view, session_id, action, options=list(options) or None, record=recorded)

    return typing
