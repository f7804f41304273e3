"""The SQLite store at ``$PMUX_WIDGET_HOME/state.db``: sessions, their history, tail cursors.

What the tables hold and how they are read, written and pruned; the file itself (WAL, commits
before a hook is answered, checkpoints, a lock another process holds, a corrupt or stuck file
moved aside) is :mod:`.store_file`'s.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Change, Session, State, Transition
from pmux_widget.core.timeline import ended_at

from .store_file import StoreFile, set_aside

__all__ = ["DEFAULT_RETAIN_DAYS", "Store", "set_aside"]

log = logging.getLogger(__name__)

#: Ended sessions are kept this long after their last activity (``--retain-days``).
DEFAULT_RETAIN_DAYS = 30.0
#: How often a writer prunes while open (it also prunes when it opens).
PRUNE_SECONDS = 3600.0
_DAY_MS = 86_400_000

# The history, once and small. A change is keyed by (session, when, into what, why): two hubs
# that record the same change write one row. (The key used to include from_state, which is the
# recording hub's view and NULL for a session's first change, and SQLite's UNIQUE treats NULLs
# as distinct: two hubs stored a session's first transition twice.) WITHOUT ROWID: the key is
# the table, stored once (200 sessions x 30 days: ~19 MB, against ~53 MB with a rowid table
# and its two indexes); it also serves (session_id, at) range reads. ``seq`` orders changes of
# the same millisecond as they were recorded.
_TRANSITIONS = """
CREATE TABLE IF NOT EXISTS transitions (
    session_id TEXT NOT NULL,
    at         INTEGER NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    source     TEXT NOT NULL,
    seq        INTEGER,
    PRIMARY KEY (session_id, at, to_state, source)
) WITHOUT ROWID;
"""

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    record     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
"""
    + _TRANSITIONS
    + """
CREATE TABLE IF NOT EXISTS cursors (
    path       TEXT PRIMARY KEY,
    session_id TEXT,
    cursor     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
"""
)


