"""The Jupyter server's terminals, for pmux-widget: who runs where, their screens, their keys.

terminado's manager (``web_app.settings["terminal_manager"]``) is read and written on the
server's loop only: a 0.5 s poll there lists ``terminals`` (name → ``PtyWithClients``) and
attaches a passive tap to each new one (a client with no size, so it never resizes the
terminal; ``tests/test_terminals_pinned.py`` pins every internal relied on). What follows from
a change runs on our own threads:

- the terminals' shells are published to ``$PMUX_WIDGET_HOME/terminals/<server pid>.json``
  (``system.jupyter_terminals``), from which every hub of the machine sets a session's
  ``terminal`` (``runtime.sources.terminals``), this server's own hub included;
- each terminal's screen is drawn by an emulator off the loop (:mod:`.terminal_screen`);
- this process serves its terminals to ``runtime.actions`` (``system.keys.serve_terminals``):
  keys reach a PTY through terminado's own single-thread executor, so they queue in order
  with the user's.

Without a terminal manager (``ServerApp.terminals_enabled = False``, no terminado) nothing is
published: sessions then run in no JupyterLab terminal and cannot be started in one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tornado.ioloop import IOLoop, PeriodicCallback

from pmux_widget.system import jupyter_terminals, keys
from pmux_widget.system.home import PmuxHome

from .terminal_screen import Feeder, TerminalScreen

__all__ = ["POLL_MS", "TERMINALS_KEY", "Terminal", "Terminals", "TerminalsUnavailable"]

#: Where the terminals' watch is kept in the server's settings.
TERMINALS_KEY = "pmux_widget_terminals"

#: How often the server's loop looks at the terminal manager (a dict walk: microseconds).
POLL_MS = 500
#: How long an action waits for its keys to be written.
WRITE_TIMEOUT_S = 5.0


#: How long an action waits for a terminal to repaint its screen after the resizes that ask
#: it to (a rare path: the screen was not followed from its start). 2 s in all was too short
#: for Claude Code 2.1.197 at load ~13 (a CI run refused an approve: "did not repaint it").
REPAINT_WAIT_S = 8.0
#: How long each narrower width is given before the next, one column narrower still.
REPAINT_STEP_S = 2.0


class TerminalsUnavailable(Exception):
    """The server has no terminals (disabled, or terminado missing): ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Tap:
    """A terminado client that only listens: ``size`` (None, None) is skipped when terminado
    sizes the terminal to its smallest client."""

    size = (None, None)

    def __init__(self, owner: Terminals, name: str, term: Any, screen: TerminalScreen) -> None:
        self.owner = owner
        self.name = name
        self.term = term
        self.screen = screen

    def on_pty_read(self, text: str) -> None:  # the server's loop: queue only
        try:
            size = tuple(self.term.ptyproc.getwinsize())
        except (OSError, ValueError):
            size = None
        self.screen.queue(text, size if size is not None and len(size) == 2 else None)

    def on_pty_died(self) -> None:
        self.screen.close()
        # terminado is iterating over the clients: the poll (which removes this tap) must
        # come after, or another client (the browser's socket) would miss the news
        loop = self.owner.loop
        if loop is not None:
            loop.add_callback(self.owner._poll)


class Terminal:
    """One terminal of this server, as an action sees it (``system.keys.TerminalTarget``)."""

    def __init__(self, owner: Terminals, name: str, term: Any, screen: TerminalScreen) -> None:
        self.owner = owner
        self.name = name
        self.term = term
        self.screen = screen

    @property
    def shell_pid(self) -> int:
        return int(self.term.ptyproc.pid)

    def screen_text(self) -> str:
        if not self.screen.trusted and not self.screen.closed:
            self.owner.redraw(self)
        return self.screen.text()

    def write(self, data: str) -> None:
        self.owner.write(self, data)

    def drawn(self) -> int:
        return self.screen.drawn()

    def wait_drawn(self, beyond: int, timeout: float) -> None:
        self.screen.wait_drawn(beyond, timeout)


