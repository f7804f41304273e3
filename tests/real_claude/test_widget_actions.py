"""The widget's Approve / Deny on a real Claude Code session: a StatusWidget over the Hub that
tracks the real CLI gets the browser's ``action`` message (with the row's dialog token, as a
click sends it), answers ``action_result``, and the session moves; a click naming a dialog
that is no longer shown is refused with the reason and types nothing.
"""

from __future__ import annotations

from pmux_widget.core.model import State
from pmux_widget.notebook.widget import StatusWidget

from ..helpers import wait_until
from ..test_widget import Recorder
from .test_actions import typed_view
from .tracking import Tracked


def _answers(recorder: Recorder) -> list[dict]:
    with recorder.lock:
        return [m for m in recorder.messages if m["type"] == "action_result"]


def _needs_input(tr: Tracked) -> str:
    """Prompt the CLI into a permission dialog; its session id."""
    sid = tr.tc.session_id()
    assert sid is not None
    tr.tc.type_prompt("run the command")
    wait_until(lambda: tr.hub.fleet[sid].state is State.NEEDS_INPUT, 45, what="needs-input")
    tr.tc.wait_dialog()
    return sid


def test_approve_from_the_widget(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _needs_input(tr)
    widget = StatusWidget(tr.hub)
    recorder = Recorder(widget)
    try:
        shown = widget.snapshot["sessions"][sid]
        assert shown["asks"].startswith("asks to run: ")
        click = {
            "type": "action",
            "session_id": sid,
            "action": "approve",
            "token": shown["dialog_token"],
        }
        widget._on_front_end_msg(widget, click, [])
        (answer,) = wait_until(lambda: _answers(recorder), 30, what="the action's answer")
        assert answer["ok"] is True and answer["message"] == "sent", answer
        wait_until(lambda: tr.hub.fleet[sid].state is State.REVIEW, 45, what="review")
    finally:
        widget.close()


def test_a_click_on_a_dialog_no_longer_shown_is_refused(tracked_claude: Tracked) -> None:
    tr = tracked_claude
    sid = _needs_input(tr)
    widget = StatusWidget(tr.hub)
    recorder = Recorder(widget)
    try:
        before = typed_view(tr.tc.screen())
        stale = {"type": "action", "session_id": sid, "action": "deny", "token": "busy:1:old"}
        widget._on_front_end_msg(widget, stale, [])
        (answer,) = wait_until(lambda: _answers(recorder), 30, what="the refusal")
        assert answer["ok"] is False and "moved on" in answer["message"], answer
        assert tr.hub.fleet[sid].state is State.NEEDS_INPUT
        assert typed_view(tr.tc.screen()) == before  # 2.1.332 animates the rest
    finally:
        widget.close()