class Store(StoreFile):
    """Persistence for one hub (or a reader). Thread-safe: one connection behind a lock."""

    def __init__(
        self,
        path: str | Path,
        *,
        readonly: bool = False,
        retain_days: float | None = DEFAULT_RETAIN_DAYS,
    ) -> None:
        # (set first: the checkpoint thread the file starts prunes with them)
        self.retain_days = retain_days
        self._seq = 0
        self._pruned_at = 0
        super().__init__(path, readonly=readonly)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(transitions)")}
        # a reader of a database no writer of this version has opened yet: the old tie-break
        self._order = "seq" if "seq" in columns or not columns else "id"
        if not readonly:
            self.prune()

    def _prepare(self, db: sqlite3.Connection) -> None:
        db.executescript(_SCHEMA)
        db.commit()
        self._migrate_history(db)

    def _upkeep(self) -> None:
        self._prune_when_due()

    # ----------------------------------------------------------------------- sessions

    def load_sessions(self) -> list[Session]:
        """Every persisted session; a corrupt row is skipped, never fatal."""
        with self._lock:
            rows = self._db.execute("SELECT record FROM sessions").fetchall()
        sessions = []
        for (record,) in rows:
            try:
                sessions.append(Session.from_record(json.loads(record)))
            except (ValueError, TypeError, KeyError, RecursionError):
                continue
        return sessions

    def apply(self, changes: Iterable[Change], now: int) -> None:
        """Persist the sessions of ``changes`` and their state transitions, in one commit."""
        session_rows = []
        transition_rows = []
        for change in changes:
            after = change.after
            session_rows.append((after.session_id, json.dumps(after.to_record()), now))
            transition = change.transition()
            if transition is not None:
                transition_rows.append((*_transition_row(transition), self._next_seq()))
        if not session_rows:
            return

        def write(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT INTO sessions (session_id, record, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET record=excluded.record, "
                "updated_at=excluded.updated_at",
                session_rows,
            )
            db.executemany(
                "INSERT OR IGNORE INTO transitions "
                "(session_id, at, from_state, to_state, source, seq) VALUES (?, ?, ?, ?, ?, ?)",
                transition_rows,
            )

        self._write(write)

    def forget(self, session_ids: Iterable[str]) -> None:
        """Drop sessions (and their history and cursors) entirely."""
        ids = [(sid,) for sid in session_ids]

        def write(db: sqlite3.Connection) -> None:
            db.executemany("DELETE FROM sessions WHERE session_id = ?", ids)
            db.executemany("DELETE FROM transitions WHERE session_id = ?", ids)
            db.executemany("DELETE FROM cursors WHERE session_id = ?", ids)

        self._write(write)

    # ------------------------------------------------------------------------ history

    def history(self, session_id: str | None = None) -> list[Transition]:
        """State transitions, oldest first (for one session, or all)."""
        query = "SELECT session_id, at, from_state, to_state, source FROM transitions"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            query += " WHERE session_id = ?"
            params = (session_id,)
        with self._lock:
            rows = self._db.execute(query + f" ORDER BY at, {self._order}", params).fetchall()
        return [
            Transition(
                session_id=sid,
                at=at,
                from_state=State(from_state) if from_state else None,
                to_state=State(to_state),
                source=source,
            )
            for sid, at, from_state, to_state, source in rows
        ]

    # ------------------------------------------- history: stored once, read fast, pruned

    def _next_seq(self) -> int:
        """Recording order across processes (wall-clock ns), strictly increasing in this one."""
        self._seq = max(self._seq + 1, time.time_ns())
        return self._seq

    def _migrate_history(self, db: sqlite3.Connection) -> None:
        """Rebuild a transitions table of the old layout (rowid, a NULL-blind UNIQUE, one more
        index) into the keyed one, keeping the first-recorded copy of each duplicate."""
        with self._lock:
            columns = {row[1] for row in db.execute("PRAGMA table_info(transitions)")}
            if "seq" in columns:
                return
            try:
                db.execute("BEGIN IMMEDIATE")
                columns = {row[1] for row in db.execute("PRAGMA table_info(transitions)")}
                if "seq" not in columns:  # another hub may have migrated in between
                    db.execute("ALTER TABLE transitions RENAME TO transitions_old")
                    db.execute(_TRANSITIONS)
                    db.execute(
                        "INSERT OR IGNORE INTO transitions "
                        "(session_id, at, from_state, to_state, source, seq) "
                        "SELECT session_id, at, from_state, to_state, source, id "
                        "FROM transitions_old ORDER BY id"
                    )
                    db.execute("DROP TABLE transitions_old")  # and its index
                db.commit()
            except BaseException:
                db.rollback()
                raise

    def transitions(
        self, session_id: str | None = None, since_ms: int | None = None
    ) -> list[Transition]:
        """Transitions session by session, each oldest first (what timelines are built from).

        With ``since_ms``: those from each session's last one at or before it (the state the
        session was in at ``since_ms``) on; sessions that began later, all of theirs."""
        rows = self._read_transitions(
            "t.session_id, t.at, t.from_state, t.to_state, t.source", session_id, since_ms
        )
        states = {state.value: state for state in State}
        return [
            Transition(sid, at, states[before] if before else None, states[after], source)
            for sid, at, before, after, source in rows
        ]

    def transition_rows(
        self, session_id: str | None = None, since_ms: int | None = None
    ) -> list[tuple[str, int, str, str]]:
        """:meth:`transitions` as plain (session_id, at, to_state, source) tuples, same rows and
        order: what ``timeline()`` reads (a month of history is 240,000 rows, and building a
        Transition per row cost more than the query)."""
        return self._read_transitions(
            "t.session_id, t.at, t.to_state, t.source", session_id, since_ms
        )

    def _read_transitions(
        self, columns: str, session_id: str | None, since_ms: int | None
    ) -> list[Any]:
        params: list[Any] = []
        if since_ms is None:
            query = f"SELECT {columns} FROM transitions t"
        else:
            # Per session, the newest `at` up to the window's start (one key seek each), then a
            # key range from there: no scan of the history before the window.
            query = (
                "WITH starts AS (SELECT s.session_id, coalesce((SELECT max(b.at) "
                "FROM transitions b WHERE b.session_id = s.session_id AND b.at <= ?), ?) AS at "
                "FROM (SELECT DISTINCT session_id FROM transitions) s) "
                f"SELECT {columns} FROM starts JOIN transitions t "
                "ON t.session_id = starts.session_id AND t.at >= starts.at"
            )
            params += [since_ms, since_ms]
        if session_id is not None:
            query += " WHERE t.session_id = ?"
            params.append(session_id)
        query += f" ORDER BY t.session_id, t.at, t.{self._order}"
        with self._read_lock:
            return self._reader().execute(query, params).fetchall()

    def prune(self, now_ms: int | None = None) -> list[str]:
        """Forget ended sessions whose last activity is older than the retention: their record,
        history and cursors; and cursors older than it that belong to no recorded session.
        Returns the pruned ids. Live sessions are never pruned, whatever their age."""
        if self.retain_days is None:
            return []
        now = now_ms if now_ms is not None else time.time_ns() // 1_000_000
        cutoff = now - int(self.retain_days * _DAY_MS)
        with self._lock:
            rows = self._db.execute("SELECT session_id, record FROM sessions").fetchall()
        candidates = [sid for sid, record in rows if _ended_before(record, cutoff)]
        pruned: list[str] = []
        with self._lock:
            try:
                # Re-checked in one write transaction: a hub reviving a session (a --resume)
                # since the read above keeps it.
                self._db.execute("BEGIN IMMEDIATE")
                for sid in candidates:
                    row = self._db.execute(
                        "SELECT record, (SELECT max(at) FROM transitions WHERE session_id = ?) "
                        "FROM sessions WHERE session_id = ?",
                        (sid, sid),
                    ).fetchone()
                    if row is None or not _ended_before(row[0], cutoff) or (row[1] or 0) >= cutoff:
                        continue
                    for table in ("sessions", "transitions", "cursors"):
                        self._db.execute(f"DELETE FROM {table} WHERE session_id = ?", (sid,))
                    pruned.append(sid)
                self._db.execute(
                    "DELETE FROM cursors WHERE updated_at < ? AND (session_id IS NULL OR "
                    "session_id NOT IN (SELECT session_id FROM sessions))",
                    (cutoff,),
                )
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise
        self._pruned_at = now
        return pruned

    def _prune_when_due(self, every: float = PRUNE_SECONDS) -> None:
        """From the checkpoint thread: prune at most once per ``every`` seconds, off the hub
        thread (a prune must never delay a hook's answer)."""
        now = time.time_ns() // 1_000_000
        if now - self._pruned_at < every * 1000:
            return
        try:
            self.prune(now)
        except Exception:
            log.exception("pruning the history failed")
            self._pruned_at = now  # busy or broken: again in an hour, not every 2 s

    # ------------------------------------------------------------------------ cursors

    def load_cursor(self, path: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT cursor FROM cursors WHERE path = ?", (path,)).fetchone()
        if row is None:
            return None
        try:
            cursor = json.loads(row[0])
        except ValueError:
            return None
        return cursor if isinstance(cursor, dict) else None

    def save_cursor(
        self, path: str, session_id: str | None, cursor: dict[str, Any], now: int
    ) -> None:
        row = (path, session_id, json.dumps(cursor), now)
        self._write(
            lambda db: db.execute(
                "INSERT INTO cursors (path, session_id, cursor, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET session_id=excluded.session_id, "
                "cursor=excluded.cursor, updated_at=excluded.updated_at",
                row,
            )
        )


def _ended_before(record: str, cutoff: int) -> bool:
    """The session in ``record`` ended, and before ``cutoff`` (unreadable: False)."""
    try:
        end = ended_at(Session.from_record(json.loads(record)))
    except (ValueError, TypeError, KeyError):
        return False
    return end is not None and end < cutoff


def _transition_row(t: Transition) -> tuple[str, int, str | None, str, str]:
    return (
        t.session_id,
        t.at,
        t.from_state.value if t.from_state else None,
        t.to_state.value,
        t.source,
    )