class Terminals:
    """This server's terminals: the poll on its loop, the published file, screens, keys."""

    def __init__(
        self,
        settings: Mapping[str, Any],
        *,
        home: PmuxHome | None = None,
        hub_port: Callable[[], int | None] = lambda: None,
        url: str = "",
        log: logging.Logger | None = None,
    ) -> None:
        self.settings = settings
        self.home = home or PmuxHome.resolve()
        self.hub_port = hub_port
        self.url = url
        self.log = log or logging.getLogger(__name__)
        self.loop: IOLoop | None = None
        self._callback: PeriodicCallback | None = None
        self._attached: dict[str, Terminal] = {}
        self._shells: dict[str, int] = {}  # replaced whole on the loop, read anywhere
        self._published: tuple[dict[str, int], int | None] | None = None
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="pmux-terms")
        self._feeder = Feeder()
        self._lock = threading.Lock()

    # ------------------------------------------------------------ the server's loop

    @property
    def manager(self) -> Any | None:
        return self.settings.get("terminal_manager")

    def unavailable(self) -> str | None:
        """Why this server has no terminals, or None when it has."""
        if self.manager is None or not self.settings.get("terminals_available", True):
            return (
                "this Jupyter server has no terminals (ServerApp.terminals_enabled is off, or "
                "terminado is not installed)"
            )
        return None

    def start(self) -> None:
        """Call on the server's loop (or before it runs: the poll starts with it)."""
        self.loop = IOLoop.current()
        keys.serve_terminals(self.find)
        self._callback = PeriodicCallback(self._poll, POLL_MS)
        self._callback.start()
        self.loop.add_callback(self._poll)

    def stop(self) -> None:
        if self._callback is not None:
            self._callback.stop()
        keys.serve_terminals(None)
        for terminal in list(self._attached.values()):
            self._detach(terminal)
        self._feeder.stop()
        # a publish still queued would write the file again after it is removed
        self._pool.shutdown(wait=True, cancel_futures=True)
        jupyter_terminals.remove_server_file(self.home, os.getpid())

    def _poll(self) -> None:
        manager = self.manager
        terms: dict[str, Any] = dict(getattr(manager, "terminals", {}) or {}) if manager else {}
        for name, terminal in list(self._attached.items()):
            if terms.get(name) is not terminal.term:
                self._detach(terminal)
        for name, term in terms.items():
            if name not in self._attached:
                self._attach(name, term)
        shells = {name: t.shell_pid for name, t in self._attached.items()}
        self._shells = shells
        port = self.hub_port()
        if self._published != (shells, port):
            self._published = (shells, port)
            server = jupyter_terminals.ServerTerminals(os.getpid(), self.url, port, shells)
            self._pool.submit(self._publish, server)

    def _attach(self, name: str, term: Any) -> None:
        try:
            rows, cols = term.ptyproc.getwinsize()
        except (OSError, ValueError):
            rows, cols = 24, 80
        replay = list(term.read_buffer)
        maxlen = term.read_buffer.maxlen
        screen = TerminalScreen(name, rows, cols, complete=maxlen is None or len(replay) < maxlen)
        screen.on_pending = self._feeder.pending
        tap = _Tap(self, name, term, screen)
        # in one step of the loop: nothing is read between the replay and the tap
        term.clients.append(tap)
        if replay:
            screen.queue("".join(replay))
        self._attached[name] = Terminal(self, name, term, screen)

    def _detach(self, terminal: Terminal) -> None:
        self._attached.pop(terminal.name, None)
        terminal.screen.close()
        clients = terminal.term.clients
        for client in list(clients):
            if isinstance(client, _Tap):
                clients.remove(client)

    def _publish(self, server: jupyter_terminals.ServerTerminals) -> None:
        try:
            jupyter_terminals.write_server_file(self.home, server)
        except OSError as exc:
            self.log.warning("pmux-widget | cannot publish the terminals: %s", exc)

    # --------------------------------------------------------------- any other thread

    def find(self, pid: int) -> Terminal | None:
        """The terminal whose shell is ``pid`` or an ancestor of it (a /proc walk: never
        call on the server's loop)."""
        name = jupyter_terminals.terminal_of(pid, self._shells)
        return self._attached.get(name) if name is not None else None

    def names(self) -> dict[str, int]:
        return dict(self._shells)

    def _on_loop(self, fn: Callable[[], Any], timeout: float = WRITE_TIMEOUT_S) -> Any:
        loop = self.loop
        if loop is None:
            raise OSError("the terminals are not watched yet")
        done: concurrent.futures.Future[Any] = concurrent.futures.Future()

        async def run() -> None:
            try:
                result = fn()
                if asyncio.isfuture(result) or asyncio.iscoroutine(result):
                    result = await result
                done.set_result(result)
            except BaseException as exc:
                done.set_exception(exc)

        loop.add_callback(run)
        return done.result(timeout=timeout)

    def write(self, terminal: Terminal, data: str) -> None:
        """Type ``data`` into the terminal's PTY, if it still is the one the action checked."""

        def go() -> Any:
            manager = self.manager
            if manager is None or manager.terminals.get(terminal.name) is not terminal.term:
                raise OSError(f"JupyterLab terminal {terminal.name} has closed")
            return asyncio.get_running_loop().run_in_executor(
                manager.blocking_io_executor, terminal.term.ptyproc.write, data
            )

        self._on_loop(go)

    def redraw(self, terminal: Terminal) -> None:
        """Make the program in the terminal repaint without typing (an action's thread): one
        column narrower, then (no repaint within :data:`REPAINT_STEP_S`) narrower still,
        until its screen is erased and drawn again; then its width back (each a SIGWINCH:
        the CLIs repaint on a resize). Every width asked is new to the program: one that
        handles signals late reads a width it never drew, and one that missed a signal
        (Claude Code 2.1.197 handled no SIGWINCH received while it was stopped, in one run of
        about ten here and in a CI run) gets the next. The width comes back only after the
        repaint, or at the end (a CLI that reads the old width twice repaints nothing: ci,
        2.1.332, when the width came back after a fixed 0.15 s)."""
        ptyproc = terminal.term.ptyproc
        self.log.info(
            "pmux-widget | terminal %s: asked for a repaint (%s)",
            terminal.name,
            terminal.screen.why,
        )
        deadline = time.monotonic() + REPAINT_WAIT_S
        size: tuple[int, int] | None = None
        try:
            rows, cols = size = self._on_loop(ptyproc.getwinsize)
            for width in range(cols - 1, 1, -1):
                self._on_loop(functools.partial(ptyproc.setwinsize, rows, width))
                left = deadline - time.monotonic()
                if terminal.screen.wait_trusted(min(REPAINT_STEP_S, max(left, 0.0))):
                    break
                if left <= REPAINT_STEP_S:
                    break
        except (OSError, concurrent.futures.TimeoutError) as exc:
            self.log.info("pmux-widget | no redraw of terminal %s: %s", terminal.name, exc)
        finally:
            if size is not None:
                with contextlib.suppress(OSError, concurrent.futures.TimeoutError):
                    self._on_loop(lambda: ptyproc.setwinsize(*size))
        if size is not None and not terminal.screen.trusted:
            # the width coming back is a resize too
            terminal.screen.wait_trusted(REPAINT_STEP_S)

    def forget_screen(self, name: str) -> bool:
        """Tests only: as if the terminal's output had been cut (the screen is not trusted
        until a repaint)."""
        terminal = self._attached.get(name)
        if terminal is None:
            return False
        terminal.screen.trusted, terminal.screen.why = False, "a test cut its output"
        return True

    def read_screen(self, name: str) -> str | None:
        """Tests only: the terminal's screen as an action reads it (a repaint asked first
        when it is not known); None when no such terminal, OSError when it cannot be read."""
        terminal = self._attached.get(name)
        return None if terminal is None else terminal.screen_text()

    def create(self, cwd: str, command: str | None = None) -> str:
        """A new terminal in ``cwd`` (as ``POST /api/terminals`` makes one), ``command``
        typed into its shell; its name."""
        reason = self.unavailable()
        if reason is not None:
            raise TerminalsUnavailable(reason)

        def go() -> str:
            manager = self.manager
            if manager is None:
                raise TerminalsUnavailable("this Jupyter server's terminals went away")
            model = manager.create(cwd=cwd)
            name = str(model["name"])
            self._poll()
            return name

        name: str = self._on_loop(go)
        if command:
            terminal = self._attached.get(name)
            if terminal is None:
                raise OSError(f"JupyterLab terminal {name} vanished")
            terminal.write(command + "\r")
        return name
