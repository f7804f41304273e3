"""Codex sessions get their TUI's pid: the process that shows them, not the shared daemon
that runs their hooks (``core/codex_tui.py`` says what proves it). With the pid the rest
follows as for Claude: the Locator finds its pane from the TUI's own ``TMUX_PANE``, the exit
watcher its end, actions their pane.

Under the daemon process facts cannot follow a ``/new`` or ``/resume``: where a home and
folder has two TUIs, or two rows, their screens are read (``runtime/codex_placement.py``) when
a row of that folder changes (its prompt, its dialog, a new row), and a row a screen proves
takes that TUI (``TuiShows``: the row that held it is the thread the TUI left, ended
"retired").
"""

from __future__ import annotations

from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import Locate, TuiShows
from pmux_widget.system.clock import now_ms

from ..codex_placement import Placement, place
from ..protocols import HubView
from .runner import Runner

__all__ = ["CodexTuis"]

#: A session whose TUI was not proved yet is looked for again this often, this many times
#: (then its next change starts again).
RETRY_S = 1.0
TRIES = 30
#: A change in a shared folder is checked at once and this many times more, RETRY_S apart (a
#: hook may come before the screen draws what it says: a dialog ~0.2 s later).
RECHECKS = 1


def wants_tui(session: Session) -> bool:
    return (
        session.agent == "codex"
        and session.pid is None
        and not session.ended
        and session.transcript_path is not None
    )


def _live_codex(session: Session) -> bool:
    return session.agent == "codex" and not session.ended


def _shown_differently(change: Change) -> bool:
    """What a TUI's screen would prove the row by has changed (or the row is new)."""
    a, b = change.after, change.before
    if not _live_codex(a):
        return False
    if b is None:
        return True
    return (a.last_prompt, a.state, a.tool_summary, a.question, a.transcript_path) != (
        b.last_prompt,
        b.state,
        b.tool_summary,
        b.question,
        b.transcript_path,
    )


def _shares_its_folder(session: Session, fleet: dict[str, Session]) -> bool:
    """Another live Codex row has the same folder (so maybe another TUI of it): cheap, on
    the hub thread; the worker finds out whether two TUIs really share it."""
    return any(
        _live_codex(s) and s.cwd == session.cwd and s.session_id != session.session_id
        for s in fleet.values()
    )


class CodexTuis:
    """Listener (hub thread): a Codex session with no pid is matched to its TUI on the
    worker thread, together with every other Codex session lacking one (a TUI proved for one
    thread is no candidate for another); a change of a row in a folder shared with other
    rows has the placement checked again with the screens."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.looking: set[str] = set()
        self.checking = False
        self.again = False

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        due = {c.after.session_id for c in changes if wants_tui(c.after)} - self.looking
        if due:
            self.looking |= due
            self.runner.spawn(self._match(due))
        if any(_shown_differently(c) and _shares_its_folder(c.after, fleet) for c in changes):
            if self.checking:
                self.again = True
            else:
                self.checking = True
                self.runner.spawn(self._check())

    async def _match(self, due: set[str]) -> None:
        """Match until each of ``due`` has its TUI, or TRIES passed (its rollout, its thread
        mark and the TUI's start may come a moment after its hooks)."""
        try:
            for _ in range(TRIES):
                self._apply(await self.runner.probe(place, self._rows()))
                if not any(wants_tui(s) for s in map(self.hub.fleet.get, due) if s is not None):
                    return
                await self.runner.sleep(RETRY_S)
                if self.runner.stopped:
                    return
        finally:
            self.looking -= due

    async def _check(self) -> None:
        """Place again with the screens, now and RECHECKS times more (again while changes
        keep coming: one check at a time)."""
        try:
            left = RECHECKS + 1
            while left > 0 and not self.runner.stopped:
                self.again = False
                self._apply(await self.runner.probe(place, self._rows()))
                left = RECHECKS + 1 if self.again else left - 1
                if left > 0:
                    await self.runner.sleep(RETRY_S)
        finally:
            self.checking = False

    def _rows(self) -> list[Session]:
        return [s for s in self.hub.fleet.values() if _live_codex(s) and s.transcript_path]

    def _holders(self) -> dict[int, set[str]]:
        held: dict[int, set[str]] = {}
        for s in self.hub.fleet.values():
            if s.pid is not None and not s.ended:
                held.setdefault(s.pid, set()).add(s.session_id)
        return held

    def _apply(self, found: Placement) -> None:
        # a screen's proof first: it may take a TUI from the row that showed it before
        for session_id, pid in found.by_screen.items():
            current = self.hub.fleet.get(session_id)
            if current is None or not _live_codex(current):
                continue
            if current.pid == pid and self._holders().get(pid) == {session_id}:
                continue
            self.hub.apply(TuiShows(at=now_ms(), session_id=session_id, pid=pid))
        taken = set(self._holders())
        for session_id, pid in found.placed.items():
            current = self.hub.fleet.get(session_id)
            if current is None or not wants_tui(current) or pid in taken:
                continue
            taken.add(pid)
            self.hub.apply(
                Locate(at=now_ms(), session_id=session_id, tmux=None, ports=current.ports, pid=pid)
            )
