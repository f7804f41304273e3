"""Typing into a tmux pane: find the pane that holds a process, read it, send it keys.

The only module that writes to a terminal. It knows nothing of sessions or dialogs: the
checks that decide whether keys may be sent live in ``runtime.actions``.
"""

from __future__ import annotations

import libtmux

from . import processes
from .tmux import PaneInfo, list_panes

__all__ = ["capture", "find_pane", "send_keys"]

#: How deep below a pane's shell the process may be (shell → claude; or a wrapper between).
PANE_DEPTH = 4


def find_pane(pid: int) -> PaneInfo | None:
    """The pane whose process tree holds ``pid`` (the pane's own process, or below it)."""
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
