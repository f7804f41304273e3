"""A question answered from its notification, through the real server extension route
(issue 34 part 4): a real ``jupyter server`` (``tests/jupyter_ext.py``) with the installed hooks,
the demo's ui-kit session (a simulated Claude Code in a private tmux pane, drawing
AskUserQuestion's dialog as the CLI does) and a loopback push service that decrypts each
message with the subscribed browser's key (``tests/notify_servers.py``: the one stand-in, as
no real push service is reachable offline).

The push says the question and its options and carries one button per option; the service
worker posts the token with the option's label to ``pmux/api/push/answer``; the keys reach the
pane once (the transcript's tool result names the label, the history says
``action:answer@Pixel 8 (notification)`` once); a label not in the question, a replay and
approve on a question are refused and type nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import requests

from pmux_widget.demo.scripted_fleet import PERSONAS

from .helpers import wait_until
from .notify_servers import PushService
from .test_push_routes import push, start, subscribe  # noqa: F401

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

SAID = "asks: Which colour should the badge use? — Purple / Amber"


def tool_results(transcript: Path) -> list[dict[str, Any]]:
    """AskUserQuestion's results in the session's transcript."""
    asked: set[str] = set()
    found: list[dict[str, Any]] = []
    for line in transcript.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        for block in (record.get("message") or {}).get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "AskUserQuestion":
                asked.add(str(block["id"]))
            if block.get("type") == "tool_result" and block.get("tool_use_id") in asked:
                found.append(block)
    return found


@pytest.mark.timeout(240)
def test_an_option_answers_the_question_once_from_the_notification(
    tmp_path: Path,
    push: PushService,  # noqa: F811
) -> None:
    from pmux_widget import hooks as pmux_hooks
    from pmux_widget.demo.driver import ScriptedFleet
    from pmux_widget.runtime.store import Store

    server = start(tmp_path, actions=True)
    pmux_hooks.install(server.claude / "settings.json", server.pmux)
    (server.claude / "projects").mkdir(exist_ok=True)
    phone = push.browser("phone")
    subscribe(server, phone, "Pixel 8")
    fleet = ScriptedFleet(server.claude, server.pmux.root, tmp_path / "projects", seed=11)
    fleet.personas = tuple(p for p in PERSONAS if p.project == "ui-kit")

    def post(body: dict[str, Any]) -> requests.Response:
        return server.post("pmux/api/push/answer", {**body, "endpoint": phone.endpoint})

    def session(sid: str) -> dict[str, Any] | None:
        rows = server.get("pmux/api/sessions").json()["sessions"]
        return next((s for s in rows if s["session_id"] == sid), None)

    try:
        fleet.start()
        assert fleet.panes is not None, fleet.note
        pushed = wait_until(
            lambda: next((d.payload for d in push.delivered if d.payload.get("token")), None),
            60,
            what=lambda: f"the question's push: {push.delivered}",
        )
        assert pushed["body"] == SAID and pushed["title"] == "Needs you · ui-kit"
        assert [(a["title"], a["option"]) for a in pushed["actions"]] == [
            ("Purple", "Purple"),
            ("Amber", "Amber"),
        ]
        sid, token = pushed["session_id"], pushed["token"]
        row = session(sid)
        assert row is not None and row["transcript_path"]
        transcript = Path(row["transcript_path"])

        # refused, and nothing typed (the token stays good): a label the question lacks,
        # approve on a question, a body without a string option
        wrong = post({"token": token, "action": "answer", "option": "Teal"})
        assert wrong.status_code == 400 and "Purple / Amber" in wrong.json()["reason"]
        assert post({"token": token, "action": "approve"}).status_code == 400
        assert post({"token": token, "action": "answer", "option": 1}).status_code == 400

        answered = post({"token": token, "action": "answer", "option": "Amber"})
        assert answered.status_code == 202, answered.text
        results = wait_until(lambda: tool_results(transcript), 20, what="the answer's keys")
        assert len(results) == 1 and '"Amber"' in str(results[0]["content"]), results
        by_phone = "action:answer@Pixel 8 (notification)"
        wait_until(
            lambda: (session(sid) or {}).get("state") == "review",
            30,
            what=lambda: f"the turn never finished: {session(sid)}",
        )
        assert "in Amber" in ((session(sid) or {}).get("last_assistant") or "")

        replay = post({"token": token, "action": "answer", "option": "Purple"})
        assert replay.status_code == 409 and replay.json()["reason"] == "already used"
        store = Store(server.pmux.db_path, readonly=True)
        try:
            sources = [t.source for t in store.history(sid)]
        finally:
            store.close()
        assert sources.count(by_phone) == 1, sources
        assert len(tool_results(transcript)) == 1, "typed once"
        outcomes = [(a["device"], a["action"], a["outcome"])
                    for a in server.get("pmux/api/notify").json()["answers"]]  # fmt: skip
        assert ("Pixel 8", "answer: Amber", "202 answered") in outcomes
        assert ("Pixel 8", "answer: Purple", "409 already used") in outcomes
    finally:
        fleet.stop()
        server.stop()
