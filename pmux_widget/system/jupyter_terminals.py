"""Which JupyterLab terminal holds a process: the terminals' shells, as Jupyter servers with
the pmux-widget extension publish them, and the process tree.

A Jupyter server's terminals live in that server's process only (terminado's manager: a name,
a PTY, its shell's pid). The server extension writes them to
``$PMUX_WIDGET_HOME/terminals/<server pid>.json`` (0600, atomic) whenever the set changes::

    {"pid": <the Jupyter server's pid>, "url": "<its URL>", "hub_port": <its hub's port> | null,
     "terminals": {"<name>": <shell pid>, ...}}

so any hub of this machine (a kernel's, ``pmux-widget serve``), ``pmux-widget status`` and an
action in another process can tell which terminal runs a session, and which hub can type into
it (only the server holds the PTY). A file whose server is gone is ignored.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .files import atomic_write, json_objects, port_or_none
from .home import PmuxHome
from .processes import pid_alive, proc_stat

__all__ = [
    "ServerTerminals",
    "ancestors",
    "find_terminal",
    "read_servers",
    "remove_server_file",
    "terminal_of",
    "terminals_dir",
    "write_server_file",
]

#: How far above a Claude process its terminal's shell may be (shell → claude; a wrapper, a
#: ``bash -c``, ``npx``, ``script`` between).
MAX_DEPTH = 8


@dataclass(frozen=True)
class ServerTerminals:
    """One Jupyter server's terminals: its pid, URL, its hub's port, ``{name: shell pid}``."""

    pid: int
    url: str = ""
    hub_port: int | None = None
    shells: Mapping[str, int] = field(default_factory=dict)


def terminals_dir(home: PmuxHome) -> Path:
    return home.root / "terminals"


def write_server_file(home: PmuxHome, server: ServerTerminals) -> Path:
    """Publish a server's terminals (replacing its earlier file)."""
    directory = terminals_dir(home)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f"{server.pid}.json"
    data = {
        "pid": server.pid,
        "url": server.url,
        "hub_port": server.hub_port,
        "terminals": dict(server.shells),
    }
    atomic_write(path, json.dumps(data, sort_keys=True).encode(), mode=0o600)
    return path


def remove_server_file(home: PmuxHome, pid: int) -> None:
    with contextlib.suppress(OSError):
        (terminals_dir(home) / f"{pid}.json").unlink()


def read_servers(home: PmuxHome) -> list[ServerTerminals]:
    """The live servers' files (a bad or stale file is skipped)."""
    found: list[ServerTerminals] = []
    for _, data in json_objects(terminals_dir(home)):
        pid, port, shells = (
            data.get("pid"),
            port_or_none(data.get("hub_port")),
            data.get("terminals"),
        )
        if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or not pid_alive(pid):
            continue
        named = {
            str(name): shell
            for name, shell in (shells.items() if isinstance(shells, dict) else ())
            if isinstance(shell, int) and not isinstance(shell, bool) and shell > 0
        }
        url = data.get("url")
        found.append(ServerTerminals(pid, url if isinstance(url, str) else "", port, named))
    return found


def ancestors(pid: int, depth: int = MAX_DEPTH) -> list[int]:
    """``pid``'s parent, grandparent, … (at most ``depth``; stops below init)."""
    found: list[int] = []
    current = pid
    for _ in range(depth):
        stat = proc_stat(current)
        if stat is None or len(stat[1]) < 2 or not stat[1][1].isdigit():
            break
        parent = int(stat[1][1])
        if parent <= 1:
            break
        found.append(parent)
        current = parent
    return found


def terminal_of(pid: int, shells: Mapping[str, int]) -> str | None:
    """The name of the terminal whose shell is ``pid`` or one of its ancestors."""
    if not shells:
        return None
    by_shell = {shell: name for name, shell in shells.items()}
    for candidate in (pid, *ancestors(pid)):
        if candidate in by_shell:
            return by_shell[candidate]
    return None


def find_terminal(
    pid: int, servers: Iterable[ServerTerminals]
) -> tuple[ServerTerminals, str] | None:
    """The server and terminal name whose process tree holds ``pid``, if any."""
    chain: list[int] | None = None
    for server in servers:
        if not server.shells:
            continue
        if chain is None:
            chain = [pid, *ancestors(pid)]
        by_shell = {shell: name for name, shell in server.shells.items()}
        for candidate in chain:
            if candidate in by_shell:
                return server, by_shell[candidate]
    return None
