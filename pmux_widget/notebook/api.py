"""The Python API of ``import pmux_widget``: one hub per process, read and await its sessions.

Every function starts the hub on first use, so ``pmux_widget.sessions()`` in a fresh kernel
just works; :func:`start` exists to choose paths and the port explicitly.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from pmux_widget.core import contract, model
from pmux_widget.core.model import ActionName, Session, State, TmuxWindow, Transition
from pmux_widget.notebook import frames
from pmux_widget.notebook.waiting import Answer, Ask, Wait
from pmux_widget.notify.config import notify_settings as notify_settings
from pmux_widget.runtime.actions import ActionError, act
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.runtime.ordering import sort_key

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
    "new_session",
    "on",
    "session",
    "sessions",
    "show",
    "sidebar",
    "start",
    "stats",
    "status_widget",
    "stop",
    "timeline",
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
    from pmux_widget.cli.fleet import start_fleet_publisher
    from pmux_widget.fleet.notify_claims import attach_fleet_claims

    publisher = start_fleet_publisher(target, url, host=host, creds=creds, redact=redact)
    # a fleet's notifications go once, whichever machine sends them
    attach_fleet_claims(target, url, creds=creds, host=publisher.host)
    return publisher


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

    def act(
        self,
        session_id: str,
        action: ActionName,
        text: str | None,
        *,
        options: Sequence[str] | None = None,
        answers: Mapping[str, Sequence[str]] | None = None,
        mode: str | None = None,
    ) -> None:
        target = hub()
        act(
            target,
            session_id,
            action,
            text=text,
            options=options,
            answers=answers,
            mode=mode,
            record=target.record_action,
        )

    def ask(self, session_id: str, text: str | None, timeout: float | None) -> Ask:
        return Ask(hub(), session_id, text, timeout)

    def attach(self, session_id: str) -> TmuxWindow:
        from pmux_widget.runtime.attach_window import attach_in_tmux

        target = hub()
        return attach_in_tmux(target.fleet, target.claude_dir, session_id)


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


def new_session(
    cwd: str | os.PathLike[str],
    prompt: str | None = None,
    where: str = "terminal",
    permission_mode: str | None = None,
    timeout: float = 90.0,
    name: str | None = None,
    agent: str = "claude",
) -> Session:
    """Start ``claude`` (``agent="codex"``: ``codex``) in a new JupyterLab terminal
    (``where="terminal"``, through the Jupyter server this kernel runs under) or tmux window
    (``"tmux"``) in ``cwd``, with ``prompt`` as its first prompt and ``permission_mode``
    (``claude --permission-mode``; Claude's only);
    or, with ``where="background"``, a Claude Code background session (``claude --bg``, named
    ``name``; it needs a prompt), answered like any other (``approve()``, ``await ask()``,
    …; ``stop()``, ``remove()``). Returns its Session once its first hook or PID file arrived
    (with a prompt: once that prompt's turn began, so ``await session.ask()`` gets its
    answer). Raises ``pmux_widget.notebook.starting.LaunchError`` with the reason when it cannot
    start there (no terminals: ``ServerApp.terminals_enabled`` off; no Jupyter server; no tmux;
    ``claude --bg`` failed)."""
    from pmux_widget.notebook.starting import new_session as start_one

    if where not in ("terminal", "tmux", "background"):
        raise ValueError('where must be "terminal", "tmux" or "background"')
    return start_one(hub(), cwd, prompt, where, permission_mode, timeout, name, agent)  # type: ignore[arg-type]


def to_dataframe() -> pandas.DataFrame:
    """The history as a DataFrame, one row per state interval, with its duration.

    Columns: session_id, project, state, start, end, duration_s, source. The last interval of
    a live session ends now; an ended session's ends when it ended (it does not grow).
    """
    return frames.intervals(hub())


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
    :class:`Session` (nothing for ``asyncio.run()`` to run: the wait is over). Raises
    TimeoutError after ``timeout`` seconds.
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
    """The process's :class:`~pmux_widget.notebook.widget.StatusWidget` (one model, many views)."""
    global _widget
    from pmux_widget.notebook.widget import StatusWidget

    with _lock:
        current = hub()
        if _widget is None or _widget.comm is None or _widget._hub is not current:
            _widget = StatusWidget(current)
        return _widget


def show(
    fleet: str | None = None,
    fleet_creds: str | None = None,
    *,
    non_interactive: bool | None = None,
) -> None:
    """Display the status widget in the cell's output (live until closed).

    Returns None, so that a cell ending with ``pmux_widget.show()`` shows it once; the widget
    itself is :func:`status_widget`. ``fleet``: a NATS URL, to show every host's sessions
    instead of this machine's (see docs/fleet.md). ``non_interactive=False`` hides the rows
    of ``claude -p`` and SDK runs (True shows them; None: the browser's remembered choice).
    """
    from IPython.display import display

    widget = _fleet_widget(fleet, fleet_creds) if fleet else status_widget()
    if non_interactive is not None:
        widget.show_non_interactive = non_interactive
    display(widget)


_fleet_widgets: dict[str, Any] = {}


def _fleet_widget(url: str, creds: str | None) -> Any:
    """One widget per fleet URL, over a subscriber that lives as long as the process."""
    from pmux_widget.fleet import Subscriber
    from pmux_widget.fleet.view import FleetView
    from pmux_widget.notebook.widget import StatusWidget

    with _lock:
        widget = _fleet_widgets.get(url)
        if widget is None or widget.comm is None:
            if widget is not None:  # closed: its subscriber goes too
                widget._hub.subscriber.stop()
            view = FleetView(Subscriber(url, creds=creds).start(timeout=10))
            widget = _fleet_widgets[url] = StatusWidget(view)  # type: ignore[arg-type]
        return widget


def sidebar(title: str = "Claude sessions") -> None:
    """Show the sessions beside the notebook, with a one-line note left in the cell.

    Where the page runs pmux-widget's JupyterLab extension (the package installed in the
    Jupyter server's environment: JupyterLab or Notebook 7), this opens its side panel.
    Elsewhere in JupyterLab the widget docks in the right sidebar (sidecar); front-ends that can
    do neither show the whole widget in the cell, with a note saying so. Only the page knows
    what it has: the cell's widget asks it, and answers the kernel.
    """
    from IPython.display import display

    from pmux_widget.notebook.widget import StatusWidget

    global _sidecar, _stub
    with _lock:
        if _sidecar is not None:
            _sidecar.close()
            _sidecar = None
        if _stub is not None:  # the last call's stand-in: it would listen to the hub forever
            _stub.close()
        stub = _stub = StatusWidget(hub(), mode="sidebar-stub")
        stub.sidebar_note = "Docked in JupyterLab's right sidebar →"
    stub.on_msg(lambda widget, content, buffers: _on_sidebar_answer(title, widget, content))
    display(stub)


def _on_sidebar_answer(title: str, widget: Any, content: Any) -> None:
    """The page of sidebar()'s stand-in answered: it has no extension panel, so a sidecar
    docks the widget (once: a reloaded page asks again)."""
    if not isinstance(content, dict) or content.get("type") != "sidebar":
        return
    if content.get("where") != "sidecar":
        return
    from IPython.display import display
    from sidecar import Sidecar

    global _sidecar
    with _lock:
        if widget is not _stub or _sidecar is not None:
            return
        _sidecar = docked = Sidecar(title=title, anchor="right")
    with docked:
        display(status_widget())


def timeline(session_id: str | None = None, since: Any = None) -> pandas.DataFrame:
    """The history as segments: one row per stretch of one state, per session (see
    :func:`pmux_widget.notebook.frames.timeline` for the columns)."""
    return frames.timeline(hub(), session_id, since)


def stats(since: Any = None) -> pandas.DataFrame:
    """Per session, over ``since`` .. now: seconds per state, waits, responses, turns, tokens
    (see :func:`pmux_widget.notebook.frames.stats` for the columns)."""
    return frames.stats(hub(), since)
