"""The hook script, Claude settings (install / uninstall / status), the spool, and ``doctor``.

Hook script (``$PMUX_WIDGET_HOME/hooks/status-hook.sh``, mode 0700)
--------------------------------------------------------------------
Rendered by :func:`render_script` with the home's absolute path baked in (it does NOT read
``$PMUX_WIDGET_HOME`` at run time, so a Claude process that inherited some other value still
reports to the home the script belongs to). POSIX sh + curl only, with as few forks as
possible (it runs on every tool call): ``cat`` (payload to a temp file), ``date`` and
``curl``. curl's start-up (~15 ms here, TLS libraries) dominates, so with one live hub (the
usual case) curl is started first and reads its options from a pipe (``curl -K -``), written
once the payload and the time are known: ``cat`` and ``date`` overlap its start-up. With
several hubs, ``cat`` and ``date`` run in parallel, then one background ``curl`` per hub. The
temp files' ``rm`` is left running in the background at exit; the spool path adds ``sed`` and
``mv``. It:

* reads stdin once into ``spool/.in-<pid>`` (removed at exit with ``.in-<pid>.t``, the
  time; payloads can be MBs), and exits when it is empty;
* POSTs it unchanged (``--data-binary``, ``Content-Type: application/json``) to
  ``http://127.0.0.1:<port>/api/hook`` of every ``runtime/*.json`` whose ``"pid"`` is alive
  (``kill -0``; no ``"pid"`` = assumed alive), all in parallel, ``--max-time 1``,
  ``--connect-timeout 0.5``, proxies and ``~/.curlrc`` ignored, no ``Expect: 100-continue``.
  The runtime file is parsed with shell builtins only: the first ``"pid"`` and ``"port"`` keys
  with plain integer values, any whitespace or line layout;
* headers: ``X-Pmux-Token`` (``$PMUX_WIDGET_HOME/token``, read with the ``read`` builtin),
  ``X-Pmux-Pane`` (``$TMUX_PANE``; always present, empty when unset or when it holds anything
  but ``[%0-9A-Za-z_.:@+-]``), ``X-Pmux-Ppid`` (the script's ``$PPID``: our command execs
  the script, so that is the process that ran the command, i.e. Claude itself; run
  some other way, e.g. through a shell that forks, it is that shell; the hub walks up to the
  nearest Claude process either way), ``X-Pmux-Sent`` (ms epoch from ``date +%s%3N``; where
  ``%N`` is unsupported, e.g. BSD/macOS ``date``, it is seconds * 1000, so ordering there is
  only to the second);
* a hub *accepted* the event iff its curl exited 0 with ``--fail``: a 2xx answer (our hubs
  never redirect). No token, no runtime file, dead pids, refused, hung (> 1 s), 4xx/5xx, or
  no curl at all → the event is spooled (below);
* prints nothing (stdout and stderr go to ``/dev/null`` first thing) and always exits 0, even
  when the home, the token or curl is missing. stdin is always drained.

Measured on the shared 2-core dev machine (medians of 50 runs through ``/bin/sh -c``, dash,
against a Tornado hub): one live hub 20 ms vs 16 ms for a bare ``curl`` of the same payload
(1.27x; budget 1.5x; 1 MB payload: 29 vs 23 ms); no hub 9 ms (15-18 ms with a full spool;
budget 50 ms); hung hub 1.02 s (budget 1.2 s).

Spool format (``$PMUX_WIDGET_HOME/spool/``)
-------------------------------------------
One file per event that no hub accepted, created atomically (written as ``.sp-<pid>``, then
``mv``'d), named ``<sent ms epoch, zero-padded to 15 digits>-<script pid>.hook`` so that the
lexical order of the names is the send order (ties within one millisecond: arbitrary). Its
content is one line (for Claude's compact payloads) terminated by ``"\\n"``::

    {"sent":<ms epoch>,"pane":"<pane or empty>","ppid":<int>,"payload":<payload>}

where ``<payload>`` is the hook's stdin byte for byte, minus its trailing newline. Dot files
in ``spool/`` are in-progress temp files, never entries. Past :data:`SPOOL_CAP` entries the
script deletes the oldest one before adding its own. :func:`read_spool` reads them back in
order (a corrupt file is returned with ``error`` set, never raised), :func:`remove_spool_entries`
deletes replayed ones, :func:`write_spool_entry` writes one from Python in the same format and
:func:`clean_spool_temp` removes temp files left by killed scripts. A script that read
``runtime/`` just before a new hub wrote its runtime file spools after that hub's replay: a hub
should look at the spool again a few seconds after it started (or watch the directory).

Settings entries (``settings.json``)
------------------------------------
For each of :data:`pmux_widget.core.signals.HOOK_EVENTS` we add our own matcher group without a
matcher (absent = matches everything, see claude-code-facts §2.2)::

    {"hooks": [{"type": "command", "command": "<hook_command(home)>", "timeout": 5}]}

The command (:func:`hook_command`; Claude runs it with ``/bin/sh -c``) uses the script's
absolute path, single-quoted (``'`` as ``'\\''``), and ends with a marker comment::

    [ -x '/h/hooks/status-hook.sh' ] && exec '/h/hooks/status-hook.sh'; cat >/dev/null # pmux-widget

``exec`` saves a fork; if the script is gone (home deleted without ``uninstall``) the command
still drains stdin and exits 0 silently instead of failing every hook with "not found".

An entry is *ours* when its ``command`` contains ``status-hook.sh`` and ends with the
``# pmux-widget`` marker (whatever the path: the home may have moved), or when it is exactly
the current home's script path (quoted or not). Only those are ever replaced or removed.

* :func:`install` is idempotent: an up-to-date file is not rewritten at all; an outdated entry
  of ours (old path, timeout, extra keys) is replaced in place; duplicates of ours are removed.
  Everything else is kept: other keys and hooks, their order, unicode (written as is), number
  spellings (``1.50``, ``1e3``), the indentation (tabs or N spaces, detected; default 2; a
  one-line file stays on one line), CRLF line ends, a UTF-8 BOM and the presence of a final
  newline. Everything is re-serialised, so escapes in strings may change spelling
  (``"\\u00e9"`` becomes ``"é"``), never value. The file's mode is kept (new
  files: 0600), a symlink is followed (its target is rewritten, the link stays).
* Backup: before changing an existing file, its bytes are copied to
  ``<name>.bak-pmux-widget`` beside it (one backup, overwritten by each changing install or
  uninstall: it always holds the file as it was just before our last edit).
* Writes are atomic (temp file in the same directory, fsync, ``os.replace``) and optimistic:
  if the file changed while we were editing it, nothing is written and :class:`SettingsError`
  asks to retry.
* Refused with :class:`SettingsError` (file untouched, no backup or temp file left): invalid
  UTF-8, invalid JSON (with line and column; comments and trailing commas included), ``NaN``
  or ``Infinity``, duplicate keys (rewriting would silently drop one), a top level that is not
  an object, ``hooks`` not an object, an event's value not a list, a matcher group not an
  object, a group's ``hooks`` not a list. An EMPTY (or whitespace-only) file is treated as
  ``{}``: it is what ``touch settings.json`` leaves.
* :func:`uninstall` removes exactly our hook objects, then the matcher groups, event lists
  and ``hooks`` object that became empty by that removal, except those that existed before
  our first install: :func:`install` records them in ``hooks/installed.json`` in our home, so
  that install then uninstall gives back an equal document (same keys, same order) even for
  ``"hooks": {}`` or ``"Stop": []``. Without that record, emptied containers are removed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shlex
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pmux_widget.core.signals import HOOK_EVENTS
from pmux_widget.system.home import PmuxHome

__all__ = [
    "BACKUP_SUFFIX",
    "HOOK_TIMEOUT",
    "MARKER",
    "SPOOL_CAP",
    "DoctorCheck",
    "HooksStatus",
    "HubInfo",
    "InstallResult",
    "SettingsError",
    "SpoolEntry",
    "UninstallResult",
    "clean_spool_temp",
    "default_settings_file",
    "doctor",
    "hook_command",
    "hook_entry",
    "hooks_status",
    "install",
    "install_settings_file",
    "is_our_command",
    "live_hubs",
    "read_spool",
    "remove_spool_entries",
    "render_script",
    "uninstall",
    "write_script",
    "write_spool_entry",
]

#: Marker comment ending our settings command (survives a moved home).
MARKER = "# pmux-widget"
#: ``"timeout"`` (seconds) of our settings entries.
HOOK_TIMEOUT = 5
#: Suffix of the backup written beside a settings file before we change it.
BACKUP_SUFFIX = ".bak-pmux-widget"
#: At most this many spool files; past it the script drops the oldest.
SPOOL_CAP = 5000
SCRIPT_NAME = "status-hook.sh"
SPOOL_SUFFIX = ".hook"
_RECORD_NAME = "installed.json"


# ============================================================================ hook script

_SCRIPT_TEMPLATE = r"""#!/bin/sh
# pmux-widget status hook. Generated by `pmux-widget install` (pmux_widget/hooks.py): do not
# edit, every install rewrites it.
#
# Claude Code runs it for each hook event, with the event's payload (one JSON object) on stdin.
# It POSTs the payload unchanged to every live pmux-widget hub listed in runtime/*.json and,
# when no hub accepted it (HTTP 2xx), spools it under spool/ for the next hub to replay.
# It prints nothing and always exits 0: a monitor must never change what Claude does.
# POSIX sh + curl only, and every fork counts: it runs on every tool call.
# (A failing redirection on a plain `exec` would make sh exit 2: a BLOCKING hook error.)
command exec >/dev/null 2>&1 || exit 0
command exec 3<&0 || command exec 3</dev/null || exit 0
umask 077
H=@HOME@
HC=@HOME_CURLRC@
S="$H/spool"
T=
trap 'exit 0' HUP INT TERM
# Temp files go in the background: Claude need not wait for that rm.
trap '[ -z "$T" ] || rm -f "$T" "$T.t" &' EXIT
# No usable home (deleted?): nothing to post or spool, but stdin must still be drained
# (Claude fails a hook that closes it early).
[ -d "$S" ] || mkdir "$S" || { cat; exit 0; }
T="$S/.in-$$"

