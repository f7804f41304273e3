"""The poller: every 30-60 s, which tmux pane and which ports each session has, and a
liveness sweep the tracker uses as a safety net (``PollTick``). The probe runs on a worker
thread: it walks /proc and asks tmux.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from typing import Any

from pmux_widget.core.model import Session
from pmux_widget.core.signals import Locate, PollTick
from pmux_widget.system import processes, tmux
from pmux_widget.system.clock import now_ms

from ..boot import process_runs
from ..protocols import HubView
from .runner import Runner

__all__ = ["poll_interval", "poll_once", "probe"]


def poll_interval(session_count: int) -> float:
    """30 s up to 10 sessions, 45 s up to 20, 60 s beyond (``PMUX_WIDGET_POLL_SECONDS``)."""
    override = os.environ.get("PMUX_WIDGET_POLL_SECONDS")
    if override:
        with contextlib.suppress(ValueError):
            return max(0.2, float(override))
    if session_count <= 10:
        return 30.0
    return 45.0 if session_count <= 20 else 60.0


async def poll_once(hub: HubView, runner: Runner) -> None:
    """Discover panes and processes, refresh locations and ports, then the safety net."""
    facts = await runner.probe(probe, list(hub.fleet.values()))
    for session_id, (location, ports, pid) in facts["where"].items():
        current = hub.fleet.get(session_id)
        if current is None:
            continue
        if (
            current.tmux != location
            or current.ports != tuple(ports)
            or (pid is not None and current.pid is None)
        ):
            hub.apply(
                Locate(
                    at=now_ms(), session_id=session_id, tmux=location, ports=tuple(ports), pid=pid
                )
            )
    # live: what it finds happens now (it never notifies: it moves nothing into attention)
    hub.apply(PollTick(at=now_ms(), alive=facts["alive"]))


def probe(sessions: list[Session]) -> Mapping[str, Any]:
    """Worker thread: liveness, tmux location and listening ports per session."""
    tree = processes.children_map()
    panes = tmux.list_panes()
    pane_of_pid: dict[int, tmux.PaneInfo] = {}
    for pane in panes:
        for child in processes.descendants(pane.shell_pid, tree, depth=3):
            pane_of_pid.setdefault(child, pane)
        pane_of_pid.setdefault(pane.shell_pid, pane)
    alive: dict[str, bool | None] = {}
    families: dict[str, list[int]] = {}
    for session in sessions:
        if session.ended:
            continue
        pid = session.pid
        if pid is None:
            alive[session.session_id] = None
            continue
        living = process_runs(session)  # a reused pid is another process: not its ports
        alive[session.session_id] = living
        if living:
            families[session.session_id] = [pid, *processes.descendants(pid, tree, depth=4)]
    ports = processes.listening_ports_by_family(families)
    where: dict[str, tuple[Any, list[int], int | None]] = {}
    for session_id, family in families.items():
        found = pane_of_pid.get(family[0])
        where[session_id] = (found.location if found else None, ports[session_id], family[0])
    return {"alive": alive, "where": where}
