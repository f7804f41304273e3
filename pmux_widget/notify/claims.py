"""Exactly once, whatever number of hubs run: the notifier's shared store (``notify.db``).

Every hub on the machine (kernels, the server extension, ``serve``) sees the same hook and
makes the same transition; each asks this store before it sends. The decision runs inside one
``BEGIN IMMEDIATE`` transaction, which SQLite serialises across processes: the rules read what
was sent (by any hub) and the browsers' presence, then the sends are claimed, one row per
(transition, destination). A second hub then reads the first one's rows and drops the
transition; a restarted hub finds them too. A sibling of ``state.db`` rather than a table in
it: the hub's store folds its WAL on its own thread, and these short writes come from every
hub's notifier thread.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from pmux_widget.core.notify_rules import (
    SAME_TRANSITION_MS,
    Decision,
    NotifyEvent,
    Presence,
    Sent,
)

__all__ = ["HISTORY_MS", "PRESENCE_MS", "Claim", "NotifyStore"]

#: What the rules need to look back on: the longest cooldown or cap window anyone sets.
HISTORY_MS = 24 * 3600 * 1000
#: A browser's report older than this is ignored (it reports every 30 s while shown).
PRESENCE_MS = 10 * 60 * 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sent (
  key TEXT NOT NULL, dest TEXT NOT NULL, session_id TEXT NOT NULL, state TEXT NOT NULL,
  at INTEGER NOT NULL, host TEXT NOT NULL, sent_at INTEGER NOT NULL, kind TEXT NOT NULL,
  hub TEXT NOT NULL, PRIMARY KEY (key, dest)
);
CREATE INDEX IF NOT EXISTS sent_by_time ON sent (sent_at);
CREATE TABLE IF NOT EXISTS presence (
  device TEXT PRIMARY KEY, sessions TEXT NOT NULL, visible INTEGER NOT NULL,
  focused INTEGER NOT NULL, input_at INTEGER NOT NULL, reported_at INTEGER NOT NULL
);
"""


class Claim:
    """What one hub may deliver: the decision, and the destinations it claimed."""

    __slots__ = ("decision", "dests", "key")

    def __init__(self, decision: Decision, dests: list[str], key: str) -> None:
        self.decision = decision
        self.dests = dests
        self.key = key


