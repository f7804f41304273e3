"""The SQLite store at ``$PMUX_WIDGET_HOME/state.db``: sessions, their history, tail cursors.

WAL mode, so several hubs (several kernels) and ``pmux-widget status`` can share it: readers
never block the writer. Each change is committed before the hub answers the hook that caused
it, so a ``kill -9`` loses nothing that was acknowledged; SQLite's transactions keep the file
consistent whenever the process dies. ``synchronous=NORMAL``: durable across a process crash,
which is what a monitor needs, without an fsync per hook.

A file that becomes locked while the hub runs (a stuck ``sqlite3`` shell, a backup tool, a
hung process holding ``BEGIN EXCLUSIVE``) stops no hook: each write waits at most
:data:`WRITE_WAIT_SECONDS`, then it and every later write are queued in order and retried from
the checkpoint thread; once the lock is gone the queue is written in one commit. Locked for
longer than :data:`LOCKED_GIVE_UP_SECONDS`, the file is moved aside like a stuck one at start,
its last commit copied into a new file, and the queue written there. Nothing is lost unless the
hub itself dies while writes wait (the world rebuilds those sessions then).
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Change, Session, State, Transition
from pmux_widget.core.timeline import ended_at

__all__ = ["DEFAULT_RETAIN_DAYS", "Store", "set_aside"]

log = logging.getLogger(__name__)

#: How often the WAL is checkpointed (on a thread of its own).
CHECKPOINT_SECONDS = 2.0
#: Ended sessions are kept this long after their last activity (``--retain-days``).
DEFAULT_RETAIN_DAYS = 30.0
#: How often a writer prunes while open (it also prunes when it opens).
PRUNE_SECONDS = 3600.0
_DAY_MS = 86_400_000
#: How long opening waits for the write lock before taking its holder for stuck (another hub's
#: prune or migration holds it for well under a second).
STUCK_LOCK_SECONDS = 10.0
#: How long a write waits for the lock before it is queued (the hook's answer waits for it;
#: another hub's write or prune holds the lock for milliseconds).
WRITE_WAIT_SECONDS = 1.0
#: How often queued writes are retried while the file is locked.
RETRY_SECONDS = 0.25
#: Locked for this long while the hub runs, the file is taken for stuck and moved aside.
LOCKED_GIVE_UP_SECONDS = 60.0

#: A write: statements run inside the caller's transaction (what it returns is ignored).
_Write = Callable[[sqlite3.Connection], object]

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


class Store:
    """Persistence for one hub (or a reader). Thread-safe: one connection behind a lock."""

    def __init__(
        self,
        path: str | Path,
        *,
        readonly: bool = False,
        retain_days: float | None = DEFAULT_RETAIN_DAYS,
    ) -> None:
        self.path = Path(path)
        self.retain_days = retain_days
        self._seq = 0
        self._pruned_at = 0
        self._read_lock = threading.Lock()
        self._read_db: sqlite3.Connection | None = None
        # Re-entrant: moving a locked file aside reopens (and migrates) with it held.
        self._lock = threading.RLock()
        #: Writes that found the file locked, in order, and since when it is locked.
        self._queued: list[_Write] = []
        self._locked_since = 0.0
        #: bumped when the file is replaced while open: the checkpoint thread reconnects
        self._generation = 0
        self._closing = threading.Event()
        self._checkpointer: threading.Thread | None = None  # writers only
        #: Why this store began afresh (the old file was moved aside), else None.
        self.recovered: str | None = None
        if readonly:
            uri = f"file:{self.path}?mode=ro"
            self._db = sqlite3.connect(uri, uri=True, check_same_thread=False, timeout=5)
        else:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                self._db = self._open_writer()
            except sqlite3.Error as exc:
                # Corrupt, truncated, unreadable, or held by a stuck process: monitoring must
                # not stop for it. The file goes aside (kept for the user to look at), the
                # hub rebuilds from the world (PID files, transcripts, spool).
                kind = "locked" if _is_busy(exc) else "corrupt"
                aside = set_aside(self.path, kind)
                why = "held locked by another process" if kind == "locked" else "unreadable"
                self.recovered = (
                    f"{self.path.name} was {why} ({exc}): moved aside to {aside.name}; "
                    "sessions are rebuilt from PID files, transcripts and the spool"
                )
                log.warning("%s", self.recovered)
                self._db = self._open_writer()
                if kind == "locked":
                    self._salvage(aside)
            self._checkpointer = threading.Thread(
                target=self._checkpoints, name="pmux-store-checkpoint", daemon=True
            )
            self._checkpointer.start()
        self._db.execute(f"PRAGMA busy_timeout={5000 if readonly else _ms(WRITE_WAIT_SECONDS)}")
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(transitions)")}
        # a reader of a database no writer of this version has opened yet: the old tie-break
        self._order = "seq" if "seq" in columns or not columns else "id"
        if not readonly:
            self.prune()

    def _open_writer(self) -> sqlite3.Connection:
        """Open (or create) the database for writing and prove it usable: schema, a quick
        check of every page (a truncated or scribbled-on file fails here, not at a hook),
        and the write lock taken once (a process stuck holding it fails here too)."""
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=STUCK_LOCK_SECONDS)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            # Checkpoints (the only fsyncs in WAL mode) stall the committing thread for
            # milliseconds: they run on a thread of their own instead (see _checkpoints).
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.executescript(_SCHEMA)
            db.commit()
            self._db = db
            self._migrate_history()
            row = db.execute("PRAGMA quick_check(1)").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"quick_check: {row[0] if row else 'no answer'}")
            db.execute("BEGIN IMMEDIATE")
            db.rollback()
            self.path.chmod(0o600)
        except BaseException:
            db.close()
            raise
        return db

    def _salvage(self, aside: Path) -> None:
        """Copy what a locked (not corrupt) database last committed into the new one: its
        holder blocks writers only, and in WAL mode a reader still sees the last commit."""
        try:
            old = sqlite3.connect(f"file:{aside}?mode=ro", uri=True, timeout=1)
            try:
                with self._lock:
                    old.backup(self._db)
            finally:
                old.close()
        except sqlite3.Error as exc:
            log.warning("could not copy the sessions of %s: %s", aside.name, exc)

    def close(self) -> None:
        self._closing.set()
        if self._checkpointer is not None:
            self._checkpointer.join(5)
        with self._lock:
            if self._queued and not self._flush(wait=True):
                self._replace_locked_file()  # still locked: the queue must not be lost
            self._db.close()
        with self._read_lock:
            if self._read_db is not None:
                self._read_db.close()

    def _checkpoints(self, every: float = CHECKPOINT_SECONDS) -> None:
        """Fold the WAL back into the database now and then, off the hub thread (PASSIVE:
        never waits for writers; its own connection, so it holds no lock of ours)."""
        generation = self._generation
        db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
        try:
            while not self._closing.wait(RETRY_SECONDS if self._queued else every):
                if self._queued:
                    self._retry_queued()
                    continue
                if generation != self._generation:  # the file was replaced: follow it
                    db.close()
                    generation = self._generation
                    db = sqlite3.connect(self.path, check_same_thread=False, timeout=5)
                self._prune_when_due()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    continue
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        finally:
            db.close()

    # ------------------------------------------------------- writes, queued while locked

    def _write(self, write: _Write) -> None:
        """Run ``write`` in one commit; if the file stays locked past WRITE_WAIT_SECONDS,
        queue it (and, behind it, every later write, so they land in order)."""
        with self._lock:
            if self._queued:
                self._queued.append(write)
                return
            try:
                with self._db:
                    write(self._db)
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                self._queued.append(write)
                self._locked_since = time.monotonic()
                log.warning(
                    "%s is locked by another process (%s): changes are kept in a queue and "
                    "written once it is free; if it stays locked %.0f s it is moved aside",
                    self.path.name,
                    exc,
                    LOCKED_GIVE_UP_SECONDS,
                )

    @property
    def queued(self) -> int:
        """Writes waiting for the file's lock (0 when everything is stored)."""
        return len(self._queued)

    def _flush(self, wait: bool = False) -> bool:
        """Write the queue in one commit (call with ``_lock`` held). Without ``wait`` it only
        tries: the hub thread must not wait behind a retry. True once the queue is empty."""
        if not self._queued:
            return True
        if not wait:
            self._db.execute("PRAGMA busy_timeout=0")
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for write in self._queued:
                    write(self._db)
                self._db.commit()
            except BaseException:
                self._db.rollback()
                raise
        except sqlite3.Error as exc:
            if not _is_busy(exc):
                log.warning("writing the queued changes failed: %s", exc)
            return False
        finally:
            if not wait:
                self._db.execute(f"PRAGMA busy_timeout={_ms(WRITE_WAIT_SECONDS)}")
        held = time.monotonic() - self._locked_since
        log.info(
            "%s is free again after %.1f s: %d queued writes stored",
            self.path.name,
            held,
            len(self._queued),
        )
        self._queued.clear()
        return True

    def _retry_queued(self) -> None:
        """From the checkpoint thread: write the queue if the lock is gone; past the bound,
        move the file aside and write the queue into a new one."""
        with self._lock:
            if self._flush():
                return
            if time.monotonic() - self._locked_since >= LOCKED_GIVE_UP_SECONDS:
                self._replace_locked_file()

    def _replace_locked_file(self) -> None:
        """Move the locked file aside, open a new one with its last commit, write the queue
        (call with ``_lock`` held)."""
        try:
            aside = set_aside(self.path, "locked")
            self._db.close()
            self._open_writer()
        except (OSError, sqlite3.Error) as exc:
            log.warning("could not move the locked %s aside: %s", self.path.name, exc)
            return
        self._db.execute(f"PRAGMA busy_timeout={_ms(WRITE_WAIT_SECONDS)}")
        held = time.monotonic() - self._locked_since
        self.recovered = (
            f"{self.path.name} stayed locked by another process for {held:.0f} s: moved aside "
            f"to {aside.name}; its last commit and the {len(self._queued)} changes that waited "
            "are in a new file"
        )
        log.warning("%s", self.recovered)
        self._salvage(aside)
        with self._read_lock:
            if self._read_db is not None:
                self._read_db.close()
                self._read_db = None
        self._generation += 1
        self._flush(wait=True)

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

    def _reader(self) -> sqlite3.Connection:
        """A connection of its own for bulk history reads (call with ``_read_lock`` held): a
        month of history takes a second to read, and the hub's writes must not wait for it
        behind ``_lock`` (in WAL mode a reader never blocks the writer)."""
        if self._read_db is None:
            self._read_db = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=5
            )
        return self._read_db

    def _next_seq(self) -> int:
        """Recording order across processes (wall-clock ns), strictly increasing in this one."""
        self._seq = max(self._seq + 1, time.time_ns())
        return self._seq

    def _migrate_history(self) -> None:
        """Rebuild a transitions table of the old layout (rowid, a NULL-blind UNIQUE, one more
        index) into the keyed one, keeping the first-recorded copy of each duplicate."""
        with self._lock:
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(transitions)")}
            if "seq" in columns:
                return
            try:
                self._db.execute("BEGIN IMMEDIATE")
                columns = {row[1] for row in self._db.execute("PRAGMA table_info(transitions)")}
                if "seq" not in columns:  # another hub may have migrated in between
                    self._db.execute("ALTER TABLE transitions RENAME TO transitions_old")
                    self._db.execute(_TRANSITIONS)
                    self._db.execute(
                        "INSERT OR IGNORE INTO transitions "
                        "(session_id, at, from_state, to_state, source, seq) "
                        "SELECT session_id, at, from_state, to_state, source, id "
                        "FROM transitions_old ORDER BY id"
                    )
                    self._db.execute("DROP TABLE transitions_old")  # and its index
                self._db.commit()
            except BaseException:
                self._db.rollback()
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


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def _is_busy(exc: sqlite3.Error) -> bool:
    # SQLITE_BUSY (5) or SQLITE_LOCKED (6); the codes ride on the exception from Python 3.11
    return getattr(exc, "sqlite_errorcode", None) in (5, 6) or "locked" in str(exc)


def set_aside(path: Path, kind: str) -> Path:
    """Move ``path`` and its WAL and shared-memory files to ``<name>.<kind>-<UTC time>``.

    A process still holding them keeps its own inodes; the next open creates a new database.
    """
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.{kind}-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = path.with_name(f"{path.name}.{kind}-{stamp}-{n}")
    for suffix in ("", "-wal", "-shm", "-journal"):
        source = path.with_name(path.name + suffix)
        if source.exists() or source.is_symlink():
            source.rename(aside.with_name(aside.name + suffix))
    return aside
