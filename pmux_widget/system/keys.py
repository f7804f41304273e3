"""Typing into a terminal: find the tmux pane (or the JupyterLab terminal) that holds a
process, read it, send it keys.

The only module that writes to a terminal. It knows nothing of sessions or dialogs: the
checks that decide whether keys may be sent live in ``runtime.actions``.

A JupyterLab terminal's PTY belongs to the Jupyter server's process: only there can it be
typed into. The server extension registers its terminals with :func:`serve_terminals`; in any
other process :func:`find_terminal` finds none (``runtime.actions`` then asks the server's hub).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeAlias

import libtmux

from pmux_widget.core.model import TmuxLocation

from . import processes
from .tmux import PaneInfo, list_panes

__all__ = [
    "KEY_BYTES",
    "Target",
    "TerminalTarget",
    "capture",
    "find_pane",
    "find_terminal",
    "send_keys",
    "serve_terminals",
    "serves_terminals",
]


class TerminalTarget(Protocol):
    """A JupyterLab terminal this process can type into (``pmux_widget.jupyter.terminals``):
    its name, its screen as text (from a terminal emulator over its output) and its PTY."""

    @property
    def name(self) -> str: ...

    def screen_text(self) -> str:
        """The screen's visible text, one line per row; raises OSError when the screen
        cannot be trusted (the terminal closed, or its output was cut and not redrawn)."""
        ...

    def write(self, data: str) -> None:
        """Write ``data`` to the PTY (in order with the user's own keys)."""
        ...

    def drawn(self) -> int:
        """How much of the terminal's output its screen has drawn so far (a mark)."""
        ...

    def wait_drawn(self, beyond: int, timeout: float) -> None:
        """Return once the screen drew output past the mark ``beyond``, or after
        ``timeout``."""
        ...


#: Where keys go: a tmux pane, or a JupyterLab terminal of this process.
Target: TypeAlias = "PaneInfo | TerminalTarget"

#: tmux key names → what a terminal sends for them (xterm, normal cursor mode: what
#: xterm.js sends in a JupyterLab terminal, so the CLI reads the same bytes as from a person).
KEY_BYTES: dict[str, str] = {
    "Enter": "\r",
    "Escape": "\x1b",
    "Up": "\x1b[A",
    "Down": "\x1b[B",
    "Right": "\x1b[C",
    "Left": "\x1b[D",
    "Tab": "\t",
    "BSpace": "\x7f",
    "Space": " ",  # ticks a multi-select's box in a question dialog
}

_terminals: Callable[[int], TerminalTarget | None] | None = None


def serve_terminals(finder: Callable[[int], TerminalTarget | None] | None) -> None:
    """The server extension's way in: ``finder(pid)`` is the terminal of this process whose
    shell is ``pid`` or one of its ancestors (None: none). ``None`` unregisters."""
    global _terminals
    _terminals = finder


def find_terminal(pid: int) -> TerminalTarget | None:
    """The JupyterLab terminal of this process that holds ``pid`` (None in a process that
    serves none)."""
    finder = _terminals
    return finder(pid) if finder is not None else None


def serves_terminals() -> bool:
    return _terminals is not None


#: How deep below a pane's shell the process may be (shell → claude; or a wrapper between).
PANE_DEPTH = 4


def find_pane(pid: int, *, scan: bool = True) -> PaneInfo | None:
    """The pane whose process tree holds ``pid`` (the pane's own process, or below it).

    Fast path: the process's own ``TMUX`` / ``TMUX_PANE`` (its environment names the server
    socket and the pane), confirmed by asking that server for the pane's process and finding
    it among ``pid``'s ancestors — one tmux call. Else, with ``scan``, every pane of every
    server is looked at (a /proc pass and a tmux call per server: not for every new session).
    """
    if processes.under_daemon(pid):
        return None  # a background worker: its daemon's pane (if any) is not its own
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


def capture(pane: Target) -> str:
    """The pane's visible text (``capture-pane -p``), or the terminal's screen."""
    if not isinstance(pane, PaneInfo):
        return pane.screen_text()
    result = _server(pane).cmd("capture-pane", "-p", "-t", pane.location.pane)
    if result.stderr:
        raise OSError(f"tmux capture-pane failed: {' '.join(result.stderr)}")
    return "\n".join(result.stdout)


def output_mark(pane: Target) -> int | None:
    """Where the pane's output is now, for :func:`wait_output` (take it before the read it
    follows); None for a tmux pane, whose output gives no such sign."""
    return None if isinstance(pane, PaneInfo) else pane.drawn()


def wait_output(pane: Target, mark: int | None, timeout: float) -> None:
    """Until the pane shows output newer than ``mark``: a terminal's screen says at once (its
    emulator is ours); a tmux pane is read again after ``timeout``."""
    if mark is None or isinstance(pane, PaneInfo):
        time.sleep(timeout)
    else:
        pane.wait_drawn(mark, timeout)


def send_keys(pane: Target, *keys: str, literal: bool = False) -> None:
    """``send-keys`` to the pane: key names (``Enter``, ``Escape``, ``Down``, ``1``), or text
    typed as is with ``literal``; to a terminal, the bytes those keys send."""
    if not isinstance(pane, PaneInfo):
        if literal:
            pane.write("".join(keys))
            return
        for key in keys:
            if key in KEY_BYTES:
                pane.write(KEY_BYTES[key])
            elif len(key) == 1 and key.isprintable():
                pane.write(key)
            else:
                raise ValueError(f"no terminal bytes for the key {key!r}")
        return
    args = ["send-keys", "-t", pane.location.pane, *(["-l"] if literal else []), *keys]
    result = _server(pane).cmd(*args)
    if result.stderr:
        raise OSError(f"tmux send-keys failed: {' '.join(result.stderr)}")
