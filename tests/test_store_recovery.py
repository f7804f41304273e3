"""Issue 11 item 12: a corrupt, truncated, unreadable or stuck-locked ``state.db`` never stops
the hub. The file is moved aside (``state.db.corrupt-<time>`` / ``state.db.locked-<time>``),
the hub rebuilds from the world (PID files, transcripts, spool), says so once in the log and
in ``doctor``, and loses no hook. Real hubs, real files, a real stuck process."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pmux_widget.core.model import State
from pmux_widget.hooks.doctor import doctor
from pmux_widget.hooks.spool import write_spool_entry
from pmux_widget.runtime import store_file
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.store import Store

from .helpers import get_sessions, post_hook, request, wait_until
from .test_sources import PidFile, now_ms

SPOOLED = "5b1e0c2a-0000-4000-8000-00000000spool"
LIVE = "5b1e0c2a-0000-4000-8000-000000000pid"
AFTER = "5b1e0c2a-0000-4000-8000-0000000after"


@pytest.fixture
def sleeper():
    """A real process standing in for Claude (its PID file needs a live pid)."""
    proc = subprocess.Popen(["sleep", "300"])
    yield proc
    proc.kill()
    proc.wait()


def _good_store(path: Path, sessions: int) -> None:
    """A real store with ``sessions`` sessions, checkpointed into the main file."""
    from pmux_widget.core import signals as s
    from pmux_widget.core.tracker import reduce_all

    step = reduce_all(
        {},
        [
            s.parse_hook({"session_id": f"old-{n:04d}", "hook_event_name": "Stop"}, at=1000 + n)
            for n in range(sessions)
        ],
        now=2000,
    )
    store = Store(path)
    store.apply(step.changes, 2000)
    store.close()
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _break(path: Path, how: str) -> None:
    if how == "garbage":
        path.write_bytes(b"this is not a database\n" * 200)
    elif how == "truncated":
        _good_store(path, 400)
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)
    elif how == "scribbled":
        _good_store(path, 400)
        with open(path, "r+b") as fh:  # leave the header, wreck the pages after it
            fh.seek(4096 * 2)
            fh.write(os.urandom(4096 * 3))
    elif how == "unreadable":  # not a file at all (root reads any file: a mode says nothing)
        path.mkdir()
        (path / "x").write_text("x")
    else:
        raise AssertionError(how)


def _aside(home_root: Path, kind: str) -> list[Path]:
    return [
        p
        for p in home_root.glob(f"state.db.{kind}-*")
        if not p.name.endswith(("-wal", "-shm", "-journal"))
    ]


@pytest.mark.parametrize("how", ["garbage", "truncated", "scribbled", "unreadable"])
def test_item12_corrupt_store_hub_starts_rebuilds_from_the_world_and_says_so(
    homes, sleeper, caplog, how
):
    homes.pmux.ensure()
    _break(homes.pmux.db_path, how)
    # the world: a hook spooled while no hub ran, and a running Claude's PID file
    write_spool_entry(
        homes.pmux,
        json.dumps({"session_id": SPOOLED, "hook_event_name": "UserPromptSubmit"}).encode(),
        sent=now_ms() - 500,
    )
    PidFile(homes.claude, sleeper.pid, session_id=LIVE).status("busy")
    caplog.set_level(logging.WARNING, logger="pmux_widget.runtime.store_file")
    hub = make_hub().start()
    try:
        assert hub.fleet[SPOOLED].state is State.BUSY  # the spool replayed: no hook lost
        wait_until(lambda: LIVE in hub.fleet, what="the PID file's session")
        assert post_hook(hub.port, hub.token, {"session_id": AFTER, "hook_event_name": "Stop"})
        assert get_sessions(hub.port, hub.token)
        assert hub.fleet[AFTER].state is State.REVIEW
        (aside,) = _aside(homes.pmux.root, "corrupt")
        said = [r.getMessage() for r in caplog.records if "moved aside" in r.getMessage()]
        assert len(said) == 1 and aside.name in said[0], said
    finally:
        hub.stop()
    # the new store holds what the hub saw, and opens cleanly next time (nothing moved again)
    store = Store(homes.pmux.db_path)
    try:
        persisted = {x.session_id for x in store.load_sessions()}
        assert {SPOOLED, LIVE, AFTER} <= persisted
        assert store.recovered is None
    finally:
        store.close()
    assert len(_aside(homes.pmux.root, "corrupt")) == 1
    (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
    assert aside.name in line.message and "corrupt" in line.message


def test_item12_locked_store_held_by_a_stuck_process_hub_starts_anyway(homes, monkeypatch, caplog):
    homes.pmux.ensure()
    _good_store(homes.pmux.db_path, 3)
    stuck = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.read()",
            str(homes.pmux.db_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert stuck.stdout is not None and stuck.stdout.readline() == b"locked\n"
        monkeypatch.setattr(store_file, "STUCK_LOCK_SECONDS", 0.5)
        caplog.set_level(logging.WARNING, logger="pmux_widget.runtime.store_file")
        hub = make_hub().start()
        try:
            # what the locked file last committed is kept, and new hooks are stored
            assert hub.fleet["old-0001"].state is State.REVIEW
            assert post_hook(hub.port, hub.token, {"session_id": AFTER, "hook_event_name": "Stop"})
            status, body, _ = request(hub.port, "GET", "/api/sessions", headers={
                "X-Pmux-Token": hub.token})  # fmt: skip
            assert status == 200 and AFTER.encode() in body
            (aside,) = _aside(homes.pmux.root, "locked")
            said = [r.getMessage() for r in caplog.records if "moved aside" in r.getMessage()]
            assert len(said) == 1 and "locked" in said[0]
        finally:
            hub.stop()
    finally:
        stuck.kill()
        stuck.wait()
    store = Store(homes.pmux.db_path)
    try:
        assert {"old-0000", "old-0002", AFTER} <= {x.session_id for x in store.load_sessions()}
    finally:
        store.close()
    (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
    assert aside.name in line.message and "locked" in line.message


def test_item12_a_healthy_store_is_never_moved(homes):
    homes.pmux.ensure()
    _good_store(homes.pmux.db_path, 5)
    hub = make_hub().start()
    hub.stop()
    assert not list(homes.pmux.root.glob("state.db.*-*"))
    assert len(Store(homes.pmux.db_path, readonly=True).load_sessions()) == 5
    (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
    assert line.ok and "moved" not in line.message


def _holder(db_path: Path) -> subprocess.Popen[bytes]:
    """A real second process holding ``BEGIN EXCLUSIVE`` on the real file until its stdin
    closes (then it commits nothing and exits): a stuck ``sqlite3`` shell, another tool."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
            "db.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); sys.stdin.read(); "
            "db.execute('ROLLBACK')",
            str(db_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"locked\n"
    return proc


def _release(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(10)


def _turns(hub, sessions: list[str]) -> None:
    """A prompt then a Stop for each session: two transitions each (busy, then review)."""
    for sid in sessions:
        for event in ("UserPromptSubmit", "Stop"):
            assert post_hook(hub.port, hub.token, {"session_id": sid, "hook_event_name": event})
    assert all(hub.fleet[sid].state is State.REVIEW for sid in sessions)


def _stored(path: Path, sessions: list[str]) -> bool:
    """Every session and both of its transitions are in the file at ``path`` (False while
    the file is being replaced)."""
    try:
        store = Store(path, readonly=True)
        try:
            persisted = {s.session_id: s.state for s in store.load_sessions()}
            history = [(t.session_id, t.to_state) for t in store.history()]
        finally:
            store.close()
    except sqlite3.Error:
        return False
    history = [(sid, state) for sid, state in history if sid in sessions]
    expected = sorted((sid, state) for sid in sessions for state in (State.BUSY, State.REVIEW))
    return (
        all(persisted.get(sid) is State.REVIEW for sid in sessions) and sorted(history) == expected
    )


def test_item12_store_locked_while_the_hub_runs_queues_writes_and_loses_nothing(homes, caplog):
    """A store that becomes locked WHILE the hub runs: hooks keep working, the changes wait
    in a queue (said once in the log, and by ``doctor`` while it lasts), and once the lock is
    gone every transition is in the file; nothing is moved aside."""
    homes.pmux.ensure()
    caplog.set_level(logging.WARNING, logger="pmux_widget.runtime.store_file")
    hub = make_hub().start()
    before = [f"5b1e0c2a-0000-4000-8000-0000before{n:02d}" for n in range(2)]
    during = [f"5b1e0c2a-0000-4000-8000-0000during{n:02d}" for n in range(5)]
    try:
        _turns(hub, before)
        wait_until(lambda: _stored(homes.pmux.db_path, before), what="the first turns stored")
        holder = _holder(homes.pmux.db_path)
        try:
            _turns(hub, during)  # the hub answers and tracks them all while the file is locked
            assert get_sessions(hub.port, hub.token)
            assert not _stored(homes.pmux.db_path, during)  # (the lock is real)
            (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
            assert "locked" in line.message and "queue" in line.message, line.message
        finally:
            _release(holder)
        wait_until(
            lambda: _stored(homes.pmux.db_path, before + during), what="the queued changes stored"
        )
        said = [r.getMessage() for r in caplog.records if "locked" in r.getMessage()]
        assert len(said) == 1 and "queue" in said[0], said
        assert hub.errors == 0
    finally:
        hub.stop()
    assert not list(homes.pmux.root.glob("state.db.*-*"))
    assert _stored(homes.pmux.db_path, before + during)
    (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
    assert line.ok and line.message == str(homes.pmux.db_path)  # nothing to report any more


def test_item12_store_locked_too_long_while_the_hub_runs_is_moved_aside_nothing_lost(
    homes, monkeypatch, caplog
):
    """Past the bound, the locked file goes aside (its last commit copied), the queue is
    written into the new file, and ``doctor`` names the moved file."""
    homes.pmux.ensure()
    monkeypatch.setattr(store_file, "LOCKED_GIVE_UP_SECONDS", 1.0)
    caplog.set_level(logging.WARNING, logger="pmux_widget.runtime.store_file")
    hub = make_hub().start()
    before = ["5b1e0c2a-0000-4000-8000-00000before"]
    during = [f"5b1e0c2a-0000-4000-8000-0000during{n:02d}" for n in range(3)]
    try:
        _turns(hub, before)
        wait_until(lambda: _stored(homes.pmux.db_path, before), what="the first turn stored")
        holder = _holder(homes.pmux.db_path)
        try:
            _turns(hub, during)
            wait_until(lambda: _aside(homes.pmux.root, "locked"), what="the locked file moved")
            wait_until(
                lambda: _stored(homes.pmux.db_path, before + during),
                what="the old commit and the queue in the new file",
            )
            after = ["5b1e0c2a-0000-4000-8000-0000000after"]
            _turns(hub, after)  # and the hub writes on, into the new file
            wait_until(lambda: _stored(homes.pmux.db_path, before + during + after))
        finally:
            _release(holder)
        said = [r.getMessage() for r in caplog.records if "moved aside to" in r.getMessage()]
        assert len(said) == 1 and "locked" in said[0], said
    finally:
        hub.stop()
    (aside,) = _aside(homes.pmux.root, "locked")
    (line,) = [c for c in doctor(homes.claude, homes.pmux) if c.name == "store"]
    assert aside.name in line.message and "locked" in line.message
