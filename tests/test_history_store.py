"""The store's history (runtime/store.py): every transition stored once across hubs, old
databases migrated, ended sessions pruned after the retention, windowed reads."""

from __future__ import annotations

import sqlite3
import time

import pytest

from pmux_widget.cli.commands import build_parser
from pmux_widget.core.model import Change, Session, State, Tracking, Transition
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.store import Store

from .helpers import wait_until
from .test_hook_path import SID, Installed, payload

DAY = 86_400_000


def rows(path) -> list[tuple]:
    db = sqlite3.connect(path)
    try:
        return db.execute(
            "SELECT session_id, at, from_state, to_state, source FROM transitions ORDER BY at"
        ).fetchall()
    finally:
        db.close()


def test_two_hubs_five_hooks_store_every_transition_once(homes):
    """Measured on 206ce4b: the session's first transition (from_state NULL) was stored twice."""
    installed = Installed(homes)
    first, second = Hub().start(), Hub().start()
    try:
        wait_until(lambda: len(list(homes.pmux.runtime_dir.glob("*.json"))) == 2, what="2 hubs")
        installed.fire(payload("SessionStart", source="startup", model="m-1"))
        installed.fire(payload("UserPromptSubmit", prompt="run the tests"))
        installed.fire(payload("PreToolUse", tool_name="Bash", tool_input={}, tool_use_id="t1"))
        installed.fire(payload("PermissionRequest", tool_name="Bash", tool_input={}))
        installed.fire(payload("Stop", last_assistant_message="done"))
        wait_until(lambda: second.fleet.get(SID) and second.fleet[SID].state is State.REVIEW)
        history = first._store.history(SID)
    finally:
        first.stop()
        second.stop()
    assert [(t.from_state, t.to_state) for t in history] == [
        (None, State.IDLE),
        (State.IDLE, State.BUSY),
        (State.BUSY, State.NEEDS_INPUT),
        (State.NEEDS_INPUT, State.REVIEW),
    ]
    assert len(rows(homes.pmux.db_path)) == 4


def test_hub_restarts_add_no_history_to_a_settled_session(homes):
    """Each hub start re-announces every persisted session (from None): no new row for it."""
    installed = Installed(homes)
    for _ in range(3):
        hub = Hub().start()
        try:
            if SID not in hub.fleet:
                installed.fire(payload("UserPromptSubmit", prompt="go"))
                installed.fire(payload("Stop", last_assistant_message="done"))
            wait_until(lambda h=hub: SID in h.fleet and h.fleet[SID].state is State.REVIEW)
        finally:
            hub.stop()
    assert [(t[3], t[4]) for t in rows(homes.pmux.db_path)] == [
        ("busy", "hook:UserPromptSubmit"),
        ("review", "hook:Stop"),
    ]


def change(sid: str, before: State | None, after: State, at: int, **fields) -> Change:
    old = None if before is None else Session(sid, state=before)
    return Change(sid, old, Session(sid, state=after, state_since=at, source="s", **fields))


def test_the_same_change_from_another_hub_view_is_one_row(tmp_path):
    store = Store(tmp_path / "state.db")
    try:
        store.apply([change("a", None, State.BUSY, 10)], now=10)
        store.apply([change("a", State.IDLE, State.BUSY, 10)], now=11)  # a different from_state
        store.apply([change("a", State.BUSY, State.REVIEW, 20)], now=20)
        assert [(t.at, t.to_state) for t in store.history("a")] == [
            (10, State.BUSY),
            (20, State.REVIEW),
        ]
    finally:
        store.close()


def test_changes_of_the_same_millisecond_keep_their_recorded_order(tmp_path):
    store = Store(tmp_path / "state.db")
    try:
        # review then idle (a dismissal stamped with the review's time): idle is the last state,
        # although "idle" sorts before "review"
        store.apply([change("a", State.BUSY, State.REVIEW, 50)], now=50)
        store.apply([change("a", State.REVIEW, State.IDLE, 50)], now=51)
        assert [t.to_state for t in store.history("a")] == [State.REVIEW, State.IDLE]
        assert [t.to_state for t in store.transitions("a")] == [State.REVIEW, State.IDLE]
    finally:
        store.close()


OLD_SCHEMA = """
CREATE TABLE sessions (session_id TEXT PRIMARY KEY, record TEXT NOT NULL,
    updated_at INTEGER NOT NULL);
CREATE TABLE transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, at INTEGER NOT NULL,
    from_state TEXT, to_state TEXT NOT NULL, source TEXT NOT NULL,
    UNIQUE (session_id, at, from_state, to_state, source));
CREATE INDEX transitions_by_session ON transitions (session_id, at);
CREATE TABLE cursors (path TEXT PRIMARY KEY, session_id TEXT, cursor TEXT NOT NULL,
    updated_at INTEGER NOT NULL);
"""


