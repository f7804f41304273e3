"""Typing into a tmux pane: find the pane that holds a process, read it, send it keys.

The only module that writes to a terminal. It knows nothing of sessions or dialogs: the
checks that decide whether keys may be sent live in ``runtime.actions``.
"""

from __future__ import annotations

import libtmux

from pmux_widget.core.model import TmuxLocation

from . import processes
from .tmux import PaneInfo, list_panes

__all__ = ["capture", "find_pane", "send_keys"]

#: How deep below a pane's shell the process may be (shell → claude; or a wrapper between).
PANE_DEPTH = 4


def find_pane(pid: int, *, scan: bool = True) -> PaneInfo | None:
    """The pane whose process tree holds ``pid`` (the pane's own process, or below it).

    Fast path: the process's own ``TMUX`` / ``TMUX_PANE`` (its environment names the server
    socket and the pane), confirmed by asking that server for the pane's process and finding
    it among ``pid``'s ancestors — one tmux call. Else, with ``scan``, every pane of every
    server is looked at (a /proc pass and a tmux call per server: not for every new session).
    """
    named = _pane_from_environ(pid)
    if named is not None or not scan:
        return named
    panes = list_panes()
    if not panes:
        return None
    tree = processes.children_map()
    for pane in panes:
        if pane.shell_pid == pid or pid in processes.descendants(
            pane.shell_pid, tree, depth=PANE_DEPTH
        ):
            return pane
    return None


_FORMAT = "\t".join(
    "#{" + field + "}"
    for field in (
        "pane_pid",
        "session_name",
        "window_index",
        "pane_id",
        "pane_title",
        "pane_current_command",
        "pane_current_path",
    )
)


def _pane_from_environ(pid: int) -> PaneInfo | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            environ = dict(
                entry.split(b"=", 1) for entry in handle.read().split(b"\0") if b"=" in entry
            )
    except OSError:
        return None
    socket = environ.get(b"TMUX", b"").split(b",", 1)[0].decode(errors="replace")
    pane_id = environ.get(b"TMUX_PANE", b"").decode(errors="replace")
    if not socket or not pane_id.startswith("%"):
        return None
    try:
        result = libtmux.Server(socket_path=socket).cmd(
            "display-message", "-p", "-t", pane_id, _FORMAT
        )
    except Exception:  # a dead server or socket: fall back to the full scan
        return None
    if result.stderr or not result.stdout:
        return None
    fields = result.stdout[0].split("\t")
    if len(fields) != 7 or not fields[0].isdigit() or fields[3] != pane_id:
        return None
    shell_pid = int(fields[0])
    if shell_pid != pid and shell_pid not in _ancestors(pid):
        return None  # the environment lies (the pane was reused): not proof
    return PaneInfo(
        socket=socket,
        shell_pid=shell_pid,
        location=TmuxLocation(session=fields[1], window=fields[2], pane=fields[3], title=fields[4]),
        current_command=fields[5],
        current_path=fields[6],
    )


def _ancestors(pid: int) -> list[int]:
    found: list[int] = []
    current = pid
    for _ in range(PANE_DEPTH + 4):
        stat = processes.proc_stat(current)
        if stat is None or len(stat[1]) < 2:
            break
        parent = int(stat[1][1])
        if parent <= 1:
            break
        found.append(parent)
        current = parent
    return found


def _server(pane: PaneInfo) -> libtmux.Server:
    return libtmux.Server(socket_path=pane.socket)


def capture(pane: PaneInfo) -> str:
    """The pane's visible text (``capture-pane -p``)."""
    result = _server(pane).cmd("capture-pane", "-p", "-t", pane.location.pane)
    if result.stderr:
        raise OSError(f"tmux capture-pane failed: {' '.join(result.stderr)}")
    return "\n".join(result.stdout)


def send_keys(pane: PaneInfo, *keys: str, literal: bool = False) -> None:
    """``send-keys`` to the pane: key names (``Enter``, ``Escape``, ``Down``, ``1``), or text
    typed as is with ``literal``."""
    args = ["send-keys", "-t", pane.location.pane, *(["-l"] if literal else []), *keys]
    result = _server(pane).cmd(*args)
    if result.stderr:
        raise OSError(f"tmux send-keys failed: {' '.join(result.stderr)}")
