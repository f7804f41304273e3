"""The SQLite store at ``$PMUX_WIDGET_HOME/state.db``: sessions, their history, tail cursors.

WAL mode, so several hubs (several kernels) and ``pmux-widget status`` can share it: readers
never block the writer. Each change is committed before the hub answers the hook that caused
it, so a ``kill -9`` loses nothing that was acknowledged; SQLite's transactions keep the file
consistent whenever the process dies. ``synchronous=NORMAL``: durable across a process crash,
which is what a monitor needs, without an fsync per hook.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Change, Session, State, Transition

__all__ = ["Store"]

#: How often the WAL is checkpointed (on a thread of its own).
CHECKPOINT_SECONDS = 2.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    record     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS transitions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    at         INTEGER NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    source     TEXT NOT NULL,
    UNIQUE (session_id, at, from_state, to_state, source)
);
CREATE INDEX IF NOT EXISTS transitions_by_session ON transitions (session_id, at);
CREATE TABLE IF NOT EXISTS cursors (
    path       TEXT PRIMARY KEY,
    session_id TEXT,
    cursor     TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
"""


class Store:
    """Persistence for one hub (or a reader). Thread-safe: one connection behind a lock."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._checkpointer: threading.Thread | None = None  # writers only
        if readonly:
            uri = f"file:{self.path}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=5)
        else:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            # Checkpoints (the only fsyncs in WAL mode) stall the committing thread for
            # milliseconds: they run on a thread of their own instead (see _checkpoints).
            self._db.execute("PRAGMA wal_autocheckpoint=0")
            self._db.executescript(_SCHEMA)
            self._db.commit()
            self.path.chmod(0o600)
            self._checkpointer = threading.Thread(
                target=self._checkpoints, name="pmux-store-checkpoint", daemon=True
            )
            self._checkpointer.start()
        self._db.execute("PRAGMA busy_timeout=5000")

    def close(self) -> None:
        self._closing.set()
        if self._checkpointer is not None:
            self._checkpointer.join(5)
        with self._lock:
            self._db.close()

    def _checkpoints(self, every: float = CHECKPOINT_SECONDS) -> None:
        """Fold the WAL back into the database now and then, off the hub thread (PASSIVE:
        never waits for writers; its own connection, so it holds no lock of ours)."""
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
        try:
            while not self._closing.wait(every):
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    continue
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        finally:
            db.close()

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
                transition_rows.append(_transition_row(transition))
        if not session_rows:
            return
        with self._lock, self._db:
            self._db.executemany(
                "INSERT INTO sessions (session_id, record, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET record=excluded.record, "
                "updated_at=excluded.updated_at",
                session_rows,
            )
            self._db.executemany(
                "INSERT OR IGNORE INTO transitions "
                "(session_id, at, from_state, to_state, source) VALUES (?, ?, ?, ?, ?)",
                transition_rows,
            )

    def forget(self, session_ids: Iterable[str]) -> None:
        """Drop sessions (and their history and cursors) entirely."""
        ids = [(sid,) for sid in session_ids]
        with self._lock, self._db:
            self._db.executemany("DELETE FROM sessions WHERE session_id = ?", ids)
            self._db.executemany("DELETE FROM transitions WHERE session_id = ?", ids)
            self._db.executemany("DELETE FROM cursors WHERE session_id = ?", ids)

    # ------------------------------------------------------------------------ history

    def history(self, session_id: str | None = None) -> list[Transition]:
        """State transitions, oldest first (for one session, or all)."""
        query = "SELECT session_id, at, from_state, to_state, source FROM transitions"
        params: tuple[Any, ...] = ()
        if session_id is not None:
            query += " WHERE session_id = ?"
            params = (session_id,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY at, id", params).fetchall()
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
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO cursors (path, session_id, cursor, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(path) DO UPDATE SET session_id=excluded.session_id, "
                "cursor=excluded.cursor, updated_at=excluded.updated_at",
                (path, session_id, json.dumps(cursor), now),
            )


def _transition_row(t: Transition) -> tuple[str, int, str | None, str, str]:
    return (
        t.session_id,
        t.at,
        t.from_state.value if t.from_state else None,
        t.to_state.value,
        t.source,
    )
