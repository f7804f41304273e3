"""Codex threads' rollouts, followed: every Codex row's (its answer, current tool, tokens; the
rollout is Codex's transcript, not Claude's) and every thread a live TUI shows, hooks or
none (``agents/codex/tui.live_threads``) in the Codex homes this hub follows: its own
(``$CODEX_HOME``, else ``~/.codex``, as Claude's config dir is the hub's) and those of its
Codex rows (whose hooks post here). Without hooks — not installed, not trusted — the
rollout's turn records make the row and its state (``core/rules_rollout.py``), and the TUI
that shows the thread its pid (then the Locator finds its pane, the exit watcher its end).

A thread process facts cannot place — a ``/new`` in a TUI beside another of its folder, or in
a lone TUI whose pid the thread it left still holds, or a ``/resume`` of a thread whose row a
TUI left — makes (or brings back) its row only once a TUI's screen shows it (its last prompt,
its pending command or question: ``runtime/codex_placement.py``): then the row takes that
TUI and the row of the thread the TUI left ends "retired" (``TuiShows``), as with hooks.
Never a row on a guess.

Rollouts are read by size every :data:`TAIL_S` (a stat per followed file), the TUIs looked
for every :data:`DISCOVER_S`, the screens for such threads at most as often; all on the worker
threads.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping

from pmux_widget.agents.codex.paths import CodexHome
from pmux_widget.agents.codex.rollout import RolloutFacts, RolloutTailer
from pmux_widget.agents.codex.tui import home_of_rollout, live_threads
from pmux_widget.core.model import Session, State, clip
from pmux_widget.core.signals import (
    RolloutState,
    RolloutTurn,
    Signal,
    TranscriptUpdate,
    TuiShows,
)
from pmux_widget.system.clock import now_ms
from pmux_widget.system.projects import project_name

from ..codex_placement import place
from ..protocols import HubView
from .runner import Runner

__all__ = [
    "CodexRollouts",
    "codex_homes",
    "pid_of",
    "rollout_signals",
    "shown_threads",
    "to_follow",
]

log = logging.getLogger(__name__)

TAIL_S = 0.25
DISCOVER_S = 2.0

_ENDINGS = {"complete": "clean", "aborted": "interrupt", "running": "open"}


def _key(path: str) -> str:
    return os.path.realpath(path)


def rollout_signals(
    session_id: str, path: str, facts: RolloutFacts, pid: int | None, *, live: bool = True
) -> list[Signal]:
    """What a read of a rollout tells the tracker: its turn (which makes a hookless row, with
    ``pid``), then its fields as a transcript update."""
    if facts.turn is None or facts.thread_id != session_id:
        return []
    project = project_name(facts.cwd)
    waits = facts.waits
    turn: RolloutState = "waiting" if waits is not None else facts.turn
    return [
        RolloutTurn(
            at=facts.turn_at,
            live=live,
            session_id=session_id,
            turn=turn,
            pid=pid,
            transcript_path=path,
            cwd=facts.cwd,
            project=project,
            tool_name=facts.tool_name,
            tool_summary=facts.tool_summary,
            question=waits,
            last_prompt=facts.last_prompt,
            model=facts.model,
        ),
        TranscriptUpdate(
            at=facts.last_record_at or 0,
            live=live,
            session_id=session_id,
            transcript_path=path,
            model=facts.model,
            current_tool=facts.tool_name,
            tool_summary=facts.tool_summary,
            last_assistant=facts.last_assistant,
            last_prompt=facts.last_prompt,
            tokens=facts.tokens,
            context_tokens=facts.context_tokens,
            ending=_ENDINGS[facts.turn],  # type: ignore[arg-type]
            cwd=facts.cwd,
            project=project,
        ),
    ]


def _followed(session: Session) -> bool:
    return session.agent == "codex" and not session.ended and bool(session.transcript_path)


def codex_homes(fleet: Iterable[Session]) -> set[str]:
    """The Codex homes whose TUIs make rows (see the module doc), real paths."""
    homes = {os.path.realpath(CodexHome.resolve().root)}
    for s in fleet:
        home = home_of_rollout(s.transcript_path) if _followed(s) and s.transcript_path else None
        if home is not None:
            homes.add(os.path.realpath(home))
    return homes


#: realpath of a rollout → (thread id, the pid of the TUI it is placed in, None: unplaced)
Shown = dict[str, tuple[str, int | None]]


def shown_threads(fleet: Iterable[Session]) -> Shown:
    """What the live TUIs of the homes ``fleet``'s rows name show (blocking: /proc)."""
    found = live_threads(codex_homes(fleet))
    return {_key(path): (tid, pid) for tid, path, pid in found}


def to_follow(fleet: Iterable[Session], shown: Shown) -> dict[str, str]:
    """realpath → the thread id of every rollout to follow: the Codex rows' and the shown."""
    paths = {_key(s.transcript_path or ""): s.session_id for s in fleet if _followed(s)}
    for path, (tid, _pid) in shown.items():
        paths.setdefault(path, tid)
    return paths


