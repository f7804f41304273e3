"""A JupyterLab terminal's screen, as an emulator (pyte) draws it from the terminal's output.

The terminal's output reaches us on the server's loop (a tap among terminado's clients); the
tap only queues it. A thread of our own (:class:`Feeder`) feeds pyte (~0.7 MB/s here: never on
the server's loop). Bounded: more than ``MAX_PENDING`` characters waiting (a ``cat`` of a big
file) are dropped, and the screen is not trusted again until the program repaints all of it.

A screen is *trusted* once the emulator has seen every byte since a full-screen erase, or since
the terminal's first byte (terminado keeps a terminal's last 1000 output chunks: a terminal
whose buffer is not full is replayed whole). Otherwise (attached late, output dropped) an
action asks the terminal for a redraw without typing: the PTY is made one column narrower and
back (two SIGWINCHs: the Claude CLI repaints its whole screen on a resize), and waits for the
erase that starts the repaint; if none comes it is refused with the reason.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable

import pyte

__all__ = ["MAX_PENDING", "Feeder", "TerminalScreen"]

#: Characters waiting for the emulator before they are dropped (1.4 s of pyte at 0.7 MB/s).
MAX_PENDING = 1_000_000
#: How long an action waits for a requested redraw (and for queued output to be drawn).
REDRAW_WAIT_S = 2.0
#: The kitty keyboard protocol's "pop" (2.1.332 sends it as it exits): pyte 0.8.2 does not
#: know ``CSI < u`` and draws its "u" as text.
_UNKNOWN_TO_PYTE = re.compile(r"\x1b\[<\d*u")


class _Screen(pyte.Screen):
    """pyte's screen, telling when the whole display was erased (a full repaint starts): an
    erase of the display (2.1.332 on a resize: ``CSI 2J``), or every row erased one by one
    after the cursor went home (2.1.197: ``CSI H``, then ``CSI 2K`` on each row)."""

    erased = 0
    _wiped: set[int] | None = None

    def erase_in_display(self, how: int = 0, *args: object, **kwargs: object) -> None:
        super().erase_in_display(how, *args, **kwargs)
        if how in (2, 3) or (how == 0 and self.cursor.x == 0 and self.cursor.y == 0):
            self.erased += 1

    def cursor_position(self, line: int | None = None, column: int | None = None) -> None:
        super().cursor_position(line, column)
        if self.cursor.x == 0 and self.cursor.y == 0:
            self._wiped = set()

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        super().erase_in_line(how, private)
        wiped = self._wiped
        if how == 2 and wiped is not None:
            wiped.add(self.cursor.y)
            if len(wiped) >= self.lines:
                self.erased += 1
                self._wiped = None


class TerminalScreen:
    """One terminal's emulator, its queue and whether it can be trusted."""

    def __init__(self, name: str, rows: int, cols: int, *, complete: bool) -> None:
        self.name = name
        self._lock = threading.Lock()  # the queue
        self._draw = threading.Condition()  # pyte, and waiting for it
        self._pending: deque[str | tuple[int, int]] = deque()
        self._pending_chars = 0
        self._screen = _Screen(max(cols, 1), max(rows, 1))
        self._stream = pyte.Stream(self._screen)
        self._size = (rows, cols)
        self.trusted = complete
        self.why = "" if complete else "it started before pmux-widget watched it"
        self.closed = False
        self._fed = 0  # characters drawn
        self._queued = 0  # characters queued (drawn + pending + dropped)
        self.on_pending: Callable[[TerminalScreen], None] | None = None

    # ----------------------------------------------------------- the server's loop (cheap)

    def queue(self, text: str, size: tuple[int, int] | None = None) -> None:
        """Output read from the PTY (``size``: the PTY's size now, when known)."""
        with self._lock:
            if size is not None and size != self._size:
                self._size = size
                self._pending.append(size)
            self._pending.append(text)
            self._pending_chars += len(text)
            self._queued += len(text)
            if self._pending_chars > MAX_PENDING:
                self._pending.clear()
                self._pending_chars = 0
                self._fed = self._queued
                self.trusted = False
                self.why = "its output came faster than pmux-widget could read it"
        notify = self.on_pending
        if notify is not None:
            notify(self)

    def close(self) -> None:
        self.closed = True
        with self._draw:
            self._draw.notify_all()

    # ----------------------------------------------------------------- the feeder thread

    def feed(self) -> None:
        """Draw what is queued (the feeder's thread)."""
        while True:
            with self._lock:
                if not self._pending:
                    return
                item = self._pending.popleft()
                if isinstance(item, str):
                    self._pending_chars -= len(item)
            with self._draw:
                if isinstance(item, tuple):
                    self._screen.resize(max(item[0], 1), max(item[1], 1))
                else:
                    before = self._screen.erased
                    self._stream.feed(_UNKNOWN_TO_PYTE.sub("", item))
                    self._fed += len(item)
                    if self._screen.erased != before and not self.trusted:
                        self.trusted, self.why = True, ""
                self._draw.notify_all()

    # -------------------------------------------------------------- an action's thread

    def erased(self) -> int:
        with self._draw:
            return self._screen.erased

    def text(self, wait_s: float = REDRAW_WAIT_S) -> str:
        """The visible text once what was queued before the call is drawn (rows, trailing
        blanks stripped, as tmux's ``capture-pane -p``). OSError when it cannot be trusted."""
        with self._lock:
            target = self._queued
        with self._draw:
            self._draw.wait_for(lambda: self._fed >= target or self.closed, timeout=wait_s)
            if self.closed:
                raise OSError(f"JupyterLab terminal {self.name} has closed")
            if not self.trusted:
                raise OSError(
                    f"JupyterLab terminal {self.name}'s screen is not known ({self.why}) and "
                    "it did not repaint it"
                )
            return "\n".join(line.rstrip() for line in self._screen.display)

    def drawn(self) -> int:
        with self._draw:
            return self._fed

    def wait_drawn(self, beyond: int, timeout: float) -> None:
        """Until output past the mark ``beyond`` (:meth:`drawn`) is drawn, or ``timeout``."""
        with self._draw:
            self._draw.wait_for(lambda: self._fed > beyond or self.closed, timeout=timeout)

    def wait_trusted(self, timeout: float) -> bool:
        with self._draw:
            return self._draw.wait_for(lambda: self.trusted or self.closed, timeout=timeout)


class Feeder:
    """One thread that feeds every terminal's emulator."""

    def __init__(self) -> None:
        self._ready: deque[TerminalScreen] = deque()
        self._wake = threading.Condition()
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name="pmux-terminal-feed", daemon=True)
        self._thread.start()

    def pending(self, screen: TerminalScreen) -> None:
        with self._wake:
            if screen not in self._ready:
                self._ready.append(screen)
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                self._wake.wait_for(lambda: self._ready or self._stopped)
                if self._stopped:
                    return
                screen = self._ready.popleft()
            try:
                screen.feed()
            except Exception:  # a pyte bug must not stop every other terminal's screen
                screen.trusted, screen.why = False, "its output could not be parsed"

    def stop(self) -> None:
        with self._wake:
            self._stopped = True
            self._wake.notify()
