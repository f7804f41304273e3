"""Claude Code's background sessions on disk (``claude --bg``, the agent view): which PID file
is a spare worker, and whether a job still exists.

The daemon keeps one folder per job, ``<config>/jobs/<job>/`` (``state.json``, the timeline):
``claude stop`` leaves it, ``claude rm`` removes it. Pre-warmed spare workers write a ``bg``
PID file too, with a job id of their own that no job folder has (2.1.332 sometimes adds
``"spare": true``; 2.1.197 never): a ``bg`` worker whose job has no folder is a spare, and so
is one the daemon's roster (``daemon/roster.json``) says it dispatched as a spare (2.1.197's
first worker: ``bg spawned <job> (spare)`` in ``daemon.log``, with a job folder).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from pmux_widget.core.signals import PidRecord

from .paths import ClaudeHome

__all__ = ["job_dir", "job_exists", "mark_spare", "spare_by_roster"]


def job_dir(config_dir: str | os.PathLike[str], job: str) -> Path:
    return Path(config_dir) / "jobs" / job


def job_exists(home: ClaudeHome, job: str) -> bool:
    """The job's folder is there (a stopped job's too): ``claude rm`` removes it."""
    return "/" not in job and job_dir(home.root, job).is_dir()


def mark_spare(record: PidRecord, pid_file: str | os.PathLike[str]) -> PidRecord:
    """``record`` (read from ``<config>/sessions/<pid>.json``) with ``spare`` set when it is a
    background worker no job claims."""
    if record.kind != "bg" or record.spare:
        return record
    job = record.job_id
    config = Path(pid_file).parent.parent
    if job and "/" not in job and job_dir(config, job).is_dir() and not _roster_spare(config, job):
        return record
    return dataclasses.replace(record, spare=True)


#: A roster bigger than this is not read (it holds a few KB per worker).
_MAX_ROSTER = 4 << 20


def _roster_workers(config: Path) -> dict[str, object]:
    """``daemon/roster.json``'s workers by job ({} when there is none, or it is not JSON)."""
    path = config / "daemon" / "roster.json"
    try:
        if path.stat().st_size > _MAX_ROSTER:
            return {}
        roster = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return {}
    workers = roster.get("workers") if isinstance(roster, dict) else None
    return workers if isinstance(workers, dict) else {}


def _dispatched_as_spare(worker: object) -> bool:
    dispatch = worker.get("dispatch") if isinstance(worker, dict) else None
    return isinstance(dispatch, dict) and dispatch.get("source") == "spare"


def _roster_spare(config: Path, job: str) -> bool:
    """The daemon's roster says the job's worker was dispatched as a spare (2.1.197 spawns
    one with a job folder of its own, which ``claude agents`` does not list)."""
    return _dispatched_as_spare(_roster_workers(config).get(job))


def spare_by_roster(config_dir: str | os.PathLike[str], pid: int) -> bool:
    """The daemon's roster says the process ``pid`` is a worker it dispatched as a spare
    (2.1.197's first worker: no ``--bg-spare`` in its argv, its PID file maybe not written
    yet when its first hook comes)."""
    return any(
        isinstance(worker, dict) and worker.get("replPid") == pid and _dispatched_as_spare(worker)
        for worker in _roster_workers(Path(config_dir)).values()
    )
