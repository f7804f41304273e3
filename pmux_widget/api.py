"""The Python API of ``import pmux_widget``: one hub per process, read and await its sessions.

Every function starts the hub on first use, so ``pmux_widget.sessions()`` in a fresh kernel
just works; :func:`start` exists to choose paths and the port explicitly.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
import time
from collections.abc import Callable, Collection, Generator
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from pmux_widget.claude.transcript import last_answer
from pmux_widget.core import contract, model
from pmux_widget.core.model import ActionName, Change, Session, State, Transition
from pmux_widget.core.timeline import ended_at
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.ordering import sort_key
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:  # pandas is optional
    import pandas

__all__ = [
    "ActionError",
    "Answer",
    "Ask",
    "Wait",
    "counts",
    "history",
    "hub",
    "on",
    "session",
    "sessions",
    "show",
    "sidebar",
    "start",
    "status_widget",
    "stop",
    "to_dataframe",
    "wait_for",
]

_hub: Hub | None = None
_publisher: Any = None  # the fleet publisher of start(fleet=URL), if any
_lock = threading.RLock()
_atexit_registered = False


def start(
    claude_home: str | os.PathLike[str] | None = None,
    home: str | os.PathLike[str] | None = None,
    port: int = 0,
    retain_days: float | None = 30.0,
    fleet: str | None = None,
    host_name: str | None = None,
    fleet_creds: str | None = None,
    redact: bool = False,
) -> Hub:
    """Start this process's hub (idempotent: a running hub is returned as it is).

    ``claude_home``: Claude's config dir (default ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``);
    ``home``: pmux-widget's home (default ``$PMUX_WIDGET_HOME`` or ``~/.pmux_widget``);
    ``port``: 0 picks a free one; ``retain_days``: how long ended sessions' history is kept
    (None: forever). ``fleet``: a NATS URL to publish this hub's sessions to (as
    ``host_name``, default the machine's name; ``fleet_creds``: a credentials file;
    ``redact``: no prompt, answer or tool input leaves the machine). See docs/fleet.md.
    """
    global _hub, _atexit_registered, _publisher
    with _lock:
        if _hub is not None and _hub.running:
            if fleet and _publisher is None:
                _publisher = _start_publisher(_hub, fleet, host_name, fleet_creds, redact)
            return _hub
        _hub = make_hub(
            home=home, claude_home=claude_home, port=port, retain_days=retain_days
        ).start()
        if fleet:
            _publisher = _start_publisher(_hub, fleet, host_name, fleet_creds, redact)
        model.set_session_handler(_SessionHandler())
        if not _atexit_registered:
            atexit.register(stop)
            _atexit_registered = True
        return _hub


def _start_publisher(
    target: Hub, url: str, host: str | None, creds: str | None, redact: bool
) -> Any:
    from pmux_widget.fleet_cli import start_fleet_publisher

    return start_fleet_publisher(target, url, host=host, creds=creds, redact=redact)


def stop() -> None:
    """Stop the hub (its runtime file is removed; hooks then spool until the next start)."""
    global _hub, _publisher
    with _lock:
        if _publisher is not None:
            _publisher.stop()
            _publisher = None
        if _hub is not None:
            _hub.stop()
            _hub = None


def hub() -> Hub:
    """The running hub, started with defaults if there is none yet."""
    with _lock:
        return _hub if _hub is not None and _hub.running else start()


class _SessionHandler:
    """What :class:`Session`'s own methods call (see ``core.model.SessionHandler``)."""

    def dismiss(self, session_id: str) -> None:
        hub().dismiss(session_id)

    def act(self, session_id: str, action: ActionName, text: str | None) -> None:
        target = hub()
        act(target, session_id, action, text=text, record=target.record_action)

    def ask(self, session_id: str, text: str | None, timeout: float | None) -> Ask:
        return Ask(hub(), session_id, text, timeout)


class Answer(str):
    """What :meth:`Session.ask` gives: the answer's text, plus how the turn ended.

    ``state`` is ``review`` (finished), ``idle`` (interrupted or denied) or ``needs-input``
    (it waits for permission: the text says for what; ``session.approve()``, then
    ``await session.ask()`` again). ``session`` is the session as it was then.
    """

    state: State
    session: Session

    def __new__(cls, text: str, session: Session) -> Answer:
        answer = super().__new__(cls, text)
        answer.state = session.state
        answer.session = session
        return answer

    @property
    def waiting(self) -> bool:
        """The turn stopped on a dialog: it waits for permission."""
        return self.state is State.NEEDS_INPUT


