"""Harness for the real Claude Code CLI, part two: :class:`TmuxClaude` runs ``claude`` in a pane
of ``tmux -L <unique socket>`` and offers keystroke helpers (prompt, approve, deny, Esc, /clear,
/compact, /exit), screen capture, polling with deadlines, and access to the session's PID file
and transcript.

The pinned versions, installing them and the sealed environment (:class:`ClaudeEnv`) are in
:mod:`.claude_env`: this module only drives a CLI that is already there.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shlex
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import libtmux
import psutil

from .claude_env import ClaudeEnv, read_jsonl, wait_until

__all__ = ["TmuxClaude"]

T = TypeVar("T")


class TmuxClaude:
    """Claude Code running interactively in a pane of a private tmux server.

    The pane runs ``exec env -i <ClaudeEnv.env()> TMUX=… TMUX_PANE=… claude <args>``, so the
    pane's process *is* the CLI (``pid``), nothing leaks in from the caller's environment, and
    hooks still see ``$TMUX_PANE``. Use as a context manager, or call :meth:`close`.
    """

    # The input box's footer: "? for shortcuts" (2.1.197, and 2.1.332 in manual mode) or
    # "⏵⏵ auto mode on (shift+tab to cycle)" (2.1.332 in auto mode).
    READY = re.compile(r"\? for shortcuts|for shortcuts|Try \"|auto mode on|plan mode on")
    DIALOG = re.compile(r"Do you want to (proceed|make this edit|create|allow)|❯ 1\. Yes")
    AUTO_CANT_CHECK = re.compile(r"Auto mode can't check actions in this session\s*$", re.M)
    #: an option line of a dialog: "❯ 1. Yes" / "  3. No" (numbered) or "❯ No" / "  Yes"
    #: (2.1.332's dialog in auto mode: unnumbered, "No" first and selected)
    OPTION = re.compile(
        r"^\s*(?P<cursor>❯)?\s*(?:(?P<num>\d+)\.\s+)?(?P<label>(?:Yes|No)\b.*?)\s*$"
    )

    def __init__(
        self,
        env: ClaudeEnv,
        cli: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        socket_name: str | None = None,
        width: int = 160,
        height: int = 50,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.env = env
        self.cli = Path(cli)
        self.args = list(args)
        self.socket_name = socket_name or f"pmux-sim-{uuid.uuid4().hex[:10]}"
        self.width = width
        self.height = height
        self.cwd = Path(cwd) if cwd else env.cwd
        self.server: libtmux.Server | None = None
        self.pane: libtmux.Pane | None = None
        self._pid: int | None = None
        self.started_at: float | None = None

    # ---- lifecycle

    def command(self) -> str:
        """The shell command the pane runs."""
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.env().items())
        argv = " ".join(shlex.quote(a) for a in [str(self.cli), *self.args])
        return f'exec env -i {assigns} TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" {argv}'

    def start(self, wait_ready: bool = True, timeout: float = 60.0) -> TmuxClaude:
        """Start the tmux server and the CLI; by default wait until its prompt is shown."""
        tmux_env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        self.server = libtmux.Server(socket_name=self.socket_name)
        # Our own config only (never the user's ~/.tmux.conf); keep the pane after the CLI
        # exits so its last screen can still be read.
        conf = self.env.root / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")
        subprocess.run(
            [
                "tmux",
                "-L",
                self.socket_name,
                "-f",
                str(conf),
                "new-session",
                "-d",
                "-s",
                "claude",
                "-x",
                str(self.width),
                "-y",
                str(self.height),
                "-c",
                str(self.cwd),
                self.command(),
            ],
            check=True,
            env=tmux_env,
        )
        self.started_at = time.time()
        self.pane = self.server.sessions[0].windows[0].panes[0]
        self._pid = self._find_cli_pid(int(self.pane.pane_pid or 0))
        if wait_ready:
            self.wait_for_screen(self.READY, timeout)
        return self

    def __enter__(self) -> TmuxClaude:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill the CLI (and its children) and the tmux server. Safe to call twice."""
        procs: list[psutil.Process] = []
        if self._pid:
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(self._pid)
                procs = [proc, *proc.children(recursive=True)]
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.kill()
        # Killing the server also lets it reap the CLI (its child), so waiting is short.
        subprocess.run(
            ["tmux", "-L", self.socket_name, "kill-server"], capture_output=True, check=False
        )
        if procs:
            psutil.wait_procs(procs, timeout=3)
        # tmux leaves the socket file behind; remove ours.
        sock_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        with contextlib.suppress(OSError):
            (sock_dir / self.socket_name).unlink()
        self._pid = None

    # ---- keys

    def _tmux(self, *args: str) -> str:
        proc = subprocess.run(
            ["tmux", "-L", self.socket_name, *args], capture_output=True, text=True, check=False
        )
        return proc.stdout

    def send_keys(self, *keys: str, literal: bool = False) -> None:
        """``tmux send-keys`` to the pane (``literal``: text, not key names)."""
        assert self.pane is not None, "not started"
        self._tmux("send-keys", "-t", self.pane.pane_id or "", *(["-l"] if literal else []), *keys)

    def type_text(self, text: str, timeout: float = 10.0) -> None:
        """Type ``text`` and wait until it is echoed (so a following Enter is not pasted)."""
        self.send_keys(text, literal=True)
        probe = text.strip()[-20:]
        if probe:
            self.wait_until(lambda: probe in self.screen(), timeout, what=f"echo of {probe!r}")

    def type_prompt(self, text: str, timeout: float = 10.0) -> None:
        """Type a prompt and press Enter."""
        self.type_text(text, timeout)
        self.send_keys("Enter")

    def command_line(self, command: str, timeout: float = 10.0) -> None:
        """Run a slash command (``/clear``): type it, wait for the echo, Enter."""
        self.type_text(command, timeout)
        self.send_keys("Enter")

    def wait_dialog(self, timeout: float = 30.0) -> str:
        """Wait until a permission dialog is on screen; return the screen."""
        return self.wait_for_screen(self.DIALOG, timeout)

    def dialog_options(self, screen: str | None = None) -> list[tuple[str, str | None, bool]]:
        """The options of the dialog on screen, top to bottom: ``(label, number or None,
        selected)``. Empty when no dialog is shown."""
        text = self.screen() if screen is None else screen
        # Options follow the dialog's question; earlier lines may quote "Yes"/"No" too.
        idx = max(text.rfind("Do you want to"), 0)
        out = []
        for line in text[idx:].splitlines()[1:]:
            m = self.OPTION.match(line)
            if m:
                out.append((m["label"], m["num"], bool(m["cursor"])))
        return out

    def choose(self, label: str, timeout: float = 30.0) -> str:
        """Wait for a permission dialog and choose the option whose label is ``label``
        (exactly, e.g. "Yes" rather than "Yes, and always allow …"); return the screen.

        Never by position: 2.1.197 lists "1. Yes" first, 2.1.332's dialog in auto mode lists
        "❯ No" first (a bare Enter denies). A numbered option is chosen by its digit; an
        unnumbered one by moving the cursor onto it (checked on screen) and Enter.
        """
        screen = self.wait_dialog(timeout)
        options = self.wait_until(
            lambda: self.dialog_options(),
            timeout,
            what="the dialog's options on screen",
        )
        labels = [o[0] for o in options]
        if label not in labels:
            raise ValueError(f"no option {label!r} in the dialog: {labels}")
        target = labels.index(label)
        if options[target][1] is not None:
            self.send_keys(options[target][1] or "")
            self.confirm(label, timeout)
            return screen
        # The dialog may be drawn before it takes keys, and on a loaded machine it was seen
        # back on its default option with Enter unanswered: move one step at a time, re-reading
        # the cursor, press Enter on the target, and start again while the dialog stays.
        deadline = time.monotonic() + timeout

        def cursor() -> int | None:
            return next((i for i, o in enumerate(self.dialog_options()) if o[2]), None)

        while True:
            while (at := cursor()) != target:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"could not move onto {label!r}\n{self.screen()}")
                if at is not None:
                    self.send_keys("Down" if target > at else "Up")
                with contextlib.suppress(TimeoutError):
                    wait_until(functools.partial(_moved, cursor, at), 3.0)
            self.send_keys("Enter")
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.DIALOG.search(self.screen()), 5.0)
                return screen
            if time.monotonic() > deadline:
                raise TimeoutError(f"the dialog did not take {label!r}\n{self.screen()}")

    def confirm(self, label: str, timeout: float = 10.0) -> bool:
        """After a digit was pressed for option ``label``: wait for the dialog to go, pressing
        Enter if it stays with its cursor on ``label`` (2.1.332, on a loaded machine, was seen
        moving the cursor onto "4. No" without answering). True once the dialog is gone."""
        deadline = time.monotonic() + timeout
        while self.DIALOG.search(self.screen()):
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.DIALOG.search(self.screen()), 2.0)
                return True
            if time.monotonic() > deadline:
                return False
            if any(o[0] == label and o[2] for o in self.dialog_options()):
                self.send_keys("Enter")
        return True

    def wait_auto_dialog(self, timeout: float = 30.0) -> bool:
        """Wait for auto mode's "can't check actions" dialog (True) or, as once it was
        answered in this session, straight for a permission dialog (False)."""
        either = re.compile(f"{self.AUTO_CANT_CHECK.pattern}|{self.DIALOG.pattern}", re.M)
        return bool(self.AUTO_CANT_CHECK.search(self.wait_for_screen(either, timeout)))

    def stay_in_auto_mode(self, timeout: float = 30.0) -> None:
        """Answer auto mode's "can't check actions in this session" dialog with Enter (stay
        in auto mode; the call becomes a permission dialog). The dialog is drawn before it
        takes keys, so Enter is pressed again until the dialog is gone."""
        self.wait_for_screen(self.AUTO_CANT_CHECK, timeout)
        deadline = time.monotonic() + timeout
        while self.AUTO_CANT_CHECK.search(self.screen()):
            if time.monotonic() > deadline:
                raise TimeoutError("auto mode's dialog did not take Enter\n" + self.screen())
            self.send_keys("Enter")
            with contextlib.suppress(TimeoutError):
                wait_until(lambda: not self.AUTO_CANT_CHECK.search(self.screen()), 2.0)

    def approve(self, timeout: float = 30.0) -> None:
        """Wait for a permission dialog and choose "Yes" (by label, see :meth:`choose`)."""
        self.choose("Yes", timeout)

    def deny(self, timeout: float = 30.0) -> None:
        """Wait for a permission dialog and choose "No" (by label, see :meth:`choose`)."""
        self.choose("No", timeout)

    def escape(self) -> None:
        """Press Esc (interrupts a streaming answer or dismisses a dialog)."""
        self.send_keys("Escape")

    def clear(self) -> None:
        """``/clear``: new session id in the same process."""
        self.command_line("/clear")

    def compact(self) -> None:
        """``/compact``: summarise the conversation (the model gets a summary request)."""
        self.command_line("/compact")

    def exit(self) -> None:
        """``/exit``: the CLI ends (SessionEnd) and removes its PID file."""
        self.command_line("/exit")

    def kill9(self) -> None:
        """SIGKILL the CLI: no SessionEnd, the PID file stays behind."""
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)

    # ---- observation

    def screen(self) -> str:
        """The visible pane text (``capture-pane -p``)."""
        assert self.pane is not None, "not started"
        return self._tmux("capture-pane", "-p", "-t", self.pane.pane_id or "")

    def wait_for_screen(self, pattern: str | re.Pattern[str], timeout: float = 30.0) -> str:
        """Wait until the screen matches ``pattern`` (regex); return the screen."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern

        def check() -> str | None:
            s = self.screen()
            return s if rx.search(s) else None

        try:
            return self.wait_until(check, timeout, what=f"screen matching {rx.pattern!r}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n--- screen ---\n{self.screen()}") from None

    def wait_until(
        self, predicate: Callable[[], T | None], timeout: float = 30.0, what: str = ""
    ) -> T:
        """:func:`wait_until` (poll with a deadline)."""
        return wait_until(predicate, timeout, what=what)

    @staticmethod
    def _find_cli_pid(pane_pid: int) -> int:
        """The pane's process if it is the CLI (it execs), else its first ``claude`` child."""
        try:
            proc = psutil.Process(pane_pid)
            if proc.name() == "claude":
                return pane_pid
            for child in proc.children(recursive=True):
                if child.name() == "claude":
                    return child.pid
        except psutil.Error:
            pass
        return pane_pid

    @property
    def pid(self) -> int:
        """The CLI's pid (the pane process: the pane execs into ``claude``)."""
        if not self._pid:
            raise RuntimeError("not running")
        return self._pid

    def alive(self) -> bool:
        """Whether the CLI process still runs."""
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except (psutil.Error, RuntimeError):
            return False

    def pid_file(self) -> Path:
        """``<config>/sessions/<pid>.json`` of this CLI (it may not exist yet or any more)."""
        return self.env.sessions_dir / f"{self.pid}.json"

    def pid_info(self) -> dict[str, Any] | None:
        """The parsed PID file, or None."""
        try:
            data = json.loads(self.pid_file().read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def wait_status(self, status: str, timeout: float = 30.0) -> dict[str, Any]:
        """Wait until the PID file's ``status`` equals ``status``; return the PID file."""

        def reached() -> dict[str, Any] | None:
            info = self.pid_info()
            return info if info is not None and info.get("status") == status else None

        return self.wait_until(
            reached,
            timeout,
            what=f"PID file status {status!r}",
        )

    def session_id(self) -> str | None:
        """The current session id, from the PID file."""
        info = self.pid_info()
        return info.get("sessionId") if info else None

    def transcript_path(self) -> Path | None:
        """The current session's transcript path (the file is created lazily)."""
        sid = self.session_id()
        return self.env.transcript_path(sid) if sid else None

    def transcript(self) -> list[dict[str, Any]]:
        """The current session's transcript records (complete lines only)."""
        path = self.transcript_path()
        return read_jsonl(path) if path else []

    def wait_user_record(self, text: str, timeout: float = 10.0) -> dict[str, Any]:
        """Wait until a ``user`` record whose content contains ``text`` is in the transcript
        (an interrupt marker, say); return that record."""
        return self.wait_until(
            lambda: next(
                (
                    r
                    for r in self.transcript()
                    if r.get("type") == "user" and text in str(r["message"].get("content"))
                ),
                None,
            ),
            timeout,
            what=f"a user record with {text!r} in the transcript",
        )


def _moved(cursor: Callable[[], int | None], start: int | None) -> bool:
    """The dialog's cursor is no longer where it was."""
    return cursor() != start
