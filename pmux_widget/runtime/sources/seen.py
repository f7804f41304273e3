"""Seen in tmux (issue 34): a review ends when an attached tmux client shows its pane.

While some live session in a tmux pane is in review, every :data:`POLL_S` one ``tmux
list-clients`` per server (on the probe worker thread) says which pane each attached client
shows; a session in review whose pane is shown gets a :class:`~pmux_widget.core.signals.Seen`
(the tracker ends the review, silently, as ``user:seen``). With no such session the loop sleeps
until a change brings one (a listener wakes it): no tmux call at all meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterable, Mapping

from pmux_widget.core.model import Change, Session, State
from pmux_widget.core.signals import Seen
from pmux_widget.system import tmux
from pmux_widget.system.clock import now_ms

from ..protocols import HubView
from .runner import Runner

__all__ = ["POLL_S", "SeenWatcher", "looked_at", "watched"]

#: How often the attached clients are asked while a tmux session is in review
#: (``PMUX_WIDGET_SEEN_SECONDS`` overrides it).
POLL_S = 1.0


def watched(sessions: Iterable[Session]) -> bool:
    """Is some live session in a tmux pane in review (worth asking tmux)?"""
    return any(_in_review(s) for s in sessions)


def looked_at(sessions: Iterable[Session], shown: set[tuple[str, str]]) -> list[str]:
    """The sessions in review whose pane an attached client shows."""
    return [
        s.session_id
        for s in sessions
        if _in_review(s) and s.tmux is not None and (s.tmux.session, s.tmux.pane) in shown
    ]


def _in_review(s: Session) -> bool:
    return s.state is State.REVIEW and not s.ended and s.running and s.tmux is not None


def _interval() -> float:
    with contextlib.suppress(ValueError):
        return max(0.1, float(os.environ.get("PMUX_WIDGET_SEEN_SECONDS", "")))
    return POLL_S


class SeenWatcher:
    """The loop above; :meth:`on_changes` (hub thread) wakes it when a review appears."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.wake = asyncio.Event()

    def on_changes(self, changes: list[Change], fleet: Mapping[str, Session]) -> None:
        if any(_in_review(c.after) for c in changes):
            self.wake.set()

    async def watch(self) -> None:
        while not self.runner.stopped:
            if not watched(self.hub.fleet.values()):
                self.wake.clear()
                await self.runner.sleep(3600, self.wake)  # stop() sets it too
                continue
            # stamped before asking: a review that began meanwhile was not seen by this look
            at = now_ms()
            try:
                shown = await self.runner.probe(tmux.shown_panes)
            except Exception:
                shown = set()
            for session_id in looked_at(self.hub.fleet.values(), shown):
                self.hub.apply(Seen(at=at, session_id=session_id))
            await self.runner.sleep(_interval())