_TURN_ENDS = frozenset({State.REVIEW, State.IDLE, State.NEEDS_INPUT})
#: After the Stop hook, the transcript may not hold the answer yet (measured: the hook comes
#: first): look this long for it, then fall back to the session's clipped snippet.
_ANSWER_SETTLE_S = 2.0


class Ask:
    """A pending :meth:`Session.ask`: ``await`` it, or call :meth:`result` to block."""

    def __init__(self, target: Hub, session_id: str, text: str | None, timeout: float | None):
        self._hub = target
        self.session_id = session_id
        self.timeout = timeout
        self.sent_at = now_ms()
        session = target.fleet.get(session_id)
        if session is None:
            raise ActionError(f"no session {session_id}", unknown=True)
        if text is not None:
            if session.state is State.BUSY:
                raise ActionError(
                    f"{session.name} is busy: ask() waits for the turn it starts, so it needs "
                    "an idle or finished session (send() queues while busy)"
                )
            act(target, session_id, "send", text=text, record=target.record_action)
        elif session.state is State.NEEDS_INPUT:
            # (just answered, most likely): the turn goes on once the dialog is left
            self.sent_at = now_ms()
        elif session.state is State.BUSY:
            self.sent_at = session.state_since
        else:
            self.sent_at = 0  # the turn has ended: its answer now
        # The turn started by the prompt ends in a state entered after it was sent.
        self._wait = Wait(target, session_id, _TURN_ENDS, timeout, since=self.sent_at)

    def result(self, timeout: float | None = None) -> Answer:
        return self._answer(self._wait.result(timeout))

    def __await__(self) -> Generator[Any, None, Answer]:
        return self._await().__await__()

    async def _await(self) -> Answer:
        session = await self._wait
        return await asyncio.get_running_loop().run_in_executor(None, self._answer, session)

    def _answer(self, session: Session) -> Answer:
        if session.state is State.NEEDS_INPUT:
            asked = session.tool_summary or session.current_tool or "a tool"
            return Answer(f"[waiting for permission: {asked}]", session)
        text = None
        if session.transcript_path and session.state is State.REVIEW:
            deadline = time.monotonic() + _ANSWER_SETTLE_S
            while text is None and time.monotonic() < deadline:
                text = last_answer(session.transcript_path, self.sent_at)
                if text is None:
                    time.sleep(0.05)
        return Answer(text or session.last_assistant or "", session)

    def __repr__(self) -> str:
        return f"<Ask {self.session_id}: {self._wait!r}>"


# ---------------------------------------------------------------------------- reading


def sessions(include_ended: bool = False) -> list[Session]:
    """Sessions, most urgent first. Ended ones (exited, cleared) only if asked."""
    found = [s for s in hub().sessions() if include_ended or not s.ended]
    return sorted(found, key=sort_key)


def session(session_id: str) -> Session | None:
    """One session by id (ended ones included), or None."""
    return hub().fleet.get(session_id)


def counts() -> dict[str, int]:
    """``{"idle", "busy", "needs-input", "review", "unknown", "attention"}`` of live sessions."""
    # the one definition (the widget's, /api/sessions', status'): live sessions only
    return cast("dict[str, int]", dict(contract.counts(hub().sessions())))


def history(session_id: str | None = None) -> list[Transition]:
    """Every recorded state change (time, from, to, source), oldest first."""
    return hub().history(session_id)


def to_dataframe() -> pandas.DataFrame:
    """The history as a DataFrame, one row per state interval, with its duration.

    Columns: session_id, project, state, start, end, duration_s, source. The last interval of
    a live session ends now; an ended session's ends when it ended (it does not grow). Needs
    pandas (``pip install pmux-widget[pandas]``).
    """
    try:
        import pandas as pd
    except ImportError as exc:
        raise ImportError(
            "to_dataframe() needs pandas: pip install pandas (or pmux-widget[pandas])"
        ) from exc
    now = now_ms()
    known = hub().fleet
    rows: list[dict[str, Any]] = []
    by_session: dict[str, list[Transition]] = {}
    for transition in history():
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


