"""Timeline and insight (issue 15): the history store's size, and how fast ``timeline()``,
``stats()`` and the retention's prune run on 30 days of history.

The history is written through the real :meth:`Store.apply` (one commit per session-day):
200 sessions, each with ~40 transitions a day for 30 days (240,000 transitions), drawn from
realistic turns — a prompt (idle/review → busy), sometimes permission dialogs (busy →
needs-input → busy), the end of the turn (→ review), sometimes a dismissal (review → idle) and
now and then a hub restart (busy → unknown → busy) — with their real ``source`` strings.
Besides them, 200 sessions of the month before ended 31 to 60 days ago: what the retention
(30 days) prunes. The file is measured after a checkpoint (WAL folded in), before and after
the prune; then a hub over it answers :func:`pmux_widget.timeline` and
:func:`pmux_widget.stats` (all history, and the last 24 h): best of 3, wall time and the calling
thread's CPU time (the machine is shared: the CPU time says more than the wall time).
"""

from __future__ import annotations

import random
import sqlite3
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import Row, log, run_alone, temp_homes
from pmux_widget.core.model import Change, Session, State, Tokens
from pmux_widget.runtime.store import Store

__all__ = ["main"]

DAY = 86_400_000
SESSIONS = 200
PER_DAY = 40
RETAIN_DAYS = 30


def _sid(k: int) -> str:
    return str(uuid.UUID(int=(15 << 96) | (k * 2654435761)))


def _day(rng: random.Random, state: State, start: int) -> list[tuple[int, State, str]]:
    """~PER_DAY transitions of one session over a ten-hour working day from ``start``."""
    steps: list[tuple[State, str]] = []
    while len(steps) < PER_DAY:
        if state is not State.BUSY:
            steps.append((State.BUSY, "hook:UserPromptSubmit"))
        for _ in range(rng.choice((0, 0, 1, 2))):
            steps += [
                (State.NEEDS_INPUT, "hook:PermissionRequest"),
                (State.BUSY, "hook:PostToolUse"),
            ]
        if rng.random() < 0.03:
            steps += [(State.UNKNOWN, "restart"), (State.BUSY, "recovery:pid:busy")]
        steps.append((State.REVIEW, "hook:Stop"))
        state = State.REVIEW
        if rng.random() < 0.4:
            steps.append((State.IDLE, "user:dismiss"))
            state = State.IDLE
    steps = steps[:PER_DAY]
    times = sorted(rng.sample(range(start, start + 10 * 3_600_000, 1000), len(steps)))
    return [(at, s, source) for at, (s, source) in zip(times, steps, strict=True)]


def _fill(store: Store, now: int, rng: random.Random, quick: bool) -> int:
    """Write the history; returns the number of transitions."""
    days = 3 if quick else RETAIN_DAYS
    count = 0
    groups = [
        (k, now - days * DAY, days, False)  # this month's: live or recently ended
        for k in range(SESSIONS)
    ] + [
        (SESSIONS + k, now - rng.randint(31, 60) * DAY - days * DAY, days, True)
        for k in range(SESSIONS)  # the month before's: ended, past the retention
    ]
    for k, first_day, n_days, old in groups:
        sid = _sid(k)
        session = Session(sid, state=State.IDLE, project=f"service-{k:03d}", cwd=f"/p/{k}")
        before: Session | None = None
        for d in range(n_days):
            changes = []
            for at, state, source in _day(rng, session.state, first_day + d * DAY + 8 * 3600_000):
                tracking = session.tracking.replace(active_at=at)
                after = session.replace(
                    state=state, state_since=at, source=source, tracking=tracking
                )
                changes.append(Change(sid, before, after))
                before = session = after
            last = d == n_days - 1
            if last and (old or k % 4 == 0):  # the old ones, and a quarter of this month's
                session = session.replace(
                    tracking=session.tracking.replace(ended=True),
                    tokens=Tokens(1000, 50_000, 10**6, 10**5),
                )
                changes.append(Change(sid, before, session))
            store.apply(changes, now=changes[-1].after.state_since)
            count += sum(1 for c in changes if c.state_changed)
    return count


