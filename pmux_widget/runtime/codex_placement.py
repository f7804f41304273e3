"""Which Codex TUI shows which row, process facts corrected by the TUIs' screens (issue 36,
"every row is right").

Under the shared daemon process facts cannot tell two TUIs of one home and folder apart once
one of them starts another thread (``/new``) or goes back to an older one (``/resume``):
``core/codex_tui.py``; nor can they tell which of its threads one TUI shows. So where a home
and folder has two such TUIs or more, or one and two threads or more
(``core/codex_tui.shared_folders``), each TUI's screen is read as an action reads it
(``runtime/codex_actions.tui_screen``) and judged against that folder's live rows
(``agents/codex/screen_proof.shown_session``: exactly one row's evidence);
``core/codex_tui.place_by_screens`` then places the rows. Elsewhere no screen is read.
Blocking (``/proc``, tmux): call it on the worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pmux_widget.agents.codex.screen_proof import shown_session
from pmux_widget.agents.codex.tui import thread_of, tui_processes
from pmux_widget.core.codex_tui import place_by_screens, shared_folders
from pmux_widget.core.model import Session

from .codex_actions import tui_screen

__all__ = ["Placement", "place"]


@dataclass(frozen=True, slots=True)
class Placement:
    """Session id → the TUI pid that shows it (``placed``), and the part of it a screen
    proves (``by_screen``: only that may take a pid from another row)."""

    placed: dict[str, int]
    by_screen: dict[str, int]


def place(rows: Sequence[Session]) -> Placement:
    """Where each of ``rows`` (the live Codex rows with a rollout) is shown."""
    threads = [
        t
        for t in (thread_of(s.session_id, s.transcript_path) for s in rows if s.transcript_path)
        if t is not None
    ]
    if not threads:
        return Placement({}, {})
    tuis = tui_processes()
    by_id = {s.session_id: s for s in rows}
    shows: dict[int, str] = {}
    for pids, ids in shared_folders(threads, tuis):
        folder = [by_id[i] for i in ids]
        for pid in pids:
            screen = tui_screen(pid)
            shown = shown_session(screen, folder) if screen is not None else None
            if shown is not None:
                shows[pid] = shown
    placed = place_by_screens(threads, tuis, shows)
    return Placement(placed, {sid: pid for pid, sid in shows.items() if placed.get(sid) == pid})