# ---------------------------------------------------------------------------- reacting

_EVENTS = frozenset({s.value for s in State} | {"change"})


def _states(state: str | State | Collection[str | State]) -> frozenset[State]:
    items = [state] if isinstance(state, str | State) else list(state)
    try:
        return frozenset(State(item) for item in items)
    except ValueError:
        valid = ", ".join(s.value for s in State)
        raise ValueError(f"unknown state in {state!r}; use one of: {valid}") from None


def on(
    what: str | State, callback: Callable[[Session], Any], *, replay: bool = False
) -> Callable[[], None]:
    """Call ``callback(session)`` when a session enters state ``what``, or on any ``"change"``.

    Like notifications, only what happens now: the silent steps of a hub's start (restored
    sessions, replayed spool, recovery) call it only with ``replay=True``. Callbacks run on a
    dispatcher thread, never on the hub's: a slow one delays nothing else. Returns a function
    that unsubscribes.
    """
    key = what.value if isinstance(what, State) else what
    if key not in _EVENTS:
        raise ValueError(f"on({what!r}): use one of {sorted(_EVENTS)}")
    return hub().on(key, callback, replay=replay)


class Wait:
    """A pending :func:`wait_for`: ``await`` it, or call :meth:`result` to block."""

    def __init__(
        self,
        target: Hub,
        session_id: str | None,
        states: frozenset[State],
        timeout: float | None,
        since: int = 0,
    ) -> None:
        self.session_id = session_id
        self.states = states
        self.timeout = timeout
        self.since = since
        self._done = threading.Event()
        self._session: Session | None = None
        self._waiters: list[Callable[[], object]] = []
        self._hub = target
        target.call(self._arm)

    def _matches(self, session: Session) -> bool:
        if self.session_id is None:
            who = not session.ended  # "any session": any live one, not the history's
        else:
            who = session.session_id == self.session_id
        return who and session.state in self.states and session.state_since >= self.since

    def _arm(self) -> None:
        """On the hub thread: check the current state, else listen for the change."""
        for current in self._hub.fleet.values():
            if self._matches(current):
                self._resolve(current)
                return
        self._unlisten = self._hub.add_listener(self._on_changes)

    def _on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        for change in changes:
            if self._matches(change.after):
                self._unlisten()
                self._resolve(change.after)
                return

    def _resolve(self, session: Session) -> None:
        self._session = session
        self._done.set()
        for wake in self._waiters:
            wake()

    def cancel(self) -> None:
        unlisten = getattr(self, "_unlisten", None)
        if unlisten is not None:
            self._hub.call(unlisten)

    def result(self, timeout: float | None = None) -> Session:
        """Block until the state is reached; the session as it was then. TimeoutError if not."""
        limit = self.timeout if timeout is None else timeout
        if not self._done.wait(limit):
            self.cancel()
            raise TimeoutError(self._describe(limit))
        assert self._session is not None
        return self._session

    def __await__(self) -> Generator[Any, None, Session]:
        return self._wait_async().__await__()

    async def _wait_async(self) -> Session:
        if not self._done.is_set():
            loop = asyncio.get_running_loop()
            woken = asyncio.Event()
            self._waiters.append(lambda: loop.call_soon_threadsafe(woken.set))
            if not self._done.is_set():
                try:
                    await asyncio.wait_for(woken.wait(), self.timeout)
                except asyncio.TimeoutError:
                    self.cancel()
                    raise TimeoutError(self._describe(self.timeout)) from None
        assert self._session is not None
        return self._session

    def _describe(self, limit: float | None) -> str:
        states = "/".join(sorted(s.value for s in self.states))
        who = self.session_id or "any session"
        return f"{who} did not reach {states} within {limit} s"

    def __repr__(self) -> str:
        status = "done" if self._done.is_set() else "waiting"
        states = sorted(s.value for s in self.states)
        return f"<Wait {self.session_id or 'any'} → {states}: {status}>"


