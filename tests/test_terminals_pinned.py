"""The terminado / jupyter_server_terminals internals pmux_widget.jupyter.terminals relies on.

They are not a documented API (``pyproject.toml`` pins the ranges tested): this file runs the
installed versions' real manager in this process, on a Tornado loop, and checks each thing
used: ``terminals`` (name → ``PtyWithClients``), ``create(cwd=...)`` and its model's
``name``, a terminal's ``clients`` (a passive tap gets ``on_pty_read`` and ``on_pty_died``,
and its ``size`` (None, None) never resizes the PTY), ``read_buffer`` (a deque with a
``maxlen``, holding what was read before a tap came), ``ptyproc`` (``pid``, ``getwinsize``,
``setwinsize``, ``write``), ``blocking_io_executor``, and that EOF removes the terminal.
"""

from __future__ import annotations

import asyncio
import collections
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

jst = pytest.importorskip("jupyter_server_terminals.terminalmanager")

SUPPORTED = {"terminado": ("0.18",), "jupyter_server_terminals": ("0.5",)}


def test_the_installed_versions_are_the_pinned_ones() -> None:
    for package, prefixes in SUPPORTED.items():
        assert version(package).startswith(prefixes), (package, version(package))


class _Tap:
    size = (None, None)

    def __init__(self) -> None:
        self.read: list[str] = []
        self.died = False

    def on_pty_read(self, text: str) -> None:
        self.read.append(text)

    def on_pty_died(self) -> None:
        self.died = True


async def _until(ok: Any, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not ok():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_the_terminal_manager_internals_we_use(tmp_path: Path) -> None:
    async def main() -> None:
        manager = jst.TerminalManager(
            shell_command=["/bin/sh"], extra_env={"PS1": "$ "}, parent=None
        )
        model = manager.create(cwd=str(tmp_path))
        name = model["name"]
        term = manager.terminals[name]
        assert isinstance(term.read_buffer, collections.deque) and term.read_buffer.maxlen
        assert isinstance(term.clients, list)
        assert term.ptyproc.pid > 0
        rows, cols = term.ptyproc.getwinsize()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(manager.blocking_io_executor, term.ptyproc.write, "echo one\r")
        await _until(lambda: any("one" in chunk for chunk in term.read_buffer))
        tap = _Tap()
        term.clients.append(tap)
        term.resize_to_smallest()
        assert term.ptyproc.getwinsize() == (rows, cols)  # a passive tap sizes nothing
        await loop.run_in_executor(
            manager.blocking_io_executor, term.ptyproc.write, "echo two; pwd\r"
        )
        await _until(lambda: str(tmp_path) in "".join(tap.read))
        assert "two" in "".join(tap.read)
        term.ptyproc.setwinsize(rows, cols - 1)
        assert term.ptyproc.getwinsize() == (rows, cols - 1)
        await loop.run_in_executor(manager.blocking_io_executor, term.ptyproc.write, "exit\r")
        await _until(lambda: tap.died and name not in manager.terminals)
        await manager.shutdown()

    asyncio.run(main())
