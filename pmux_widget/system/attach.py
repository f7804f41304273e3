"""A background session's own host, on a terminal of ours: ``claude attach <job>`` in a
private tmux server, and the CLI's other background commands (``claude stop``, ``claude rm``).

A Claude Code background session (``claude --bg``) runs under the CLI's daemon, in a PTY that
only the daemon's ``bg-pty-host`` holds: no tmux pane or JupyterLab terminal of the user's
holds it, and its socket protocol is the CLI's own. The CLI's way in is ``claude attach
<job>``, a TUI client that draws the session's screen and forwards keys to it. So an action
opens one here, in a tmux server of its own (``tmux -S`` on a socket in a fresh 0700 folder:
outside ``/tmp/tmux-<uid>/``, so no poll of the user's servers ever lists it, and no other
process can type into it), reads and types through ``system.keys`` as for any pane, then
detaches with Ctrl+Z: the client exits and the session goes on running (observed on 2.1.197
and 2.1.332; ``←`` would open the agent view instead). The server ends with its only pane.

Its holder is the process that answers through it (a hub, or a one-shot action): the pid in
the folder's ``holder`` file. A watchdog inside the server (``run-shell -b``) ends the server
once that process is gone, so a hub killed without its ``stop()`` (a killed kernel) leaves
no attach behind; a hub that takes over another's attach names itself with :func:`hold`.

The binary is the worker's own (``/proc/<pid>/exe``): a client of another version might not
speak to that daemon. The environment is this process's, minus ``TMUX`` / ``TMUX_PANE`` (the
client is in no pane of the user's), with ``CLAUDE_CONFIG_DIR`` set to the config dir the hub
watches (the daemon's sockets are found from it) and ``HOME`` the worker's.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from pmux_widget.core.model import TmuxLocation

from . import keys
from .processes import pid_alive
from .tmux import PaneInfo, tmux_available

__all__ = [
    "ATTACH_COLS",
    "ATTACH_ROWS",
    "AttachError",
    "Opened",
    "attach_alive",
    "attached",
    "claude_binary",
    "cli_environment",
    "close_attach",
    "hold",
    "open_attach",
    "run_cli",
]

#: The size of the attach's terminal: the daemon's own PTY size (``bg-pty-host <sock> 200
#: 50``), so attaching does not reflow the session's screen.
ATTACH_COLS = 200
ATTACH_ROWS = 50
#: How long the client may take to exit after Ctrl+Z before its server is killed.
DETACH_TIMEOUT_S = 3.0
#: How often the watchdog looks at the holder (seconds: an attach outlives it by at most this).
WATCHDOG_S = 2
# Run by the server itself (``run-shell -b``), so it lives exactly as long as the server
# needs watching. ``$1`` is the folder. It ignores the hang-up and TERM the server's end may
# send its jobs, so the folder is removed whoever ended it. A holder found dead is checked
# against the file once more: a takeover (hold) replaces the file before the old holder
# exits, so a watchdog that read the old pid just before the replace must not end the attach
# its new holder holds (seen under load: the old holder's death fell between the read and
# the check).
_WATCHDOG = """trap '' HUP TERM
while [ -S "$1/tmux.sock" ]; do
  holder=$(cat "$1/holder" 2>/dev/null)
  case $holder in ''|*[!0-9]*) break ;; esac
  if ! kill -0 "$holder" 2>/dev/null; then
    [ "$(cat "$1/holder" 2>/dev/null)" = "$holder" ] && break
    continue
  fi
  sleep {every}
done
[ -S "$1/tmux.sock" ] && tmux -S "$1/tmux.sock" kill-server
rm -rf "$1"
"""
_POLL_S = 0.02


class AttachError(Exception):
    """The CLI's host could not be reached: ``reason`` says why (nothing was typed)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def claude_binary(worker_pid: int) -> str | None:
    """The worker's own executable, else ``claude`` on PATH (None: neither)."""
    with contextlib.suppress(OSError):
        exe = os.readlink(f"/proc/{worker_pid}/exe")
        if not exe.endswith(" (deleted)") and os.access(exe, os.X_OK):
            return exe
    return shutil.which("claude")


def _environ_of(pid: int) -> dict[str, str]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    out: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep:
            out[name.decode(errors="replace")] = value.decode(errors="replace")
    return out


def cli_environment(config_dir: Path, worker_pid: int | None) -> dict[str, str]:
    """The environment for ``claude attach|stop|rm`` against the daemon of ``config_dir``."""
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["CLAUDE_CONFIG_DIR"] = str(config_dir)
    if worker_pid is not None:
        home = _environ_of(worker_pid).get("HOME")
        if home:
            env["HOME"] = home
    env.setdefault("TERM", "xterm-256color")
    return env


