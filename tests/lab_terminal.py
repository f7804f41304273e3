"""A JupyterLab terminal driven as the browser drives one: created through the server's REST
API (``POST api/terminals``), typed into and read through its websocket
(``terminals/websocket/<name>``: terminado's ``["stdin", text]`` / ``["stdout", text]`` and
``["set_size", rows, cols, ...]``). What it shows is drawn here by pyte from the websocket's
``stdout``, as xterm.js draws it in the page (the test's own eyes: not the extension's).
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyte
import requests
import websocket

from pmux_widget.demo.claude_env import ClaudeEnv

from .helpers import wait_until
from .jupyter_ext import LabServer


class LabTerminal:
    """One terminal of ``server``; :meth:`close` deletes it (its shell and children die)."""

    def __init__(self, server: LabServer, *, cwd: Path | None = None, rows: int = 50,
                 cols: int = 160) -> None:  # fmt: skip
        self.server = server
        body: dict[str, Any] = {"cwd": str(cwd)} if cwd is not None else {}
        answer = server.post("api/terminals", body)
        assert answer.status_code == 200, (answer.status_code, answer.text)
        self.name: str = answer.json()["name"]
        self.rows, self.cols = rows, cols
        self._screen = pyte.Screen(cols, rows)
        self._stream = pyte.Stream(self._screen)
        self._lock = threading.Lock()
        self.output = 0  # characters received
        self.ws = websocket.create_connection(
            server.url(f"terminals/websocket/{self.name}", "ws"),
            header=[f"{k}: {v}" for k, v in server.headers().items()],
            timeout=15,
        )
        self.ws.send(json.dumps(["set_size", rows, cols, rows * 17, cols * 8]))
        self._closed = False
        self._reader = threading.Thread(target=self._read, name=f"term-{self.name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while not self._closed:
            try:
                frame = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            except Exception:
                return
            try:
                kind, *rest = json.loads(frame)
            except (ValueError, TypeError):
                continue
            if kind == "stdout" and rest:
                with self._lock:
                    # xterm.js knows the kitty keyboard protocol's pop; pyte draws its "u"
                    self._stream.feed(re.sub(r"\x1b\[<\d*u", "", rest[0]))
                    self.output += len(rest[0])

    # ---------------------------------------------------------------- use

    def type(self, text: str) -> None:
        self.ws.send(json.dumps(["stdin", text]))

    def screen(self) -> str:
        with self._lock:
            return "\n".join(line.rstrip() for line in self._screen.display)

    def wait_for(self, pattern: str | re.Pattern[str], timeout: float = 60.0) -> str:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        wait_until(
            lambda: regex.search(self.screen()) is not None,
            timeout,
            what=lambda: f"{regex.pattern!r} in terminal {self.name}:\n{self.screen()}",
        )
        return self.screen()

    def wait_screen(self, ok: Callable[[str], bool], timeout: float, what: str) -> str:
        wait_until(lambda: ok(self.screen()), timeout, what=lambda: f"{what}:\n{self.screen()}")
        return self.screen()

    def settled(self, quiet_s: float = 0.3, timeout: float = 10.0) -> str:
        """The screen once no output came for ``quiet_s``."""
        deadline = time.monotonic() + timeout
        last, since = self.output, time.monotonic()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            if self.output != last:
                last, since = self.output, time.monotonic()
            elif time.monotonic() - since >= quiet_s:
                break
        return self.screen()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):
            self.ws.close()
        with contextlib.suppress(requests.RequestException):
            requests.delete(
                self.server.url(f"api/terminals/{self.name}"),
                headers=self.server.headers(),
                timeout=15,
            )


def claude_command(env: ClaudeEnv, cli: Path, args: tuple[str, ...] = ()) -> str:
    """The shell line that runs the CLI in a terminal: its sealed environment only (as
    ``TmuxClaude`` does), a child of the terminal's shell (not ``exec``: as a person runs it)."""
    assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.env().items())
    argv = " ".join(shlex.quote(a) for a in (str(cli), *args))
    return f"cd {shlex.quote(str(env.cwd))} && env -i {assigns} {argv}"


def close_terminal(term: LabTerminal | None, request: Any) -> None:
    """A fixture's end: the terminal closed, its screen printed when the test failed."""
    if term is None:
        return
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        print(f"--- terminal {term.name} ---\n{term.screen()}")
    term.close()