def test_an_old_database_opens_deduplicated_and_keeps_its_order(tmp_path):
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    db.executemany(
        "INSERT INTO transitions (session_id, at, from_state, to_state, source) "
        "VALUES (?, ?, ?, ?, ?)",
        [
            ("a", 1, None, "idle", "hook:SessionStart"),
            ("a", 1, None, "idle", "hook:SessionStart"),  # the duplicate of two hubs
            ("a", 5, "idle", "review", "x"),
            ("a", 5, "review", "idle", "user:dismiss"),  # same ms: recorded order counts
        ],
    )
    db.commit()
    db.close()

    reader = Store(path, readonly=True)  # before any writer migrated it: still readable
    assert [t.to_state.value for t in reader.history("a")] == ["idle", "idle", "review", "idle"]
    reader.close()

    store = Store(path)
    try:
        assert [(t.at, t.to_state.value) for t in store.history("a")] == [
            (1, "idle"),
            (5, "review"),
            (5, "idle"),
        ]
        store.apply([change("a", State.IDLE, State.BUSY, 9)], now=9)
        assert [t.to_state.value for t in store.history("a")][-1] == "busy"
    finally:
        store.close()
    db = sqlite3.connect(path)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    db.close()
    assert "transitions_old" not in tables and "transitions_by_session" not in tables
    Store(path).close()  # opening it again is a no-op


def test_transitions_since_include_the_state_at_the_window_start(tmp_path):
    store = Store(tmp_path / "state.db")
    try:
        for sid in ("a", "b"):
            store.apply([change(sid, None, State.IDLE, 0)], now=0)
            store.apply([change(sid, State.IDLE, State.BUSY, 10)], now=10)
            store.apply([change(sid, State.BUSY, State.REVIEW, 20)], now=20)
        store.apply([change("b", State.REVIEW, State.BUSY, 30)], now=30)
        window = store.transitions(since_ms=25)
        assert [(t.session_id, t.at) for t in window] == [("a", 20), ("b", 20), ("b", 30)]
        assert [t.at for t in store.transitions("b", since_ms=10)] == [10, 20, 30]
        assert [t.at for t in store.transitions("a", since_ms=-5)] == [0, 10, 20]
        assert [t.at for t in store.transitions("a")] == [0, 10, 20]
    finally:
        store.close()


# ------------------------------------------------------------------------------ retention


def put(store: Store, sid: str, at: int, *, ended: bool, state: State = State.IDLE) -> None:
    tracking = Tracking(ended=ended, active_at=at)
    store.apply([change(sid, None, state, at, tracking=tracking)], now=at)
    store.save_cursor(f"/t/{sid}.jsonl", sid, {"offset": 1}, at)


def test_prune_forgets_only_ended_sessions_past_the_retention(tmp_path):
    now = 100 * DAY
    store = Store(tmp_path / "state.db", retain_days=30)
    try:
        put(store, "old-ended", now - 31 * DAY, ended=True)
        put(store, "new-ended", now - 29 * DAY, ended=True)
        put(store, "old-live", now - 90 * DAY, ended=False, state=State.BUSY)
        put(store, "dismissed-lately", now - 40 * DAY, ended=True, state=State.REVIEW)
        store.apply([change("dismissed-lately", State.REVIEW, State.IDLE, now - DAY)], now=now)
        store.save_cursor("/t/orphan.jsonl", None, {"offset": 1}, now - 31 * DAY)
        store.save_cursor("/t/fresh.jsonl", None, {"offset": 1}, now - DAY)

        assert store.prune(now) == ["old-ended"]

        kept = {s.session_id for s in store.load_sessions()}
        assert kept == {"new-ended", "old-live", "dismissed-lately"}
        assert store.history("old-ended") == []
        assert store.load_cursor("/t/old-ended.jsonl") is None
        assert store.load_cursor("/t/orphan.jsonl") is None
        assert store.load_cursor("/t/fresh.jsonl") is not None
        assert store.load_cursor("/t/new-ended.jsonl") is not None
        assert store.prune(now) == []  # idempotent
    finally:
        store.close()


def test_retention_applies_when_the_store_opens_and_none_keeps_everything(tmp_path):
    path = tmp_path / "state.db"
    now = int(time.time() * 1000)
    store = Store(path, retain_days=None)
    put(store, "a", now - 10 * DAY, ended=True)
    put(store, "b", now - 2 * DAY, ended=True)
    assert store.prune(now) == []
    store.close()
    Store(path, retain_days=5).close()  # prunes as it opens
    store = Store(path, retain_days=1)
    try:
        assert {s.session_id for s in store.load_sessions()} == set()
    finally:
        store.close()