# tmux pane ids look like %12; anything else would need escaping (headers, JSON): dropped.
P=${TMUX_PANE-}
case $P in *[!%0-9A-Za-z_.:@+-]*) P= ;; esac
if [ -n "$P" ]; then PH="X-Pmux-Pane: $P"; else PH='X-Pmux-Pane;'; fi
K=
[ -r "$H/token" ] && read -r K <"$H/token"
case $K in *[!0-9A-Za-z_-]*) K= ;; esac

# num KEY: the integer after the first "KEY": in $j (a runtime file's text) into $v, or empty.
num() {
  v=${j#*\""$1"\"}
  if [ "$v" = "$j" ]; then v= && return; fi
  v=${v#"${v%%[![:space:]]*}"}
  case $v in :*) v=${v#:} ;; *) v= && return ;; esac
  v=${v#"${v%%[![:space:]]*}"}
  v=${v%%[!0-9]*}
}
# Ports of the live hubs (no token: none, the event can only be spooled).
ports=
if [ -n "$K" ]; then
  for f in "$H"/runtime/*.json; do
    [ -f "$f" ] || continue
    j=
    while IFS= read -r l || [ -n "$l" ]; do j="$j$l"; done <"$f"
    num pid
    [ -z "$v" ] || kill -0 "$v" || continue
    num port
    [ -z "$v" ] || ports="$ports $v"
  done
fi

# X-Pmux-Sent: ms epoch (GNU date); where %N is unsupported, seconds * 1000.
stamp() {
  now=$(date +%s%3N)
  case $now in '' | *[!0-9]*) now=$(date +%s)000 ;; esac
  case $now in '' | *[!0-9]*) now=0 ;; esac
}
set -- $ports
now=
if [ "$#" -eq 1 ]; then
  # One hub, the usual case. curl's start-up is the slowest part of this script, so curl
  # starts at once and reads its options from a pipe (-K -), written once the payload is in
  # the temp file and the time is known: cat and date overlap curl's start-up.
  {
    cat <&3 >"$T" && [ -s "$T" ] || exit 0
    stamp
    echo "$now" >"$T.t"
    printf '%s\n' "url = \"http://127.0.0.1:$1/api/hook\"" "header = \"X-Pmux-Token: $K\"" \
      "header = \"$PH\"" "header = \"X-Pmux-Ppid: $PPID\"" "header = \"X-Pmux-Sent: $now\"" \
      "data-binary = \"@$HC/spool/.in-$$\""
  } | curl -q -s -f -o /dev/null --noproxy '*' --connect-timeout 0.5 --max-time 1 \
    -H 'Expect:' -H 'Content-Type: application/json' -K - 3<&- && exit 0
  read -r now <"$T.t"
else
  # Several hubs (or none): payload and time first, then one background curl per hub.
  cat <&3 >"$T" &
  stamp
  wait "$!" || exit 0
  [ -s "$T" ] || exit 0
  pids=
  for port in $ports; do
    curl -q -s -f -o /dev/null --noproxy '*' --connect-timeout 0.5 --max-time 1 \
      -H 'Expect:' -H 'Content-Type: application/json' -H "X-Pmux-Token: $K" -H "$PH" \
      -H "X-Pmux-Ppid: $PPID" -H "X-Pmux-Sent: $now" --data-binary "@$T" \
      "http://127.0.0.1:$port/api/hook" 3<&- &
    pids="$pids $!"
  done
  # Wait for all: an early exit would remove the temp file under a curl still reading it.
  ok=
  for p in $pids; do wait "$p" && ok=1; done
  [ -z "$ok" ] || exit 0
fi
exec 3<&-
[ -s "$T" ] && [ -n "$now" ] || exit 0

# No hub accepted it: spool it as ONE new file <15-digit ms>-<pid>.hook (lexical = send
# order) holding {"sent":<ms>,"pane":"<pane>","ppid":<ppid>,"payload":<payload verbatim>}.
set -- "$S"/*.hook
# Bounded: past @CAP@ files the oldest goes (recent events matter most to a replay).
[ "$#" -lt @CAP@ ] || rm -f "$1"
n=$now
while [ "${#n}" -lt 15 ]; do n="0$n"; done
printf '{"sent":%s,"pane":"%s","ppid":%s,"payload":' "$now" "$P" "${PPID:-0}" >"$S/.sp-$$" &&
  LC_ALL=C sed '$ s/$/}/' "$T" >>"$S/.sp-$$" &&
  mv -f "$S/.sp-$$" "$S/$n-$$.hook" || rm -f "$S/.sp-$$"
exit 0
"""


def _sh_quote(text: str) -> str:
    """``text`` as ONE single-quoted sh word (``'`` written as ``'\\''``), always quoted."""
    return "'" + text.replace("'", "'\\''") + "'"


def _curlrc_escape(text: str) -> str:
    """``text`` for a double-quoted value in a curl config file (``curl -K``)."""
    for char, escaped in (
        ("\\", "\\\\"),
        ('"', '\\"'),
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\v", "\\v"),
    ):
        text = text.replace(char, escaped)
    return text


def render_script(home: PmuxHome) -> str:
    """The hook script's text for ``home`` (its absolute path is baked in, sh-quoted, and
    curl-config-escaped then sh-quoted for the ``-K`` options)."""
    root = str(home.root)
    return (
        _SCRIPT_TEMPLATE.replace("@HOME@", _sh_quote(root))
        .replace("@HOME_CURLRC@", _sh_quote(_curlrc_escape(root)))
        .replace("@CAP@", str(SPOOL_CAP))
    )


def _atomic_write_bytes(path: Path, data: bytes, mode: int) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and ``os.replace``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)  # os.open's mode is filtered by the umask
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_script(home: PmuxHome) -> Path:
    """Write ``hooks/status-hook.sh`` (0700, atomically) unless it is already up to date."""
    home.ensure()
    path = home.hook_script
    text = render_script(home).encode()
    try:
        if path.read_bytes() == text and path.stat().st_mode & 0o777 == 0o700:
            return path
    except OSError:
        pass
    _atomic_write_bytes(path, text, 0o700)
    return path


# ============================================================================ spool


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
    payload_bytes: bytes = b""
    error: str | None = None


_ENVELOPE_PREFIX = re.compile(
    rb'\{"sent":(\d+),"pane":"([%0-9A-Za-z_.:@+\-]*)","ppid":(\d+),"payload":'
)


def _parse_spool_file(path: Path, data: bytes) -> SpoolEntry:
    """Parse one spool file's bytes; never raises."""
    try:
        envelope = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        return SpoolEntry(path, error=f"not valid JSON: {exc}")
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
    match = _ENVELOPE_PREFIX.match(data)
    body = data.rstrip(b"\n")
    if match and body.endswith(b"}"):
        raw = body[match.end() : -1]  # the payload exactly as the script received it
    else:  # written by something else: re-encode the parsed payload
        raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return SpoolEntry(path, sent=sent, pane=pane, ppid=ppid, payload_bytes=raw)


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
    home: PmuxHome, payload: bytes, *, sent: int, pane: str = "", ppid: int = 0
) -> Path:
    """Spool one event from Python, in exactly the script's format (for drivers and tests)."""
    if not re.fullmatch(r"[%0-9A-Za-z_.:@+\-]*", pane):
        pane = ""
    home.spool_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if payload.endswith(b"\n"):
        payload = payload[:-1]
    data = b'{"sent":%d,"pane":"%s","ppid":%d,"payload":%s}\n' % (
        sent,
        pane.encode(),
        ppid,
        payload,
    )
    path = home.spool_dir / f"{sent:015d}-{os.getpid()}{SPOOL_SUFFIX}"
    counter = 0
    while path.exists():
        counter += 1
        path = home.spool_dir / f"{sent:015d}-{os.getpid()}.{counter}{SPOOL_SUFFIX}"
    _atomic_write_bytes(path, data, 0o600)
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


# ============================================================================ runtime files


@dataclass(frozen=True)
class HubInfo:
    """A hub's runtime file: its path, pid (None if absent) and port."""

    path: Path
    pid: int | None
    port: int


def _pid_alive(pid: int) -> bool:
    """Like the script's ``kill -0``: another user's process counts as gone."""
    try:
        os.kill(pid, 0)
    except (OSError, OverflowError):
        return False
    return True


def live_hubs(home: PmuxHome) -> list[HubInfo]:
    """Runtime files of ``home`` with a valid port and (when given) a live pid, by name."""
    hubs = []
    try:
        paths = sorted(home.runtime_dir.glob("*.json"))
    except OSError:
        return []
    for path in paths:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        pid, port = data.get("pid"), data.get("port")
        if not isinstance(port, int) or isinstance(port, bool) or not 0 < port < 65536:
            continue
        if not isinstance(pid, int) or isinstance(pid, bool):
            pid = None
        if pid is not None and not _pid_alive(pid):
            continue
        hubs.append(HubInfo(path, pid, port))
    return hubs


# ============================================================================ settings entries


def hook_command(home: PmuxHome) -> str:
    """The settings.json command (for ``/bin/sh -c``), see the module docstring.

    ``[ -x '<script>' ] && exec '<script>'; cat >/dev/null # pmux-widget``: ``exec`` saves
    a fork (and makes the script's parent Claude itself); when the script is gone (home
    deleted without ``uninstall``), stdin is drained and the hook still exits 0 silently.
    """
    script = _sh_quote(str(home.hook_script))
    return f"[ -x {script} ] && exec {script}; cat >/dev/null {MARKER}"


def hook_entry(home: PmuxHome) -> dict[str, Any]:
    """Our hook object, as it appears in a matcher group's ``hooks`` list."""
    return {"type": "command", "command": hook_command(home), "timeout": HOOK_TIMEOUT}


def is_our_command(command: object, home: PmuxHome | None = None) -> bool:
    """Is this settings ``command`` one of ours (marker form, or exactly ``home``'s script)?"""
    if not isinstance(command, str):
        return False
    stripped = command.rstrip()
    if SCRIPT_NAME in stripped and stripped.endswith(MARKER):
        return True
    if home is None:
        return False
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        return False
    return words == [str(home.hook_script)]


def _is_our_hook(hook: object, home: PmuxHome | None) -> bool:
    return isinstance(hook, dict) and is_our_command(hook.get("command"), home)


def _matches_all(group: dict[str, Any]) -> bool:
    return group.get("matcher") in (None, "", "*")


def default_settings_file(claude_home: str | os.PathLike[str] | None = None) -> Path:
    """``<claude_home>/settings.json``; default ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if claude_home is None:
        claude_home = os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude"
    return Path(claude_home).expanduser() / "settings.json"


# ============================================================================ JSON I/O


class SettingsError(Exception):
    """A settings file we refuse to edit (or could not write). The file was left untouched.

    ``message`` names the file and the problem; the CLI maps this to exit code 2.
    """

    def __init__(self, path: Path, problem: str) -> None:
        self.path = Path(path)
        self.problem = problem
        self.message = f"{path}: {problem}"
        super().__init__(self.message)


class _RawFloat(float):
    """A JSON number with a fraction or exponent that remembers its spelling (``1.50``)."""

    text: str

    def __new__(cls, text: str) -> _RawFloat:
        self = super().__new__(cls, text)
        self.text = text
        return self


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicates, parse_float=_RawFloat, parse_constant=_reject_constant
)


@dataclass
class _Layout:
    """How a settings file is written, so that rewriting it keeps its look.

    ``indent`` None = all on one line, with ``compact`` separators (``,`` ``:``) or not
    (``, `` ``: ``).
    """

    indent: str | None = "  "
    compact: bool = False
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False


def _detect_layout(text: str) -> _Layout:
    layout = _Layout()
    if not text.strip():
        return layout
    layout.newline = "\r\n" if "\r\n" in text else "\n"
    layout.final_newline = text.endswith("\n")
    if "\n" not in text.strip() and not re.fullmatch(r"\s*\{\s*\}\s*", text):
        # One line (strings hold no raw newlines): the writer chose compact. A bare {} says
        # nothing about style: it gets the default.
        layout.indent = None
        layout.compact = re.search(r'"\s*:\s', text) is None
        return layout
    match = re.search(r"\n([ \t]+)\S", text)
    if match:
        lead = match.group(1)
        layout.indent = "\t" if lead.startswith("\t") else " " * len(lead)
    return layout


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encode_str(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if _SURROGATE.search(text):  # lone surrogates (from "\ud800" escapes) stay escaped
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def _encode(value: Any, layout: _Layout, depth: int, out: list[str]) -> None:
    """Like ``json.dumps`` with ``ensure_ascii=False`` and the layout's indent/separators,
    keeping number spellings."""
    if isinstance(value, dict | list):
        if not value:
            out.append("{}" if isinstance(value, dict) else "[]")
            return
        if layout.indent is None:
            inner, close = "", ""
            item_sep, key_sep = (",", ":") if layout.compact else (", ", ": ")
        else:
            inner = "\n" + layout.indent * (depth + 1)
            close = "\n" + layout.indent * depth
            item_sep, key_sep = ",", ": "
        sep = "{" if isinstance(value, dict) else "["
        if isinstance(value, dict):
            for key, item in value.items():
                out.append(sep + inner + _encode_str(key) + key_sep)
                _encode(item, layout, depth + 1, out)
                sep = item_sep
            out.append(close + "}")
        else:
            for item in value:
                out.append(sep + inner)
                _encode(item, layout, depth + 1, out)
                sep = item_sep
            out.append(close + "]")
    elif isinstance(value, str):
        out.append(_encode_str(value))
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif value is None:
        out.append("null")
    elif isinstance(value, _RawFloat):
        out.append(value.text)
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(json.dumps(value))
    else:  # pragma: no cover - only JSON values are ever built here
        raise TypeError(f"not a JSON value: {value!r}")


def _dump(doc: Any, layout: _Layout) -> bytes:
    out: list[str] = []
    _encode(doc, layout, 0, out)
    text = "".join(out)
    if layout.final_newline:
        text += "\n"
    if layout.newline != "\n":
        text = text.replace("\n", layout.newline)
    return ("\ufeff" if layout.bom else "").encode() + text.encode()


def _type_name(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def _parse_settings(path: Path, data: bytes) -> tuple[dict[str, Any], _Layout]:
    """Decode and validate a settings file's bytes; raises :class:`SettingsError`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SettingsError(
            path, f"not valid UTF-8 at line {line} (byte {exc.start}); fix or remove the file"
        ) from None
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    layout = _detect_layout(text)
    layout.bom = bom
    if not text.strip():
        return {}, layout
    try:
        doc = _DECODER.decode(text)
    except _DuplicateKey as exc:
        raise SettingsError(
            path, f"duplicate key {exc.args[0]!r} in an object; keep only one, then retry"
        ) from None
    except json.JSONDecodeError as exc:
        raise SettingsError(
            path,
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}. "
            "Fix it first (Claude Code ignores an invalid settings file, hooks included)",
        ) from None
    except ValueError as exc:
        raise SettingsError(path, f"invalid JSON: {exc}") from None
    except RecursionError:
        raise SettingsError(path, "JSON nested too deeply") from None
    if not isinstance(doc, dict):
        raise SettingsError(path, f"the top level must be a JSON object, not {_type_name(doc)}")
    hooks = doc.get("hooks")
    if "hooks" in doc and not isinstance(hooks, dict):
        raise SettingsError(path, f'"hooks" must be an object, not {_type_name(hooks)}')
    for event, groups in (hooks or {}).items():
        where = f'"hooks" → "{event}"'
        if not isinstance(groups, list):
            raise SettingsError(
                path, f"{where} must be an array of matcher groups, not {_type_name(groups)}"
            )
        for index, group in enumerate(groups):
            if not isinstance(group, dict):
                raise SettingsError(
                    path, f"{where}[{index}] must be an object, not {_type_name(group)}"
                )
            if "hooks" in group and not isinstance(group["hooks"], list):
                raise SettingsError(
                    path,
                    f'{where}[{index}] → "hooks" must be an array, '
                    f"not {_type_name(group['hooks'])}",
                )
    return doc, layout


def _read_settings(path: Path) -> tuple[bytes | None, dict[str, Any], _Layout]:
    """(original bytes or None when missing, document, layout); raises SettingsError."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None, {}, _Layout()
    except IsADirectoryError:
        raise SettingsError(path, "is a directory, not a settings file") from None
    except OSError as exc:
        raise SettingsError(path, f"cannot read: {exc.strerror or exc}") from None
    doc, layout = _parse_settings(path, data)
    return data, doc, layout


def _write_settings(path: Path, original: bytes | None, new: bytes) -> Path | None:
    """Back up and atomically replace ``path`` (its symlink target); returns the backup."""
    target = Path(os.path.realpath(path))
    backup = None
    try:
        if original is None:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            mode = 0o600
        else:
            mode = target.stat().st_mode & 0o7777
        tmp = target.with_name(f".{target.name}.pmux-widget.{os.getpid()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(new)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, mode)
            # Optimistic concurrency: someone (Claude's /config?) wrote it meanwhile.
            try:
                current: bytes | None = target.read_bytes()
            except FileNotFoundError:
                current = None
            if current != original:
                raise SettingsError(path, "changed while we were editing it; run again")
            if original is not None:
                backup = target.with_name(target.name + BACKUP_SUFFIX)
                _atomic_write_bytes(backup, original, mode)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise SettingsError(path, f"cannot write: {exc.strerror or exc}") from None
    return backup


# ============================================================================ install record


def _record_path(home: PmuxHome) -> Path:
    return home.hooks_dir / _RECORD_NAME


def _load_records(home: PmuxHome) -> dict[str, Any]:
    try:
        data = json.loads(_record_path(home).read_text())
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def _save_records(home: PmuxHome, files: dict[str, Any]) -> None:
    home.hooks_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = json.dumps({"version": 1, "files": files}, indent=2, sort_keys=True) + "\n"
    _atomic_write_bytes(_record_path(home), data.encode(), 0o600)


def _record_key(settings_file: Path) -> str:
    return os.path.realpath(settings_file)


# ============================================================================ install


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install` did. ``message`` is for humans."""

    settings_file: Path
    changed: bool
    created: bool
    backup: Path | None
    script: Path
    added: tuple[str, ...]
    updated: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class UninstallResult:
    """What :func:`uninstall` did. ``message`` is for humans."""

    settings_file: Path
    changed: bool
    backup: Path | None
    removed: int
    message: str


def _same_entry(hook: object, wanted: dict[str, Any]) -> bool:
    """Exactly ``wanted``: same keys, order, values and types (``5.0`` is not ``5``)."""
    return isinstance(hook, dict) and _dump(hook, _Layout()) == _dump(wanted, _Layout())


def _merge_ours(doc: dict[str, Any], home: PmuxHome) -> tuple[list[str], list[str], bool]:
    """Put our entry on every event of HOOK_EVENTS, in place; returns (added, updated, found).

    The first entry of ours sitting in a match-all group is kept (and rewritten if outdated);
    every other entry of ours is removed, with the groups that only held it.
    """
    wanted = hook_entry(home)
    hooks = doc.setdefault("hooks", {})
    added: list[str] = []
    updated: list[str] = []
    found_any = False
    for event in HOOK_EVENTS:
        groups = hooks.setdefault(event, [])
        spots = [
            (g, h)
            for g, group in enumerate(groups)
            for h, hook in enumerate(group.get("hooks") or [])
            if _is_our_hook(hook, home)
        ]
        found_any = found_any or bool(spots)
        keep = next(((g, h) for g, h in spots if _matches_all(groups[g])), None)
        changed = False
        if keep is not None and not _same_entry(groups[keep[0]]["hooks"][keep[1]], wanted):
            groups[keep[0]]["hooks"][keep[1]] = dict(wanted)
            changed = True
        drop = {spot for spot in spots if spot != keep}
        for g in sorted({g for g, _ in drop}, reverse=True):
            changed = True
            group = groups[g]
            group["hooks"] = [hook for h, hook in enumerate(group["hooks"]) if (g, h) not in drop]
            if not group["hooks"]:
                del groups[g]
        if keep is None:
            groups.append({"hooks": [dict(wanted)]})
        if keep is None and not spots:
            added.append(event)
        elif changed:
            updated.append(event)
    # Entries of ours on events we no longer register (an older version's) go.
    removed, events = _remove_ours(doc, home, None, skip=HOOK_EVENTS)
    return added, updated + events, found_any or bool(removed)


def install(claude_settings_file: Path, home: PmuxHome) -> InstallResult:
    """Install our hooks into a Claude ``settings.json`` (see the module docstring).

    Also writes the hook script and creates the token. Raises :class:`SettingsError` for a
    malformed file (left byte-for-byte untouched) or when the file cannot be written.
    """
    path = Path(claude_settings_file)
    original, doc, layout = _read_settings(path)
    home.ensure()
    home.token()
    script = write_script(home)
    before = _dump(doc, layout)
    hooks_existed = "hooks" in doc
    hooks_before = doc.get("hooks") or {}
    events_existed = [event for event in HOOK_EVENTS if event in hooks_before]
    added, updated, found_any = _merge_ours(doc, home)
    after = _dump(doc, layout)
    changed = original is None or after != before
    backup = None
    if changed:
        backup = _write_settings(path, original, after)
        records = _load_records(home)
        key = _record_key(path)
        record = records.get(key) if found_any else None
        if not isinstance(record, dict):
            record = {"hooks_existed": hooks_existed and not found_any, "events_existed": []}
        known = set(record.get("events_existed") or [])
        known.update(event for event in added if event in events_existed)
        record["events_existed"] = sorted(known)
        records[key] = record
        with contextlib.suppress(OSError):  # best effort: only refines a later uninstall
            _save_records(home, records)
    if not changed:
        message = f"{path}: hooks already installed, nothing to change"
    elif original is None:
        message = f"{path}: created with hooks for {len(HOOK_EVENTS)} events"
    else:
        parts = []
        if added:
            parts.append(f"added for {len(added)} events")
        if updated:
            parts.append(f"updated for {len(updated)} events")
        message = f"{path}: hooks {', '.join(parts) or 'rewritten'} (backup: {backup})"
    return InstallResult(
        settings_file=path,
        changed=changed,
        created=original is None,
        backup=backup,
        script=script,
        added=tuple(added),
        updated=tuple(updated),
        message=message,
    )


def _remove_ours(
    doc: dict[str, Any],
    home: PmuxHome,
    record: dict[str, Any] | None,
    skip: Iterable[str] = (),
) -> tuple[int, list[str]]:
    """Remove our hook objects and what became empty by that, except on ``skip`` events.

    Returns (how many hook objects were removed, the events they were removed from).
    """
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return 0, []
    keep_events = set((record or {}).get("events_existed") or [])
    skip = set(skip)
    removed = 0
    events = []
    for event in [event for event in hooks if event not in skip]:
        groups = hooks[event]
        touched = False
        for g in range(len(groups) - 1, -1, -1):
            group = groups[g]
            inner = group.get("hooks")
            if not isinstance(inner, list):
                continue
            kept = [hook for hook in inner if not _is_our_hook(hook, home)]
            if len(kept) == len(inner):
                continue
            removed += len(inner) - len(kept)
            touched = True
            if kept:
                group["hooks"] = kept
            else:
                del groups[g]
        if touched:
            events.append(event)
            if not groups and event not in keep_events:
                del hooks[event]
    if removed and not hooks and not (record or {}).get("hooks_existed"):
        del doc["hooks"]
    return removed, events


def uninstall(settings_file: Path, home: PmuxHome) -> UninstallResult:
    """Remove exactly our hook entries from a settings file (idempotent).

    Raises :class:`SettingsError` for a malformed file (left untouched).
    """
    path = Path(settings_file)
    original, doc, layout = _read_settings(path)
    if original is None:
        return UninstallResult(path, False, None, 0, f"{path}: does not exist, nothing to do")
    records = _load_records(home)
    key = _record_key(path)
    record = records.get(key)
    removed, _ = _remove_ours(doc, home, record if isinstance(record, dict) else None)
    if not removed:
        return UninstallResult(path, False, None, 0, f"{path}: no pmux-widget hooks found")
    backup = _write_settings(path, original, _dump(doc, layout))
    if key in records:
        del records[key]
        with contextlib.suppress(OSError):
            _save_records(home, records)
    return UninstallResult(
        path, True, backup, removed, f"{path}: removed {removed} hooks (backup: {backup})"
    )


def install_settings_file(home: PmuxHome) -> Path:
    """Write ``hooks/hooks.json``: a settings document with only our hooks.

    For ``claude --settings <file>`` (hooks from it are added to the user's, §2.1). Also
    writes the hook script and creates the token.
    """
    home.ensure()
    home.token()
    write_script(home)
    doc = {"hooks": {event: [{"hooks": [hook_entry(home)]}] for event in HOOK_EVENTS}}
    data = _dump(doc, _Layout())
    path = home.hooks_json
    try:
        if path.read_bytes() == data:
            return path
    except OSError:
        pass
    _atomic_write_bytes(path, data, 0o600)
    return path


# ============================================================================ status


@dataclass(frozen=True)
class HooksStatus:
    """Whether our hooks are installed in a settings file, and usable.

    ``installed``: every event has an entry of ours. ``ok``: installed, every entry is exactly
    the current one, the script exists and is executable, hooks are not disabled.
    """

    settings_file: Path
    events_installed: tuple[str, ...] = ()
    events_missing: tuple[str, ...] = HOOK_EVENTS
    events_outdated: tuple[str, ...] = ()
    script_exists: bool = False
    script_executable: bool = False
    script_current: bool = False
    disabled: bool = False
    error: str | None = None
    message: str = ""

    @property
    def installed(self) -> bool:
        return self.error is None and not self.events_missing

    @property
    def ok(self) -> bool:
        return (
            self.installed
            and not self.events_outdated
            and self.script_executable
            and not self.disabled
        )


def hooks_status(settings_file: Path, home: PmuxHome) -> HooksStatus:
    """Inspect a settings file (never raises): for ``doctor`` and the widget's banner."""
    path = Path(settings_file)
    script = home.hook_script
    exists = script.is_file()
    executable = exists and os.access(script, os.X_OK)
    try:
        current = exists and script.read_text() == render_script(home)
    except (OSError, UnicodeDecodeError):
        current = False
    base = {
        "settings_file": path,
        "script_exists": exists,
        "script_executable": executable,
        "script_current": current,
    }
    try:
        original, doc, _ = _read_settings(path)
    except SettingsError as exc:
        return HooksStatus(**base, error=exc.problem, message=exc.message)
    wanted = hook_entry(home)
    hooks = doc.get("hooks") or {}
    installed, missing, outdated = [], [], []
    for event in HOOK_EVENTS:
        ours = [
            hook
            for group in hooks.get(event) or []
            for hook in group.get("hooks") or []
            if _is_our_hook(hook, home)
        ]
        (installed if ours else missing).append(event)
        if ours and ours != [wanted]:
            outdated.append(event)
    disabled = doc.get("disableAllHooks") is True
    status = HooksStatus(
        **base,
        events_installed=tuple(installed),
        events_missing=tuple(missing),
        events_outdated=tuple(outdated),
        disabled=disabled,
    )
    if original is None or not installed:
        message = f"hooks not installed in {path}: run `pmux-widget install`"
    elif missing:
        message = f"hooks missing for {', '.join(missing)} in {path}: run `pmux-widget install`"
    elif outdated:
        message = f"hooks outdated (path or timeout) in {path}: run `pmux-widget install`"
    elif not exists:
        message = f"hook script missing ({script}): run `pmux-widget install`"
    elif not executable:
        message = f"hook script not executable ({script}): run `pmux-widget install`"
    elif disabled:
        message = f'"disableAllHooks": true in {path}: Claude Code runs no hooks'
    else:
        message = f"hooks installed in {path} for all {len(HOOK_EVENTS)} events"
    return replace(status, message=message)


# ============================================================================ doctor


@dataclass(frozen=True)
class DoctorCheck:
    """One line of ``pmux-widget doctor``: ``message`` says what is fine or what to do."""

    name: str
    ok: bool
    message: str
    optional: bool = False


def _health(port: int, timeout: float) -> str | None:
    """None if ``GET /api/health`` answers ``{"ok": true}``, else why not."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"http://127.0.0.1:{port}/api/health", timeout=timeout) as response:
            body = json.loads(response.read(65536) or b"null")
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, OSError) and reason.errno == errno.ECONNREFUSED:
            return "connection refused"
        return str(reason) or type(exc).__name__
    if isinstance(body, dict) and body.get("ok") is True:
        return None
    return "unexpected answer"


def doctor(claude_home_dir: Path, home: PmuxHome, *, timeout: float = 0.5) -> list[DoctorCheck]:
    """Check what the hooks need, one :class:`DoctorCheck` per line. Never raises."""
    checks: list[DoctorCheck] = []
    claude_dir = Path(claude_home_dir)
    if claude_dir.is_dir():
        checks.append(DoctorCheck("claude config dir", True, f"{claude_dir}"))
    else:
        checks.append(
            DoctorCheck(
                "claude config dir",
                False,
                f"{claude_dir} not found: install Claude Code and run it once, "
                "or set CLAUDE_CONFIG_DIR",
            )
        )
    status = hooks_status(claude_dir / "settings.json", home)
    checks.append(DoctorCheck("hooks", status.ok, status.message))
    if status.script_exists and not status.script_current:
        checks.append(
            DoctorCheck(
                "hook script",
                False,
                f"{home.hook_script} differs from this version's: run `pmux-widget install`",
            )
        )
    elif status.script_exists:
        checks.append(DoctorCheck("hook script", status.script_executable, str(home.hook_script)))
    else:
        checks.append(
            DoctorCheck(
                "hook script", False, f"{home.hook_script} missing: run `pmux-widget install`"
            )
        )
    token = home.token_file
    if token.is_file():
        mode = token.stat().st_mode & 0o777
        checks.append(
            DoctorCheck(
                "token",
                mode & 0o077 == 0,
                f"{token}" if mode & 0o077 == 0 else f"{token} is {mode:o}: chmod 600 {token}",
            )
        )
    else:
        checks.append(DoctorCheck("token", False, f"{token} missing: run `pmux-widget install`"))
    curl = shutil.which("curl")
    checks.append(
        DoctorCheck("curl", True, curl)
        if curl
        else DoctorCheck("curl", False, "curl not found on PATH: install curl (apt install curl)")
    )
    checks.append(_hub_check(home, timeout))
    tmux = shutil.which("tmux")
    checks.append(
        DoctorCheck("tmux", True, tmux, optional=True)
        if tmux
        else DoctorCheck(
            "tmux",
            False,
            "tmux not found (optional: sessions are then grouped by project)",
            optional=True,
        )
    )
    return checks


def _hub_check(home: PmuxHome, timeout: float) -> DoctorCheck:
    try:  # names only: a full spool can hold GBs of payloads
        spooled = sum(1 for name in os.listdir(home.spool_dir) if name.endswith(SPOOL_SUFFIX))
    except OSError:
        spooled = 0
    waiting = f"; {spooled} spooled events wait for it" if spooled else ""
    try:
        files = sorted(home.runtime_dir.glob("*.json"))
    except OSError:
        files = []
    if not files:
        return DoctorCheck(
            "hub",
            False,
            "no hub running: call pmux_widget.start() (or show()) in a notebook, "
            f"or run `pmux-widget serve`{waiting}",
        )
    reachable, problems = [], []
    live = {hub.path: hub for hub in live_hubs(home)}
    for path in files:
        hub = live.get(path)
        if hub is None:
            problems.append(f"{path.name}: stale (process gone or bad file)")
            continue
        why = _health(hub.port, timeout)
        if why is None:
            reachable.append(f"127.0.0.1:{hub.port} (pid {hub.pid})")
        else:
            problems.append(f"{path.name}: port {hub.port}: {why}")
    if reachable:
        extra = f" ({'; '.join(problems)})" if problems else ""
        return DoctorCheck("hub", True, f"reachable: {', '.join(reachable)}{extra}{waiting}")
    return DoctorCheck(
        "hub",
        False,
        f"no hub reachable ({'; '.join(problems)}): start one with pmux_widget.start() "
        f"or `pmux-widget serve`{waiting}",
    )
