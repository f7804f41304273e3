"""The boot sequence, written once: recover the persisted sessions, replay the spool, scan
the PID files, re-verify what a restart left ``unknown``, apply the live PID files, then read
every session's transcript and find its tmux pane.

The hub runs the first two steps before it listens and its file sources run the rest once it
does; the file-only snapshot (``pmux-widget status`` with no hub) runs them all in a row,
reading and never writing. What a transcript read tells the tracker
(:func:`transcript_signals`) and where a session's pane is (:func:`own_pane`,
:func:`pane_signal`) are written here once, for both.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

from pmux_widget.agents.claude.background import job_exists
from pmux_widget.agents.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.agents.claude.pidfiles import is_alive, scan_pid_files
from pmux_widget.agents.claude.transcript import TailResult
from pmux_widget.agents.seam import seam_of
from pmux_widget.core.model import Session, State, TranscriptEnding
from pmux_widget.core.signals import (
    BackgroundGone,
    HookSignal,
    HubRestart,
    Invalid,
    Locate,
    PidFile,
    PidRecord,
    Recover,
    Signal,
    TranscriptInterrupt,
    TranscriptUpdate,
    parse_hook,
)
from pmux_widget.hooks.spool import (
    adopt_orphans,
    clean_spool_temp,
    read_spool,
    remove_spool_entries,
)
from pmux_widget.system import keys, processes, tmux
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.projects import project_name

__all__ = [
    "PidScan",
    "gone_jobs",
    "live_pid_file",
    "named_hook",
    "own_pane",
    "pane_signal",
    "process_runs",
    "recover_from_files",
    "recovery_signal",
    "replay_spool",
    "restore",
    "scan_pids",
    "transcript_path",
    "transcript_signals",
]

log = logging.getLogger(__name__)

Apply = Callable[[Signal], object]


@dataclass(frozen=True)
class PidScan:
    """One valid PID file, and whether the process that wrote it still runs."""

    path: str
    record: PidRecord
    alive: bool


def restore(persisted: Iterable[Session], apply: Apply) -> None:
    """Step 1: the sessions the store kept, as of the last hub (all re-verified later)."""
    sessions = tuple(persisted)
    if sessions:
        apply(HubRestart(at=now_ms(), live=False, sessions=sessions))


def replay_spool(
    home: PmuxHome,
    accept: Callable[[HookSignal, int, tuple[int, int] | None], object],
    *,
    consume: bool,
    delivered: Callable[[tuple[int, int]], bool] = lambda hook_id: False,
) -> int:
    """Step 2: hooks fired while no hub ran, in the order they were sent, each with its
    (script pid, sent) when its file names the script. ``consume``: a hub's, which first
    adopts what killed scripts left (unless ``delivered`` says it got that hook) and removes
    the replayed files; the snapshot leaves them for the next hub. Returns how many were
    accepted."""
    if consume:
        adopt_orphans(home, delivered=delivered)
        clean_spool_temp(home)
    entries = read_spool(home)
    accepted = 0
    for entry in entries:
        if entry.error:
            log.warning("spooled hook %s unreadable: %s", entry.path, entry.error)
            continue
        signal = parse_hook(
            entry.payload_bytes,
            at=entry.sent,
            live=False,
            pane=entry.pane,
            agent=entry.agent or None,
        )
        if isinstance(signal, Invalid):
            log.warning("spooled hook %s rejected: %s", entry.path, signal.reason)
            continue
        accept(signal, entry.ppid, entry.hook_id if entry.hook_pid else None)
        accepted += 1
    if consume and entries:
        remove_spool_entries(entries)
    return accepted


def scan_pids(claude: ClaudeHome) -> list[PidScan]:
    """Step 3 (blocking: a worker thread in the hub): every valid PID file, checked alive."""
    found = []
    for path, record in scan_pid_files(claude):
        if isinstance(record, Invalid):
            log.debug("ignoring PID file %s: %s", path, record.reason)
            continue
        found.append(PidScan(str(path), record, is_alive(record)))
    return found


def transcript_path(
    claude: ClaudeHome, session: Session, record: PidRecord | None = None
) -> str | None:
    """The hook's path (authoritative), else derived from the PID file's cwd and id."""
    if session.transcript_path:
        return session.transcript_path
    cwd = record.cwd if record is not None else session.cwd
    if cwd:
        return str(transcript_path_for(claude, cwd, session.session_id))
    return None


def process_runs(session: Session) -> bool:
    """Does the session's own Claude process still run? Its pid must be alive and must not
    have started after the session last showed a sign of life: after a reboot (or just
    later) the pid may belong to another process, whose ports and pane are not the
    session's. The one liveness test of a known session (liveness loop, poller, recovery)."""
    if session.pid is None:
        return False
    t = session.tracking
    return processes.same_process(session.pid, max(t.active_at, t.last_hook_at))


def recovery_signal(
    session: Session, record: PidRecord | None, alive: bool, ending: TranscriptEnding | None
) -> Recover:
    """The facts that re-verify an ``unknown`` session: its process, PID file, transcript."""
    running: bool | None
    if record is not None and alive:
        running = True
    elif session.pid is not None:
        running = process_runs(session) and seam_of(session.agent).is_own_process(session.pid)
    else:
        running = False if record is not None else None
    return Recover(
        at=now_ms(),
        live=False,
        session_id=session.session_id,
        process_running=running,
        pid_status=record.status if record is not None and alive else None,
        transcript_ending=ending,
    )


