"""Answering a real CLI's permission dialog from a notification's action (issue 22, item 5):
a token redeemed once types "Yes" after every check; replayed, expired, or redeemed after the
dialog was answered in the terminal, it is refused and types nothing."""

from __future__ import annotations

import pytest

from pmux_widget.core.model import State
from pmux_widget.notify.answers import TOKEN_TTL_MS, AnswerTokens
from pmux_widget.runtime.action_request import answer_from
from pmux_widget.runtime.actions import act
from pmux_widget.system.clock import now_ms

from .test_actions import _at_dialog, _markers, _state, typed_view
from .tracking import Tracked


@pytest.fixture
def tokens(tracked_claude: Tracked) -> AnswerTokens:
    store = AnswerTokens(tracked_claude.hub.home.root / "notify.db")
    yield store  # type: ignore[misc]
    store.close()


def _answer(tr: Tracked, tokens: AnswerTokens, token: str, action: str, now: int | None = None):  # type: ignore[no-untyped-def]
    hub = tr.hub
    return tokens.answer(
        token,
        action,
        host=hub.host_name,
        device="phone (test)",
        session_of=hub.fleet.get,
        act=answer_from(hub, "phone (test)", hub.record_action),
        now=now_ms() if now is None else now,
    )


def test_token_answers_once_then_replay_is_refused(
    tracked_claude: Tracked, tokens: AnswerTokens
) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    token = tokens.issue(tr.hub.host_name, tr.hub.fleet[sid], now_ms())
    result = _answer(tr, tokens, token, "approve")
    assert (result.status, result.reason) == (202, "answered"), result
    _state(tr, sid, State.REVIEW)
    assert len(_markers(tr)) == 1, "the approved command ran once"
    replay = _answer(tr, tokens, token, "approve")
    assert (replay.status, replay.reason) == (409, "already used")
    assert len(_markers(tr)) == 1
    outcomes = [(a["action"], a["device"], a["outcome"]) for a in tokens.history(sid)]
    assert outcomes == [
        ("approve", "phone (test)", "202 answered"),
        ("approve", "phone (test)", "409 already used"),
    ]
    # the session's history says the approval came from that device
    sources = [t.source for t in tr.hub.history(sid)]
    assert "action:approve@phone (test) (notification)" in sources, sources


def test_expired_token_types_nothing(tracked_claude: Tracked, tokens: AnswerTokens) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    issued = now_ms()
    token = tokens.issue(tr.hub.host_name, tr.hub.fleet[sid], issued)
    before = typed_view(tr.tc.screen())
    result = _answer(tr, tokens, token, "approve", now=issued + TOKEN_TTL_MS + 1)
    assert (result.status, result.reason) == (410, "expired")
    assert typed_view(tr.tc.screen()) == before
    assert tr.hub.fleet[sid].state is State.NEEDS_INPUT and _markers(tr) == []
    act(tr.hub, sid, "deny")
    _state(tr, sid, State.IDLE)


def test_answered_in_the_terminal_first_is_refused(
    tracked_claude: Tracked, tokens: AnswerTokens
) -> None:
    tr = tracked_claude
    sid = _at_dialog(tr)
    token = tokens.issue(tr.hub.host_name, tr.hub.fleet[sid], now_ms())
    tr.tc.deny()  # the user answers at the terminal
    _state(tr, sid, State.IDLE)
    result = _answer(tr, tokens, token, "approve")
    assert (result.status, result.reason) == (409, "answered meanwhile")
    assert _markers(tr) == [], "nothing ran"


def test_a_real_dialog_and_its_review_notify_once_each(
    tracked_claude: Tracked, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pmux_widget.notify.config import Channel, edit_config
    from pmux_widget.notify.notifier import Notifier

    from ..helpers import wait_until
    from ..notify_servers import Recorder

    tr = tracked_claude
    monkeypatch.setenv("PMUX_WIDGET_NOTIFY_DELAY", "0")
    http = Recorder().start()
    notifier = None
    try:
        with edit_config(tr.hub.home) as box:
            channel = Channel(f"json://127.0.0.1:{http.port}/hook")
            box[0] = type(box[0])((channel,), box[0].settings.updated(cooldown_s=0))
        notifier = Notifier(tr.hub.home, host=tr.hub.host_name, hub=tr.hub).start_sync()
        sid = _at_dialog(tr)
        wait_until(lambda: http.count() == 1, 20, what="the dialog's notification")
        asked = http.requests[0].json()
        project = tr.hub.fleet[sid].project
        assert asked["title"] == f"Needs you · {project}"
        assert asked["message"].startswith("asks to run: "), asked
        act(tr.hub, sid, "approve", record=tr.hub.record_action)
        _state(tr, sid, State.REVIEW)
        wait_until(lambda: http.count() == 2, 20, what="the review's notification")
        assert notifier.wait_idle(10)
        assert http.requests[1].json()["title"] == f"Done · {project}"
        assert http.count() == 2
    finally:
        if notifier is not None:
            notifier.stop_sync()
        http.stop()
