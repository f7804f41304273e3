"""The spool: hooks that no hub accepted, one file each, replayed by the next hub.

The script writes them; this module reads, removes and (for drivers and tests) writes them in
the same format, described in ``docs/hooks.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

__all__ = [
    "SPOOL_CAP",
    "SPOOL_SUFFIX",
    "SpoolEntry",
    "clean_spool_temp",
    "read_spool",
    "remove_spool_entries",
    "spooled_count",
    "write_spool_entry",
]

#: At most this many spool files; past it the script drops the oldest.
SPOOL_CAP = 5000
SPOOL_SUFFIX = ".hook"


@dataclass(frozen=True)
class SpoolEntry:
    """One spooled hook. ``payload_bytes`` is the hook's stdin minus its final newline.

    ``error`` is set (and the other fields are defaults) when the file could not be read or
    parsed; such entries should be logged and removed like the others.
    """

    path: Path
    sent: int = 0
    pane: str = ""
    ppid: int = 0
    #: the agent the hook command named ("codex"; "" for Claude Code's hooks, which name none)
    agent: str = ""
    payload_bytes: bytes = b""
    error: str | None = None


_ENVELOPE_PREFIX = re.compile(
    rb'\{"sent":(\d+),"pane":"([%0-9A-Za-z_.:@+\-]*)","ppid":(\d+)(?:,"agent":"[a-z]*")?,"payload":'
)


def _parse_spool_file(path: Path, data: bytes) -> SpoolEntry:
    """Parse one spool file's bytes; never raises."""
    try:
        envelope = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return SpoolEntry(path, error=f"not valid JSON: {exc}")
    except RecursionError:
        return SpoolEntry(path, error="nested too deeply")
    if not isinstance(envelope, dict):
        return SpoolEntry(path, error="not a JSON object")
    sent, pane, ppid = envelope.get("sent"), envelope.get("pane"), envelope.get("ppid")
    payload = envelope.get("payload")
    if not isinstance(sent, int) or isinstance(sent, bool):
        return SpoolEntry(path, error='"sent": missing or not an integer')
    if not isinstance(pane, str):
        return SpoolEntry(path, error='"pane": missing or not a string')
    if not isinstance(ppid, int) or isinstance(ppid, bool):
        return SpoolEntry(path, error='"ppid": missing or not an integer')
    if "payload" not in envelope:
        return SpoolEntry(path, error='"payload": missing')
    agent = envelope.get("agent", "")
    if not isinstance(agent, str) or not re.fullmatch(r"[a-z]*", agent):
        agent = ""
    match = _ENVELOPE_PREFIX.match(data)
    body = data.rstrip(b"\n")
    if match and body.endswith(b"}"):
        raw = body[match.end() : -1]  # the payload exactly as the script received it
    else:  # written by something else: re-encode the parsed payload
        raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return SpoolEntry(path, sent=sent, pane=pane, ppid=ppid, agent=agent, payload_bytes=raw)


def read_spool(home: PmuxHome) -> list[SpoolEntry]:
    """Every spooled event of ``home``, oldest first. Corrupt files come back with ``error``."""
    try:
        names = sorted(
            name
            for name in os.listdir(home.spool_dir)
            if name.endswith(SPOOL_SUFFIX) and not name.startswith(".")
        )
    except OSError:
        return []
    entries = []
    for name in names:
        path = home.spool_dir / name
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            continue  # replayed and removed by another hub meanwhile
        except OSError as exc:
            entries.append(SpoolEntry(path, error=f"unreadable: {exc}"))
            continue
        entries.append(_parse_spool_file(path, data))
    return entries


def remove_spool_entries(entries: Iterable[SpoolEntry]) -> int:
    """Delete the entries' files (missing ones are fine); returns how many were deleted."""
    removed = 0
    for entry in entries:
        with contextlib.suppress(FileNotFoundError):
            entry.path.unlink()
            removed += 1
    return removed


def write_spool_entry(
    home: PmuxHome,
    payload: bytes,
    *,
    sent: int,
    pane: str = "",
    ppid: int = 0,
    agent: str = "",
) -> Path:
    """Spool one event from Python, in exactly the script's format (for drivers and tests)."""
    if not re.fullmatch(r"[%0-9A-Za-z_.:@+\-]*", pane):
        pane = ""
    home.spool_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if payload.endswith(b"\n"):
        payload = payload[:-1]
    named = b',"agent":"%s"' % agent.encode() if re.fullmatch(r"[a-z]+", agent) else b""
    data = b'{"sent":%d,"pane":"%s","ppid":%d%s,"payload":%s}\n' % (
        sent,
        pane.encode(),
        ppid,
        named,
        payload,
    )
    path = home.spool_dir / f"{sent:015d}-{os.getpid()}{SPOOL_SUFFIX}"
    counter = 0
    while path.exists():
        counter += 1
        path = home.spool_dir / f"{sent:015d}-{os.getpid()}.{counter}{SPOOL_SUFFIX}"
    atomic_write(path, data, 0o600)
    return path


def clean_spool_temp(home: PmuxHome, max_age_s: float = 600.0) -> int:
    """Remove temp files (``.in-*``, ``.sp-*``) older than ``max_age_s`` left by killed hooks."""
    removed = 0
    cutoff = time.time() - max_age_s
    try:
        names = os.listdir(home.spool_dir)
    except OSError:
        return 0
    for name in names:
        if not name.startswith((".in-", ".sp-")):
            continue
        path = home.spool_dir / name
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
    return removed


def spooled_count(home: PmuxHome) -> int:
    """How many events wait in the spool (names only: a full spool can hold GBs)."""
    try:
        return sum(1 for name in os.listdir(home.spool_dir) if name.endswith(SPOOL_SUFFIX))
    except OSError:
        return 0
