"""The history as pandas DataFrames: state intervals, timeline segments and per-session stats.

The work is pure and lives in :mod:`core.timeline` and :mod:`core.insight`; this module reads
the hub's store and shapes the result. pandas is imported inside the functions, so ``import
pmux_widget`` stays light for scripts and ``pmux-widget status``.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pmux_widget.core.model import Session, State, Transition
from pmux_widget.core.timeline import HistoryRow, ended_at
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    import pandas

__all__ = ["STATS_COLUMNS", "TIMELINE_COLUMNS", "intervals", "stats", "timeline"]


def intervals(target: Hub) -> pandas.DataFrame:
    """The history as a DataFrame, one row per state interval, with its duration.

    Columns: session_id, project, state, start, end, duration_s, source. The last interval of
    a live session ends now; an ended session's ends when it ended (it does not grow).
    """
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(
            "to_dataframe() needs pandas: pip install pandas (or pmux-widget[pandas])"
        ) from exc
    now = now_ms()
    known = target.fleet
    rows: list[dict[str, Any]] = []
    by_session: dict[str, list[Transition]] = {}
    for transition in target.history():
        by_session.setdefault(transition.session_id, []).append(transition)
    for sid, transitions in by_session.items():
        project = known[sid].project if sid in known else None
        ended = ended_at(known[sid]) if sid in known else None
        for current, following in zip(transitions, [*transitions[1:], None], strict=True):
            end = following.at if following else (now if ended is None else ended)
            rows.append(
                {
                    "session_id": sid,
                    "project": project,
                    "state": current.to_state.value,
                    "start": _datetime(current.at),
                    "end": _datetime(end),
                    "duration_s": max(0, end - current.at) / 1000,
                    "source": current.source,
                }
            )
    columns = ["session_id", "project", "state", "start", "end", "duration_s", "source"]
    return pd.DataFrame(rows, columns=columns)


def _datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


#: The columns of :func:`timeline`, in order.
TIMELINE_COLUMNS = ["session_id", "host", "state", "start", "end", "seconds", "source"]
#: The columns of :func:`stats`, in order (one column per state, in seconds).
STATS_COLUMNS = [
    "session_id",
    "host",
    "name",
    "project",
    *(state.value for state in State),
    "waited",
    "waits",
    "responses",
    "median_response",
    "turns",
    "tokens_input",
    "tokens_output",
    "tokens_cache_read",
    "tokens_cache_creation",
]


def _since_ms(since: Any, now: int) -> int | None:
    """``since`` as ms epoch: a datetime (naive = local time), a timedelta (that long ago),
    a number (ms epoch), or None (everything)."""
    from datetime import timedelta

    if since is None:
        return None
    if isinstance(since, datetime):
        return int(since.timestamp() * 1000)
    if isinstance(since, timedelta):
        return now - int(since.total_seconds() * 1000)
    if isinstance(since, int | float) and not isinstance(since, bool):
        return int(since)
    raise TypeError(
        f"since={since!r}: use a datetime, a timedelta (that long ago), ms epoch, or None"
    )


def _history_context(
    current: Hub, session_id: str | None, since: Any
) -> tuple[int, int | None, list[HistoryRow], dict[str, Session], str]:
    """(now, since in ms, the store's history rows, every known session, this host's name)."""
    now = now_ms()
    since_ms = _since_ms(since, now)
    store = current.store
    # Plain rows, no Transition per row: a month of 200 sessions is 240,000 of them.
    history = store.transition_rows(session_id, since_ms) if store is not None else []
    return now, since_ms, history, dict(current.fleet), current.host_name


def _ends_and_hosts(
    known: dict[str, Session], local_host: str
) -> tuple[dict[str, int], dict[str, str]]:
    from pmux_widget.core.timeline import ended_at

    ends: dict[str, int] = {}
    hosts: dict[str, str] = {}
    for sid, s in known.items():
        end = ended_at(s)
        if end is not None:
            ends[sid] = end
        # sessions from the fleet carry their machine; this machine's may not (yet)
        hosts[sid] = getattr(s, "host", None) or local_host
    return ends, hosts


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as exc:  # a dependency, but an environment can still lack it
        raise ImportError("timeline() and stats() need pandas: pip install pandas") from exc
    return pd


def _utc(ms: Collection[int | None]) -> Any:
    """ms epoch (None: NaT) as tz-aware UTC datetimes, at the data's ms resolution (through
    numpy: ~10x faster than to_datetime on a list with None in it)."""
    import numpy as np

    pd = _pandas()
    return pd.DatetimeIndex(np.array(ms, dtype="datetime64[ms]")).tz_localize("UTC")


def timeline(target: Hub, session_id: str | None = None, since: Any = None) -> pandas.DataFrame:
    """The history as segments: one row per stretch of one state, per session.

    Columns: session_id, host, state, start, end (tz-aware UTC; NaT for a session's open
    segment), seconds, source (why the session entered the state). An ended session's last
    segment ends when it ended; a hub restart's ``unknown`` is a segment like the others.
    ``since``: a datetime, a timedelta (that long ago) or ms epoch; segments that began
    before it start at it. Rows are grouped by session, oldest first.
    """
    from pmux_widget.core.timeline import segment_columns

    pd = _pandas()
    now, since_ms, history, known, local_host = _history_context(target, session_id, since)
    ends, hosts = _ends_and_hosts(known, local_host)
    # Columns straight from the rows: no object per transition or segment.
    cols = segment_columns(history, now, since_ms, ends=ends, hosts=hosts, default_host=local_host)
    return pd.DataFrame(
        {
            "session_id": cols.session_id,
            "host": cols.host,
            "state": cols.state,
            "start": _utc(cols.start_ms),
            "end": _utc(cols.end_ms),
            "seconds": pd.array(cols.seconds, dtype="float64"),
            "source": cols.source,
        },
        columns=TIMELINE_COLUMNS,
    )


def stats(target: Hub, since: Any = None) -> pandas.DataFrame:
    """Per session, over ``since`` .. now (all history if None): one row per session that
    lived in the window.

    Columns: session_id, host, name, project; ``idle``, ``busy``, ``needs-input``,
    ``review``, ``unknown`` (seconds in each); ``waited`` (seconds waiting on you:
    needs-input + review); ``waits`` (waits begun in the window); ``responses`` and
    ``median_response`` (seconds from a wait's start to the busy that answered it; NaN
    without one); ``turns`` (turns finished: entries into review); ``tokens_*`` (the
    session's totals, not windowed). ``since`` as for :func:`timeline`.
    """
    from pmux_widget.core.insight import session_stats_rows

    pd = _pandas()
    now, since_ms, history, known, local_host = _history_context(target, None, since)
    ends, hosts = _ends_and_hosts(known, local_host)
    by_session: dict[str, list[HistoryRow]] = {}
    for row in history:
        by_session.setdefault(row[0], []).append(row)
    rows: list[list[Any]] = []
    for sid, group in by_session.items():
        end = ends.get(sid)
        if since_ms is not None and end is not None and max(end, group[-1][1] + 1) <= since_ms:
            continue  # ended before the window
        session = known.get(sid)
        tokens = session.tokens if session is not None else None
        st = session_stats_rows(group, now, since_ms, end_ms=end, tokens=tokens)
        median = st.median_response
        rows.append(
            [
                sid,
                hosts.get(sid, local_host),
                session.name if session is not None else sid[:8],
                session.project if session is not None else None,
                *(st.seconds[state] for state in State),
                st.waited,
                st.waits,
                st.responses,
                float("nan") if median is None else median,
                st.turns,
                st.tokens.input,
                st.tokens.output,
                st.tokens.cache_read,
                st.tokens.cache_creation,
            ]
        )
    return pd.DataFrame(rows, columns=STATS_COLUMNS)