def wait_for(
    session_id: str | None,
    state: str | State | Collection[str | State],
    timeout: float | None = None,
) -> Any:
    """Wait until a session (``None``: any) is in ``state`` (one state or several).

    ``None`` waits for a live session (an ended one never matches). In async code (a running
    event loop in this thread, e.g. a notebook cell), it returns an
    awaitable :class:`Wait`: ``await pmux_widget.wait_for(sid, "review")``, or block with
    ``.result()``. Called with no running loop (a script), it blocks and returns the
    :class:`Session`. Raises TimeoutError after ``timeout`` seconds.
    """
    waiter = Wait(hub(), session_id, _states(state), timeout)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return waiter.result()
    return waiter


# ---------------------------------------------------------------------------- showing

_widget: Any = None
_sidecar: Any = None
_stub: Any = None


def status_widget() -> Any:
    """The process's :class:`~pmux_widget.widget.StatusWidget` (one model, many views)."""
    global _widget
    from pmux_widget.widget import StatusWidget

    with _lock:
        current = hub()
        if _widget is None or _widget.comm is None or _widget._hub is not current:
            _widget = StatusWidget(current)
        return _widget


def show(fleet: str | None = None, fleet_creds: str | None = None) -> None:
    """Display the status widget in the cell's output (live until closed).

    Returns None, so that a cell ending with ``pmux_widget.show()`` shows it once; the widget
    itself is :func:`status_widget`. ``fleet``: a NATS URL, to show every host's sessions
    instead of this machine's (see docs/fleet.md).
    """
    from IPython.display import display

    display(_fleet_widget(fleet, fleet_creds) if fleet else status_widget())


_fleet_widgets: dict[str, Any] = {}


def _fleet_widget(url: str, creds: str | None) -> Any:
    """One widget per fleet URL, over a subscriber that lives as long as the process."""
    from pmux_widget.fleet import Subscriber
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.widget import StatusWidget

    with _lock:
        widget = _fleet_widgets.get(url)
        if widget is None or widget.comm is None:
            if widget is not None:  # closed: its subscriber goes too
                widget._hub.subscriber.stop()
            view = FleetView(Subscriber(url, creds=creds).start(timeout=10))
            widget = _fleet_widgets[url] = StatusWidget(view)  # type: ignore[arg-type]
        return widget


def sidebar(title: str = "Claude sessions") -> None:
    """Dock the status widget in JupyterLab's right sidebar (sidecar).

    The cell keeps a one-line stand-in. Front-ends that cannot dock a sidecar (Notebook 7)
    show the whole widget in the cell instead, with a note saying so. JupyterLab's sidebar is
    widened to :data:`SIDEBAR_WIDTH` px if it is narrower (it opens at 250 px).
    """
    from IPython.display import display
    from sidecar import Sidecar

    from pmux_widget.widget import StatusWidget

    global _sidecar, _stub
    with _lock:
        if _sidecar is not None:
            _sidecar.close()
        if _stub is not None:  # the last call's stand-in: it would listen to the hub forever
            _stub.close()
        _sidecar = Sidecar(title=title, anchor="right")
        _stub = StatusWidget(hub(), mode="sidebar-stub")
        _stub.sidebar_note = "Docked in JupyterLab's right sidebar →"
    with _sidecar:
        display(status_widget())
    display(_stub)
    display({"application/javascript": _WIDEN_SIDEBAR % SIDEBAR_WIDTH}, raw=True)


#: How wide :func:`sidebar` makes JupyterLab's right sidebar (px) when it is narrower: the
#: width at which a row's name, state and time read on one line.
SIDEBAR_WIDTH = 320
# JupyterLab opens the right sidebar at its 250 px minimum, and neither CSS (min-width counts
# only after a relayout) nor the Sidecar's layout change that. The shell's split panel moves
# its handle on pointer events, so this drags the handle between the main area and the sidebar
# once the sidecar is shown, as a user would; a sidebar already wide enough is left alone.
# Front-ends that do not run JavaScript outputs simply ignore it.
_WIDEN_SIDEBAR = """(() => {
  const want = %d;
  let tries = 0;
  const timer = setInterval(() => {
    const right = document.getElementById("jp-right-stack");
    const split = document.getElementById("jp-main-split-panel");
    if (!right || !split || ++tries > 100) return clearInterval(timer);
    const width = right.getBoundingClientRect().width;
    if (right.classList.contains("lm-mod-hidden") || width === 0) return;
    clearInterval(timer);
    if (width >= want) return;
    const handles = [...split.children].filter((node) =>
      node.classList.contains("lm-SplitPanel-handle") && !node.classList.contains("lm-mod-hidden"));
    const handle = handles[handles.length - 1];
    if (!handle) return;
    const box = handle.getBoundingClientRect();
    const x = box.left + box.width / 2, y = box.top + box.height / 2, to = x - (want - width);
    const at = (clientX) => ({bubbles: true, cancelable: true, clientX, clientY: y, button: 0,
      buttons: 1, pointerId: 1, pointerType: "mouse", isPrimary: true});
    handle.dispatchEvent(new PointerEvent("pointerdown", at(x)));
    document.dispatchEvent(new PointerEvent("pointermove", at(to)));
    document.dispatchEvent(new PointerEvent("pointerup", at(to)));
  }, 100);
})();"""


