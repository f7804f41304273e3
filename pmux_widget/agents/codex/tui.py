"""Codex TUI processes and threads on this machine: the facts ``core/codex_tui.py`` matches.

A TUI is a process named ``codex`` whose argv is a TUI's (the daemon's and its helper's are
not); its Codex home is its ``CODEX_HOME`` (else ``$HOME/.codex``), its folder its cwd. A
thread's facts come from its rollout's path (``<home>/sessions/…/rollout-…-<id>.jsonl``), its
``session_meta`` line and ``<home>/tui-thread-reference-capabilities/<id>`` (made when a TUI
opens the thread). Blocking (``/proc`` reads): call it from a worker thread.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import psutil

from pmux_widget.core.codex_tui import (
    OPENED_SLACK_MS,
    Opening,
    Thread,
    Tui,
    is_tui_argv,
    match_threads,
    may_show,
    proved_threads,
)
from pmux_widget.system.processes import environ_value, proc_stat

from .paths import ENV_VAR

__all__ = [
    "Shown",
    "home_of_rollout",
    "is_tui_pid",
    "live_threads",
    "openings",
    "shown_by",
    "thread_of",
    "tui_processes",
]

#: How much of a rollout's first line is read for its ``session_meta`` (the base
#: instructions make it tens of kB).
_META_BYTES = 256 * 1024


def _home(pid: int) -> str | None:
    home = environ_value(pid, ENV_VAR)
    if not home:
        user_home = environ_value(pid, "HOME")
        if not user_home:
            return None
        home = os.path.join(user_home, ".codex")
    return os.path.realpath(home)


def tui_processes() -> list[Tui]:
    """Every Codex TUI we can read (not the daemon, not its helpers)."""
    found: list[Tui] = []
    for proc in psutil.process_iter(["name"]):
        if proc.info.get("name") != "codex":
            continue
        tui = _tui(proc)
        if tui is not None:
            found.append(tui)
    return found


def is_tui_pid(pid: int) -> bool:
    """``pid`` is a Codex TUI (not the daemon, not its helper)."""
    try:
        proc = psutil.Process(pid)
        return proc.name() == "codex" and is_tui_argv(proc.cmdline()[1:])
    except (psutil.Error, OSError):
        return False


def _tui(proc: psutil.Process) -> Tui | None:
    try:
        if not is_tui_argv(proc.cmdline()[1:]):
            return None
        home = _home(proc.pid)
        if home is None:
            return None
        rollouts = frozenset(
            os.path.realpath(f.path)
            for f in proc.open_files()
            if os.path.basename(f.path).startswith("rollout-")
        )
        started = _started_ms(proc.pid)
        if started is None:
            return None
        return Tui(proc.pid, home, proc.cwd(), started, rollouts)
    except (psutil.Error, OSError):
        return None


def _started_ms(pid: int) -> int | None:
    """When ``pid`` started, to the clock tick: psutil adds the ticks to the boot time in
    whole seconds (``btime``), up to a second early; a thread opened by another TUI a moment
    before this one started would then count as this one's. The boot time here is the clock
    minus ``/proc/uptime``."""
    info = proc_stat(pid)
    try:
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
        ticks = int(info[1][19]) if info is not None else None
    except (OSError, ValueError, IndexError):
        return None
    if ticks is None:
        return None
    return int((time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")) * 1000)


def home_of_rollout(rollout: str) -> Path | None:
    """The Codex home of ``<home>/sessions/YYYY/MM/DD/rollout-….jsonl``, or None."""
    path = Path(rollout)
    if len(path.parents) < 5 or path.parents[3].name != "sessions":
        return None
    return path.parents[4]


def thread_of(thread_id: str, rollout: str) -> Thread | None:
    """A thread's facts from its rollout (None when it is not a Codex rollout, or unread)."""
    home = home_of_rollout(rollout)
    if home is None:
        return None
    try:
        with open(rollout, "rb") as handle:
            first = handle.readline(_META_BYTES)
        meta = json.loads(first)
        payload = meta["payload"]
        cwd = payload["cwd"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if meta.get("type") != "session_meta" or not isinstance(cwd, str):
        return None
    opened: list[int] = []
    with contextlib.suppress(OSError):
        mark = home / "tui-thread-reference-capabilities" / thread_id
        opened.append(int(mark.stat().st_mtime * 1000))
    stamp = payload.get("timestamp") or meta.get("timestamp")
    if isinstance(stamp, str):
        with contextlib.suppress(ValueError):
            opened.append(
                int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
            )
    real = os.path.realpath(home)
    return Thread(
        thread_id,
        real,
        os.path.realpath(cwd),
        os.path.realpath(rollout),
        min(opened) if opened else None,
    )


def openings(home: str, known: Iterable[Thread] = ()) -> list[Opening]:
    """Every thread a TUI of ``home`` opened (its marks), with the folder of those in
    ``known``."""
    folders = {t.thread_id: t.cwd for t in known}
    found: list[Opening] = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(Path(home) / "tui-thread-reference-capabilities"):
            with contextlib.suppress(OSError):
                opened = int(entry.stat().st_mtime * 1000)
                found.append(Opening(entry.name, home, opened, folders.get(entry.name)))
    return found


@dataclass(frozen=True, slots=True)
class Shown:
    """Thread id → TUI pid: where each row is placed (``placed``), the part of it that
    process facts alone prove (``proved``), and every TUI that may show it (``may_show``)."""

    placed: dict[str, int]
    proved: dict[str, int]
    may_show: dict[str, frozenset[int]]


def shown_by(threads: Iterable[tuple[str, str]]) -> Shown:
    """(thread id, rollout) pairs → which TUI shows each, and whether that is proved."""
    facts = [t for t in (thread_of(sid, path) for sid, path in threads) if t is not None]
    if not facts:
        return Shown({}, {}, {})
    tuis = tui_processes()
    return Shown(
        dict(match_threads(facts, tuis)),
        dict(proved_threads(facts, tuis)),
        {t.thread_id: frozenset(may_show(t, tuis)) for t in facts},
    )


#: Rollouts found by thread id (a thread's rollout never moves): each is looked for once.
_FOUND: dict[str, str] = {}


def _rollout_of(home: str, opening: Opening) -> str | None:
    """The rollout of a thread, looked for in the day folders of its opening (local time
    and UTC: the folder is named by Codex's clock); None until its first prompt writes it."""
    found = _FOUND.get(opening.thread_id)
    if found is not None:
        return found
    stamp = opening.opened_ms / 1000
    days = {time.strftime("%Y/%m/%d", f(stamp)) for f in (time.localtime, time.gmtime)}
    for day in sorted(days):
        for path in (Path(home) / "sessions" / day).glob(f"rollout-*-{opening.thread_id}.jsonl"):
            _FOUND[opening.thread_id] = str(path)
            return str(path)
    return None


def live_threads(homes: Iterable[str]) -> list[tuple[str, str, int | None]]:
    """(thread id, rollout, TUI pid) of the threads the live TUIs of ``homes`` (Codex homes,
    real paths) may show, hooks or none: the threads opened in each home since its oldest TUI
    started, placed in their TUIs as ``core/codex_tui.py`` places them; a thread process facts
    cannot place (a ``/new`` beside another TUI of its folder) with None, if a TUI of its
    home and folder may show it (its screen may prove which)."""
    wanted = set(homes)
    tuis = [t for t in tui_processes() if t.home in wanted]
    found: list[Thread] = []
    for home in {t.home for t in tuis}:
        since = min(t.started_ms for t in tuis if t.home == home) - OPENED_SLACK_MS
        for opening in openings(home):
            if opening.opened_ms < since:
                continue
            rollout = _rollout_of(home, opening)
            thread = thread_of(opening.thread_id, rollout) if rollout is not None else None
            if thread is not None:
                found.append(thread)
    placed = match_threads(found, tuis)
    return [
        (t.thread_id, t.rollout, placed.get(t.thread_id))
        for t in found
        if t.thread_id in placed or may_show(t, tuis)
    ]
