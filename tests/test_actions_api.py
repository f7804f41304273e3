"""Actions' HTTP route and CLI, black box on a real hub (the keys themselves: real_claude).

``POST /api/sessions/<id>/actions``: token and loopback Host, 202 / 404 / 409 / 400, never by
GET. ``pmux-widget approve|deny|interrupt|send SESSION``: exit 0 delivered, 2 refused, ids
by unique prefix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pmux_widget.cli.commands import resolve_session
from pmux_widget.runtime.hub import Hub

from .helpers import post_hook, request

SID = "5e551011-aaaa-4bbb-8ccc-000000000001"
OTHER = "5e551011-aaaa-4bbb-8ccc-000000000002"
THIRD = "77777777-aaaa-4bbb-8ccc-000000000003"


@pytest.fixture
def hub(homes):
    hub = Hub().start()
    for sid in (SID, OTHER, THIRD):
        post_hook(hub.port, hub.token, {"session_id": sid, "hook_event_name": "SessionStart",
                                        "source": "startup", "cwd": "/tmp"})  # fmt: skip
    yield hub
    hub.stop()


def _action(hub: Hub, sid: str, body: object, **headers: str) -> tuple[int, dict]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    status, answer, _ = request(
        hub.port,
        "POST",
        f"/api/sessions/{sid}/actions",
        raw,
        {"X-Pmux-Token": hub.token, "Content-Type": "application/json", **headers},
    )
    return status, json.loads(answer) if answer else {}


def test_refused_action_is_409_with_the_reason(hub):
    status, answer = _action(hub, SID, {"action": "approve"})
    assert status == 409
    assert "no permission prompt" in answer["error"]
    status, answer = _action(hub, SID, {"action": "send", "text": "hi"})
    assert status == 409  # idle, but no Claude process the hub knows of: nothing is typed
    assert "not running" in answer["error"] or "process" in answer["error"]


def test_unknown_session_is_404_and_bad_bodies_400(hub):
    assert _action(hub, "nope", {"action": "approve"})[0] == 404
    # An unknown action is a malformed request, refused before the session is looked at:
    # 400 for a session that exists (it has no pane: the lookup would say 409) and for one
    # that does not (404).
    for sid in (SID, "nope"):
        status, answer = _action(hub, sid, {"action": "format-disk"})
        assert status == 400, (sid, answer)
        assert "unknown action 'format-disk'" in answer["error"]
    assert _action(hub, SID, b"{not json")[0] == 400
    assert _action(hub, SID, [1, 2])[0] == 400
    assert _action(hub, SID, {"action": "send", "text": 7})[0] == 400
    assert _action(hub, SID, b"[" * 100_000)[0] == 400


def test_actions_need_the_token_a_loopback_host_and_post(hub):
    url = f"/api/sessions/{SID}/actions"
    body = json.dumps({"action": "interrupt"}).encode()
    assert request(hub.port, "POST", url, body)[0] == 401
    assert request(hub.port, "POST", url, body, {"X-Pmux-Token": "0" * 64})[0] == 403
    assert _action(hub, SID, {"action": "interrupt"}, Host="evil.example")[0] == 403
    assert request(hub.port, "GET", url, headers={"X-Pmux-Token": hub.token})[0] == 405


def test_session_prefixes():
    sessions = [
        {"session_id": SID, "running": True},
        {"session_id": OTHER, "running": False, "ended": True},
        {"session_id": THIRD, "running": True},
    ]
    assert resolve_session(sessions, SID) == SID
    assert resolve_session(sessions, "7777") == THIRD
    assert resolve_session(sessions, "5e55") == SID  # the only live one with that prefix
    with pytest.raises(ValueError, match="no session"):
        resolve_session(sessions, "abc")
    both_live = [dict(s, running=True, ended=False) for s in sessions]
    with pytest.raises(ValueError, match="matches 2 sessions"):
        resolve_session(both_live, "5e55")


def _cli(hub: Hub, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PMUX_WIDGET_HOME=str(hub.home.root))
    return subprocess.run(
        [sys.executable, "-m", "pmux_widget", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_exit_codes(hub):
    refused = _cli(hub, "approve", "7777")
    assert refused.returncode == 2
    assert "no permission prompt" in refused.stderr
    ambiguous = _cli(hub, "deny", "5e551011")
    assert ambiguous.returncode == 2 and "matches 2 sessions" in ambiguous.stderr
    unknown = _cli(hub, "interrupt", "zzz")
    assert unknown.returncode == 2 and "no session" in unknown.stderr
    assert _cli(hub, "send", "7777").returncode == 2  # no text: argparse refuses


ASK = {
    "questions": [
        {
            "question": "Which colour should the badge use?",
            "header": "Colour",
            "multiSelect": False,
            "options": [{"label": "Purple"}, {"label": "Amber"}],
        }
    ]
}


def test_a_question_is_answered_by_label_and_refuses_approve(hub):
    post_hook(hub.port, hub.token, {"session_id": THIRD, "hook_event_name": "PermissionRequest",
                                    "tool_name": "AskUserQuestion", "tool_input": ASK,
                                    "cwd": "/tmp"})  # fmt: skip
    status, answer = _action(hub, THIRD, {"action": "approve"})
    assert status == 409 and "not a permission" in answer["error"]
    assert "Which colour should the badge use? — Purple / Amber" in answer["error"]
    status, answer = _action(hub, THIRD, {"action": "answer", "options": ["Teal"]})
    assert status == 409 and "'Teal' is not an option" in answer["error"]
    status, answer = _action(hub, THIRD, {"action": "answer", "options": "Amber"})
    assert status == 400
    # a right label passes the question's checks; no Claude process: nothing is typed
    status, answer = _action(hub, THIRD, {"action": "answer", "options": ["Amber"]})
    assert status == 409 and "process" in answer["error"]
    cli = _cli(hub, "answer", "7777", "--option", "Teal")
    assert cli.returncode == 2 and "'Teal' is not an option" in cli.stderr
    status, answer = _action(hub, SID, {"action": "answer", "options": ["Amber"]})
    assert status == 409 and "no question to answer" in answer["error"]


def test_session_answer_passes_labels_mappings_and_text():
    from pmux_widget.core import model

    calls = []

    class Handler:
        def act(self, session_id, action, text, **kw):
            calls.append((action, text, kw))

    model.set_session_handler(Handler())
    try:
        session = model.Session.from_record({"session_id": SID})
        session.answer("Amber")
        session.answer("Lint", "Tests")
        session.answer(["Lint", "Tests"])
        session.answer({"Which colour?": "Amber", "Which size?": ["Large"]})
        session.answer(text="Teal please")
        session.approve(mode="auto")
        session.deny("Make it purple")
    finally:
        model.set_session_handler(None)
    assert calls == [
        ("answer", None, {"options": ["Amber"], "answers": None}),
        ("answer", None, {"options": ["Lint", "Tests"], "answers": None}),
        ("answer", None, {"options": ["Lint", "Tests"], "answers": None}),
        (
            "answer",
            None,
            {"options": [], "answers": {"Which colour?": ["Amber"], "Which size?": ["Large"]}},
        ),
        ("answer", "Teal please", {"options": [], "answers": None}),
        ("approve", None, {"mode": "auto"}),
        ("deny", "Make it purple", {}),
    ]
