"""The transcript follower: one tailer per session's transcript, resumed from its cursor,
woken by watchfiles on the dirs that hold followed transcripts. It turns what a tailer read
into ``TranscriptUpdate`` and ``TranscriptInterrupt`` signals; it decides no state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path

import watchfiles

from pmux_widget.agents.claude.paths import ClaudeHome
from pmux_widget.agents.claude.transcript import TailResult, TranscriptTailer
from pmux_widget.core.agents import FACTS
from pmux_widget.core.model import Change, Session, State, TranscriptEnding
from pmux_widget.core.signals import PidRecord
from pmux_widget.system.clock import now_ms

from ..boot import transcript_path, transcript_signals
from ..protocols import HubView
from .runner import WATCH_OPTIONS, Runner

__all__ = ["FOLLOWED_STATES", "TranscriptFollower", "followed"]

log = logging.getLogger(__name__)

#: States whose transcripts are followed live (as the seed says); others get a one-time read.
FOLLOWED_STATES = frozenset({State.BUSY, State.NEEDS_INPUT, State.UNKNOWN, State.REVIEW})
#: When an ended session's transcript is read once more (seconds after the end).
FINAL_READS_S = (0.0, 0.5, 2.0)
#: While a watched dir does not exist yet (Claude creates ``projects/<dir>`` with a session's
#: first line), look for it this often.
DIR_RETRY_S = 0.25


def followed(session: Session) -> bool:
    """Is this session's transcript followed live? Work states and review, and also an idle
    session whose Claude still runs: after Esc or "No" on a dialog the PID file turns idle
    100-200 ms BEFORE the interrupt marker and the rejected tool's result reach the transcript
    (measured), and /clear and /compact write theirs while idle. An idle transcript gets no
    writes otherwise, so following it costs nothing."""
    return session.state in FOLLOWED_STATES or (session.running and not session.ended)


class TranscriptFollower:
    """Tailers of one hub's sessions and the watch over their dirs (hub thread)."""

    def __init__(self, hub: HubView, claude: ClaudeHome, runner: Runner) -> None:
        self.hub = hub
        self.claude = claude
        self.runner = runner
        self.tailers: dict[str, TranscriptTailer] = {}  # transcript path → tailer
        self.path_owner: dict[str, str] = {}  # transcript path → session id
        self.watched_roots: list[Path] = []
        self.watch_restart = asyncio.Event()
        self.extra_roots: set[Path] = set()  # watched dirs outside projects/
        self.unrooted: set[str] = set()  # transcripts outside projects/ with no dir yet

    # ------------------------------------------------------------------ tailing

    def path_of(self, session: Session, record: PidRecord | None = None) -> str | None:
        return transcript_path(self.claude, session, record)

    def track(self, session: Session) -> bool:
        """Make sure a session's transcript has a tailer; True if it is new (a Codex
        rollout is no Claude transcript: ``sources/codex_rollouts.py`` reads it)."""
        if not FACTS[session.agent].claude_transcript:
            return False
        path = self.path_of(session)
        if path is None or path in self.tailers:
            if path is not None:
                self.path_owner[path] = session.session_id
            return False
        self.path_owner[path] = session.session_id
        cursors = self.hub.cursors
        cursor = cursors.load_cursor(path) if cursors is not None else None
        tailer = None
        if cursor:
            with contextlib.suppress(Exception):
                tailer = TranscriptTailer.from_cursor(path, cursor)
        self.tailers[path] = tailer or TranscriptTailer(path)
        self._add_root_for(path)
        self._roots_may_have_changed()
        return True

    def _poll_tailer(self, path: str) -> TailResult | None:
        """Worker thread: read what was appended."""
        tailer = self.tailers.get(path)
        if tailer is None:
            tailer = self.tailers[path] = TranscriptTailer(path)
        try:
            return tailer.poll()
        except Exception:  # a tailer bug must not stop the hub
            log.exception("tailing %s failed", path)
            return None

    def _apply_tail(self, path: str, result: TailResult) -> None:
        session_id = self.path_owner.get(path)
        if session_id is None:
            return
        signals = transcript_signals(session_id, path, result)
        if not signals:
            return
        for signal in signals:
            self.hub.apply(signal)
        cursors = self.hub.cursors
        tailer = self.tailers.get(path)
        if cursors is not None and tailer is not None:
            cursors.save_cursor(path, session_id, tailer.to_cursor(), now_ms())

    async def tail(self, paths: Iterable[str]) -> None:
        for path in paths:
            result = await self.runner.tail(self._poll_tailer, path)
            if result is not None:
                self._apply_tail(path, result)

    async def tail_all(self, first_read: bool = False) -> None:
        """Read the followed transcripts (all tracked ones on the first read)."""
        fleet = self.hub.fleet
        paths = [
            path
            for path, sid in self.path_owner.items()
            if (s := fleet.get(sid)) is not None and (first_read or followed(s))
        ]
        await self.tail(paths)

    async def read_ending(self, session: Session, path: str) -> TranscriptEnding | None:
        """For recovery: read ``path`` for ``session`` now; how its last turn ends."""
        self.path_owner[path] = session.session_id
        result = await self.runner.tail(self._poll_tailer, path)
        if result is None:
            return None
        self._apply_tail(path, result)
        return result.facts.ending

    def save_cursors(self) -> None:
        cursors = self.hub.cursors
        if cursors is None:
            return
        for path, tailer in self.tailers.items():
            with contextlib.suppress(Exception):
                cursors.save_cursor(path, self.path_owner.get(path), tailer.to_cursor(), now_ms())

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        """Listener: a session seen for the first time, or with a new transcript, is tracked;
        a session that just ended gets its final reads."""
        for change in changes:
            after, before = change.after, change.before
            moved = before is None or before.transcript_path != after.transcript_path
            if moved and self.track(after):
                path = self.path_of(after)
                if path is not None:
                    self.runner.spawn(self.tail([path]))
            if after.ended and before is not None and not before.ended:
                path = self.path_of(after)
                if path is not None and path in self.tailers:
                    self.runner.spawn(self._final_reads(path))

    async def _final_reads(self, path: str) -> None:
        """The run is over (SessionEnd, its process gone): read its transcript to its end, so
        its tokens, model and answer are final. An ended session is no longer followed, and
        the SDK's CLI exits ~50 ms after its result, writing its last records around its
        SessionEnd (recorded: a run showed its first response's tokens, or none at all).
        Once now, then once after the exit's last writes (a read of nothing new is free)."""
        for delay in FINAL_READS_S:
            if delay:
                await self.runner.sleep(delay)
            if self.runner.stopped:
                return
            with contextlib.suppress(RuntimeError):  # pools shut down by a concurrent stop
                await self.tail([path])

    # ------------------------------------------------------------------ watching

    def _roots(self) -> list[Path]:
        """The dirs to watch: projects/, plus the dirs of transcripts outside it."""
        for path in list(self.unrooted):  # their dirs may exist by now
            self._add_root_for(path)
        roots = set(self.extra_roots)
        if self.claude.projects_dir.is_dir():
            roots.add(self.claude.projects_dir)
        return sorted(roots)

    def _add_root_for(self, path: str) -> None:
        """Note the dir to watch for a transcript outside projects/ (another config dir):
        its project dir, or the projects dir above it while Claude has not created the
        project dir yet; never higher. (Per new transcript: constant time.)"""
        projects = str(self.claude.projects_dir).rstrip("/") + "/"
        if path.startswith(projects):
            return
        parent = Path(path).parent
        for candidate in (parent, parent.parent):
            if candidate.is_dir() and candidate.name and candidate != Path.home():
                self.extra_roots.add(candidate)
                self.unrooted.discard(path)
                return
        self.unrooted.add(path)

    def _roots_may_have_changed(self) -> None:
        if not self.watched_roots or self._roots() != self.watched_roots:
            self.watch_restart.set()  # (nothing watched yet: look again at the retry pace)

    async def watch(self) -> None:
        """Watch the dirs holding followed transcripts; restart when that set of dirs moves."""
        runner = self.runner
        while not runner.stopped:
            self.watched_roots = self._roots()
            self.watch_restart = asyncio.Event()
            if not self.watched_roots:
                await runner.sleep(DIR_RETRY_S if self.tailers else 2.0, self.watch_restart)
                continue
            # Lines written before the new watch was in place raise no event (e.g. a whole
            # first turn written before its project dir was watched): read them then.
            runner.spawn(runner.after_watch_start(self.tail_all))
            try:
                async for changes in watchfiles.awatch(
                    *self.watched_roots, stop_event=self.watch_restart, **WATCH_OPTIONS
                ):
                    await self._on_file_changes(changes)
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                log.debug("transcript watcher restarting: %s", exc)
                await runner.sleep(1.0)

    def wake(self) -> None:
        """Stop the current watch (at hub stop)."""
        self.watch_restart.set()

    async def _on_file_changes(self, changes: set[tuple[watchfiles.Change, str]]) -> None:
        touched = []
        fleet = self.hub.fleet
        for change, path in changes:
            sid = self.path_owner.get(path)
            if sid is None:
                if change is watchfiles.Change.added:
                    self._new_dir(path)
                continue
            session = fleet.get(sid)
            if session is not None and followed(session):
                touched.append(path)
        await self.tail(dict.fromkeys(touched))

    def _new_dir(self, path: str) -> None:
        """A dir appeared under a watched root: the watch on it is added only now, so lines
        written to a followed transcript inside it before that raised no event."""
        prefix = path.rstrip("/") + "/"
        inside = [p for p in self.path_owner if p.startswith(prefix)]
        if inside:

            async def catch_up() -> None:
                await self.tail(inside)

            self.runner.spawn(self.runner.after_watch_start(catch_up))
