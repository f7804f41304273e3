"""The spool: hooks that no hub accepted, one file each, replayed by the next hub.

The script writes them; this module reads, removes and (for drivers and tests) writes them in
the same format, described in ``docs/hooks.md``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.system.files import atomic_write
from pmux_widget.system.home import PmuxHome

__all__ = [
    "ORPHAN_AGE_S",
    "SPOOL_CAP",
    "SPOOL_SUFFIX",
    "SpoolEntry",
    "adopt_orphans",
    "clean_spool_temp",
    "read_spool",
    "remove_spool_entries",
    "spooled_count",
    "write_spool_entry",
]

#: At most this many spool files; past it the script drops the oldest.
SPOOL_CAP = 5000
SPOOL_SUFFIX = ".hook"
#: A killed script's payload is adopted once its envelope is this old: a running script never
#: lives past ~1.5 s (curl --max-time 1), and its background ``rm`` has long run by then.
ORPHAN_AGE_S = 10.0

_ENTRY_NAME = re.compile(r"(\d+)-(\d+)(?:\.\d+)?" + re.escape(SPOOL_SUFFIX))
_ORPHAN_NAME = re.compile(r"\.in-(\d+)")
#: ``<sent> <ppid> p=<pane> a=<agent>``, then the time on a line of its own once the script
#: knows it (its first line says 0); older scripts wrote ``<sent>`` alone (one hub only), or
#: rewrote the first line with the time
_ORPHAN_ENVELOPE = re.compile(r"(\d+)(?: (\d+) p=([%0-9A-Za-z_.:@+\-]*) a=([a-z]*))?(?:\n(\d+))?")


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
    #: the script's pid, from the file's name (``<sent>-<pid>.hook``); 0 when not named so
    hook_pid: int = 0

    @property
    def hook_id(self) -> tuple[int, int]:
        """(pid, sent): what the script's ``X-Pmux-Hook`` and ``X-Pmux-Sent`` said."""
        return (self.hook_pid, self.sent)


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
        entry = _parse_spool_file(path, data)
        named = _ENTRY_NAME.fullmatch(name)
        if named and not entry.error:
            entry = dataclasses.replace(entry, hook_pid=int(named[2]))
        entries.append(entry)
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
    hook_pid: int | None = None,
) -> Path:
    """Spool one event from Python, in exactly the script's format (for drivers and tests;
    ``hook_pid``: the script's, for an entry adopted from a killed one)."""
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
    writer = os.getpid() if hook_pid is None else hook_pid
    path = home.spool_dir / f"{sent:015d}-{writer}{SPOOL_SUFFIX}"
    counter = 0
    while path.exists():
        counter += 1
        path = home.spool_dir / f"{sent:015d}-{writer}.{counter}{SPOOL_SUFFIX}"
    atomic_write(path, data, 0o600)
    return path


def _whole(payload: bytes) -> bool:
    """A JSON object, so not cut short (a hook's payload is one; cut, it never parses)."""
    try:
        return isinstance(json.loads(payload), dict)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False


def adopt_orphans(
    home: PmuxHome,
    *,
    min_age_s: float | None = None,
    delivered: Callable[[tuple[int, int]], bool] = lambda hook_id: False,
) -> int:
    """Turn what killed scripts left (``.in-<pid>`` with its envelope ``.in-<pid>.t``, older
    than ``min_age_s``, :data:`ORPHAN_AGE_S` by default) into spool entries, named as the
    script would have named them; one a hub says it got (``delivered((pid, sent))``) or that
    is spooled already is only removed, and so is a payload cut short (not a JSON object).
    Without its envelope (a script older than the envelope) a payload is left to
    :func:`clean_spool_temp`. Returns how many were adopted."""
    adopted = 0
    cutoff = time.time() - (ORPHAN_AGE_S if min_age_s is None else min_age_s)
    try:
        names = os.listdir(home.spool_dir)
    except OSError:
        return 0
    for name in names:
        orphan = _ORPHAN_NAME.fullmatch(name)
        if orphan is None:
            continue
        payload_path = home.spool_dir / name
        envelope_path = home.spool_dir / f"{name}.t"
        try:
            if envelope_path.stat().st_mtime > cutoff:
                continue  # its script may still run (or none wrote the envelope yet)
            envelope = _ORPHAN_ENVELOPE.fullmatch(envelope_path.read_text().strip())
            payload = payload_path.read_bytes()
        except (OSError, UnicodeDecodeError):
            continue
        hook_pid = int(orphan[1])
        if envelope is not None and _whole(payload):
            # time 0: killed before it read the clock (so before any POST): its file's time
            sent = int(envelope[5] or envelope[1]) or int(payload_path.stat().st_mtime * 1000)
            entry_path = home.spool_dir / f"{sent:015d}-{hook_pid}{SPOOL_SUFFIX}"
            if not entry_path.exists() and not delivered((hook_pid, sent)):
                write_spool_entry(
                    home,
                    payload,
                    sent=sent,
                    pane=envelope[3] or "",
                    ppid=int(envelope[2] or 0),
                    agent=envelope[4] or "",
                    hook_pid=hook_pid,
                )
                adopted += 1
        for path in (payload_path, envelope_path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    return adopted


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
