"""Claude's PID files (``<config>/sessions/<pid>.json``, one per running process): read,
scan, and whether the process that wrote one still runs.

A PID file outlives a crashed process, and pids get reused. The CLI's own test is "the pid
exists and its start time equals the file's ``procStart``" (Linux: field 22 of
``/proc/<pid>/stat``); files without ``procStart`` (older CLIs) fall back to "the pid exists
and did not start after ``startedAt``". Zombies count as dead. Nothing here writes or raises:
bad files give :class:`~pmux_widget.core.signals.Invalid` with a reason.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import psutil

from pmux_widget.core.signals import Invalid, PidRecord, parse_pid_record
from pmux_widget.system.processes import pid_alive, proc_stat

from .background import mark_spare
from .paths import ClaudeHome

__all__ = [
    "is_alive",
    "own_pid_file",
    "process_start_ticks",
    "read_pid_file",
    "scan_pid_files",
    "spare_session",
]

#: Slack when comparing a process's create time (psutil: ~1 s precision) with ``startedAt``.
START_SLACK_S = 2.0
#: PID files are tiny; anything bigger is not one (and is not read whole).
MAX_PID_FILE = 1 << 20

_PID_FILE_RE = re.compile(r"^\d+\.json$")


def read_pid_file(path: str | os.PathLike[str]) -> PidRecord | Invalid:
    """Parse one ``sessions/<pid>.json``; unreadable or malformed files give :class:`Invalid`."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_PID_FILE + 1)
    except OSError as exc:
        return Invalid(f"cannot read {os.fspath(path)}: {exc.strerror or exc}")
    if len(data) > MAX_PID_FILE:
        return Invalid(f"{os.fspath(path)}: larger than {MAX_PID_FILE} bytes")
    if not data.strip():
        return Invalid(f"{os.fspath(path)}: empty")
    record = parse_pid_record(data)
    return record if isinstance(record, Invalid) else mark_spare(record, path)


def own_pid_file(config_dir: str | os.PathLike[str], pid: int) -> PidRecord | None:
    """The PID file the process ``pid`` wrote (``<config>/sessions/<pid>.json``), as it reads
    now; None when there is none yet or it does not parse (a torn write)."""
    record = read_pid_file(Path(config_dir) / "sessions" / f"{pid}.json")
    return record if isinstance(record, PidRecord) else None


def spare_session(config_dir: str | os.PathLike[str], pid: int, session_id: str) -> bool:
    """The process ``pid`` is a spare background worker and ``session_id`` its own placeholder
    session (what its ``SessionStart`` hook names): its PID file says so. A spare that took a
    job names the job's session in its file, and that session is a real one."""
    record = own_pid_file(config_dir, pid)
    return record is not None and record.spare and record.session_id == session_id


def scan_pid_files(home: ClaudeHome) -> list[tuple[Path, PidRecord | Invalid]]:
    """Every ``<pid>.json`` in ``sessions/`` (other names are ignored), by pid, parsed.

    A missing or unreadable directory gives an empty list.
    """
    try:
        names = [e.name for e in os.scandir(home.sessions_dir) if _PID_FILE_RE.match(e.name)]
    except OSError:
        return []
    names.sort(key=lambda name: int(name[:-5]))
    return [(home.sessions_dir / n, read_pid_file(home.sessions_dir / n)) for n in names]


def process_start_ticks(pid: int) -> str | None:
    """Linux: the process's start time in clock ticks since boot (field 22 of
    ``/proc/<pid>/stat``), as the CLI writes it into ``procStart``; None if unknown."""
    if pid <= 0:
        return None
    stat = proc_stat(pid)
    fields = stat[1] if stat else None
    if fields is None or len(fields) < 20:
        return None
    ticks = fields[19]  # field 22; fields[0] is field 3 (state)
    return ticks if ticks.isdigit() else None


def is_alive(record: PidRecord) -> bool:
    """Is the process that wrote this PID file still running?

    The pid must exist (zombies are dead). With ``procStart``: it must equal the live
    process's start ticks (a different value means the pid was reused). Without it (older
    CLIs), or where start ticks cannot be read (not Linux): the process must not have started
    after the file's ``startedAt`` (+2 s for clock granularity).
    """
    pid = record.pid
    if not pid_alive(pid):
        return False
    if record.proc_start is not None:
        ticks = process_start_ticks(pid)
        if ticks is not None:
            return ticks == record.proc_start.strip()
        if sys.platform.startswith("linux"):
            return False  # gone between the two reads
    if record.started_at is None:
        return True
    try:
        created = psutil.Process(pid).create_time()
    except (psutil.Error, OSError):
        return False
    return created <= record.started_at / 1000.0 + START_SLACK_S