# ---------------------------------------------------------------------------- timeline
# (issue 15) Segments and per-session stats from the store's history; the pure work is in
# core/timeline.py. pandas is imported here, not at module level: `import pmux_widget` stays
# light for scripts and `pmux-widget status`.

__all__ += ["stats", "timeline"]

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
    session_id: str | None, since: Any
) -> tuple[int, int | None, list[Transition], dict[str, Session], str]:
    """(now, since in ms, transitions, every known session, this host's name)."""
    import socket

    current = hub()
    now = now_ms()
    since_ms = _since_ms(since, now)
    store = current._store
    transitions = store.transitions(session_id, since_ms) if store is not None else []
    return now, since_ms, transitions, dict(current.fleet), socket.gethostname()


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


def timeline(session_id: str | None = None, since: Any = None) -> pandas.DataFrame:
    """The history as segments: one row per stretch of one state, per session.

    Columns: session_id, host, state, start, end (tz-aware UTC; NaT for a session's open
    segment), seconds, source (why the session entered the state). An ended session's last
    segment ends when it ended; a hub restart's ``unknown`` is a segment like the others.
    ``since``: a datetime, a timedelta (that long ago) or ms epoch; segments that began
    before it start at it. Rows are grouped by session, oldest first.
    """
    from pmux_widget.core.timeline import segments

    pd = _pandas()
    now, since_ms, transitions, known, local_host = _history_context(session_id, since)
    ends, hosts = _ends_and_hosts(known, local_host)
    segs = segments(transitions, now, since_ms, ends=ends, hosts=hosts, default_host=local_host)
    sids, hosts_, states, starts, ends_, seconds, sources = (
        zip(*segs, strict=True) if segs else ((),) * 7
    )  # segments are named tuples: one transposition, column by column
    return pd.DataFrame(
        {
            "session_id": list(sids),
            "host": list(hosts_),
            "state": [state.value for state in states],
            "start": _utc(starts),
            "end": _utc(ends_),
            "seconds": pd.array(list(seconds), dtype="float64"),
            "source": list(sources),
        },
        columns=TIMELINE_COLUMNS,
    )


def stats(since: Any = None) -> pandas.DataFrame:
    """Per session, over ``since`` .. now (all history if None): one row per session that
    lived in the window.

    Columns: session_id, host, name, project; ``idle``, ``busy``, ``needs-input``,
    ``review``, ``unknown`` (seconds in each); ``waited`` (seconds waiting on you:
    needs-input + review); ``waits`` (waits begun in the window); ``responses`` and
    ``median_response`` (seconds from a wait's start to the busy that answered it; NaN
    without one); ``turns`` (turns finished: entries into review); ``tokens_*`` (the
    session's totals, not windowed). ``since`` as for :func:`timeline`.
    """
    from pmux_widget.core.timeline import by_session, session_stats

    pd = _pandas()
    now, since_ms, transitions, known, local_host = _history_context(None, since)
    ends, hosts = _ends_and_hosts(known, local_host)
    rows: list[list[Any]] = []
    for sid, group in by_session(transitions).items():
        end = ends.get(sid)
        if since_ms is not None and end is not None and max(end, group[-1].at + 1) <= since_ms:
            continue  # ended before the window
        session = known.get(sid)
        tokens = session.tokens if session is not None else None
        st = session_stats(group, now, since_ms, end_ms=end, tokens=tokens)
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