def pid_of(fleet: Mapping[str, Session], shown: Shown, path: str, session_id: str) -> int | None:
    """The TUI that makes the row of ``session_id``, or gives its row one when it has none:
    the one its thread is placed in, unless a live row holds that TUI (a /new nothing
    proves: the screens may, ``runtime/codex_placement.py``)."""
    placed = shown.get(path)
    pid = placed[1] if placed is not None and placed[0] == session_id else None
    taken = {s.pid for s in fleet.values() if s.pid is not None and not s.ended}
    return None if pid in taken else pid


_STATES: dict[RolloutState, State] = {
    "running": State.BUSY,
    "waiting": State.NEEDS_INPUT,
    "complete": State.REVIEW,
    "aborted": State.IDLE,
}


def _may_make_a_row(row: Session | None, facts: RolloutFacts) -> bool:
    """A thread with a turn and no row, or whose row a TUI left (retired) before this turn
    (a ``/resume``): the screens may prove which TUI shows it."""
    if facts.turn is None:
        return False
    if row is None:
        return True
    retired = row.ended and row.tracking.cause == "retired" and not row.hooked
    return retired and facts.turn_at > row.state_since


def provisional_row(session_id: str, path: str, facts: RolloutFacts) -> Session:
    """What the row of a thread no process fact places would say, to judge the screens by
    (its last prompt; the command or question it waits on)."""
    waits = facts.waits
    turn: RolloutState = "waiting" if waits is not None else facts.turn or "running"
    return Session(
        session_id=session_id,
        agent="codex",
        state=_STATES[turn],
        running=True,
        cwd=facts.cwd,
        transcript_path=path,
        last_prompt=clip(facts.last_prompt),
        tool_summary=facts.tool_summary,
        question=waits,
    )


class CodexRollouts:
    """The follower of one hub's Codex rollouts (its loop on the hub's loop, reads on the
    worker threads)."""

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.tailers: dict[str, RolloutTailer] = {}  # realpath → tailer
        self.shown: Shown = {}
        #: records from before the hub started are no news: they notify no one
        self.started_ms = int(time.time() * 1000)
        self.screens_read_at = 0.0

    async def watch(self) -> None:
        discovered_at = 0.0
        while not self.runner.stopped:
            try:
                if time.monotonic() - discovered_at >= DISCOVER_S:
                    discovered_at = time.monotonic()
                    rows = list(self.hub.fleet.values())
                    self.shown = await self.runner.probe(shown_threads, rows)
                await self.read()
            except Exception:
                log.exception("following Codex rollouts failed")
            await self.runner.sleep(TAIL_S)

    async def read(self) -> None:
        fleet = self.hub.fleet
        unplaced: list[tuple[str, str]] = []
        for path, session_id in to_follow(fleet.values(), self.shown).items():
            tailer = self.tailers.get(path)
            first = tailer is None
            if tailer is None:
                tailer = self.tailers[path] = RolloutTailer(path)
            changed = await self.runner.tail(tailer.poll)
            pid = pid_of(fleet, self.shown, path, session_id)
            if pid is None and _may_make_a_row(fleet.get(session_id), tailer.facts):
                unplaced.append((path, session_id))
            if not (changed or first or (session_id not in fleet and pid is not None)):
                continue
            news = tailer.facts.turn_at >= self.started_ms
            for signal in rollout_signals(session_id, path, tailer.facts, pid, live=news):
                self.hub.apply(signal)
        if unplaced and time.monotonic() - self.screens_read_at >= DISCOVER_S:
            self.screens_read_at = time.monotonic()
            await self.place_by_screens(unplaced)
        followed = to_follow(self.hub.fleet.values(), self.shown)
        for path in [p for p in self.tailers if p not in followed]:
            del self.tailers[path]

    async def place_by_screens(self, unplaced: list[tuple[str, str]]) -> None:
        """Rows for the threads of ``unplaced`` (path, thread id) that a TUI's screen shows,
        judged beside the live Codex rows: the row takes that TUI, and the row the TUI
        showed before is retired (``TuiShows``)."""
        provisional = {
            sid: provisional_row(sid, path, self.tailers[path].facts) for path, sid in unplaced
        }
        rows = [
            s
            for s in self.hub.fleet.values()
            if s.agent == "codex" and not s.ended and s.transcript_path
        ]
        found = await self.runner.probe(place, rows + list(provisional.values()))
        for path, sid in unplaced:
            pid = found.by_screen.get(sid)
            row = self.hub.fleet.get(sid)
            if pid is None or (row is not None and not row.ended):
                continue
            facts = self.tailers[path].facts
            news = facts.turn_at >= self.started_ms
            for signal in rollout_signals(sid, path, facts, pid, live=news):
                self.hub.apply(signal)
            self.hub.apply(TuiShows(at=now_ms(), session_id=sid, pid=pid))
