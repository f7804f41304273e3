"""Harness for the real Codex CLI, part two: :class:`TmuxCodex` runs the Codex TUI in a pane of
``tmux -L <unique socket>``, types into it as Codex needs (text, then Enter apart: an Enter
sent with the text is taken for a paste), reads its screen, and ends every process the env
started, by pid: the TUI, the shared app-server daemon (``daemon.pid``) and its
``pid-update-loop``, which outlive the TUI by design; and the daemon's socket under
``/tmp/codex-daemon-<uid>/`` that this env made (another Codex's stay).

The pinned version and the sealed environment are in :mod:`.codex_env`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

import psutil

from .claude_bg import env_processes
from .claude_env import wait_until
from .codex_env import CodexEnv

__all__ = ["TmuxCodex", "codex_processes", "daemon_socket_dirs", "end_codex_processes"]

#: The footer under the composer once the TUI takes input (the splash's "loading" gone).
READY = re.compile(r"\? for shortcuts")
_LOADING = re.compile(r"^\s+loading\s*$", re.M)
#: The approval dialog (an escalated command).
APPROVAL = re.compile(r"Would you like to run the following command\?")
#: A Plan-mode question.
QUESTION = re.compile(r"Question \d+/\d+")


def codex_processes(env: CodexEnv) -> list[psutil.Process]:
    """Every process whose environment names this env's ``CODEX_HOME`` (the TUI, the daemon,
    its pid-update-loop, their tool commands), each once."""
    return env_processes(env.codex_home.root, var="CODEX_HOME")


def daemon_socket_dirs(env: CodexEnv) -> list[Path]:
    """Where this env's daemon control socket really lives: the target of
    ``app-server-control/app-server-control.sock`` (``/tmp/codex-daemon-<uid>/<sha>``)."""
    found = []
    control = env.codex_home.root / "app-server-control"
    with contextlib.suppress(OSError):
        for link in control.iterdir():
            if link.is_symlink():
                target = Path(os.readlink(link))
                if str(target).startswith(f"/tmp/codex-daemon-{os.getuid()}/"):
                    found.append(target)
    return found


def end_codex_processes(env: CodexEnv, timeout: float = 10.0) -> list[int]:
    """End every process of ``env`` by pid (TERM, then KILL: the daemon once ignored TERM),
    the daemon first (it would serve a new TUI); then remove its socket under /tmp, and the
    ``/tmp/codex-daemon-<uid>`` folder when nothing else is left in it. Returns the pids."""
    sockets = daemon_socket_dirs(env)
    info = env.daemon_info() or {}
    ended: list[int] = []
    deadline = time.monotonic() + timeout
    while True:
        procs = codex_processes(env)
        pid = info.get("pid")
        if isinstance(pid, int) and pid not in {p.pid for p in procs}:
            with contextlib.suppress(psutil.Error):
                daemon = psutil.Process(pid)
                if "app-server" in " ".join(daemon.cmdline()):
                    procs.append(daemon)
        if not procs:
            break
        sig = signal.SIGKILL if time.monotonic() > deadline - timeout / 2 else signal.SIGTERM
        for proc in sorted(procs, key=lambda p: p.pid != pid):
            with contextlib.suppress(psutil.Error, OSError):
                proc.send_signal(sig)
                ended.append(proc.pid)
        _gone, alive = psutil.wait_procs(procs, timeout=1.0)
        if alive and time.monotonic() > deadline:
            raise RuntimeError(f"Codex processes outlived clean-up: {[p.pid for p in alive]}")
    for path in sockets:
        for made in (path, path.with_name(path.name + ".lock")):
            with contextlib.suppress(OSError):
                made.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty: other Codex daemons of this user stay
    return sorted(set(ended))


class TmuxCodex:
    """The Codex TUI in a pane of a private tmux server.

    The pane runs ``exec env -i <CodexEnv.env()> TMUX=… TMUX_PANE=… codex <args>``: the pane's
    process is the TUI (``pid``). Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        env: CodexEnv,
        codex: str | os.PathLike[str],
        args: Sequence[str] = (),
        *,
        socket_name: str | None = None,
        width: int = 120,
        height: int = 40,
    ) -> None:
        self.env = env
        self.codex = Path(codex)
        self.args = list(args)
        self.socket_name = socket_name or f"pmux-codex-{uuid.uuid4().hex[:10]}"
        self.width = width
        self.height = height
        self.panes: list[str] = []
        self.pids: list[int] = []

    # ---- lifecycle

    def command(self, args: Sequence[str] = ()) -> str:
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.env().items())
        argv = " ".join(shlex.quote(a) for a in [str(self.codex), *self.args, *args])
        return f'exec env -i {assigns} TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" {argv}'

    def tmux(self, *args: str) -> str:
        tmux_env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
        proc = subprocess.run(
            ["tmux", "-L", self.socket_name, *args],
            capture_output=True,
            text=True,
            check=False,
            env=tmux_env,
        )
        return proc.stdout

    def start(self, wait_ready: bool = True, timeout: float = 60.0) -> TmuxCodex:
        """Start the tmux server with the TUI in its first pane; wait for its prompt."""
        conf = self.env.root / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 5000\n")
        size = ["-x", str(self.width), "-y", str(self.height)]
        self.tmux("-f", str(conf), "new-session", "-d", "-s", "codex", *size, "-c",
                  str(self.env.cwd), self.command())  # fmt: skip
        return self._opened(wait_ready, timeout)

    def open_another(self, args: Sequence[str] = (), timeout: float = 60.0) -> TmuxCodex:
        """A second TUI of the same env in a new window of the same server (same daemon)."""
        self.tmux("new-window", "-t", "codex:", "-c", str(self.env.cwd), self.command(args))
        return self._opened(True, timeout, args)

    def _opened(self, wait_ready: bool, timeout: float, args: Sequence[str] = ()) -> TmuxCodex:
        panes = self.tmux("list-panes", "-a", "-F", "#{pane_id} #{pane_pid}").split()
        pane, pid = panes[-2], int(panes[-1])
        if pane in self.panes:
            raise RuntimeError(f"tmux opened no new pane (still {self.panes})")
        self.panes.append(pane)
        self.pids.append(pid)
        if wait_ready:
            # The TUI draws its prompt at once but takes no keys until the shared daemon runs:
            # starting a home's first daemon copies Codex's 315 MB binary into it, seconds
            # on a busy machine. Keys typed meanwhile are held back, then arrive at once.
            # (With --no-daemon the TUI runs its turns itself.)
            wait_until(
                lambda: "--no-daemon" in self.args + list(args) or self.daemon() is not None,
                timeout,
                0.1,
                what="the TUI's app-server (the shared daemon or its own)",
            )
            wait_until(
                lambda: READY.search(s := self.screen(pane)) and not _LOADING.search(s),
                timeout,
                0.1,
                what="the Codex TUI's prompt",
            )
        return self

    def daemon(self) -> int | None:
        """The pid of the env's live shared daemon (``daemon.pid``), or None."""
        pid = (self.env.daemon_info() or {}).get("pid")
        with contextlib.suppress(psutil.Error, TypeError, ValueError):
            if isinstance(pid, int) and "--managed-daemon" in psutil.Process(pid).cmdline():
                return pid
        return None

    @property
    def pane(self) -> str:
        """The last opened pane's id (``%0``, ...)."""
        return self.panes[-1]

    @property
    def pid(self) -> int:
        """The last opened TUI's pid."""
        return self.pids[-1]

    def __enter__(self) -> TmuxCodex:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> list[int]:
        """End the tmux server and every process of the env (see :func:`end_codex_processes`)
        and remove the daemon's copy of the binary; returns the pids. Safe to call twice."""
        self.tmux("kill-server")
        ended = end_codex_processes(self.env)
        # The daemon's own copy of the binary (315 MB per home): a throw-away env's only.
        shutil.rmtree(self.env.codex_home.root / "packages", ignore_errors=True)
        sock_dir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        with contextlib.suppress(OSError):
            (sock_dir / self.socket_name).unlink()
        return ended

    # ---- keys and screen

    def send_keys(self, *keys: str, literal: bool = False, pane: str | None = None) -> None:
        target = pane or self.pane
        self.tmux("send-keys", "-t", target, *(["-l"] if literal else []), *keys)

    def type_prompt(self, text: str, timeout: float = 10.0, pane: str | None = None) -> None:
        """Type ``text``, wait for its echo, then press Enter in a call of its own (Codex takes
        an Enter that arrives with the text for part of a paste)."""
        self.send_keys(text, literal=True, pane=pane)
        probe = text.strip()[-20:]
        wait_until(lambda: probe in self.screen(pane), timeout, 0.1, what=f"echo of {probe!r}")
        # Not a wait for a condition: Codex's paste-burst window (an Enter inside it stays in
        # the composer), which shows nothing on screen.
        time.sleep(0.4)
        self.send_keys("Enter", pane=pane)

    def new_thread(self, prompt: str, pane: str | None = None) -> None:
        """``/new`` (its thread mark comes at once), then ``prompt`` in the new thread."""
        marks = self._thread_marks()
        self.type_prompt("/new", pane=pane)
        wait_until(lambda: self._thread_marks() > marks, 30, what="the new thread's mark")
        self.wait_for_screen(READY, pane=pane)
        self.type_prompt(prompt, pane=pane)

    def resume(self, first_prompt: str, pane: str | None = None) -> None:
        """``/resume`` through Codex's picker (the folder's threads by their first prompt,
        newest first, ``›`` on the selected one): ↓ onto ``first_prompt``'s line, Enter."""
        self.type_prompt("/resume", pane=pane)
        self.wait_for_screen("Resume a previous session", 30, pane=pane)

        def moved(before: str) -> bool:
            return self.screen(pane) != before

        for _ in range(20):
            shown = self.screen(pane)
            if any(ln.strip().startswith("›") and first_prompt in ln for ln in shown.splitlines()):
                break
            self.send_keys("Down", pane=pane)
            wait_until(functools.partial(moved, shown), 10, 0.05, what="the selection")
        else:
            raise TimeoutError(f"{first_prompt!r} not in the picker:\n{self.screen(pane)}")
        self.send_keys("Enter", pane=pane)
        self.wait_for_screen(READY, 30, pane=pane)

    def _thread_marks(self) -> int:
        folder = self.env.codex_home.root / "tui-thread-reference-capabilities"
        return len(list(folder.iterdir())) if folder.exists() else 0

    def plan_mode(self, pane: str | None = None, timeout: float = 10.0) -> None:
        """Shift+Tab until the footer says Plan mode (``request_user_input`` works only there)."""
        for _ in range(4):
            if re.search(r"[Pp]lan mode", self.screen(pane)):
                return
            self.send_keys("BTab", pane=pane)
            with contextlib.suppress(TimeoutError):
                self.wait_for_screen(r"[Pp]lan mode", 2.0, pane=pane)
                return
        raise TimeoutError("Plan mode not reached:\n" + self.screen(pane))

    def screen(self, pane: str | None = None) -> str:
        return self.tmux("capture-pane", "-p", "-t", pane or self.pane)

    def wait_for_screen(
        self, pattern: str | re.Pattern[str], timeout: float = 30.0, pane: str | None = None
    ) -> str:
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern

        def check() -> str | None:
            text = self.screen(pane)
            return text if regex.search(text) else None

        try:
            return wait_until(check, timeout, 0.1, what=f"screen to show {regex.pattern!r}")
        except TimeoutError as exc:
            raise TimeoutError(f"{exc}\n--- screen ---\n{self.screen(pane)}") from None
