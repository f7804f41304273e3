"""Runtime files of live hubs (``$PMUX_WIDGET_HOME/runtime/<hub id>.json``): how a hub says
where it listens, and how the hook script, the CLI and ``doctor`` find it. The hub writes and
removes its own file through here, so writer and readers share one format.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmux_widget.system.files import atomic_write, json_objects, port_or_none
from pmux_widget.system.home import PmuxHome
from pmux_widget.system.processes import pid_alive, same_process

__all__ = ["HubInfo", "clean_stale_hub_files", "live_hubs", "remove_hub_file", "write_hub_file"]


@dataclass(frozen=True)
class HubInfo:
    """A hub's runtime file: its path, pid (None if absent) and port."""

    path: Path
    pid: int | None
    port: int


def live_hubs(home: PmuxHome) -> list[HubInfo]:
    """Runtime files of ``home`` with a valid port and (when given) a live pid, by name.

    Liveness is :func:`pmux_widget.system.processes.pid_alive` (a zombie is dead); the script's
    ``kill -0`` counts a zombie as alive, which only costs it one refused connection.
    """
    hubs = []
    for path, data in json_objects(home.runtime_dir):
        pid, port = data.get("pid"), port_or_none(data.get("port"))
        if port is None:
            continue
        if not isinstance(pid, int) or isinstance(pid, bool):
            pid = None
        if pid is not None and (pid <= 0 or not pid_alive(pid)):
            continue
        hubs.append(HubInfo(path, pid, port))
    return hubs


def write_hub_file(home: PmuxHome, hub_id: str, info: dict[str, Any]) -> Path:
    """Write ``runtime/<hub_id>.json`` (0600, atomically: the script may read it any time)."""
    path = home.runtime_dir / f"{hub_id}.json"
    atomic_write(path, json.dumps(info).encode(), 0o600)
    return path


def remove_hub_file(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def clean_stale_hub_files(home: PmuxHome, keep: Path | None = None) -> list[Path]:
    """Remove runtime files of hubs whose process is gone (killed, crashed), or whose pid
    another process has since taken (it started after the hub did); returns those removed.

    Files of other hubs of this very process (tests run several) are left alone.
    """
    removed = []
    for path in home.runtime_dir.glob("*.json"):
        try:
            data = json.loads(path.read_text())
            pid, started = int(data.get("pid", 0)), int(data.get("started_at", 0))
        except (OSError, ValueError, AttributeError, TypeError):
            pid = started = 0
        if pid == os.getpid() and path != keep:
            continue
        if not same_process(pid, started):
            remove_hub_file(path)
            removed.append(path)
    return removed
