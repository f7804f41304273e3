"""Harness for Claude Code's own background sessions (``claude --bg``, the agent view): start
them in a sealed :class:`~.claude_env.ClaudeEnv`, read them back, and clean up after them.

Why a harness of its own: a background session is not a child of whatever started it. ``claude
--bg`` asks a daemon (``claude daemon run``, reparented to init) to run it; the daemon keeps a
``claude bg-pty-host`` per session and pre-warmed spares, and its sockets live outside any temp
dir (``/tmp/cc-daemon-<uid>/<hash>/``, ``/tmp/cc-socks/<pid>.sock``). Killing a tmux server or
removing a temp dir leaves all of that running, so :meth:`BgClaude.close` finds every process of
the env (its ``CLAUDE_CONFIG_DIR`` in the process's environment, and their descendants) and
ends each by pid, then removes the sockets the config dir's files name.

Facts behind it: ``shared/reference/claude-code-facts.md`` §7b and docs/claude-code-behaviour.md.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

from pmux_widget.agents.claude.pidfiles import read_pid_file
from pmux_widget.core.signals import PidRecord

from .claude_env import ClaudeEnv, wait_until

__all__ = ["BgClaude", "env_processes"]

#: ``claude --bg`` prints ``backgrounded · <job>`` (the job id is the session id's first 8 hex)
_JOB = re.compile(r"backgrounded\s*·\s*([0-9a-f]{6,})")
_CONTROL = re.compile(r"control socket bound at (\S+)/control\.sock")


def env_processes(
    config_dir: str | os.PathLike[str], var: str = "CLAUDE_CONFIG_DIR"
) -> list[psutil.Process]:
    """Every process whose environment names ``config_dir`` as its ``var`` (Claude's: the
    daemon, pty hosts, workers, spares, views, attaches; Codex's ``CODEX_HOME``: the TUI, the
    app-server daemon and its helper), plus their descendants (a worker's tool commands),
    each once."""
    wanted = str(config_dir)
    found: dict[int, psutil.Process] = {}
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error, OSError):
            if proc.environ().get(var) == wanted:
                found[proc.pid] = proc
                for child in proc.children(recursive=True):
                    found[child.pid] = child
    found.pop(os.getpid(), None)
    return list(found.values())


class BgClaude:
    """Background sessions of one :class:`ClaudeEnv` (and the CLI binary ``cli``).

    The env is prepared on construction: 2.1.197 workers do not inherit ``ANTHROPIC_BASE_URL``
    from the daemon, so it goes into settings' ``env`` too (both versions then reach the
    scripted model). ``view()`` opens ``claude agents`` in a private tmux server (socket
    ``pmux-bg-<hex>``); everything ends in :meth:`close`.
    """

    def __init__(self, env: ClaudeEnv, cli: str | os.PathLike[str]) -> None:
        self.env = env
        self.cli = str(cli)
        self.socket = f"pmux-bg-{uuid.uuid4().hex[:8]}"
        self.view_pane: str | None = None
        env.merge_settings({"env": {"ANTHROPIC_BASE_URL": env.base_url}})

    # ---- the CLI

    def run(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        """``claude <args>`` in the project folder with the env's environment (plus ``env``)."""
        return subprocess.run(
            [self.cli, *args],
            cwd=self.env.cwd,
            env={**self.env.env(), **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )

    def start(self, prompt: str, name: str, permission_mode: str = "default", **env: str) -> str:
        """``claude --bg --permission-mode <mode> --name <name> <prompt>``; its job id.

        ``env`` adds to the environment (e.g. ``TMUX_PANE="%0"``: what a daemon started from
        a tmux pane inherits)."""
        proc = self.run(
            "--bg", "--permission-mode", permission_mode, "--name", name, prompt, env=env
        )
        found = _JOB.search(proc.stdout + proc.stderr)
        if proc.returncode != 0 or not found:
            raise RuntimeError(
                f"claude --bg failed ({proc.returncode}): {proc.stdout}{proc.stderr}"
            )
        return found.group(1)

    def agents(self) -> list[dict[str, Any]]:
        """``claude agents --json --all``: the CLI's own list (spares are not in it)."""
        proc = self.run("agents", "--json", "--all")
        data = json.loads(proc.stdout or "[]")
        if isinstance(data, dict):  # tolerate a wrapper object
            data = data.get("agents") or data.get("sessions") or []
        return [a for a in data if isinstance(a, dict)]

    def agent(self, job: str) -> dict[str, Any] | None:
        """The ``claude agents --json`` entry of ``job``, or None."""
        return next((a for a in self.agents() if str(a.get("id", "")).startswith(job)), None)

    def stop(self, job: str) -> subprocess.CompletedProcess[str]:
        return self.run("stop", job)

    def rm(self, job: str) -> subprocess.CompletedProcess[str]:
        return self.run("rm", job)

    # ---- files

    def worker(self, job: str) -> tuple[int, dict[str, Any]] | None:
        """The live worker of ``job``: (pid, PID file). A PID file whose process is gone (a
        killed worker's) is skipped."""
        for pid, data in sorted(self.env.pid_files().items()):
            if data.get("jobId") == job and psutil.pid_exists(pid):
                return pid, data
        return None

    def wait_status(
        self, job: str, status: str, timeout: float = 60.0
    ) -> tuple[int, dict[str, Any]]:
        """Wait until ``job``'s live worker's PID file says ``status``; (pid, PID file)."""

        def check() -> tuple[int, dict[str, Any]] | None:
            found = self.worker(job)
            return found if found and found[1].get("status") == status else None

        return wait_until(check, timeout=timeout, what=f"job {job} PID file status {status}")

    def spares(self) -> list[int]:
        """Pids of the live pre-warmed spare workers (as pmux-widget's PID-file reader tells)."""
        found = []
        for path in sorted(self.env.sessions_dir.glob("*.json")):
            record = read_pid_file(path)
            if isinstance(record, PidRecord) and record.spare and psutil.pid_exists(record.pid):
                found.append(record.pid)
        return found

    def wait_ready(self, timeout: float = 60.0) -> None:
        """If a daemon runs, wait until it has a spare worker up: a job dispatched to a spare
        still booting was seen to hang on 2.1.197 under load (no hook, no status, ever)."""
        if self.daemon_pid() is not None:
            wait_until(self.spares, timeout=timeout, what="a spare worker of the daemon")

    def daemon_pid(self) -> int | None:
        """The daemon's pid, from the config dir's ``daemon.lock`` (None: none started)."""
        with contextlib.suppress(OSError, ValueError):
            pid = int(json.loads((self.env.config_dir / "daemon.lock").read_text())["pid"])
            return pid if psutil.pid_exists(pid) else None
        return None

    # ---- the agent view

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=10,
        ).stdout

    def view(self, timeout: float = 60.0) -> str:
        """Open ``claude agents`` in a pane of a private tmux server; its pane id. The env's
        environment goes in through ``env``, so the view (and a daemon it starts) carries the
        pane's ``TMUX_PANE`` as a real user's would."""
        env = self.env.env()
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cwd, cli = shlex.quote(str(self.env.cwd)), shlex.quote(self.cli)
        command = f"cd {cwd} && exec env {exports} {cli} agents"
        self.tmux("new-session", "-d", "-x", "200", "-y", "50", "-s", "view", command)
        pane = wait_until(
            lambda: self.tmux("list-panes", "-t", "view", "-F", "#{pane_id}").strip(),
            timeout=10,
            what="the agent view's pane",
        )
        self.view_pane = pane
        wait_until(lambda: self.view_screen().strip(), timeout=timeout, what="the agent view drawn")
        return pane

    def pane_env(self) -> dict[str, str]:
        """``TMUX`` and ``TMUX_PANE`` as a shell in the agent view's pane has them: what a
        ``claude --bg`` typed there (and the daemon it may start) inherits."""
        socket_path, server_pid = self.tmux(
            "display-message", "-p", "-t", self.view_pane or "view", "#{socket_path} #{pid}"
        ).split()
        return {"TMUX": f"{socket_path},{server_pid},0", "TMUX_PANE": self.view_pane or ""}

    def view_screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.view_pane or "view")

    def view_pid(self) -> int | None:
        """The agent view's pid (the pane's process: the CLI itself, through ``exec``)."""
        out = self.tmux("list-panes", "-t", "view", "-F", "#{pane_pid}").strip()
        return int(out) if out.isdigit() else None

    # ---- clean-up

    def processes(self) -> list[psutil.Process]:
        """Every process of this env still running (see :func:`env_processes`)."""
        return env_processes(self.env.config_dir)

    def sockets(self) -> list[Path]:
        """The daemon's socket folder and the workers' messaging sockets, as the config dir's
        files name them (they live outside it, under /tmp)."""
        found: list[Path] = []
        with contextlib.suppress(OSError):
            for match in _CONTROL.finditer((self.env.config_dir / "daemon.log").read_text()):
                found.append(Path(match.group(1)))
        for data in self.env.pid_files().values():
            sock = data.get("messagingSocketPath")
            if isinstance(sock, str) and sock.startswith("/tmp/cc-socks/"):
                found.append(Path(sock))
        return found

    def close(self, timeout: float = 10.0) -> None:
        """End the agent view's tmux server and every process of this env, by pid (TERM, then
        KILL), and remove their sockets under /tmp. Safe to call twice."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
        # The daemon first (it would respawn what we kill), then all the rest; repeat, since a
        # spare can be spawned between the listing and the kill.
        deadline = time.monotonic() + timeout
        while True:
            procs = self.processes()
            if not procs:
                break
            for sig in (signal.SIGKILL,) if time.monotonic() > deadline else (signal.SIGTERM,):
                for proc in sorted(procs, key=lambda p: "daemon" not in _cmdline(p)):
                    with contextlib.suppress(psutil.Error, OSError):
                        proc.send_signal(sig)
            _gone, alive = psutil.wait_procs(procs, timeout=1.0)
            if time.monotonic() > deadline + 5:
                raise RuntimeError(f"processes outlived clean-up: {[p.pid for p in alive]}")
        for path in self.sockets():
            with contextlib.suppress(OSError):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink()

    def __enter__(self) -> BgClaude:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cmdline(proc: psutil.Process) -> str:
    try:
        return " ".join(proc.cmdline())
    except (psutil.Error, OSError):
        return ""