def test_hub_and_serve_pass_the_retention_through(homes):
    assert build_parser().parse_args(["serve", "--retain-days", "7"]).retain_days == 7
    assert build_parser().parse_args(["serve"]).retain_days == 30
    hub = Hub(retain_days=2).start()
    try:
        assert hub._store.retain_days == 2
    finally:
        hub.stop()


@pytest.mark.parametrize("retain", [0.5])
def test_a_live_hub_prunes_when_due(tmp_path, retain):
    path = tmp_path / "state.db"
    store = Store(path, retain_days=retain)
    try:
        now = int(time.time() * 1000)
        put(store, "gone", now - DAY, ended=True)
        store._pruned_at = 0  # due: the checkpoint thread prunes within its next tick
        wait_until(lambda: store.load_sessions() == [], what="pruned by the store's thread")
    finally:
        store.close()


def test_transition_rows_round_trip(tmp_path):
    store = Store(tmp_path / "state.db")
    try:
        store.apply([change("a", None, State.NEEDS_INPUT, 3)], now=3)
        assert store.transitions() == [Transition("a", 3, None, State.NEEDS_INPUT, "s")]
    finally:
        store.close()


# ------------------------------------------------------------------ timeline() and stats()


@pytest.fixture
def api_hub(homes):
    import pmux_widget

    hub = pmux_widget.start()
    yield hub
    pmux_widget.stop()


def hook(hub, sid: str, event: str, **fields) -> None:
    from .helpers import post_hook

    body = {"session_id": sid, "cwd": "/home/dev/projects/acme-api", "hook_event_name": event}
    assert post_hook(hub.port, hub.token, {**body, **fields}) == 204


def test_timeline_and_stats_from_cells(api_hub):
    import socket
    from datetime import datetime, timedelta, timezone

    import pandas as pd

    import pmux_widget

    hook(api_hub, "s1", "UserPromptSubmit", prompt="go")
    hook(api_hub, "s1", "PermissionRequest", tool_name="Bash", tool_input={})
    hook(api_hub, "s1", "PostToolUse", tool_name="Bash", tool_input={}, tool_use_id="t")
    hook(api_hub, "s1", "Stop", last_assistant_message="done")
    hook(api_hub, "s2", "UserPromptSubmit", prompt="other")
    wait_until(lambda: api_hub.fleet.get("s2") is not None)

    df = pmux_widget.timeline()
    assert list(df.columns) == ["session_id", "host", "state", "start", "end", "seconds", "source"]
    assert str(df["start"].dtype) == str(df["end"].dtype) == "datetime64[ms, UTC]"
    one = df[df.session_id == "s1"]
    assert list(one.state) == ["busy", "needs-input", "busy", "review"]
    assert list(one.source)[-1] == "hook:Stop"
    assert (one.end.iloc[:-1].to_numpy() == one.start.iloc[1:].to_numpy()).all()  # tiled
    assert pd.isna(one.end.iloc[-1])  # open
    assert set(df.host) == {socket.gethostname()}
    assert list(pmux_widget.timeline("s2").state) == ["busy"]
    empty = pmux_widget.timeline("no-such-session")
    assert len(empty) == 0 and list(empty.columns) == list(df.columns)
    assert str(empty["end"].dtype) == "datetime64[ms, UTC]"

    st = pmux_widget.stats()
    assert list(st.columns[:4]) == ["session_id", "host", "name", "project"]
    row = st.set_index("session_id").loc["s1"]
    assert (row.waits, row.responses, row.turns) == (2, 1, 1)
    assert row.project == "acme-api"
    assert row["needs-input"] + row.review == pytest.approx(row.waited)
    assert row.median_response == pytest.approx(
        (one.start.iloc[2] - one.start.iloc[1]).total_seconds(), abs=0.002
    )

    # since: a datetime, a timedelta or ms epoch mean the same window; the future is empty
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    assert set(pmux_widget.timeline(since=later).seconds) == {0.0}
    ms = int(later.timestamp() * 1000)
    assert len(pmux_widget.timeline(since=ms)) == len(pmux_widget.timeline(since=later))
    assert len(pmux_widget.timeline(since=timedelta(days=1))) == len(df)
    assert pmux_widget.stats(since=later)[["waits", "turns", "responses"]].sum().sum() == 0
    with pytest.raises(TypeError, match="since="):
        pmux_widget.timeline(since="yesterday")
