"""Claude Code's config directory: where its files are, and whether a PID file's process lives.

Paths (``claude-code-facts.md`` §1, §3, §5.1): the config dir is ``$CLAUDE_CONFIG_DIR``, else
``~/.claude``; it holds ``settings.json``, ``sessions/<pid>.json`` (one file per running
process) and ``projects/<encoded cwd>/<session-id>.jsonl`` (transcripts). "Claude not
installed" means that directory does not exist.

Liveness: a PID file outlives a crashed process, and pids get reused. The CLI's own test is
"the pid exists and its start time equals the file's ``procStart``" (Linux: field 22 of
``/proc/<pid>/stat``, in clock ticks since boot). Files without ``procStart`` (older CLIs)
fall back to "the pid exists and the process did not start after the file's ``startedAt``".
Zombies count as dead.

Nothing here writes anything or raises on bad files: unreadable or malformed PID files give
:class:`~pmux_widget.core.signals.Invalid` with a reason.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import psutil

from pmux_widget.core.signals import Invalid, PidRecord, parse_pid_record
from pmux_widget.system.processes import proc_stat

__all__ = [
    "ENV_VAR",
    "MAX_ENCODED_LENGTH",
    "ClaudeHome",
    "encode_project_dir",
    "is_alive",
    "java_string_hash",
    "process_start_ticks",
    "read_pid_file",
    "scan_pid_files",
    "transcript_path_for",
]

ENV_VAR = "CLAUDE_CONFIG_DIR"
#: Encoded project-dir names longer than this are cut and suffixed with a hash.
MAX_ENCODED_LENGTH = 200
#: Slack when comparing a process's create time (psutil: ~1 s precision) with ``startedAt``.
START_SLACK_S = 2.0
#: PID files are tiny; anything bigger is not one (and is not read whole).
MAX_PID_FILE = 1 << 20

_PID_FILE_RE = re.compile(r"^\d+\.json$")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True)
class ClaudeHome:
    """Claude Code's config directory and the paths under it. Nothing is created."""

    root: Path

    @classmethod
    def resolve(cls, path: str | os.PathLike[str] | None = None) -> ClaudeHome:
        """``path`` if given, else ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; NFC-normalised
        like the CLI does."""
        if path is None:
            path = os.environ.get(ENV_VAR) or Path.home() / ".claude"
        text = unicodedata.normalize("NFC", os.fspath(path))
        return cls(Path(text).expanduser().absolute())

    @property
    def projects_dir(self) -> Path:
        return self.root / "projects"

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    @property
    def settings_file(self) -> Path:
        return self.root / "settings.json"

    @property
    def installed(self) -> bool:
        """The config dir exists (the widget says "Claude not installed" otherwise)."""
        return self.root.is_dir()


# ------------------------------------------------------------------------ project dirs


def _utf16_units(text: str) -> list[int]:
    """The string as UTF-16 code units (what JavaScript indexes and hashes)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` over UTF-16 code units: h = 31*h + unit, signed 32-bit."""
    h = 0
    for unit in _utf16_units(text):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(number: int) -> str:
    if number == 0:
        return "0"
    digits = []
    while number:
        number, rem = divmod(number, 36)
        digits.append(_BASE36[rem])
    return "".join(reversed(digits))


def encode_project_dir(path: str) -> str:
    """The directory name Claude Code uses under ``projects/`` for a cwd.

    Every UTF-16 code unit outside ``[A-Za-z0-9]`` becomes ``-`` (so an emoji, two units,
    becomes ``--``). Names over 200 characters are cut to 200 and suffixed with ``-`` and the
    base-36 absolute value of the Java-style hash of the *original* path. The mapping is lossy:
    never decode it, read ``cwd`` from the records instead.
    """
    encoded = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in _utf16_units(path))
    if len(encoded) <= MAX_ENCODED_LENGTH:
        return encoded
    return f"{encoded[:MAX_ENCODED_LENGTH]}-{_base36(abs(java_string_hash(path)))}"


def transcript_path_for(home: ClaudeHome, cwd: str, session_id: str) -> Path:
    """``<config>/projects/<encoded cwd>/<session_id>.jsonl``.

    ``cwd`` must be the session's *original* working directory after ``realpath`` (that is
    what the CLI encodes). Prefer a hook's ``transcript_path`` when there is one: a session
    started with another config dir, or relocated, lives elsewhere.
    """
    return home.projects_dir / encode_project_dir(cwd) / f"{session_id}.jsonl"


# --------------------------------------------------------------------------- PID files


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
    return parse_pid_record(data)


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


# ---------------------------------------------------------------------------- liveness


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


def _pid_running(pid: int) -> bool:
    """The pid exists and is not a zombie."""
    if pid <= 0:
        return False
    stat = proc_stat(pid)
    fields = stat[1] if stat else None
    if fields is not None:
        return bool(fields) and fields[0] not in ("Z", "X", "x")
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except (psutil.Error, OSError):
        return False


def is_alive(record: PidRecord) -> bool:
    """Is the process that wrote this PID file still running?

    The pid must exist (zombies are dead). With ``procStart``: it must equal the live
    process's start ticks (a different value means the pid was reused). Without it (older
    CLIs), or where start ticks cannot be read (not Linux): the process must not have started
    after the file's ``startedAt`` (+2 s for clock granularity).
    """
    pid = record.pid
    if not _pid_running(pid):
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
