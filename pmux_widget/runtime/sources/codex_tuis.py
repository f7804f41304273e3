"""Codex sessions get their TUI's pid: the process that shows them, not the shared daemon
that runs their hooks (``core/codex_tui.py`` says what proves it). With the pid the rest
follows as for Claude: the Locator finds its pane from the TUI's own ``TMUX_PANE``, the exit
watcher its end, actions their pane.
"""

from __future__ import annotations

from collections.abc import Mapping

from pmux_widget.agents.codex.tui import tui_of
from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import Locate
from pmux_widget.system.clock import now_ms

from ..protocols import HubView
from .runner import Runner

__all__ = ["CodexTuis"]

#: A session whose TUI was not proved yet is looked for again this often, this many times
#: (then its next change starts again).
RETRY_S = 1.0
TRIES = 30


def wants_tui(session: Session) -> bool:
    return (
        session.agent == "codex"
        and session.pid is None
        and not session.ended
        and session.transcript_path is not None
    )


class CodexTuis:
    """Listener (hub thread): a Codex session with no pid is matched to its TUI on the
    worker thread, together with every other Codex session lacking one (a TUI proved for one
    thread is no candidate for another)."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.looking: set[str] = set()

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        due = {c.after.session_id for c in changes if wants_tui(c.after)} - self.looking
        if not due:
            return
        self.looking |= due
        self.runner.spawn(self._match(due))

    async def _match(self, due: set[str]) -> None:
        """Match until each of ``due`` has its TUI, or TRIES passed (its rollout, its thread
        mark and the TUI's start may come a moment after its hooks)."""
        try:
            for _ in range(TRIES):
                self._apply(await self.runner.probe(tui_of, self._threads()))
                if not any(wants_tui(s) for s in map(self.hub.fleet.get, due) if s is not None):
                    return
                await self.runner.sleep(RETRY_S)
                if self.runner.stopped:
                    return
        finally:
            self.looking -= due

    def _threads(self) -> list[tuple[str, str]]:
        return [
            (s.session_id, s.transcript_path)
            for s in self.hub.fleet.values()
            if s.agent == "codex" and not s.ended and s.transcript_path
        ]

    def _apply(self, found: Mapping[str, int]) -> None:
        taken = {s.pid for s in self.hub.fleet.values() if s.pid is not None and not s.ended}
        for session_id, pid in found.items():
            current = self.hub.fleet.get(session_id)
            if current is None or not wants_tui(current) or pid in taken:
                continue
            taken.add(pid)
            self.hub.apply(
                Locate(at=now_ms(), session_id=session_id, tmux=None, ports=current.ports, pid=pid)
            )