def run_cli(
    binary: str, args: list[str], env: Mapping[str, str], timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """``claude <args>`` with no terminal (``stop``, ``rm``): its output and exit code."""
    return subprocess.run(
        [binary, *args],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


class _Server:
    """One private tmux server (a socket in its own 0700 folder)."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = (
            folder if folder is not None else Path(tempfile.mkdtemp(prefix="pmux-attach-"))
        )
        self.socket = str(self.folder / "tmux.sock")
        self.config = self.folder / "tmux.conf"
        # No status line (the pane gets every row); a pane whose client exited stays, so its
        # last words can be read and the exit is seen without a race.
        if folder is None:
            self.config.write_text("set -g status off\nset -g remain-on-exit on\n")

    @classmethod
    def existing(cls, folder: Path) -> _Server:
        """A server started before (by this process or another of the user's)."""
        return cls(folder)

    def tmux(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        result = subprocess.run(
            ["tmux", "-S", self.socket, "-f", str(self.config), *args],
            env=dict(env) if env is not None else None,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if result.returncode != 0:
            raise AttachError(f"tmux {args[0]} failed: {result.stderr.strip()}")
        return result.stdout

    def watch(self) -> None:
        """Start the server's watchdog (:data:`_WATCHDOG`) on its ``holder`` file."""
        script = self.folder / "watchdog.sh"
        script.write_text(_WATCHDOG.replace("{every}", str(WATCHDOG_S)))
        self.tmux(
            "run-shell", "-b", f"/bin/sh {shlex.quote(str(script))} {shlex.quote(str(self.folder))}"
        )

    def close(self) -> None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run(
                ["tmux", "-S", self.socket, "kill-server"],
                capture_output=True,
                timeout=5,
                check=False,
            )
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Opened:
    """One ``claude attach`` of ours: its private server's folder and socket, pane and
    client pid (enough for another process of the user's to reach it, or to end it)."""

    folder: str
    socket: str
    pane_id: str
    client_pid: int

    @property
    def pane(self) -> PaneInfo:
        return PaneInfo(
            socket=self.socket,
            shell_pid=self.client_pid,
            location=TmuxLocation(session="attach", window="0", pane=self.pane_id, title=""),
            current_command="claude",
            current_path="",
        )


def open_attach(
    binary: str, job: str, env: Mapping[str, str], holder_pid: int | None = None
) -> Opened:
    """Start ``claude attach <job>`` in a private tmux server of its own (not waiting for it
    to draw); :func:`close_attach` ends it, and so does the death of its holder (this
    process unless ``holder_pid``)."""
    if not tmux_available():
        raise AttachError(
            "tmux is not installed: a background session is answered through `claude attach` "
            "in a private tmux server"
        )
    server = _Server()
    try:
        out = server.tmux(
            "new-session",
            "-d",
            "-x",
            str(ATTACH_COLS),
            "-y",
            str(ATTACH_ROWS),
            "-s",
            "attach",
            "-P",
            "-F",
            "#{pane_pid}\t#{pane_id}",
            "--",
            binary,
            "attach",
            job,
            env=env,
        )
    except BaseException:
        server.close()
        raise
    pid_text, _, pane_id = out.strip().partition("\t")
    if not pid_text.isdigit() or not pane_id.startswith("%"):
        server.close()
        raise AttachError(f"tmux did not say which pane runs the attach ({out.strip()!r})")
    opened = Opened(str(server.folder), server.socket, pane_id, int(pid_text))
    try:
        hold(opened, holder_pid if holder_pid is not None else os.getpid())
        server.watch()
    except BaseException:
        close_attach(opened)
        raise
    return opened


def hold(opened: Opened, pid: int) -> None:
    """Make ``pid`` the attach's holder: its server ends once that process is gone."""
    folder = Path(opened.folder)
    tmp = folder / f".holder.{os.getpid()}"
    tmp.write_text(f"{pid}\n")
    os.replace(tmp, folder / "holder")


def close_attach(opened: Opened) -> None:
    """Detach (Ctrl+Z), end the server, then the client by its pid if it lingers."""
    server = _Server.existing(Path(opened.folder))
    # a claim read from a file may outlive its client: its pid may be another process's now
    ours = _is_attach_client(opened.client_pid)
    if ours:
        _detach(server, opened.pane_id, opened.client_pid)
    server.close()
    if ours:
        _end(opened.client_pid)


def _is_attach_client(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = handle.read().split(b"\0")
    except OSError:
        return False
    return b"attach" in argv


def attach_alive(opened: Opened) -> bool:
    """Its client still runs and its server's socket is there."""
    return pid_alive(opened.client_pid) and Path(opened.socket).exists()


@contextlib.contextmanager
def attached(binary: str, job: str, env: Mapping[str, str]) -> Iterator[PaneInfo]:
    """``claude attach <job>`` running in a private tmux pane, for the block; detached (Ctrl+Z)
    and its server gone after it, whatever happened inside."""
    opened = open_attach(binary, job, env)
    try:
        yield opened.pane
    finally:
        close_attach(opened)


def client_running(pane: PaneInfo) -> bool:
    """The attach client still runs in its pane (it exits when the session ends)."""
    return pid_alive(pane.shell_pid)


def _detach(server: _Server, pane_id: str, client_pid: int) -> None:
    """Ctrl+Z: the client exits, the session runs on. Its server goes after, in any case."""
    pane = PaneInfo(server.socket, client_pid, TmuxLocation("attach", "0", pane_id, ""), "", "")
    if not pid_alive(client_pid):
        return
    try:
        keys.send_keys(pane, "C-z")
    except Exception:  # a dead server or pane: nothing left to detach
        return
    deadline = time.monotonic() + DETACH_TIMEOUT_S
    while pid_alive(client_pid) and time.monotonic() < deadline:
        time.sleep(_POLL_S)


def _end(client_pid: int) -> None:
    """The client of ours that outlived its server (it detaches on Ctrl+Z and on its terminal's
    hang-up; a loaded machine can be slow to): TERM, then KILL, by its pid."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not pid_alive(client_pid):
            return
        with contextlib.suppress(OSError):
            os.kill(client_pid, sig)
        deadline = time.monotonic() + 1.0
        while pid_alive(client_pid) and time.monotonic() < deadline:
            time.sleep(_POLL_S)