def _size(path: Path) -> int:
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pragmas = ("page_count", "freelist_count", "page_size")
    pages, free, page = (db.execute(f"PRAGMA {name}").fetchone()[0] for name in pragmas)
    db.close()
    return (pages - free) * page


def _best(fn, runs: int = 3) -> tuple[float, float, object]:
    """Best wall time and best CPU time (this thread) of ``runs`` calls, and the result."""
    wall, cpu, result = float("inf"), float("inf"), None
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.thread_time()
        result = fn()
        cpu = min(cpu, time.thread_time() - c0)
        wall = min(wall, time.perf_counter() - t0)
    return wall, cpu, result


def main(quick: bool = False) -> list[Row]:
    import pmux_widget

    rng = random.Random(15)
    rows: list[Row] = []
    with temp_homes("timeline") as homes:
        now = int(time.time() * 1000)
        path = homes.pmux.db_path
        store = Store(path, retain_days=None)
        log("timeline: writing the history")
        t0 = time.perf_counter()
        count = _fill(store, now, rng, quick)
        fill_s = time.perf_counter() - t0
        store.close()
        days = 3 if quick else RETAIN_DAYS
        before = _size(path)
        store = Store(path, retain_days=None)
        store.retain_days = RETAIN_DAYS
        t0 = time.perf_counter()
        pruned = store.prune(now)
        prune_s = time.perf_counter() - t0
        store.close()
        after = _size(path)
        db = sqlite3.connect(path)
        kept = db.execute("SELECT count(*) FROM transitions").fetchone()[0]
        db.close()
        rows.append(
            (
                f"history store: {SESSIONS} sessions x {days} days ({kept:,} transitions)",
                f"{after / 1e6:.1f} MB ({after / kept:.0f} B/transition)",
                "info",
                True,
            )
        )
        rows.append(
            (
                f"history store: + {SESSIONS} ended sessions past the retention; prune",
                f"{before / 1e6:.1f} MB -> {after / 1e6:.1f} MB; {len(pruned)} pruned "
                f"in {prune_s * 1000:.0f} ms",
                "info",
                len(pruned) == SESSIONS,
            )
        )
        rows.append(
            (
                "history store: writing it (Store.apply, one commit per session-day)",
                f"{fill_s:.1f} s ({count / fill_s:,.0f} transitions/s)",
                "info",
                True,
            )
        )
        log("timeline: timeline() and stats() through a hub")
        pmux_widget.start(home=homes.pmux.root, claude_home=homes.claude)
        try:
            for label, arg in (("all history", None), ("last 24 h", now - DAY)):
                t_tl, c_tl, frame = _best(lambda a=arg: pmux_widget.timeline(since=a))
                t_st, c_st, table = _best(lambda a=arg: pmux_widget.stats(since=a))
                rows.append(
                    (
                        f"timeline() over {SESSIONS} sessions x {days} days, {label}",
                        f"{t_tl * 1000:.0f} ms wall, {c_tl * 1000:.0f} ms CPU "
                        f"({len(frame):,} segments)",  # type: ignore[arg-type]
                        "info",
                        True,
                    )
                )
                rows.append(
                    (
                        f"stats() over {SESSIONS} sessions x {days} days, {label}",
                        f"{t_st * 1000:.0f} ms wall, {c_st * 1000:.0f} ms CPU "
                        f"({len(table)} sessions)",  # type: ignore[arg-type]
                        "info",
                        True,
                    )
                )
        finally:
            pmux_widget.stop()
    # How fast this machine runs plain Python right now, to scale the CPU times above by
    _, c_ref, _ = _best(lambda: [(k, k + 1, None, "busy", "hook:Stop") for k in range(240_000)])
    rows.append(
        (
            "reference: a list of 240,000 5-tuples built in Python",
            f"{c_ref * 1000:.0f} ms CPU",
            "info",
            True,
        )
    )
    return rows


if __name__ == "__main__":
    run_alone(main)
