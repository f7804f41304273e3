"""The store's SQLite file, kept usable whatever happens to it: opened in WAL mode and proved
sound, checkpointed off the hub thread, written around a lock another process holds, and moved
aside when it is corrupt or stuck. What the tables hold is :mod:`.store`'s business.

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

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["StoreFile", "set_aside"]

log = logging.getLogger(__name__)

#: How often the WAL is checkpointed (on a thread of its own).
CHECKPOINT_SECONDS = 2.0
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
Write = Callable[[sqlite3.Connection], object]


class StoreFile:
    """One SQLite file, for a writer (a hub) or a reader. Thread-safe: one connection behind a
    lock, plus one of its own for bulk reads (:meth:`_reader`).

    A subclass gives the schema (:meth:`_prepare`) and may do upkeep from the checkpoint
    thread (:meth:`_upkeep`)."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        self.path = Path(path)
        self._read_lock = threading.Lock()
        self._read_db: sqlite3.Connection | None = None
        # Re-entrant: moving a locked file aside reopens (and migrates) with it held.
        self._lock = threading.RLock()
        #: Writes that found the file locked, in order, and since when it is locked.
        self._queued: list[Write] = []
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

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create (or migrate) the tables on a connection just opened for writing."""

    def _upkeep(self) -> None:
        """From the checkpoint thread, between checkpoints: what must not delay a hook."""

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
            self._db = db
            self._prepare(db)
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
                self._upkeep()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    continue
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass
        finally:
            db.close()

    def _reader(self) -> sqlite3.Connection:
        """A connection of its own for bulk reads (call with ``_read_lock`` held): a month of
        history takes a second to read, and the hub's writes must not wait for it behind
        ``_lock`` (in WAL mode a reader never blocks the writer)."""
        if self._read_db is None:
            self._read_db = sqlite3.connect(
                f"file:{self.path}?mode=ro", uri=True, check_same_thread=False, timeout=5
            )
        return self._read_db

    # ------------------------------------------------------- writes, queued while locked

    def _write(self, write: Write) -> None:
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
