"""Which program runs an Agent SDK run: the process that started its Claude CLI (the SDK runs
the CLI as its child), and, for a Jupyter kernel, its kernel id (from the connection file on
its command line, ``-f …/kernel-<id>.json``) and the notebook Jupyter servers say it runs.

Jupyter servers publish their kernels' notebooks (``$PMUX_WIDGET_HOME/kernels/<server
pid>.json``, 0600: ``{"pid", "url", "kernels": {kernel id: notebook path}}``, written by the
server extension, ``jupyter/kernels.py``): a kernel's notebook is known only to its server.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .files import atomic_write, json_objects
from .home import PmuxHome
from .processes import pid_alive, proc_stat

__all__ = ["Program", "kernels_dir", "program_of", "remove_kernels_file", "write_kernels_file"]

_KERNEL_FILE = re.compile(r"kernel-([0-9a-fA-F-]{8,})\.json$")


@dataclass(frozen=True, slots=True)
class Program:
    """What started a run: its name (``my_script.py``, ``ipykernel``), and for a kernel its
    id, and the notebook (server-relative path) and server URL when a server said so."""

    name: str
    kernel_id: str | None = None
    notebook: str | None = None
    server_url: str | None = None


def kernels_dir(home: PmuxHome) -> Path:
    return home.root / "kernels"


def write_kernels_file(home: PmuxHome, pid: int, url: str, kernels: dict[str, str]) -> None:
    """Publish a server's kernels' notebooks (replacing its earlier file)."""
    directory = kernels_dir(home)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    body = {"pid": pid, "url": url, "kernels": kernels}
    atomic_write(directory / f"{pid}.json", json.dumps(body).encode(), 0o600)


def remove_kernels_file(home: PmuxHome, pid: int) -> None:
    with contextlib.suppress(OSError):
        (kernels_dir(home) / f"{pid}.json").unlink()


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return [a.decode(errors="replace") for a in handle.read().split(b"\0") if a]
    except OSError:
        return []


def _name(argv: list[str]) -> str:
    """A program's name from its command line: the script or module a Python runs, else the
    executable's name."""
    if not argv:
        return "?"
    exe = os.path.basename(argv[0])
    if exe.startswith("python"):
        args = argv[1:]
        if len(args) >= 2 and args[0] == "-m":
            return args[1]
        for arg in args:
            if not arg.startswith("-"):
                return os.path.basename(arg)
    return exe


def program_of(claude_pid: int, home: PmuxHome) -> Program | None:
    """The program that started the Claude process ``claude_pid`` (its parent), or None."""
    info = proc_stat(claude_pid)
    if info is None or len(info[1]) < 2:
        return None
    parent = int(info[1][1])
    argv = _cmdline(parent) if parent > 1 else []
    if not argv:
        return None
    kernel_id = next((m.group(1) for a in argv if (m := _KERNEL_FILE.search(a)) is not None), None)
    name = "ipykernel" if kernel_id and "ipykernel" in " ".join(argv) else _name(argv)
    if kernel_id is None:
        return Program(name)
    for _, data in json_objects(kernels_dir(home)):
        server = data.get("pid")
        kernels = data.get("kernels")
        if not (isinstance(server, int) and pid_alive(server) and isinstance(kernels, dict)):
            continue
        notebook = kernels.get(kernel_id)
        if isinstance(notebook, str) and notebook:
            url = data.get("url")
            return Program(name, kernel_id, notebook, url if isinstance(url, str) else None)
    return Program(name, kernel_id)
