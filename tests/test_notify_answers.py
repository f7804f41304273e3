"""The remote-answer tokens without a CLI: single use, 5 minutes, bound to host, session and
dialog, stored hashed, every attempt logged (the real-CLI cases: real_claude/)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pmux_widget.core.model import Session, State, Tracking
from pmux_widget.notify.answers import TOKEN_TTL_MS, AnswerTokens

T0 = 1_800_000_000_000


def dialog(
    sid: str = "s1",
    summary: str = "rm -rf build",
    state: State = State.NEEDS_INPUT,
    asked: int = T0,
) -> Session:
    return Session(
        session_id=sid,
        state=state,
        current_tool="Bash",
        tool_summary=summary,
        tracking=Tracking(asked_at=asked),
    )


@pytest.fixture
def tokens(tmp_path: Path) -> AnswerTokens:
    store = AnswerTokens(tmp_path / "notify.db")
    yield store  # type: ignore[misc]
    store.close()


def redeem(  # type: ignore[no-untyped-def]
    tokens: AnswerTokens,
    token: str,
    action: str = "approve",
    *,
    now: int = T0,
    session: Session | None = None,
    host: str = "h",
    acted: list[tuple[str, str]] | None = None,
):
    current = dialog() if session is None else session
    typed = acted if acted is not None else []
    return tokens.answer(
        token,
        action,
        host=host,
        device="pixel",
        session_of=lambda sid: current if sid == current.session_id else None,
        act=lambda sid, name, _: typed.append((sid, name)),
        now=now,
    )


def test_one_answer_then_replay(tokens: AnswerTokens) -> None:
    token = tokens.issue("h", dialog(), T0)
    assert len(token) >= 22  # 128 bits, base64url
    acted: list[tuple[str, str]] = []
    assert redeem(tokens, token, acted=acted).status == 202
    assert acted == [("s1", "approve")]
    again = redeem(tokens, token, "deny", acted=acted)
    assert (again.status, again.reason) == (409, "already used") and len(acted) == 1


@pytest.mark.parametrize(
    ("kwargs", "status", "reason"),
    [
        ({"now": T0 + TOKEN_TTL_MS + 1}, 410, "expired"),
        ({"host": "other"}, 409, "another host's dialog"),
        ({"session": dialog(summary="rm -rf /")}, 409, "answered meanwhile"),
        ({"session": dialog(state=State.BUSY)}, 409, "answered meanwhile"),
        ({"session": dialog(sid="s2")}, 409, "answered meanwhile"),
        ({"session": dialog(asked=T0 + 60_000)}, 409, "answered meanwhile"),  # asked again
    ],
)
def test_refusals_type_nothing(
    tokens: AnswerTokens, kwargs: dict, status: int, reason: str
) -> None:  # type: ignore[type-arg]
    token = tokens.issue("h", dialog(), T0)
    acted: list[tuple[str, str]] = []
    result = redeem(tokens, token, acted=acted, **kwargs)
    assert (result.status, result.reason) == (status, reason)
    assert acted == []


def test_bad_action_and_unknown_token(tokens: AnswerTokens) -> None:
    token = tokens.issue("h", dialog(), T0)
    assert redeem(tokens, token, "always-allow").status == 400
    assert redeem(tokens, "not-a-token").status == 404
    assert redeem(tokens, token).status == 202  # the bad attempts did not spend it


def test_a_refused_action_spends_the_token_and_says_why(tokens: AnswerTokens) -> None:
    token = tokens.issue("h", dialog(), T0)

    def refuse(sid: str, name: str, options: tuple[str, ...]) -> None:
        raise RuntimeError("the screen shows no dialog")

    result = tokens.answer(token, "approve", host="h", device="pixel",
                           session_of=lambda sid: dialog(), act=refuse, now=T0)  # fmt: skip
    assert (result.status, result.reason) == (409, "the screen shows no dialog")
    assert [a["outcome"] for a in tokens.history("s1")] == ["409 the screen shows no dialog"]


def test_tokens_are_stored_hashed(tokens: AnswerTokens, tmp_path: Path) -> None:
    token = tokens.issue("h", dialog(), T0)
    raw = sqlite3.connect(tmp_path / "notify.db").execute("SELECT * FROM answer_tokens").fetchall()
    assert raw and token not in repr(raw)