def named_hook(
    signal: HookSignal, pid: int | None = None, entrypoint: str | None = None
) -> HookSignal:
    """The hook with its project named by the one rule (``system.projects``), the pid of its
    Claude process and its entrypoint when known: what the hub applies, and the offline
    snapshot too."""
    project = project_name(signal.cwd)
    if project is None and pid is None and entrypoint is None:
        return signal
    return dataclasses.replace(
        signal,
        pid=pid or signal.pid,
        project=project or signal.project,
        entrypoint=entrypoint or signal.entrypoint,
    )


def live_pid_file(record: PidRecord, *, live: bool = True) -> PidFile:
    """The signal of a live process's PID file (its project named as a hook's would be)."""
    return PidFile(
        at=record.event_time or now_ms(),
        live=live,
        record=record,
        project=project_name(record.cwd),
    )


async def recover_from_files(
    claude: ClaudeHome,
    scans: list[PidScan],
    fleet: Callable[[], Mapping[str, Session]],
    apply: Apply,
    read_ending: Callable[[Session, str], Awaitable[TranscriptEnding | None]],
) -> None:
    """Steps 4 and 5: re-verify each ``unknown`` session (its PID file, process and how its
    transcript ends, read by ``read_ending``), then apply every live PID file."""
    by_session = {scan.record.session_id: (scan.record, scan.alive) for scan in scans}
    for session in [s for s in fleet().values() if s.state is State.UNKNOWN]:
        record, alive = by_session.get(session.session_id, (None, False))
        path = transcript_path(claude, session, record)
        readable = path is not None and seam_of(session.agent).facts.claude_transcript
        ending = await read_ending(session, path) if path is not None and readable else None
        apply(recovery_signal(session, record, alive, ending))
    for scan in scans:
        if scan.alive:
            apply(live_pid_file(scan.record, live=False))


def transcript_signals(session_id: str, path: str, result: TailResult) -> list[Signal]:
    """What one read of a transcript tells the tracker: its facts (a ``TranscriptUpdate``)
    and each interrupt marker in the bytes read; nothing when the read changed nothing. The
    hub's follower and the file snapshot apply exactly these."""
    if not result.changed and not result.interrupts:
        return []
    facts = result.facts
    # No timestamped record yet (only the title / mode lines a session starts with): the
    # update must not look newer than anything. "Now" would, and records flushed later
    # carry earlier timestamps (the tool_use of a hookless first turn was then ignored).
    signals: list[Signal] = [
        TranscriptUpdate(
            at=facts.last_record_at or 0,
            session_id=session_id,
            transcript_path=path,
            model=facts.model,
            current_tool=facts.current_tool,
            tool_summary=facts.tool_summary,
            last_assistant=facts.last_assistant,
            last_prompt=facts.last_prompt,
            tokens=facts.tokens,
            context_tokens=facts.context_tokens,
            api_error=facts.api_error,
            ending=facts.ending,
            cwd=facts.cwd,
            project=project_name(facts.cwd),
        )
    ]
    signals += [TranscriptInterrupt(at=ts, session_id=session_id) for ts in result.interrupts]
    return signals


def wants_pane(session: Session) -> bool:
    """A running session with a pid whose pane is not known yet (a background session is in
    none: its worker descends from the daemon)."""
    return (
        session.pid is not None
        and not session.ended
        and session.running
        and not session.tmux
        and session.background is None
    )


def gone_jobs(claude: ClaudeHome, sessions: Iterable[Session]) -> list[BackgroundGone]:
    """Blocking (a stat per background session): the background sessions whose job folder
    is gone (``claude rm``; no hook fires), as signals that end them."""
    return [
        BackgroundGone(at=now_ms(), session_id=s.session_id, job=s.background.job)
        for s in sessions
        if s.background is not None and not s.ended and not job_exists(claude, s.background.job)
    ]


def own_pane(session: Session) -> tmux.PaneInfo | None:
    """Blocking: the pane the session's own process names (a reused pid's is not its). No
    scan of every pane when it names none: that is the poll's job, once for all sessions
    (per new session it cost a /proc pass and tmux calls: 200 new sessions took 11 s of CPU
    beside the hub thread, and P3's p99 went from ~4 to 8 ms)."""
    if session.pid is None or not process_runs(session):
        return None
    return keys.find_pane(session.pid, scan=False)


def pane_signal(current: Session, pid: int, pane: tmux.PaneInfo) -> Locate | None:
    """The ``Locate`` of a pane :func:`own_pane` found for the process ``pid``, unless the
    session moved on meanwhile (another process, or a pane already known)."""
    if current.pid != pid or current.tmux is not None:
        return None
    path = pane.current_path or None
    return Locate(
        at=now_ms(),
        session_id=current.session_id,
        tmux=pane.location,
        ports=current.ports,
        pid=pid,
        cwd=path,
        project=project_name(path),
    )