def connect(path: Path) -> sqlite3.Connection:
    """A connection for any thread (each use holds the caller's lock), WAL, 0600."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


class NotifyStore:
    """The claims and presence every hub shares. Thread-safe; blocking (never the hub
    thread's: the notifier calls it from its own)."""

    def __init__(self, path: str | os.PathLike[str], hub_id: str = "") -> None:
        self.path = Path(path)
        self.hub_id = hub_id
        self._lock = threading.Lock()
        self._conn = connect(self.path)
        with self._lock:
            self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ the claim

    def decide(
        self,
        event: NotifyEvent,
        dests: Iterable[str],
        rules: Callable[[list[Sent], list[Presence]], Decision],
        now: int,
    ) -> Claim:
        """Run ``rules(sent, presences)`` under the write lock every hub shares; a ``send``
        claims ``dests`` (those no hub claimed yet for this transition), a ``digest`` due
        now claims the digest and folds the transition into it. Commits before returning."""
        dests = list(dests)
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                sent = self._sent(now - HISTORY_MS)
                presences = self._presences(now - PRESENCE_MS)
                decision = rules(sent, presences)
                claimed: list[str] = []
                key = event.key
                if decision.verdict == "send":
                    claimed = self._insert(event, key, dests, now, "send")
                elif decision.verdict == "digest" and decision.at <= now:
                    key = f"digest/{event.host}/{now}"
                    digest = NotifyEvent(event.host, "", "", 0)
                    claimed = self._insert(digest, key, dests, now, "digest")
                    self._insert(event, event.key, ["*"], now, "folded")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return Claim(decision, claimed, key)

    def claim_once(self, key: str, dest: str, now: int) -> bool:
        """Claim a one-off message (a notification's close) for ``dest``: True for the
        first hub only."""
        with self._lock:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO sent VALUES (?, ?, '', '', 0, '', ?, 'other', ?)",
                (key, dest, now, self.hub_id),
            )
            return cur.rowcount == 1

    def was_sent(self, key: str) -> list[str]:
        """The destinations that got transition ``key``."""
        with self._lock:
            rows = self._conn.execute("SELECT dest FROM sent WHERE key = ?", (key,)).fetchall()
        return [r[0] for r in rows]

    def latest_sent(self, event: NotifyEvent) -> tuple[str, list[str]]:
        """The newest notification of this session's transitions into ``event.state`` that
        is ``event``'s own, whichever hub sent it and however it dated it (dated after
        ``event.since``, or near ``event.at``): its key and destinations; ("", []) if none.
        A close is claimed on that key, so every hub closes the same notification."""
        low = event.at - SAME_TRANSITION_MS
        if 0 < event.since < low:
            low = event.since + 1
        with self._lock:
            row = self._conn.execute(
                "SELECT key FROM sent WHERE session_id = ? AND state = ? AND host = ?"
                " AND kind = 'send' AND at >= ? ORDER BY at DESC, rowid DESC LIMIT 1",
                (event.session_id, event.state, event.host, low),
            ).fetchone()
            if row is None:
                return "", []
            dests = self._conn.execute(
                "SELECT dest FROM sent WHERE key = ? AND kind = 'send'", (row[0],)
            ).fetchall()
        return str(row[0]), [str(d[0]) for d in dests]

    def sent_since(self, since: int) -> list[Sent]:
        with self._lock:
            return self._sent(since)

    def deliveries(self) -> list[tuple[str, str, str]]:
        """Every claim as (key, dest, hub), oldest first: the tests' and doctor's view."""
        with self._lock:
            rows = self._conn.execute("SELECT key, dest, hub FROM sent ORDER BY rowid").fetchall()
        return [(str(k), str(d), str(h)) for k, d, h in rows]

    def prune(self, before: int) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM sent WHERE sent_at < ?", (before,))

    def _insert(
        self, event: NotifyEvent, key: str, dests: list[str], now: int, kind: str
    ) -> list[str]:
        claimed = []
        for dest in dests:
            cur = self._conn.execute(
                "INSERT OR IGNORE INTO sent VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, dest, event.session_id, event.state, event.at, event.host, now, kind,
                 self.hub_id),
            )  # fmt: skip
            if cur.rowcount == 1:
                claimed.append(dest)
        return claimed

    def _sent(self, since: int) -> list[Sent]:
        rows = self._conn.execute(
            "SELECT key, session_id, state, at, MIN(sent_at), kind, host FROM sent"
            " WHERE sent_at >= ? AND kind != 'other' GROUP BY key ORDER BY MIN(sent_at)",
            (since,),
        ).fetchall()
        return [Sent(str(k), str(s), str(st), int(a), int(t), str(kd), str(h))
                for k, s, st, a, t, kd, h in rows]  # fmt: skip

    # ------------------------------------------------------------------ presence

    def report_presence(self, presence: Presence, now: int) -> None:
        """A browser says what it shows and whether someone uses it (the panel calls this
        on focus, blur, and every 30 s while visible)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO presence VALUES (?, ?, ?, ?, ?, ?)",
                (presence.device, json.dumps(sorted(presence.sessions)), int(presence.visible),
                 int(presence.focused), presence.input_at, now),
            )  # fmt: skip

    def presences(self, now: int) -> list[Presence]:
        with self._lock:
            return self._presences(now - PRESENCE_MS)

    def _presences(self, since: int) -> list[Presence]:
        rows = self._conn.execute(
            "SELECT device, sessions, visible, focused, input_at FROM presence"
            " WHERE reported_at >= ?",
            (since,),
        ).fetchall()
        out = []
        for device, sessions, visible, focused, input_at in rows:
            try:
                shown = frozenset(str(s) for s in json.loads(sessions))
            except ValueError:
                shown = frozenset()
            out.append(Presence(str(device), shown, bool(visible), bool(focused), int(input_at)))
        return out
