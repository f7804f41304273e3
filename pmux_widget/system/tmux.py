"""tmux panes (libtmux): where each Claude session runs, for names and workspace grouping.

Every tmux server of this user is looked at: each socket in ``$TMUX_TMPDIR/tmux-<uid>/`` (or
``/tmp/tmux-<uid>/``), which holds the default server and every ``tmux -L <name>`` server.
``PMUX_WIDGET_TMUX_SOCKETS`` (paths, ``os.pathsep``-separated) overrides the list.
"""

from __future__ import annotations

import os
import shutil
import socket as unix_socket
import stat
from dataclasses import dataclass
from pathlib import Path

import libtmux

from pmux_widget.core.model import TmuxLocation

__all__ = ["PaneInfo", "list_panes", "shown_panes", "socket_paths", "tmux_available"]


@dataclass(frozen=True, slots=True)
class PaneInfo:
    """One pane: its shell's pid and where it is (session, window index, pane id, title)."""

    socket: str
    shell_pid: int
    location: TmuxLocation
    current_command: str
    current_path: str


def tmux_available() -> bool:
    return shutil.which("tmux") is not None


def socket_paths() -> list[Path]:
    """The sockets of this user's tmux servers (existing socket files only)."""
    override = os.environ.get("PMUX_WIDGET_TMUX_SOCKETS")
    if override:
        return [Path(p) for p in override.split(os.pathsep) if p]
    base = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    sockets = []
    for entry in entries:
        try:
            if stat.S_ISSOCK(entry.stat().st_mode) and _listening(entry):
                sockets.append(entry)
        except OSError:
            continue
    return sockets


def _listening(path: Path) -> bool:
    """A server answers on ``path``: a dead server leaves its socket file behind, and asking
    it costs a tmux process each poll (69 stale sockets made 150 ms of a poll) where a
    refused connect costs microseconds."""
    with unix_socket.socket(unix_socket.AF_UNIX, unix_socket.SOCK_STREAM) as probe:
        probe.settimeout(0.2)
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def list_panes(sockets: list[Path] | None = None) -> list[PaneInfo]:
    """All panes of all reachable servers; a dead socket or missing tmux yields nothing."""
    if not tmux_available():
        return []
    panes: list[PaneInfo] = []
    for socket in sockets if sockets is not None else socket_paths():
        try:
            server = libtmux.Server(socket_path=socket)
            server_panes = list(server.panes)
        except Exception:  # libtmux raises its own errors for dead servers and odd output
            continue
        for pane in server_panes:
            try:
                shell_pid = int(pane.pane_pid or 0)
            except ValueError:
                continue
            if not shell_pid:
                continue
            panes.append(
                PaneInfo(
                    socket=str(socket),
                    shell_pid=shell_pid,
                    location=TmuxLocation(
                        session=pane.session_name or "",
                        window=str(pane.window_index or ""),
                        pane=pane.pane_id or "",
                        title=pane.pane_title or "",
                    ),
                    current_command=pane.pane_current_command or "",
                    current_path=pane.pane_current_path or "",
                )
            )
    return panes


def shown_panes(sockets: list[Path] | None = None) -> set[tuple[str, str]]:
    """``(tmux session, pane id)`` of the pane each attached client shows now (its session's
    active window's active pane): one ``list-clients`` per server, nothing when none runs."""
    if not tmux_available():
        return set()
    shown: set[tuple[str, str]] = set()
    for socket in sockets if sockets is not None else socket_paths():
        try:
            lines = (
                libtmux.Server(socket_path=socket)
                .cmd("list-clients", "-F", "#{session_name}\t#{pane_id}")
                .stdout
            )
        except Exception:  # a server gone meanwhile
            continue
        for line in lines:
            session, _, pane = line.partition("\t")
            if session and pane:
                shown.add((session, pane))
    return shown
