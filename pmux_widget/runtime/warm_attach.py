"""Warm attaches: ``claude attach <job>`` started while a background session waits on a dialog,
so an action on it only reads the screen and types (P19).

A cold attach is a CLI start (0.5-1 s before it draws, 2 s on a loaded machine). So when a
background session enters needs-input, the hub starts one on a worker thread (never its own)
in a private tmux server (``system.attach``) and holds it while the session waits; an action
then uses it with every check of a cold one (the screen shows what it answers, choice by label,
a refused action types nothing) and does not detach. It is released (Ctrl+Z, then the client
by pid) when the session leaves needs-input, stops or ends, and when the hub stops — except
that an attach an action went through stays LINGER_S (10 s) more while its session runs: the
follow-up (a prompt after a denial, Esc of the turn a prompt started) is then only keys too.

One per job, machine-wide: several hubs (each kernel, the Jupyter server) watch the same
sessions. A claim file ``<PMUX_WIDGET_HOME>/attach/<job>.json`` (0700 folder, 0600 file) names
the held attach (its server's socket, pane and client pid) and the hub holding it; it is read
and changed only under ``flock`` on ``<job>.lock``, which an action holds while it types, so
two actions never type into one attach at once. Any hub uses a live claim; only its holder
releases it, unless that holder is gone (then whoever sees the claim takes it over or ends it).

Costs, observed on 2.1.197 and 2.1.332 (docs/claude-code-behaviour.md): a held client is a
100-150 MB process that wakes now and then (0.02-0.1 s CPU per 5 s), and attaching resizes the
session's PTY to ours (200x50), which garbles a narrower attach of the user's on 2.1.332. So an
attach is held only while a dialog waits, only when no other ``claude attach`` of that job runs
(the user's own, which shows the dialog already), and at most :data:`MAX_WARM` machine-wide.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Change, Session, State
from pmux_widget.system import attach
from pmux_widget.system.processes import pid_alive
from pmux_widget.system.tmux import PaneInfo

from . import background_actions
from .protocols import HubView

__all__ = ["LINGER_S", "MAX_WARM", "WarmAttaches", "claim_of", "held", "warm_source"]

log = logging.getLogger(__name__)

#: At most this many warm attaches held machine-wide (each a 100-150 MB CLI process).
MAX_WARM = 4
#: How long an action waits for another to finish typing into the same attach.
LOCK_WAIT_S = 5.0
#: How long an attach an action went through is kept after its session left needs-input.
LINGER_S = 10.0

#: The hubs of this process that may hold claims (a claim of a live process names one).
_live_hubs: set[str] = set()
_live_lock = threading.Lock()


def _folder(home: Path) -> Path:
    folder = home / "attach"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def _locked(home: Path, job: str, wait: float | None = None) -> Iterator[bool]:
    """``flock`` on the job's lock file; yields False when ``wait`` passed without it."""
    fd = _lock(home, job, wait)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _lock(home: Path, job: str, wait: float | None) -> int | None:
    fd = os.open(_folder(home) / f"{job}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if deadline is None else fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if deadline is not None and time.monotonic() >= deadline:
                os.close(fd)
                return None
            time.sleep(0.01)


def _read(home: Path, job: str) -> dict[str, Any] | None:
    try:
        data = json.loads((_folder(home) / f"{job}.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write(home: Path, job: str, claim: Mapping[str, Any]) -> None:
    path = _folder(home) / f"{job}.json"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(dict(claim), handle)
    os.replace(tmp, path)


def _remove(home: Path, job: str) -> None:
    with contextlib.suppress(OSError):
        (_folder(home) / f"{job}.json").unlink()


def _opened(claim: Mapping[str, Any]) -> attach.Opened | None:
    try:
        return attach.Opened(
            str(claim["folder"]), str(claim["socket"]), str(claim["pane_id"]),
            int(claim["client_pid"]),
        )  # fmt: skip
    except (KeyError, TypeError, ValueError):
        return None


def _holder_alive(claim: Mapping[str, Any]) -> bool:
    pid, hub = claim.get("holder_pid"), claim.get("holder_hub")
    if not isinstance(pid, int) or not pid_alive(pid):
        return False
    if pid == os.getpid():
        with _live_lock:
            return hub in _live_hubs
    return True


def _other_attach_runs(job: str, ours: int | None) -> bool:
    """A ``claude attach <job>`` not of ours runs (the user's own): its screen has the dialog."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == ours:
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if b"attach" in argv and job.encode() in argv:
            return True
    return False


def _held_count(home: Path) -> int:
    count = 0
    for path in _folder(home).glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            opened = _opened(json.loads(path.read_text()))
            if opened is not None and attach.attach_alive(opened):
                count += 1
    return count


@contextlib.contextmanager
def held(home: Path, job: str) -> Iterator[PaneInfo | None]:
    """The live warm attach of ``job`` for the block (locked: no other action types into it
    meanwhile), or None: then the caller attaches cold. Never detached here."""
    try:
        fd = _lock(home, job, LOCK_WAIT_S)
    except OSError:
        fd = None
    try:
        claim = _read(home, job) if fd is not None else None
        opened = _opened(claim) if claim is not None else None
        if claim is None or opened is None or not attach.attach_alive(opened):
            yield None
            return
        # a follow-up (a prompt after a denial, an Esc of the turn it started) comes soon:
        # the holder keeps it LINGER_S more once the session moved on
        _write(home, job, {**claim, "used_at": time.time()})
        yield opened.pane
    finally:
        if fd is not None:
            os.close(fd)


def claim_of(home: Path, job: str) -> dict[str, Any] | None:
    """The claim of ``job``'s warm attach as its file says (for tests and ``doctor``)."""
    return _read(home, job)


class WarmAttaches:
    """The hub's side: warms on needs-input, releases after; work on one worker thread."""

    def __init__(self, hub: HubView, home: Path, hub_id: str) -> None:
        self.hub = hub
        self.home = home
        self.hub_id = hub_id
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pmux-warm")
        #: session id → its worker, for the sessions warmed (the hub and worker threads)
        self._wanted: dict[str, background_actions.Worker] = {}
        self._guard = threading.Lock()
        self._timers: list[threading.Timer] = []
        self._stopping = False
        self._remove_listener: Callable[[], None] | None = None

    async def start(self) -> None:
        with _live_lock:
            _live_hubs.add(self.hub_id)
        self._remove_listener = self.hub.add_listener(self._changed)
        for session in list(self.hub.fleet.values()):
            self._consider(session)

    async def stop(self) -> None:
        if self._remove_listener is not None:
            self._remove_listener()
        with self._guard:
            self._stopping = True
            for timer in self._timers:
                timer.cancel()
            jobs = [worker.job for worker in self._wanted.values()]
            self._wanted.clear()
        for job in jobs:
            self._pool.submit(self._release, job)
        # The releases finish before the hub's stop returns: no client left behind.
        self._pool.shutdown(wait=True)
        with _live_lock:
            _live_hubs.discard(self.hub_id)

    def _changed(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        for change in changes:
            self._consider(change.after)

    def _consider(self, session: Session) -> None:
        """On the hub thread: only reads the session and a PID file, then hands off."""
        sid = session.session_id
        with self._guard:
            wanted = sid in self._wanted
        if _waiting(session) and session.pid is not None and not wanted:
            worker = background_actions.worker_from_pid_file(
                self.hub.claude_dir / "sessions" / f"{session.pid}.json"
            )
            if worker is not None and worker.pid == session.pid:
                with self._guard:
                    self._wanted[sid] = worker
                self._submit(self._warm, sid, worker)
        elif wanted and not _waiting(session):
            self._submit(self._settle, sid)

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
        with self._guard:
            if not self._stopping:
                self._pool.submit(fn, *args)

    # ---- on the worker thread

    def _warm(self, sid: str, worker: background_actions.Worker) -> None:
        try:
            with _locked(self.home, worker.job):
                if self._wanted.get(sid) != worker:
                    return  # released meanwhile
                claim = _read(self.home, worker.job)
                opened = _opened(claim) if claim is not None else None
                if claim is not None and opened is not None and attach.attach_alive(opened):
                    if not _holder_alive(claim):  # its hub is gone: ours now
                        attach.hold(opened, os.getpid())  # before its watchdog ends it
                        _write(self.home, worker.job, {**claim, **self._holder()})
                    return
                if opened is not None:  # a dead client's claim
                    attach.close_attach(opened)
                    _remove(self.home, worker.job)
                if _other_attach_runs(worker.job, None) or _held_count(self.home) >= MAX_WARM:
                    return
                binary = background_actions.claude_for(self.hub.claude_dir, worker.pid)
                env = attach.cli_environment(self.hub.claude_dir, worker.pid)
                opened = attach.open_attach(binary, worker.job, env)
                _write(
                    self.home,
                    worker.job,
                    {**asdict(opened), "job": worker.job, "worker_pid": worker.pid,
                     **self._holder()},
                )  # fmt: skip
        except Exception:
            log.warning("could not pre-start `claude attach %s`", worker.job, exc_info=True)

    def _settle(self, sid: str) -> None:
        """The session left needs-input: release its attach, unless an action went through
        it less than LINGER_S ago and the session still runs (then look again later)."""
        with self._guard:
            worker = self._wanted.get(sid)
        session = self.hub.fleet.get(sid)
        if worker is None or (session is not None and _waiting(session)):
            return
        claim = _read(self.home, worker.job) or {}
        used = claim.get("used_at")
        left = (float(used) + LINGER_S - time.time()) if isinstance(used, int | float) else 0.0
        alive = session is not None and session.running and not session.ended
        if alive and left > 0 and claim.get("holder_hub") == self.hub_id:
            with self._guard:
                if self._stopping:
                    return
                timer = threading.Timer(left + 0.05, self._submit, (self._settle, sid))
                timer.daemon = True
                self._timers = [t for t in self._timers if t.is_alive()] + [timer]
                timer.start()
            return
        with self._guard:
            if self._wanted.get(sid) != worker:
                return
            del self._wanted[sid]
        self._release(worker.job)

    def _release(self, job: str) -> None:
        try:
            with _locked(self.home, job):
                claim = _read(self.home, job)
                if claim is None:
                    return
                mine = claim.get("holder_hub") == self.hub_id
                if not mine and _holder_alive(claim):
                    return  # another hub's: it releases it
                opened = _opened(claim)
                if opened is not None:
                    attach.close_attach(opened)
                _remove(self.home, job)
        except Exception:
            log.warning("could not release `claude attach %s`", job, exc_info=True)

    def _holder(self) -> dict[str, Any]:
        return {"holder_pid": os.getpid(), "holder_hub": self.hub_id}


def _waiting(session: Session) -> bool:
    return session.state is State.NEEDS_INPUT and session.running and not session.ended


def warm_source(hub: HubView) -> WarmAttaches:
    """The source factory the default wiring adds (``runtime.assemble``)."""
    home = getattr(hub, "home", None)
    root = getattr(home, "root", None)
    if not isinstance(root, Path):
        raise TypeError("a warm-attach source needs a hub with a PmuxHome")
    return WarmAttaches(hub, root, str(getattr(hub, "hub_id", os.getpid())))
