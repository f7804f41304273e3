"""The poller: every 30-60 s, which tmux pane and which ports each session has, and a
liveness sweep the tracker uses as a safety net (``PollTick``). The probe runs on a worker
thread: it walks /proc and asks tmux.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Mapping
from typing import Any

from pmux_widget.agents.claude.paths import ClaudeHome, transcript_path_for
from pmux_widget.core.model import Change, Session
from pmux_widget.core.signals import Locate, PidRecord, PollTick
from pmux_widget.system import processes, tmux
from pmux_widget.system.clock import now_ms
from pmux_widget.system.projects import project_name

from ..boot import gone_jobs, live_pid_file, own_pane, pane_signal, process_runs, wants_pane
from ..protocols import HubView
from .runner import Runner

__all__ = ["Locator", "next_poll_s", "poll_interval", "poll_once", "probe"]


def poll_interval(session_count: int) -> float:
    """30 s up to 10 sessions, 45 s up to 20, 60 s beyond (``PMUX_WIDGET_POLL_SECONDS``)."""
    override = os.environ.get("PMUX_WIDGET_POLL_SECONDS")
    if override:
        with contextlib.suppress(ValueError):
            return max(0.2, float(override))
    if session_count <= 10:
        return 30.0
    return 45.0 if session_count <= 20 else 60.0


def next_poll_s(fleet: Mapping[str, Session]) -> float:
    """The wait before the next poll: its tier counts the live sessions (the ended ones stay
    in the fleet for the history, and would slow the poll down for good)."""
    return poll_interval(sum(1 for s in fleet.values() if not s.ended))


class Locator:
    """Locates a new session's tmux pane at once, not at the next poll (30-60 s later).

    Listener (hub thread): the first time a running session has a pid and no pane, the
    process's own ``TMUX``/``TMUX_PANE`` name its pane (what the hook's ``$TMUX_PANE`` and the
    PID file's ``tmux`` field say too), confirmed against the process tree with one tmux call
    (``system.keys.find_pane``), on the worker thread. The poll stays the safety net.
    """

    def __init__(self, hub: HubView, runner: Runner) -> None:
        self.hub = hub
        self.runner = runner
        self.tried: set[tuple[str, int]] = set()

    def on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        for change in changes:
            s = change.after
            if s.pid is None or not wants_pane(s):
                continue
            key = (s.session_id, s.pid)
            if key in self.tried:
                continue
            if len(self.tried) > 4096:
                self.tried.clear()
            self.tried.add(key)
            self.runner.spawn(self._locate(s))

    async def _locate(self, session: Session) -> None:
        session_id, pid = session.session_id, session.pid
        pane = await self.runner.probe(own_pane, session)
        current = self.hub.fleet.get(session_id)
        if pane is None or current is None or pid is None:
            return
        signal = pane_signal(current, pid, pane)
        if signal is not None:
            self.hub.apply(signal)


async def poll_once(hub: HubView, runner: Runner, claude: ClaudeHome | None = None) -> None:
    """Discover panes and processes, refresh locations and ports, then the safety net."""
    facts = await runner.probe(probe, list(hub.fleet.values()), claude)
    for record in facts.get("found", ()):
        # a Claude in a pane that neither hooks nor a PID file announced: as its PID file
        # would (the tracker takes it as one), then located and followed like any other
        hub.apply(live_pid_file(record))
    for session_id, (location, ports, pid, path) in facts["where"].items():
        current = hub.fleet.get(session_id)
        if current is None:
            continue
        # its process runs (it is in "where"): a pane the Locator confirmed from the
        # process's own TMUX_PANE stays, even if it is deeper than this scan looks
        location = location or current.tmux
        if (
            current.tmux != location
            or current.ports != tuple(ports)
            or (pid is not None and current.pid is None)
            or (current.cwd is None and path)
        ):
            hub.apply(
                Locate(
                    at=now_ms(),
                    session_id=session_id,
                    tmux=location,
                    ports=tuple(ports),
                    pid=pid,
                    cwd=path,
                    project=project_name(path),
                )
            )
    for signal in facts.get("gone_jobs", ()):
        hub.apply(signal)
    # live: what it finds happens now (it never notifies: it moves nothing into attention)
    hub.apply(
        PollTick(
            at=now_ms(),
            alive=facts["alive"],
            pids=facts.get("pids", {}),
            exited=facts.get("exited", frozenset()),
        )
    )


def probe(sessions: list[Session], claude: ClaudeHome | None = None) -> Mapping[str, Any]:
    """Worker thread: liveness, tmux location and listening ports per session; with
    ``claude``, the Claude processes in panes that no session knows (``found``)."""
    tree = processes.children_map()
    panes = tmux.list_panes()
    pane_of_pid: dict[int, tmux.PaneInfo] = {}
    for pane in panes:
        for child in processes.descendants(pane.shell_pid, tree, depth=3):
            pane_of_pid.setdefault(child, pane)
        pane_of_pid.setdefault(pane.shell_pid, pane)
    alive: dict[str, bool | None] = {}
    checked: dict[str, int] = {}  # the pid each answer is about
    families: dict[str, list[int]] = {}
    by_id: dict[str, list[tmux.PaneInfo]] = {}
    for pane in panes:
        by_id.setdefault(pane.location.pane, []).append(pane)
    exited: set[str] = set()
    for session in sessions:
        if session.ended:
            continue
        pid = session.pid
        if pid is None:
            alive[session.session_id] = None
            if _claude_left_its_pane(session, by_id, tree):
                exited.add(session.session_id)
            continue
        living = process_runs(session)  # a reused pid is another process: not its ports
        alive[session.session_id] = living
        checked[session.session_id] = pid
        if living:
            families[session.session_id] = [pid, *processes.descendants(pid, tree, depth=4)]
    ports = processes.listening_ports_by_family(families)
    where: dict[str, tuple[Any, list[int], int | None, str | None]] = {}
    background = {s.session_id for s in sessions if s.background is not None}
    for session_id, family in families.items():
        # a background worker is in no pane, even when its daemon descends from one
        found = pane_of_pid.get(family[0]) if session_id not in background else None
        where[session_id] = (
            found.location if found else None,
            ports[session_id],
            family[0],
            (found.current_path or None) if found else None,
        )
    new = discover(claude, panes, tree, sessions) if claude is not None else []
    jobs = gone_jobs(claude, sessions) if claude is not None else []
    return {
        "alive": alive,
        "pids": checked,
        "where": where,
        "found": new,
        "exited": frozenset(exited),
        "gone_jobs": jobs,
    }


def _claude_left_its_pane(
    session: Session, by_id: dict[str, list[tmux.PaneInfo]], tree: dict[int, list[int]]
) -> bool:
    """A session known only by its pane (hooks' ``$TMUX_PANE``, no pid): the pane runs
    something else now (``pane_current_command``: the shell is back) and no Claude process is
    left in its tree. A pane id found on several tmux servers proves nothing."""
    pane_id = session.tmux.pane if session.tmux is not None else session.tracking.pane
    candidates = by_id.get(pane_id or "", [])
    if len(candidates) != 1:
        return False
    pane = candidates[0]
    command = pane.current_command
    if command == "claude" or command.startswith("claude ") or command in ("node", "bun"):
        return False
    family = (pane.shell_pid, *processes.descendants(pane.shell_pid, tree, depth=4))
    return not any(processes.is_claude_pid(pid) for pid in family)


#: A transcript written this long before its process started is not that process's.
_DISCOVERY_SLACK_MS = 2_000


def discover(
    claude: ClaudeHome,
    panes: list[tmux.PaneInfo],
    tree: dict[int, list[int]],
    sessions: list[Session],
) -> list[PidRecord]:
    """Claude processes in tmux panes that no live session has as its pid (started with
    neither hooks nor a PID file yet: an older CLI, or hooks not installed). Their session
    is the newest transcript of their folder written since the process started; one with
    no transcript yet is found by a later poll."""
    known_pids = {s.pid for s in sessions if s.pid is not None and not s.ended}
    owned = {s.session_id for s in sessions if s.pid is not None and not s.ended}
    found: list[PidRecord] = []
    for pane in panes:
        for pid in (pane.shell_pid, *processes.descendants(pane.shell_pid, tree, depth=3)):
            if pid in known_pids or not processes.is_claude_pid(pid):
                continue
            if processes.claude_role(pid) is not None:
                continue  # an agent view, a daemon, its pty hosts and workers: no session here
            if (claude.sessions_dir / f"{pid}.json").exists():
                # it announced itself: its PID file says which session it runs, or that it
                # runs none (2.1.197's spare, under the agent view's pane and with no
                # --bg-spare in its argv, took a respawned worker's transcript: a stray row)
                continue
            facts = processes.process_facts(pid)
            if facts is None:
                continue
            cwd, started_ms = facts
            session_id = _newest_transcript(claude, cwd, started_ms - _DISCOVERY_SLACK_MS)
            if session_id is None or session_id in owned:
                continue
            owned.add(session_id)
            found.append(PidRecord(pid=pid, session_id=session_id, cwd=cwd, started_at=started_ms))
    return found


def _newest_transcript(claude: ClaudeHome, cwd: str, since_ms: int) -> str | None:
    folder = transcript_path_for(claude, cwd, "x").parent
    newest: tuple[float, str] | None = None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    for entry in entries:
        if not entry.name.endswith(".jsonl") or not _is_session_id(entry.name[: -len(".jsonl")]):
            continue  # (2.1.197's daemon leaves <id>.orphaned-<ms>-<hex>.jsonl at a respawn)
        try:
            mtime = entry.stat().st_mtime
        except OSError:
            continue
        if mtime * 1000 >= since_ms and (newest is None or mtime > newest[0]):
            newest = (mtime, entry.name[: -len(".jsonl")])
    return newest[1] if newest else None


def _is_session_id(name: str) -> bool:
    """A transcript's name is its session's id, a UUID; anything else is no session's."""
    try:
        return str(uuid.UUID(name)) == name.lower()
    except ValueError:
        return False
