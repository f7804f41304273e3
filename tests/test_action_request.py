"""One parser for both action routes' bodies (``runtime.action_request``): the same bodies
are refused with the same words by the hub's route and the server extension's."""

from __future__ import annotations

import pytest

from pmux_widget.runtime.action_request import ActionRequest, BadActionBody, parse_action


def test_a_body_names_the_session_unless_the_path_does() -> None:
    raw = b'{"action": "send", "session_id": "s-1", "text": "go on"}'
    assert parse_action(raw) == ActionRequest("s-1", "send", text="go on")
    assert parse_action(b'{"action": "approve", "token": "t"}', "s-2") == ActionRequest(
        "s-2", "approve", token="t"
    )
    raw = b'{"action": "answer", "session_id": "s", "options": ["Lint", "Tests"], "text": "x"}'
    assert parse_action(raw) == ActionRequest("s", "answer", text="x", options=("Lint", "Tests"))
    raw = b'{"action": "approve", "session_id": "s", "mode": "auto"}'
    assert parse_action(raw) == ActionRequest("s", "approve", mode="auto")


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"", "body must be"),
        (b"{", "not valid JSON"),
        (b"[1]", "body must be"),
        (b'{"action": 1, "session_id": "s"}', "body must be"),
        (b'{"action": "approve"}', '"session_id"'),
        (b'{"action": "approve", "session_id": ""}', '"session_id"'),
        (b'{"action": "send", "session_id": "s", "text": 3}', "must be strings"),
        (b'{"action": "send", "session_id": "s", "dialog": {}}', "must be strings"),
        (b'{"action": "answer", "session_id": "s", "options": "Amber"}', "list of strings"),
        (b'{"action": "answer", "session_id": "s", "options": [1]}', "list of strings"),
        (b'{"action": "approve", "session_id": "s", "mode": 2}', "must be strings"),
        (b'{"action": "format-disk", "session_id": "s"}', "unknown action 'format-disk'"),
        (b'{"action": "Approve", "session_id": "s"}', "unknown action 'Approve'"),
    ],
)
def test_bad_bodies_say_what_was_expected(raw: bytes, says: str) -> None:
    with pytest.raises(BadActionBody, match=says):
        parse_action(raw)
