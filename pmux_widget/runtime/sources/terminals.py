"""Which JupyterLab terminal runs each session (``InTerminal``), for every hub of the machine.

Jupyter servers with the pmux-widget extension publish their terminals' shells in
``$PMUX_WIDGET_HOME/terminals/`` (``system.jupyter_terminals``). A session is matched when its
Claude process first shows (listener: at once, not at the next poll) and again whenever a
server's file changes (a terminal opened or closed; looked at every second): a process whose
ancestors include a terminal's shell runs in that terminal. The /proc walks run on the probe
worker thread.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from pmux_widget.core.model import Change, Session, TerminalLocation
from pmux_widget.core.signals import InTerminal
from pmux_widget.system import jupyter_terminals
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from ..protocols import HubView
from .runner import Runner

__all__ = ["TerminalFinder", "in_terminal_signals", "match"]

#: How often the published terminals are looked at (a terminal's opening or closing reaches
#: every hub within this long; the server's own hub too).
POLL_S = 1.0


def match(pids: list[tuple[str, int]], home: PmuxHome) -> dict[str, str | None]:
    """Worker thread: each (session id, pid)'s terminal name (None: in none)."""
    servers = jupyter_terminals.read_servers(home)
    found: dict[str, str | None] = {}
    for session_id, pid in pids:
        hit = jupyter_terminals.find_terminal(pid, servers) if servers else None
        found[session_id] = hit[1] if hit is not None else None
    return found


def in_terminal_signals(
    pids: list[tuple[str, int]], home: PmuxHome, fleet: Mapping[str, Session]
) -> list[InTerminal]:
    """The InTerminal signals that bring ``fleet``'s sessions in line with the terminals
    (blocking: a worker thread, or ``status`` without a hub)."""
    found = match(pids, home) if pids else {}
    signals = []
    for session_id, pid in pids:
        current = fleet.get(session_id)
        if current is None or current.pid != pid:
            continue
        name = found.get(session_id)
        location = TerminalLocation(name) if name is not None else None
        if current.terminal != location:
            signals.append(
                InTerminal(at=now_ms(), session_id=session_id, pid=pid, terminal=location)
            )
    return signals


class TerminalFinder:
    """Sets each running session's ``terminal`` from the published terminals."""

    def __init__(self, hub: HubView, runner: Runner, home: PmuxHome) -> None:
        self.hub = hub
        self.runner = runner
        self.home = home
        self.tried: set[tuple[str, int]] = set()

    @property
    def directory(self) -> Path:
        return jupyter_terminals.terminals_dir(self.home)

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        fresh = []
        for change in changes:
            s = change.after
            if s.pid is None or s.ended or not s.running:
                continue
            key = (s.session_id, s.pid)
            if key in self.tried:
                continue
            if len(self.tried) > 4096:
                self.tried.clear()
            self.tried.add(key)
            fresh.append(s)
        if fresh and self.directory.is_dir():
            self.runner.spawn(self.check(fresh))

    async def check(self, sessions: list[Session] | None = None) -> None:
        """Match ``sessions`` (default: every live one with a pid, or with a terminal)."""
        if sessions is None:
            sessions = [
                s
                for s in self.hub.fleet.values()
                if s.pid is not None and (s.terminal is not None or not s.ended)
            ]
        pids = [(s.session_id, s.pid) for s in sessions if s.pid is not None]
        if not pids:
            return
        found = await self.runner.probe(match, pids, self.home)
        for session_id, pid in pids:
            current = self.hub.fleet.get(session_id)
            if current is None or current.pid != pid:
                continue
            name = found.get(session_id)
            location = TerminalLocation(name) if name is not None else None
            if current.terminal != location:
                self.hub.apply(
                    InTerminal(at=now_ms(), session_id=session_id, pid=pid, terminal=location)
                )

    async def watch(self) -> None:
        """Re-match everything whenever a server's terminals change: the directory is looked
        at every POLL_S (a scandir of a few tiny files; a file watcher would wake the hub's
        thread ten times a second for what changes when a person opens a terminal)."""
        runner = self.runner
        seen: tuple[tuple[str, int, int], ...] | None = None
        while not runner.stopped:
            stamp = _signature(self.directory)
            if stamp != seen:
                seen = stamp
                if stamp:
                    await self.check()
            await runner.sleep(POLL_S)


def _signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """Each file's name, inode and mtime (an atomic replace is a new inode)."""
    found = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    info = entry.stat()
                    found.append((entry.name, info.st_ino, info.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(found))
