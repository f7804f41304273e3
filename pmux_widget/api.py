"""The Python API of ``import pmux_widget``: one hub per process, read and await its sessions.

Every function starts the hub on first use, so ``pmux_widget.sessions()`` in a fresh kernel
just works; :func:`start` exists to choose paths and the port explicitly.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Callable, Collection
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pmux_widget.core import model
from pmux_widget.core.model import Change, Session, State, Transition, count_states
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:  # pandas is optional
    import pandas

__all__ = [
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
    fleet: str | None = None,
    host_name: str | None = None,
    fleet_creds: str | None = None,
    redact: bool = False,
) -> Hub:
    """Start this process's hub (idempotent: a running hub is returned as it is).

    ``claude_home``: Claude's config dir (default ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``);
    ``home``: pmux-widget's home (default ``$PMUX_WIDGET_HOME`` or ``~/.pmux_widget``);
    ``port``: 0 picks a free one. ``fleet``: a NATS URL to publish this hub's sessions to
    (as ``host_name``, default the machine's name; ``fleet_creds``: a credentials file;
    ``redact``: no prompt, answer or tool input leaves the machine). See docs/fleet.md.
    """
    global _hub, _atexit_registered, _publisher
    with _lock:
        if _hub is not None and _hub.running:
            if fleet and _publisher is None:
                _publisher = _start_publisher(_hub, fleet, host_name, fleet_creds, redact)
            return _hub
        _hub = Hub(home=home, claude_home=claude_home, port=port).start()
        if fleet:
            _publisher = _start_publisher(_hub, fleet, host_name, fleet_creds, redact)
        model.set_dismiss_handler(_dismiss)
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


def _dismiss(session_id: str) -> None:
    hub().dismiss(session_id)


# ---------------------------------------------------------------------------- reading


def sessions(include_ended: bool = False) -> list[Session]:
    """Sessions, most urgent first. Ended ones (exited, cleared) only if asked."""
    from pmux_widget.runtime.hub import _sort_key

    found = [s for s in hub().sessions() if include_ended or not s.ended]
    return sorted(found, key=_sort_key)


def session(session_id: str) -> Session | None:
    """One session by id (ended ones included), or None."""
    return hub().fleet.get(session_id)


def counts() -> dict[str, int]:
    """``{"idle", "busy", "needs-input", "review", "unknown", "attention"}`` of live sessions."""
    return count_states(sessions())


def history(session_id: str | None = None) -> list[Transition]:
    """Every recorded state change (time, from, to, source), oldest first."""
    store = hub()._store
    return store.history(session_id) if store is not None else []


def to_dataframe() -> pandas.DataFrame:
    """The history as a DataFrame, one row per state interval, with its duration.

    Columns: session_id, project, state, start, end, duration_s, source. The last interval of
    a session ends now. Needs pandas (``pip install pmux-widget[pandas]``).
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
        for current, following in zip(transitions, [*transitions[1:], None], strict=True):
            end = following.at if following else now
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


def on(what: str | State, callback: Callable[[Session], Any]) -> Callable[[], None]:
    """Call ``callback(session)`` when a session enters state ``what``, or on any ``"change"``.

    Callbacks run on a dispatcher thread, never on the hub's: a slow one delays nothing else.
    Returns a function that unsubscribes.
    """
    key = what.value if isinstance(what, State) else what
    if key not in _EVENTS:
        raise ValueError(f"on({what!r}): use one of {sorted(_EVENTS)}")
    return hub().on(key, callback)


class Wait:
    """A pending :func:`wait_for`: ``await`` it, or call :meth:`result` to block."""

    def __init__(
        self, target: Hub, session_id: str | None, states: frozenset[State], timeout: float | None
    ) -> None:
        self.session_id = session_id
        self.states = states
        self.timeout = timeout
        self._done = threading.Event()
        self._session: Session | None = None
        self._waiters: list[Callable[[], None]] = []
        self._hub = target
        target.call(self._arm)

    def _matches(self, session: Session) -> bool:
        return session.state in self.states and (
            self.session_id is None or session.session_id == self.session_id
        )

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

    def __await__(self):  # type: ignore[no-untyped-def]
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

    In async code (a running event loop in this thread, e.g. a notebook cell), it returns an
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
    show the whole widget in the cell instead, with a note saying so.
    """
    from IPython.display import display
    from sidecar import Sidecar

    from pmux_widget.widget import StatusWidget

    global _sidecar
    with _lock:
        if _sidecar is not None:
            _sidecar.close()
        _sidecar = Sidecar(title=title, anchor="right")
    with _sidecar:
        display(status_widget())
    stub = StatusWidget(hub(), mode="sidebar-stub")
    stub.sidebar_note = "Docked in JupyterLab's right sidebar →"
    display(stub)
