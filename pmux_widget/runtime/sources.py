"""The hub's signal sources besides HTTP: PID files, transcripts, the poller, and recovery.

Each source turns a part of the world into signals and hands them to ``hub.apply`` on the hub
thread; none decides a state. Blocking work (reading a big transcript, walking /proc, asking
tmux) runs on worker threads so the hub keeps answering hooks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import watchfiles

from pmux_widget.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.claude.pidfiles import is_alive, read_pid_file, scan_pid_files
from pmux_widget.claude.transcript import TailResult, TranscriptTailer
from pmux_widget.core.model import Session, State
from pmux_widget.core.signals import (
    Invalid,
    Locate,
    PidFile,
    PidRecord,
    PollTick,
    ProcessGone,
    Recover,
    Signal,
    TranscriptInterrupt,
    TranscriptUpdate,
)
from pmux_widget.system import processes, tmux
from pmux_widget.system.clock import now_ms

if TYPE_CHECKING:
    from .hub import Hub

__all__ = ["poll_interval", "recovery_signal", "start_sources"]

log = logging.getLogger(__name__)

#: States whose transcripts are followed live (as the seed says); others get a one-time read.
FOLLOWED_STATES = frozenset({State.BUSY, State.NEEDS_INPUT, State.UNKNOWN, State.REVIEW})
#: After a PID file disappears, check the pid again this much later (confirms "gone").
GONE_RECHECK_S = 1.5
#: How often live sessions' pids are checked (kill -9 leaves the PID file behind).
LIVENESS_S = 2.0
#: Wait this long after a hookless PID ``idle`` for the transcript to catch up.
PID_IDLE_SETTLE_S = 0.35
#: While a watched dir does not exist yet (Claude creates ``sessions/`` at its first start and
#: ``projects/<dir>`` with a session's first line), look for it this often.
DIR_RETRY_S = 0.25
#: After (re)starting a watch, scan its files once more this much later: what was written
#: between the scan and the watch being in place raises no event.
WATCH_CATCH_UP_S = 0.1
#: watchfiles wakes every ``step`` ms while idle (taking the GIL): 100 ms keeps two watchers
#: near 0.2 % of a core (measured: 0.7 % at 20 ms) and adds ~100 ms to a file's signal.
_WATCH = {"debounce": 200, "step": 100, "rust_timeout": 5000}


def poll_interval(session_count: int) -> float:
    """30 s up to 10 sessions, 45 s up to 20, 60 s beyond (``PMUX_WIDGET_POLL_SECONDS``)."""
    override = os.environ.get("PMUX_WIDGET_POLL_SECONDS")
    if override:
        with contextlib.suppress(ValueError):
            return max(0.2, float(override))
    if session_count <= 10:
        return 30.0
    return 45.0 if session_count <= 20 else 60.0


def followed(session: Session) -> bool:
    """Is this session's transcript followed live? Work states and review, and also an idle
    session whose Claude still runs: after Esc or "No" on a dialog the PID file turns idle
    100-200 ms BEFORE the interrupt marker and the rejected tool's result reach the transcript
    (measured), and /clear and /compact write theirs while idle. An idle transcript gets no
    writes otherwise, so following it costs nothing."""
    return session.state in FOLLOWED_STATES or (session.running and not session.ended)


def _now() -> int:
    return now_ms()


class Sources:
    """Owns the watchers and the poller of one hub; :meth:`stop` cancels them all."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.claude = ClaudeHome.resolve(hub.claude_dir)
        self.tail_pool = ThreadPoolExecutor(1, thread_name_prefix="pmux-tail")
        self.probe_pool = ThreadPoolExecutor(1, thread_name_prefix="pmux-probe")
        self.tailers: dict[str, TranscriptTailer] = {}  # transcript path → tailer
        self.path_owner: dict[str, str] = {}  # transcript path → session id
        self.pid_files: dict[str, PidRecord] = {}  # PID-file path → last record
        self.tasks: list[asyncio.Task[Any]] = []
        self.stop_event = asyncio.Event()
        self.watch_restart = asyncio.Event()
        self.watched_roots: list[Path] = []
        self.background: set[asyncio.Future[Any]] = set()
        self.pidfds: dict[int, int] = {}  # pid → pidfd on the hub loop
        self.extra_roots: set[Path] = set()  # watched dirs outside projects/
        self.unrooted: set[str] = set()  # transcripts outside projects/ with no dir yet
        self.unlisten = hub.add_listener(self._on_changes)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        records = await self._in(self.probe_pool, self._scan_pid_files)
        await self._recover(records)
        for path, record, alive in records:
            self.pid_files[path] = record
            if alive:
                self.hub.apply(PidFile(at=record.event_time or _now(), live=False, record=record))
        for session in list(self.hub.fleet.values()):
            self._track(session)
        await self._tail_all(first_read=True)
        self.tasks = [
            asyncio.ensure_future(self._watch_pid_files()),
            asyncio.ensure_future(self._watch_transcripts()),
            asyncio.ensure_future(self._poll_loop()),
            asyncio.ensure_future(self._liveness_loop()),
        ]

    async def stop(self) -> None:
        self.unlisten()
        self.stop_event.set()
        self.watch_restart.set()
        tasks = [*self.tasks, *self.background]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._save_cursors()
        for pid in list(self.pidfds):
            self._unwatch_exit(pid)
        self.tail_pool.shutdown(wait=False, cancel_futures=True)
        self.probe_pool.shutdown(wait=False, cancel_futures=True)

    async def _in(self, pool: ThreadPoolExecutor, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    # ------------------------------------------------------------------ recovery

    def _scan_pid_files(self) -> list[tuple[str, PidRecord, bool]]:
        found = []
        for path, record in scan_pid_files(self.claude):
            if isinstance(record, Invalid):
                log.debug("ignoring PID file %s: %s", path, record.reason)
                continue
            found.append((str(path), record, is_alive(record)))
        return found

    async def _recover(self, records: list[tuple[str, PidRecord, bool]]) -> None:
        """Re-verify sessions a restart left ``unknown`` (spooled hooks were replayed)."""
        by_session = {record.session_id: (record, alive) for _, record, alive in records}
        unknown = [s for s in self.hub.fleet.values() if s.state is State.UNKNOWN]
        for session in unknown:
            record, alive = by_session.get(session.session_id, (None, False))
            ending = None
            path = self._transcript_path(session, record)
            if path is not None:
                self.path_owner[path] = session.session_id
                result = await self._in(self.tail_pool, self._poll_tailer, path)
                if result is not None:
                    self._apply_tail(path, result)
                    ending = result.facts.ending
            self.hub.apply(recovery_signal(session, record, alive, ending))

    # ------------------------------------------------------------------ PID files

    async def _watch_pid_files(self) -> None:
        directory = self.claude.sessions_dir
        while not self.stop_event.is_set():
            if not directory.is_dir():  # the first Claude ever run here creates it
                await self._sleep(DIR_RETRY_S)
                continue
            await self._rescan_pid_files()
            # A PID file written between that scan and the watch being in place raises no
            # event: scan once more when it is.
            self._spawn(self._after_watch_start(self._rescan_pid_files))
            try:
                async for changes in watchfiles.awatch(
                    directory, stop_event=self.stop_event, recursive=False, **_WATCH
                ):
                    await self._on_pid_changes(changes)
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                log.debug("PID-file watcher restarting: %s", exc)
                await self._sleep(1.0)

    async def _rescan_pid_files(self) -> None:
        records = await self._in(self.probe_pool, self._scan_pid_files)
        seen = set()
        for path, record, alive in records:
            seen.add(path)
            known = self.pid_files.get(path)
            self.pid_files[path] = record
            if alive and known != record:
                self.hub.apply(PidFile(at=record.event_time or _now(), record=record))
        for path in set(self.pid_files) - seen:
            await self._pid_file_removed(path)

    async def _on_pid_changes(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        for change, path in sorted(changes, key=lambda c: c[1]):
            if not Path(path).name.removesuffix(".json").isdigit():
                continue
            if change is watchfiles.Change.deleted:
                await self._pid_file_removed(path)
                continue
            record = read_pid_file(Path(path))
            if isinstance(record, Invalid):
                continue  # torn write or garbage: the next write event brings the real one
            self.pid_files[path] = record
            alive = await self._in(self.probe_pool, is_alive, record)
            if alive:
                self._spawn(self._apply_pid_file(record))

    async def _after_watch_start(self, fn: Callable[[], Awaitable[None]]) -> None:
        """Run ``fn`` once a watch just started is in place (awatch sets it up on its first
        step, right after the caller spawned this)."""
        await self._sleep(WATCH_CATCH_UP_S)
        if not self.stop_event.is_set():
            with contextlib.suppress(RuntimeError):  # pools shut down by a concurrent stop
                await fn()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    async def _apply_pid_file(self, record: PidRecord) -> None:
        """Apply a live PID file; a hookless ``idle`` first lets the transcript settle.

        Measured: the PID file turns idle 85-185 ms before the Esc marker (or the /clear and
        /compact records) reach the transcript, and the PID-only rule needs them to tell a
        finished turn (review) from an interrupted one (idle). Leaving a dialog too: its busy
        moment can be too short to see, and only the transcript tells an approval that ran to
        its end from a dismissal. A newer PID file applied in the meantime wins: the tracker
        orders by ``statusUpdatedAt``.
        """
        session = self.hub.fleet.get(record.session_id)
        settle = (
            record.status == "idle"
            and session is not None
            and not session.hooked
            and session.state in (State.BUSY, State.UNKNOWN, State.NEEDS_INPUT)
        )
        if settle and session is not None:
            await self._sleep(PID_IDLE_SETTLE_S)
            path = self._transcript_path(session, record)
            if path is not None:
                self.path_owner.setdefault(path, record.session_id)
                await self._tail([path])
        self.hub.apply(PidFile(at=record.event_time or _now(), record=record))

    async def _pid_file_removed(self, path: str) -> None:
        record = self.pid_files.pop(path, None)
        if record is None:
            return
        for _ in range(2):  # confirmed twice (the tracker counts the strikes)
            if await self._in(self.probe_pool, processes.pid_alive, record.pid):
                return
            self.hub.apply(ProcessGone(at=_now(), session_id=record.session_id, pid=record.pid))
            await self._sleep(GONE_RECHECK_S)

    # ------------------------------------------------------------------ transcripts

    def _transcript_path(self, session: Session, record: PidRecord | None = None) -> str | None:
        """The hook's path (authoritative), else derived from the PID file's cwd and id."""
        if session.transcript_path:
            return session.transcript_path
        cwd = record.cwd if record is not None else session.cwd
        if cwd:
            return str(transcript_path_for(self.claude, cwd, session.session_id))
        return None

    def _track(self, session: Session) -> bool:
        """Make sure a session's transcript has a tailer; True if it is new."""
        path = self._transcript_path(session)
        if path is None or path in self.tailers:
            if path is not None:
                self.path_owner[path] = session.session_id
            return False
        self.path_owner[path] = session.session_id
        cursor = self.hub._store.load_cursor(path) if self.hub._store is not None else None
        tailer = None
        if cursor:
            with contextlib.suppress(Exception):
                tailer = TranscriptTailer.from_cursor(path, cursor)
        self.tailers[path] = tailer or TranscriptTailer(path)
        self._add_root_for(path)
        self._roots_may_have_changed()
        return True

    def _poll_tailer(self, path: str) -> TailResult | None:
        tailer = self.tailers.get(path)
        if tailer is None:
            tailer = self.tailers[path] = TranscriptTailer(path)
        try:
            return tailer.poll()
        except Exception:  # a tailer bug must not stop the hub
            log.exception("tailing %s failed", path)
            return None

    def _apply_tail(self, path: str, result: TailResult) -> None:
        session_id = self.path_owner.get(path)
        if session_id is None or (not result.changed and not result.interrupts):
            return
        facts = result.facts
        # No timestamped record yet (only the title / mode lines a session starts with): the
        # update must not look newer than anything. "Now" would, and records flushed later
        # carry earlier timestamps (the tool_use of a hookless first turn was then ignored).
        at = facts.last_record_at or 0
        signals: list[Signal] = [
            TranscriptUpdate(
                at=at,
                session_id=session_id,
                transcript_path=path,
                model=facts.model,
                current_tool=facts.current_tool,
                tool_summary=facts.tool_summary,
                last_assistant=facts.last_assistant,
                last_prompt=facts.last_prompt,
                tokens=facts.tokens,
                context_tokens=facts.context_tokens,
                api_error=facts.api_error,
                ending=facts.ending,
                cwd=facts.cwd,
            )
        ]
        signals += [TranscriptInterrupt(at=ts, session_id=session_id) for ts in result.interrupts]
        for signal in signals:
            self.hub.apply(signal)
        if self.hub._store is not None:
            tailer = self.tailers.get(path)
            if tailer is not None:
                self.hub._store.save_cursor(path, session_id, tailer.to_cursor(), _now())

    async def _tail(self, paths: Iterable[str]) -> None:
        for path in paths:
            result = await self._in(self.tail_pool, self._poll_tailer, path)
            if result is not None:
                self._apply_tail(path, result)

    async def _tail_all(self, first_read: bool = False) -> None:
        paths = [
            path
            for path, sid in self.path_owner.items()
            if (s := self.hub.fleet.get(sid)) is not None and (first_read or followed(s))
        ]
        await self._tail(paths)

    def _roots(self) -> list[Path]:
        """The dirs to watch: projects/, plus the dirs of transcripts outside it."""
        for path in list(self.unrooted):  # their dirs may exist by now
            self._add_root_for(path)
        roots = set(self.extra_roots)
        if self.claude.projects_dir.is_dir():
            roots.add(self.claude.projects_dir)
        return sorted(roots)

    def _add_root_for(self, path: str) -> None:
        """Note the dir to watch for a transcript outside projects/ (another config dir):
        its project dir, or the projects dir above it while Claude has not created the
        project dir yet; never higher. (Per new transcript: constant time.)"""
        projects = str(self.claude.projects_dir).rstrip("/") + "/"
        if path.startswith(projects):
            return
        parent = Path(path).parent
        for candidate in (parent, parent.parent):
            if candidate.is_dir() and candidate.name and candidate != Path.home():
                self.extra_roots.add(candidate)
                self.unrooted.discard(path)
                return
        self.unrooted.add(path)

    async def _watch_transcripts(self) -> None:
        """Watch the dirs holding followed transcripts; restart when that set of dirs moves."""
        while not self.stop_event.is_set():
            self.watched_roots = self._roots()
            self.watch_restart = asyncio.Event()
            if not self.watched_roots:
                await self._sleep(DIR_RETRY_S if self.tailers else 2.0, self.watch_restart)
                continue
            # Lines written before the new watch was in place raise no event (e.g. a whole
            # first turn written before its project dir was watched): read them then.
            self._spawn(self._after_watch_start(self._tail_all))
            try:
                async for changes in watchfiles.awatch(
                    *self.watched_roots, stop_event=self.watch_restart, **_WATCH
                ):
                    await self._on_transcript_changes(changes)
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                log.debug("transcript watcher restarting: %s", exc)
                await self._sleep(1.0)

    def _roots_may_have_changed(self) -> None:
        if not self.watched_roots or self._roots() != self.watched_roots:
            self.watch_restart.set()  # (nothing watched yet: look again at the retry pace)

    async def _on_transcript_changes(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        touched = []
        for change, path in changes:
            sid = self.path_owner.get(path)
            if sid is None:
                if change is watchfiles.Change.added:
                    self._new_dir(path)
                continue
            session = self.hub.fleet.get(sid)
            if session is not None and followed(session):
                touched.append(path)
        await self._tail(dict.fromkeys(touched))

    def _new_dir(self, path: str) -> None:
        """A dir appeared under a watched root: the watch on it is added only now, so lines
        written to a followed transcript inside it before that raised no event."""
        prefix = path.rstrip("/") + "/"
        inside = [p for p in self.path_owner if p.startswith(prefix)]
        if inside:
            self._spawn(self._after_watch_start(lambda: self._tail(inside)))

    def _on_changes(self, changes: list[Any], fleet: dict[str, Session]) -> None:
        """Listener: a session seen for the first time, or with a new transcript, is tracked."""
        for change in changes:
            after, before = change.after, change.before
            if after.pid is not None and not after.ended and after.running:
                self._watch_exit(after.pid)
            moved = before is None or before.transcript_path != after.transcript_path
            if moved and self._track(after):
                path = self._transcript_path(after)
                if path is not None:
                    self._spawn(self._tail([path]))

    def _save_cursors(self) -> None:
        store = self.hub._store
        if store is None:
            return
        for path, tailer in self.tailers.items():
            with contextlib.suppress(Exception):
                store.save_cursor(path, self.path_owner.get(path), tailer.to_cursor(), _now())

    # ------------------------------------------------------------------ poller

    async def _poll_loop(self) -> None:
        while not self.stop_event.is_set():
            await self._sleep(poll_interval(len(self.hub.fleet)))
            if self.stop_event.is_set():
                return
            try:
                await self.poll_once()
            except Exception:
                log.exception("poll failed")

    async def _liveness_loop(self) -> None:
        """Every few seconds, a pid check of the running sessions no pidfd watches."""
        while not self.stop_event.is_set():
            await self._sleep(LIVENESS_S)
            for session in list(self.hub.fleet.values()):
                if session.pid is None or session.ended or not session.running:
                    continue
                if self._watch_exit(session.pid):
                    continue  # the kernel tells us when it exits
                if not processes.pid_alive(session.pid):
                    self.hub.apply(
                        ProcessGone(at=_now(), session_id=session.session_id, pid=session.pid)
                    )

    def _watch_exit(self, pid: int) -> bool:
        """Be woken when ``pid`` exits (a pidfd on the hub loop: no cost while it runs).
        False where pidfds are not available (then the liveness loop polls)."""
        if pid in self.pidfds:
            return True
        if not hasattr(os, "pidfd_open"):
            return False
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return False  # already gone, or no pidfd support: the loop will see it
        self.pidfds[pid] = fd
        asyncio.get_running_loop().add_reader(fd, self._on_exit, pid)
        return True

    def _unwatch_exit(self, pid: int) -> None:
        fd = self.pidfds.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def _on_exit(self, pid: int) -> None:
        self._unwatch_exit(pid)
        self._spawn(self._report_exit(pid))

    async def _report_exit(self, pid: int) -> None:
        """The process exited: report it until the tracker agrees (two checks, and not
        within the session's boot window)."""
        for _ in range(12):
            pending = [
                s for s in self.hub.fleet.values() if s.pid == pid and not s.ended and s.running
            ]
            if not pending:
                return
            for session in pending:
                self.hub.apply(ProcessGone(at=_now(), session_id=session.session_id, pid=pid))
            await self._sleep(GONE_RECHECK_S)

    async def poll_once(self) -> None:
        """Discover panes and processes, refresh locations and ports, then the safety net."""
        await self._rescan_pid_files()
        sessions = list(self.hub.fleet.values())
        facts = await self._in(self.probe_pool, _probe, sessions)
        for session_id, (location, ports, pid) in facts["where"].items():
            current = self.hub.fleet.get(session_id)
            if current is None:
                continue
            if (
                current.tmux != location
                or current.ports != tuple(ports)
                or (pid is not None and current.pid is None)
            ):
                self.hub.apply(
                    Locate(
                        at=_now(), session_id=session_id, tmux=location, ports=tuple(ports), pid=pid
                    )
                )
        self.hub.apply(PollTick(at=_now(), live=False, alive=facts["alive"]))
        await self._tail_all()

    async def _sleep(self, seconds: float, event: asyncio.Event | None = None) -> None:
        """Sleep, but wake at once when the hub stops (or ``event`` is set)."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for((event or self.stop_event).wait(), seconds)


def recovery_signal(
    session: Session, record: PidRecord | None, alive: bool, ending: str | None
) -> Recover:
    """The facts that re-verify an ``unknown`` session: its process, PID file, transcript."""
    running: bool | None
    if record is not None and alive:
        running = True
    elif session.pid is not None:
        running = processes.pid_alive(session.pid) and (
            processes.claude_ancestor(session.pid) == session.pid
        )
    else:
        running = False if record is not None else None
    return Recover(
        at=_now(),
        live=False,
        session_id=session.session_id,
        process_running=running,
        pid_status=record.status if record is not None and alive else None,
        transcript_ending=ending,
    )


def _probe(sessions: list[Session]) -> dict[str, Any]:
    """Worker thread: liveness, tmux location and listening ports per session."""
    tree = processes.children_map()
    panes = tmux.list_panes()
    pane_of_pid: dict[int, Any] = {}
    for pane in panes:
        for pid in processes.descendants(pane.shell_pid, tree, depth=3):
            pane_of_pid.setdefault(pid, pane)
        pane_of_pid.setdefault(pane.shell_pid, pane)
    alive: dict[str, bool | None] = {}
    families: dict[str, list[int]] = {}
    for session in sessions:
        if session.ended:
            continue
        pid = session.pid
        if pid is None:
            alive[session.session_id] = None
            continue
        living = processes.pid_alive(pid)
        alive[session.session_id] = living
        if living:
            families[session.session_id] = [pid, *processes.descendants(pid, tree, depth=4)]
    ports = processes.listening_ports_by_family(families)
    where: dict[str, tuple[Any, list[int], int | None]] = {}
    for session_id, family in families.items():
        pane = pane_of_pid.get(family[0])
        where[session_id] = (pane.location if pane else None, ports[session_id], family[0])
    return {"alive": alive, "where": where}


async def start_sources(hub: Hub) -> list[Sources]:
    """Recover, then start watching PID files and transcripts and polling (hub thread)."""
    sources = Sources(hub)
    await sources.start()
    return [sources]
