"""The hub: one background thread with its own asyncio loop that owns the tracker's state.

It runs the HTTP server and the sources it was given (:mod:`.assemble` wires the default
ones); every signal is applied here, in order, through the pure tracker; the resulting
changes go to the store (before a hook is answered), to listeners on this thread (the widget,
waiters) and to user callbacks on a dispatcher thread (a slow callback must never delay a
hook).

Why a thread: a Tornado server on the kernel's own loop stalls for the whole duration of a
blocking cell; on its own thread it answers at once.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextlib
import logging
import os
import queue
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from typing import Any

import tornado.httpserver

from pmux_widget._version import __version__
from pmux_widget.agents.claude.background import spare_by_roster
from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.pidfiles import own_pid_file, spare_session
from pmux_widget.core.model import ActionName, Change, Session, Transition
from pmux_widget.core.signals import (
    ActionTaken,
    Dismiss,
    HandlerWaits,
    HookSignal,
    Origin,
    PidFile,
    PidRecord,
    Seen,
    SessionStart,
    Signal,
)
from pmux_widget.core.spare_hooks import Released, SpareHooks
from pmux_widget.core.tracker import reduce
from pmux_widget.hooks.hubs import clean_stale_hub_files, remove_hub_file, write_hub_file
from pmux_widget.system import processes
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.programs import program_of

from .boot import named_hook, replay_spool, restore
from .decisions import Decisions, Pending
from .decisions import clean_stale as clean_stale_calls
from .looks import spread_seen
from .ordering import fleet_json
from .protocols import CursorStore, Listener, Source, SourceFactory
from .server import DRAIN_LIMIT, make_app
from .store import Store

__all__ = ["Hub", "Listener"]

log = logging.getLogger(__name__)

#: How often a running hub removes the runtime files of hubs that died without a stop.
SWEEP_SECONDS = 60.0
#: How many hooks' (pid, sent) the hub remembers to apply each once (a few minutes' worth)
HOOKS_REMEMBERED = 8192


class Hub:
    """One per process (see :func:`pmux_widget.start`). Thread-safe entry points only."""

    def __init__(
        self,
        *,
        home: str | os.PathLike[str] | None = None,
        claude_home: str | os.PathLike[str] | None = None,
        port: int = 0,
        sources: Iterable[SourceFactory] = (),
        retain_days: float | None = 30.0,
    ) -> None:
        self.home = PmuxHome.resolve(home).ensure()
        self.claude_dir = ClaudeHome.resolve(claude_home).root
        self.requested_port = port
        self.retain_days = retain_days  # ended sessions' history, in the store
        self.port = 0
        self.token = self.home.token()
        self.hub_id = f"{os.getpid()}-{secrets.token_hex(4)}"
        #: this machine's name in the session JSON (the fleet's ``--host-name`` may override)
        self.host_name = socket.gethostname()
        self.runtime_file = self.home.runtime_dir / f"{self.hub_id}.json"
        self.fleet: dict[str, Session] = {}
        self.started_at = 0
        self.errors = 0
        self._source_factories = tuple(sources)
        self._sources: list[Source] = []
        self._listeners: list[Listener] = []
        self._callbacks: list[tuple[str, Callable[[Session], Any], bool]] = []
        self._callback_queue: queue.SimpleQueue[tuple[Callable[[Session], Any], Session] | None]
        self._callback_queue = queue.SimpleQueue()
        self._pid_cache: dict[str, int] = {}
        #: (script pid, X-Pmux-Sent) of the hooks applied lately: a killed script's payload
        #: adopted from the spool, or a spooled one that reached us too, is applied once
        self._hooks_applied: collections.OrderedDict[tuple[int, int], None]
        self._hooks_applied = collections.OrderedDict()
        #: session ids whose hooks are no session's (a spare's placeholder, the agent view's own)
        self._not_sessions: set[str] = set()
        #: hooks of processes started as spares, until their PID file says whose they are
        self._spare_hooks = SpareHooks()
        self._roles: dict[int, str | None] = {}  # pid → processes.claude_role
        # hook parent pid → its Claude ancestor (or None): with the installed command's `exec`
        # every hook of a session has Claude itself as parent, so one walk per process
        self._ancestor_cache: dict[int, int | None] = {}
        self._entry_cache: dict[str, str | None] = {}
        self._origins: set[str] = set()  # sessions whose program was looked up
        self._store: Store | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: tornado.httpserver.HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._dispatcher: threading.Thread | None = None
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._startup_error: BaseException | None = None
        self._lock = threading.Lock()
        #: Agent SDK permission calls waiting on our handler (runtime.decisions)
        self.decisions = Decisions(self.home, lambda: self.port, self._call_waits)

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "hub not started"
        return self._loop

    def start(self, timeout: float = 30) -> Hub:
        """Start the hub thread (idempotent); returns once it answers hooks."""
        with self._lock:
            if self._thread is not None:
                return self
            self._thread = threading.Thread(target=self._run, name="pmux-hub", daemon=True)
            self._dispatcher = threading.Thread(
                target=self._dispatch_callbacks, name="pmux-callbacks", daemon=True
            )
            self._dispatcher.start()
            self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the pmux-widget hub did not start in time")
        if self._startup_error is not None:
            raise RuntimeError(f"the pmux-widget hub failed to start: {self._startup_error}")
        return self

    def stop(self, timeout: float = 10) -> None:
        """Stop serving, remove the runtime file, close the store. Safe to call twice."""
        thread = self._thread
        if thread is None or self._loop is None:
            return
        if thread.is_alive():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._begin_shutdown)
            thread.join(timeout)
        self._callback_queue.put(None)
        self._remove_runtime_file()
        atexit.unregister(self._remove_runtime_file)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._startup())
        except BaseException as exc:  # report to start() instead of dying silently
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_until_complete(self._stopped_event.wait())
        finally:
            loop.run_until_complete(self._shutdown())
            loop.close()
            self._stopped.set()

    async def _startup(self) -> None:
        self._stopped_event = asyncio.Event()
        self._store = Store(self.home.db_path, retain_days=self.retain_days)
        self.started_at = now_ms()
        restore(self._store.load_sessions(), self.apply)
        self._replay_spool()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.requested_port))
        sock.listen(128)
        sock.setblocking(False)
        self.port = sock.getsockname()[1]
        self._server = tornado.httpserver.HTTPServer(
            make_app(self), max_body_size=DRAIN_LIMIT, idle_connection_timeout=30
        )
        self._server.add_sockets([sock])
        self._clean_stale_runtime_files()
        self._write_runtime_file()
        # A process that exits without stopping us (SIGINT without a tty ends Jupyter's loop
        # with KeyboardInterrupt, skipping its extensions' cleanup; sys.exit in a script)
        # still runs atexit: the file goes then. Only SIGKILL leaves it, for the next sweep.
        atexit.register(self._remove_runtime_file)
        asyncio.get_running_loop().call_later(SWEEP_SECONDS, self._sweep_runtime_files)
        # A hook that read runtime/ just before our file appeared spools after this replay:
        # look again now and a few seconds later.
        self._replay_spool()
        for delay in (2.0, 6.0):
            asyncio.get_running_loop().call_later(delay, self._replay_spool)
        for factory in self._source_factories:
            source = factory(self)
            await source.start()
            self._sources.append(source)

    def _begin_shutdown(self) -> None:
        self._stopped_event.set()

    async def _shutdown(self) -> None:
        self._remove_runtime_file()
        self.decisions.close()  # their handlers ask again elsewhere, or refuse
        for source in self._sources:
            with contextlib.suppress(Exception):
                await source.stop()
        if self._server is not None:
            self._server.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.close_all_connections(), 2)
        if self._store is not None:
            self._store.close()

    # ------------------------------------------------------------------ runtime files

    def _write_runtime_file(self) -> None:
        info = {
            "pid": os.getpid(),
            "port": self.port,
            "hub_id": self.hub_id,
            "started_at": self.started_at,
            "version": __version__,
        }
        write_hub_file(self.home, self.hub_id, info)

    def _remove_runtime_file(self) -> None:
        remove_hub_file(self.runtime_file)

    def _clean_stale_runtime_files(self) -> None:
        clean_stale_hub_files(self.home, keep=self.runtime_file)
        clean_stale_calls(self.home)

    def _sweep_runtime_files(self) -> None:
        """Every ``SWEEP_SECONDS``: a dead hub's file (SIGKILL, a crash) goes, so hooks and
        doctor stop paying for it while this hub runs for days."""
        if self._stopped_event.is_set():
            return
        try:
            removed = clean_stale_hub_files(self.home, keep=self.runtime_file)
        except OSError:
            removed = []
        if removed:
            log.info("removed the runtime files of hubs that are gone: %s", removed)
        with contextlib.suppress(OSError):
            clean_stale_calls(self.home)  # their published calls too
        # hooks spooled while we ran (a POST that took over a second) and killed scripts'
        self._replay_spool()
        self.loop.call_later(SWEEP_SECONDS, self._sweep_runtime_files)

    # ------------------------------------------------------------------ recovery

    def _replay_spool(self) -> None:
        """Hooks no hub accepted (none ran, a hung one, a killed script), in the order they
        were sent; silent. Each hook once: one that reached us as well is not applied again."""
        if not self._stopped.is_set():
            replay_spool(
                self.home,
                self.accept_hook,
                consume=True,
                delivered=self._hooks_applied.__contains__,
            )

    def _first_arrival(self, hook_id: tuple[int, int]) -> bool:
        if hook_id in self._hooks_applied:
            return False
        self._hooks_applied[hook_id] = None
        if len(self._hooks_applied) > HOOKS_REMEMBERED:
            self._hooks_applied.popitem(last=False)
        return True

    # ------------------------------------------------------------------ applying signals

    def accept_hook(
        self, signal: HookSignal, ppid: int | None, hook_id: tuple[int, int] | None = None
    ) -> None:
        """Enrich a hook (the session's Claude pid, its project) and apply it. Hub thread.
        ``hook_id`` (script pid, its sent time), when known: a hook seen before is dropped."""
        if hook_id is not None and not self._first_arrival(hook_id):
            return
        # The walk up from the hook's parent runs once per session; the liveness loop
        # re-checks known pids every 2 s, so the cache needs no check here.
        known = self.fleet.get(signal.session_id)
        if known is None and signal.session_id in self._not_sessions:
            return  # a spare's or the agent view's own session: its later hooks too
        pid = self._pid_cache.get(signal.session_id)
        if isinstance(signal, SessionStart) or (known is not None and known.ended):
            pid = None  # a new process may run this session now (startup, --resume)
        if pid is None and ppid:
            if ppid in self._ancestor_cache:
                pid = self._ancestor_cache[ppid]
            else:
                pid = processes.claude_ancestor(ppid)
                if len(self._ancestor_cache) > 1024:
                    self._ancestor_cache.clear()
                self._ancestor_cache[ppid] = pid
            if pid is not None:
                self._pid_cache[signal.session_id] = pid
                # a pre-warmed background worker's own placeholder session: never a row
                # (and the agent view's, or an attach client's, own session: its hooks
                # carry the view's id, not a session's); its SessionEnd at the daemon's or
                # the view's exit must not make an ended row either
                if known is None and (
                    spare_session(self.claude_dir, pid, signal.session_id)
                    or self._role(pid) in ("view", "attach")
                ):
                    self._not_session(signal.session_id)
                    return
        entry = self._entrypoint(signal, ppid, pid) if signal.live else None
        hook = named_hook(signal, pid, entry)
        if known is None and pid is not None and self._role(pid) == "spare":
            # a process started as a spare: its own placeholder's hooks never make a row,
            # whichever of them and its PID file's verdict comes first (core.spare_hooks)
            record = own_pid_file(self.claude_dir, pid)
            self._settle(self._spare_hooks.on_hook(pid, hook, record))
            return
        self.apply(hook)
        if entry and entry.startswith("sdk-") and pid and signal.session_id not in self._origins:
            self._origin(signal.session_id, pid)

    def _role(self, pid: int) -> str | None:
        """What the Claude process ``pid`` is besides a session: its argv (once per pid),
        else a spare if the daemon's roster says it dispatched it as one (2.1.197's first
        worker has no ``--bg-spare``; read again until it says so)."""
        if pid not in self._roles:
            if len(self._roles) > 1024:
                self._roles.clear()
            self._roles[pid] = processes.claude_role(pid)
        role = self._roles[pid]
        if role is None and spare_by_roster(self.claude_dir, pid):
            return "spare"
        return role

    def _not_session(self, session_id: str) -> None:
        if len(self._not_sessions) > 1024:
            self._not_sessions.clear()
        self._not_sessions.add(session_id)

    def _settle(self, released: Released) -> None:
        """What core.spare_hooks decided: hooks to apply now, ids that are no session's."""
        for session_id in released.not_sessions:
            self._not_session(session_id)
        for hook in released.apply:
            self.apply(hook)

    def _entrypoint(self, signal: HookSignal, ppid: int | None, pid: int | None) -> str | None:
        """How the session's Claude was started, once per session (read while the hook's
        process waits for our answer): ``CLAUDE_CODE_ENTRYPOINT`` in the hook's or Claude's
        environment (SDKs set it: ``sdk-ts``, ``sdk-py``), else ``sdk-cli`` when Claude runs
        with ``-p``. So a session with no PID file is told non-interactive too."""
        sid = signal.session_id
        if sid in self._entry_cache:
            return self._entry_cache[sid]
        entry = None
        for proc in (ppid, pid):
            if proc and entry is None:
                entry = processes.environ_value(proc, "CLAUDE_CODE_ENTRYPOINT")
        if entry is None and pid and processes.print_mode(pid):
            entry = "sdk-cli"
        if len(self._entry_cache) > 4096:
            self._entry_cache.clear()
        self._entry_cache[sid] = entry
        return entry

    def _call_waits(self, pending: Pending) -> None:
        """A call registered (any thread): its row says what it asks, from the call itself."""
        signal = HandlerWaits(
            at=now_ms(),
            session_id=pending.session_id,
            tool_name=pending.tool_name,
            tool_input=pending.tool_input,
        )
        with contextlib.suppress(RuntimeError, AssertionError):  # (a hub stopping)
            self.submit(signal)

    def _origin(self, session_id: str, pid: int) -> None:
        """An Agent SDK run's program (its CLI's parent) and, for a notebook's kernel, the
        notebook its Jupyter server publishes; once per session (a few /proc reads)."""
        if len(self._origins) > 4096:
            self._origins.clear()
        self._origins.add(session_id)
        found = program_of(pid, self.home)
        if found is not None:
            self.apply(
                Origin(
                    at=now_ms(),
                    session_id=session_id,
                    program=found.name,
                    kernel_id=found.kernel_id,
                    notebook=found.notebook,
                )
            )

    def apply(self, signal: Signal) -> list[Change]:
        """Apply one signal through the tracker, persist, fan out. Hub thread only."""
        if isinstance(signal, PidFile) and self._spare_hooks.holding(signal.record.pid):
            # a process whose hooks are held: a job's come first, as they did
            self._settle(self._spare_hooks.on_record(signal.record))
        now = now_ms()
        try:
            step = reduce(self.fleet, signal, now)
        except Exception:
            self.errors += 1
            log.exception("tracker failed on %r", signal)
            return []
        if not step.changes:
            return []
        self.fleet = step.sessions
        try:
            if self._store is not None:
                self._store.apply(step.changes, now)
        except Exception:
            self.errors += 1
            log.exception("store failed")
        for listener in list(self._listeners):
            try:
                listener(step.changes, self.fleet)
            except Exception:
                log.exception("listener %r failed", listener)
        if self._callbacks:
            self._queue_callbacks(step.changes, signal.live)
        if isinstance(signal, PidFile):
            self._origin_of_pid_file(signal.record)
        return step.changes

    def _origin_of_pid_file(self, record: PidRecord) -> None:
        """An SDK run seen through its PID file (``entrypoint`` ``sdk-*``): where it comes
        from, as its hooks would tell (with ``setting_sources=[]`` no hook ever comes)."""
        entry = record.entrypoint or ""
        if entry.startswith("sdk-") and record.session_id not in self._origins:
            session = self.fleet.get(record.session_id)
            if session is not None and session.running and not session.ended:
                self._origin(record.session_id, record.pid)

    def submit(self, signal: Signal) -> None:
        """Apply ``signal`` on the hub thread (from any thread)."""
        self.loop.call_soon_threadsafe(self.apply, signal)

    def call(self, fn: Callable[[], Any], timeout: float = 10) -> Any:
        """Run ``fn`` on the hub thread and return its result (from another thread)."""
        if threading.current_thread() is self._thread:
            return fn()
        if not self.running:
            raise RuntimeError("the pmux-widget hub is not running")
        done = asyncio.run_coroutine_threadsafe(_call_async(fn), self.loop)
        return done.result(timeout)

    # ------------------------------------------------------------------ fan-out

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """``listener(changes, fleet)`` runs on the hub thread after each step: keep it quick."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def on(
        self, what: str, callback: Callable[[Session], Any], *, replay: bool = False
    ) -> Callable[[], None]:
        """Call ``callback(session)`` on each change (``"change"``) or entry into a state;
        a silent signal's (restore, spool replay, recovery) only with ``replay``."""
        entry = (what, callback, replay)
        self._callbacks.append(entry)
        return lambda: self._callbacks.remove(entry) if entry in self._callbacks else None

    def _queue_callbacks(self, changes: list[Change], live: bool) -> None:
        for change in changes:
            for what, callback, replay in list(self._callbacks):
                if not (live or replay):
                    continue
                if what == "change" or (change.state_changed and change.after.state.value == what):
                    self._callback_queue.put((callback, change.after))

    def _dispatch_callbacks(self) -> None:
        while True:
            item = self._callback_queue.get()
            if item is None:
                return
            callback, session = item
            try:
                callback(session)
            except Exception:
                log.exception("pmux_widget.on callback %r failed", callback)

    # ------------------------------------------------------------------ reading

    def sessions(self) -> list[Session]:
        return list(self.fleet.values())

    def snapshot_json(self, include_ended: bool = False) -> dict[str, Any]:
        """``{"sessions": [...], "counts": {...}}`` as in the contract (the live sessions;
        the ended ones too with ``include_ended``)."""
        return fleet_json(self.fleet.values(), include_ended=include_ended, host=self.host_name)

    @property
    def sources(self) -> tuple[Source, ...]:
        """The sources this hub started (empty before it runs)."""
        return tuple(self._sources)

    @property
    def store(self) -> Store | None:
        """The SQLite store (None before the hub runs). Hub thread for writes."""
        return self._store

    @property
    def cursors(self) -> CursorStore | None:
        """Where the transcript follower keeps its cursors (the store)."""
        return self._store

    def history(self, session_id: str | None = None) -> list[Transition]:
        """Recorded state changes, oldest first (empty before the hub runs)."""
        return self._store.history(session_id) if self._store is not None else []

    def health(self) -> dict[str, Any]:
        return {"ok": True, "version": __version__, "port": self.port, "errors": self.errors}

    # ------------------------------------------------------------------ user actions

    def dismiss(self, session_id: str) -> None:
        self.submit(Dismiss(at=now_ms(), session_id=session_id))

    def seen(self, session_id: str, *, spread: bool = True) -> None:
        """The user looks at the session (its terminal tab, its pane, its peek or attach): a
        review ends, silently (``user:seen``); any other state stays. ``spread``: the
        machine's other hubs are told too (``runtime.looks``: the one that publishes to the
        fleet among them); False for a look another hub told us of."""
        self.submit(Seen(at=now_ms(), session_id=session_id))
        if spread and self.port:
            spread_seen(self.home, self.runtime_file, session_id)

    def record_action(self, session_id: str, action: ActionName, origin: str = "") -> None:
        """Keys for ``action`` reached the session's pane (``runtime.actions``): the state it
        leads to will say so (``action:<name>``, or ``action:<name>@<origin>`` for an answer
        from elsewhere: a phone's device). Applied in order with every other signal."""
        self.submit(ActionTaken(at=now_ms(), session_id=session_id, action=action, origin=origin))


async def _call_async(fn: Callable[[], Any]) -> Any:
    return fn()
