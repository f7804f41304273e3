"""Answering a dialog from a notification (opt-in: ``actions`` in the settings).

A Web Push notification for a dialog carries its buttons (``core.remote_answer``: Allow once /
Deny / Open, a plan's Approve / Keep planning, a question's options) and one token: 128
random bits, kept only as a SHA-256 hash, bound to the host, the session and that exact
dialog (its tool and what it asks: a question's text and options, a plan's text), valid 5
minutes, good for one answer (an option's button posts its label: one not in that very
question is refused). Redeeming it
checks all of that, marks it used in the same statement (so two taps, or two servers, cannot
both win), re-reads the session, and only then asks the caller to act, which re-checks the
screen before typing (``runtime.actions.act``). Whatever fails does nothing: the dialog
stays for the terminal. Never "always allow": only ``approve`` (Yes, once) and ``deny``.
Every attempt, accepted or refused, is kept with its device (:meth:`AnswerTokens.history`).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.core.model import Session, State
from pmux_widget.core.notify_rules import SAME_TRANSITION_MS
from pmux_widget.core.remote_answer import PHONE_ACTIONS, refusal

from .claims import connect

__all__ = ["ACTIONS", "TOKEN_TTL_MS", "AnswerResult", "AnswerTokens", "dialog_identity"]

TOKEN_TTL_MS = 5 * 60 * 1000
#: what a phone may answer: one "Yes" (never "Yes, and don't ask again"), "No", or an option
ACTIONS = PHONE_ACTIONS

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_tokens (
  hash TEXT PRIMARY KEY, host TEXT NOT NULL, session_id TEXT NOT NULL, dialog TEXT NOT NULL,
  asked_at INTEGER NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE TABLE IF NOT EXISTS remote_answers (
  at INTEGER NOT NULL, host TEXT NOT NULL, session_id TEXT NOT NULL, action TEXT NOT NULL,
  device TEXT NOT NULL, outcome TEXT NOT NULL
);
"""


def dialog_identity(session: Session) -> str:
    """The dialog a session shows, as a hash of its tool and what it asks (with when it was
    asked, kept beside it: the same command asked again later is another dialog). A question
    or a plan is that question (its text and options) or that plan's text."""
    text = f"{session.current_tool or ''}\0{session.tool_summary or session.waiting_for or ''}"
    asked = session.question
    if asked is not None and asked.kind != "permission":
        text += "\0" + json.dumps(asked.to_json(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class AnswerResult:
    """``status``: the HTTP code the route answers (202 done; 400 bad action; 404 unknown;
    409 used, answered meanwhile or refused by the screen check; 410 expired)."""

    status: int
    reason: str
    session_id: str = ""

    @property
    def ok(self) -> bool:
        return self.status == 202


class AnswerTokens:
    """The tokens and the log of remote answers, in ``notify.db`` (every hub's)."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._conn = connect(Path(path))
        with self._lock:
            self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def issue(self, host: str, session: Session, now: int) -> str:
        """A new token for the dialog ``session`` shows (the caller puts it in the push)."""
        token = secrets.token_urlsafe(16)  # 128 bits
        with self._lock:
            self._conn.execute(
                "DELETE FROM answer_tokens WHERE expires_at < ?", (now - TOKEN_TTL_MS,)
            )
            self._conn.execute(
                "INSERT INTO answer_tokens VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                (_hash(token), host, session.session_id, dialog_identity(session),
                 session.tracking.asked_at, now, now + TOKEN_TTL_MS),
            )  # fmt: skip
        return token

    def answer(
        self,
        token: str,
        action: str,
        *,
        host: str,
        device: str,
        session_of: Callable[[str], Session | None],
        act: Callable[[str, str, tuple[str, ...]], None],
        now: int,
        option: str | None = None,
    ) -> AnswerResult:
        """Redeem ``token`` for ``action`` (``option``: the label an option's button answers);
        ``act(session_id, action, options)`` types the answer (it raises when its own checks
        refuse). Nothing is typed unless every check passes. An action or a label that does
        not fit the dialog (400) does not spend the token."""
        if action not in ACTIONS:
            return AnswerResult(400, f"a phone answers {' or '.join(ACTIONS)} only")
        said = action if option is None else f"{action}: {option}"
        with self._lock:
            row = self._conn.execute(
                "SELECT host, session_id, dialog, asked_at, expires_at, used_at FROM answer_tokens"
                " WHERE hash = ?",
                (_hash(token),),
            ).fetchone()
        if row is None:
            return AnswerResult(404, "unknown token")
        t_host, sid, dialog, asked_at, expires_at, used_at = row
        if used_at is not None:
            return self._log(AnswerResult(409, "already used", sid), host, said, device, now)
        if now > expires_at:
            return self._log(AnswerResult(410, "expired", sid), host, said, device, now)
        if t_host != host:
            return self._log(AnswerResult(409, "another host's dialog", sid), host, said,
                             device, now)  # fmt: skip
        session = session_of(sid)
        if (
            session is None
            or session.ended
            or session.state is not State.NEEDS_INPUT
            or dialog_identity(session) != dialog
            or abs(session.tracking.asked_at - asked_at) > SAME_TRANSITION_MS
        ):
            return self._log(AnswerResult(409, "answered meanwhile", sid), host, said, device,
                             now)  # fmt: skip
        wrong = refusal(session.question, action, option)
        if wrong is not None:
            return self._log(AnswerResult(400, wrong, sid), host, said, device, now)
        with self._lock:
            cur = self._conn.execute(
                "UPDATE answer_tokens SET used_at = ? WHERE hash = ? AND used_at IS NULL",
                (now, _hash(token)),
            )
        if cur.rowcount != 1:
            return self._log(AnswerResult(409, "already used", sid), host, said, device, now)
        try:
            act(sid, action, () if option is None else (option,))
        except Exception as exc:
            reason = str(getattr(exc, "reason", "") or exc) or "refused"
            return self._log(AnswerResult(409, reason, sid), host, said, device, now)
        return self._log(AnswerResult(202, "answered", sid), host, said, device, now)

    def _log(
        self, result: AnswerResult, host: str, action: str, device: str, now: int
    ) -> AnswerResult:
        with self._lock:
            self._conn.execute(
                "INSERT INTO remote_answers VALUES (?, ?, ?, ?, ?, ?)",
                (now, host, result.session_id, action, device, f"{result.status} {result.reason}"),
            )
        return result

    def history(self, session_id: str | None = None) -> list[dict[str, object]]:
        """Every remote answer tried, oldest first: at, host, session, action, device, outcome."""
        query = "SELECT at, host, session_id, action, device, outcome FROM remote_answers"
        args: tuple[str, ...] = ()
        if session_id is not None:
            query += " WHERE session_id = ?"
            args = (session_id,)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY rowid", args).fetchall()
        keys = ("at", "host", "session_id", "action", "device", "outcome")
        return [dict(zip(keys, row, strict=True)) for row in rows]
