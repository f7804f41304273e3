"""Claude processes on this machine (psutil): which pid runs a session, is it alive, its ports.

A hook's ``X-Pmux-Ppid`` is usually the short-lived ``sh -c`` that Claude spawned for the hook,
so we walk up from it to the nearest Claude process. A Claude process is one whose name is
``claude`` (the native build sets its title), or a ``node`` running ``claude-code/cli.js``
(older npm installs). Processes with ``CLAUDECODE=1`` in their environment are descendants of a
session (hooks, Bash tools), not sessions themselves.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

import psutil

__all__ = [
    "children_map",
    "claude_ancestor",
    "claude_role",
    "environ_value",
    "is_claude_pid",
    "is_claude_process",
    "listening_ports",
    "pid_alive",
    "print_mode",
    "process_facts",
    "same_process",
    "under_daemon",
]

#: Slack when comparing a process's create time (psutil: 10 ms ticks, a clock that may have
#: been stepped) with the time a session last showed a sign of life.
IDENTITY_SLACK_MS = 2_000

_MAX_WALK = 8


def _claude_name(name: str) -> bool:
    """A process name the native CLI runs under: ``claude`` (the title it sets), or
    ``claude.exe`` (the binary's own name: 2.1.197's background workers, pty hosts and daemon
    keep it)."""
    return name == "claude" or name.startswith("claude ") or name == "claude.exe"


def claude_role(pid: int) -> str | None:
    """What a Claude Code process is besides a session, from its argv: ``daemon`` (``claude
    daemon run``: hosts background sessions), ``pty-host`` (``--bg-pty-host``), ``spare``
    (``--bg-spare``: a pre-warmed worker; one that took a job keeps this argv, so only its
    PID file tells), ``view`` (``claude agents``), ``attach`` (``claude attach``); None: a
    session's CLI (or unreadable)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            args = [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return None
    if "--bg-pty-host" in args or "bg-pty-host" in args[1:2]:
        return "pty-host"
    if "--bg-spare" in args:
        return "spare"
    words = [a for a in args[1:] if not a.startswith("-")]
    if words[:2] == ["daemon", "run"]:
        return "daemon"
    if words[:1] == ["agents"]:
        return "view"
    if words[:1] == ["attach"]:
        return "attach"
    return None


def under_daemon(pid: int) -> bool:
    """``pid`` descends from Claude Code's background daemon (through a pty host): a
    background worker, wherever the daemon itself was started (a tmux pane, a terminal)."""
    current = pid
    for _ in range(_MAX_WALK + 4):
        info = proc_stat(current)
        if info is None or len(info[1]) < 2:
            return False
        parent = int(info[1][1])
        if parent <= 1:
            return False
        parent_info = proc_stat(parent)
        is_claude = parent_info is not None and _claude_name(parent_info[0])
        if is_claude and claude_role(parent) in ("daemon", "pty-host"):
            return True
        current = parent
    return False


def is_claude_process(proc: psutil.Process) -> bool:
    """True for a Claude Code CLI process (native ``claude`` or ``node …/claude-code/cli.js``)."""
    try:
        name = proc.name()
        if _claude_name(name):
            return True
        if name in ("node", "bun"):
            return any("claude-code" in part for part in proc.cmdline()[:3])
    except (psutil.Error, OSError):
        return False
    return False


def proc_stat(pid: int) -> tuple[str, list[str]] | None:
    """(name, fields 3…) from one read of ``/proc/<pid>/stat``, or None (gone, not Linux).

    ``fields[0]`` is field 3 (state), ``fields[1]`` the parent pid. The name may contain
    spaces and parentheses: it ends at the LAST ``)``.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    close = stat.rfind(b")")
    if close < 0:
        return None
    name = stat[stat.find(b"(") + 1 : close].decode(errors="replace")
    return name, stat[close + 1 :].decode("ascii", "replace").split()


def is_claude_pid(pid: int) -> bool:
    """``pid`` itself is a Claude Code CLI process (one ``/proc`` read for most processes)."""
    info = proc_stat(pid)
    if info is None:
        return False
    name = info[0]
    if _claude_name(name):
        return True
    if name in ("node", "bun"):
        try:
            return is_claude_process(psutil.Process(pid))
        except (psutil.Error, OSError):
            return False
    return False


def process_facts(pid: int) -> tuple[str, int] | None:
    """(cwd, start time in ms epoch) of ``pid``, or None (gone, or not ours to read)."""
    try:
        proc = psutil.Process(pid)
        return proc.cwd(), int(proc.create_time() * 1000)
    except (psutil.Error, OSError):
        return None


def environ_value(pid: int, name: str) -> str | None:
    """One variable of ``pid``'s environment as it was started (Linux ``/proc``), or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for entry in data.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def print_mode(pid: int) -> bool:
    """``pid`` was started with ``-p`` / ``--print`` (a one-shot run; Linux ``/proc``)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            args = handle.read().split(b"\0")
    except OSError:
        return False
    if b"--" in args:
        args = args[: args.index(b"--")]
    return b"-p" in args[1:] or b"--print" in args[1:]


def claude_ancestor(pid: int | None) -> int | None:
    """The nearest Claude process at or above ``pid`` in the process tree, or None.

    Walks ``/proc/<pid>/stat`` (name and parent: one read per level); psutil only to tell a
    ``node`` or ``bun`` process running Claude Code from any other.
    """
    if not pid:
        return None
    current = pid
    for _ in range(_MAX_WALK):
        if current <= 1:
            return None
        info = proc_stat(current)
        if info is None or len(info[1]) < 2:
            return _claude_ancestor_psutil(current)
        name, parent = info[0], int(info[1][1])
        if _claude_name(name):
            return current
        if name in ("node", "bun"):
            try:
                if is_claude_process(psutil.Process(current)):
                    return current
            except (psutil.Error, OSError):
                return None
        current = parent
    return None


def has_ancestor(pid: int, ancestor: int, depth: int = _MAX_WALK) -> bool:
    """``ancestor`` is ``pid``'s parent, or its parent's, … (``depth`` levels at most)."""
    current = pid
    for _ in range(depth):
        info = proc_stat(current)
        if info is None or len(info[1]) < 2:
            return False
        current = int(info[1][1])
        if current == ancestor:
            return True
        if current <= 1:
            return False
    return False


def _claude_ancestor_psutil(pid: int) -> int | None:
    try:
        proc: psutil.Process | None = psutil.Process(pid)
    except (psutil.Error, OSError):
        return None
    for _ in range(_MAX_WALK):
        if proc is None or proc.pid <= 1:
            return None
        if is_claude_process(proc):
            return proc.pid
        try:
            proc = proc.parent()
        except (psutil.Error, OSError):
            return None
    return None


def pid_alive(pid: int) -> bool:
    """The pid exists and is not a zombie.

    On Linux one read of ``/proc/<pid>/stat`` (the liveness loop calls this for every session
    every 2 s: it must cost next to nothing); elsewhere psutil. The one liveness test of the
    package: PID files (:mod:`pmux_widget.agents.claude.pidfiles`) and hubs' runtime files use it.
    """
    if pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            status = psutil.Process(pid).status()
            return status not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
        except (psutil.Error, OSError):
            return False
    # "pid (comm) S ...": the state follows the last ")" (comm may contain spaces and parens)
    state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
    return state not in (b"Z", b"X", b"x", b"")


def same_process(pid: int, seen_at_ms: int) -> bool:
    """Is ``pid`` alive AND still the process that was seen alive at ``seen_at_ms``?

    A pid gets reused (after a reboot, soon): a process that started after the last moment
    we knew the session's own process alive is another one. ``seen_at_ms`` 0: unknown, only
    liveness is checked. Not knowing the start time (a race with its exit) counts as gone.
    """
    if not pid_alive(pid):
        return False
    if seen_at_ms <= 0:
        return True
    try:
        created_ms = psutil.Process(pid).create_time() * 1000.0
    except (psutil.Error, OSError):
        return False
    return created_ms <= seen_at_ms + IDENTITY_SLACK_MS


def children_map() -> dict[int, list[int]]:
    """Parent pid → child pids, for every process we can see (one /proc pass)."""
    tree: dict[int, list[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        ppid = proc.info.get("ppid")
        if ppid:
            tree.setdefault(ppid, []).append(proc.pid)
    return tree


def descendants(root: int, tree: dict[int, list[int]], depth: int = 3) -> Iterator[int]:
    """``root``'s children, grandchildren… up to ``depth`` levels (a resumed Claude is deeper)."""
    level = [root]
    for _ in range(depth):
        level = [child for pid in level for child in tree.get(pid, ())]
        yield from level


def _listen_inodes() -> dict[int, int] | None:
    """Socket inode → port of every TCP socket in LISTEN state (Linux), or None."""
    found: dict[int, int] = {}
    try:
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as handle:
                next(handle, None)
                for line in handle:
                    parts = line.split()
                    if len(parts) > 9 and parts[3] == "0A":  # 0A = LISTEN
                        found[int(parts[9])] = int(parts[1].rsplit(":", 1)[1], 16)
    except (OSError, ValueError):
        return None
    return found


def listening_ports_by_family(families: dict[str, list[int]]) -> dict[str, list[int]]:
    """For each key, the TCP ports in LISTEN state owned by its processes.

    One read of the kernel's socket tables for all of them, then only these processes' own
    file descriptors (a poll does this for every session: it must stay cheap).
    """
    inodes = _listen_inodes()
    if inodes is None:  # not Linux: psutil per process
        return {key: listening_ports(pids) for key, pids in families.items()}
    result: dict[str, list[int]] = {}
    for key, pids in families.items():
        ports: set[int] = set()
        for pid in pids:
            try:
                entries = os.scandir(f"/proc/{pid}/fd")
            except OSError:
                continue
            with entries:
                for entry in entries:
                    try:
                        target = os.readlink(entry.path)
                    except OSError:
                        continue
                    if target.startswith("socket:["):
                        port = inodes.get(int(target[8:-1]))
                        if port is not None:
                            ports.add(port)
        result[key] = sorted(ports)
    return result


def listening_ports(pids: Iterable[int]) -> list[int]:
    """TCP ports in LISTEN state owned by any of ``pids`` (dev servers a session started).

    Only these processes' own sockets are looked at (``psutil.net_connections()`` would map
    every socket of every process on the machine, once per call: far too slow for a poll).
    """
    ports: set[int] = set()
    for pid in pids:
        try:
            connections = psutil.Process(pid).net_connections(kind="tcp")
        except (psutil.Error, OSError):
            continue
        for conn in connections:
            if conn.status == psutil.CONN_LISTEN and conn.laddr:
                ports.add(conn.laddr.port)
    return sorted(ports)
