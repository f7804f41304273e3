"""Acting on Claude Code's background sessions (``claude --bg``): through the CLI's own host.

A background session's Claude runs under the CLI's daemon, in no pane or terminal of the
user's (whatever ``TMUX_PANE`` it inherited). Approve, deny, interrupt and send therefore go
through ``claude attach <job>`` on a terminal of ours (``system.attach``), with the very checks
and keys of a tmux pane (``runtime.actions``), and detach after. Stop and remove are the CLI's
own commands, ``claude stop <job>`` and ``claude rm <job>``, for background sessions only.

Which job: the live worker's PID file (``kind: "bg"``, ``jobId``) names it, and the same file
proves the worker runs this very session; a session whose worker is gone (stopped, or
exited) keeps its job in ``Session.background``, which is enough for ``claude rm`` (and for
``claude stop``: the CLI answers for a job it knows).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pmux_widget.agents.claude.pidfiles import MAX_PID_FILE
from pmux_widget.agents.claude.screen import Screen, parse_screen
from pmux_widget.core.model import ActionName, Session
from pmux_widget.system import attach, keys
from pmux_widget.system.keys import Target
from pmux_widget.system.processes import pid_alive
from pmux_widget.system.tmux import PaneInfo

from .action_outcome import ActionError

__all__ = [
    "BACKGROUND_ONLY",
    "InBackground",
    "Worker",
    "attached",
    "job_of",
    "run_cli_action",
    "until_reacted",
    "worker_from_pid_file",
]

#: The actions only a background session has (the CLI's own commands, no keys).
BACKGROUND_ONLY: frozenset[str] = frozenset({"stop", "remove"})
#: How long ``claude stop`` / ``claude rm`` may take (a CLI start, then the daemon's answer).
CLI_TIMEOUT_S = 60.0
#: A job id as the CLI prints it (the session id's first 8 hex, or any short id).
_JOB = re.compile(r"^[0-9A-Za-z_-]{4,64}$")


@dataclass(frozen=True, slots=True)
class Worker:
    """A live background worker, from its PID file: its pid, job and name."""

    pid: int
    job: str
    name: str | None


class InBackground(Exception):
    """The session's Claude is a background worker: act through ``claude attach``."""

    def __init__(self, worker: Worker) -> None:
        super().__init__(worker.job)
        self.worker = worker


def worker_from_pid_file(path: Path) -> Worker | None:
    """The worker a PID file describes when it is a background one (``kind: "bg"`` with a
    ``jobId``); None for any other session."""
    try:
        with open(path, "rb") as handle:
            data: Any = json.loads(handle.read(MAX_PID_FILE + 1) or b"null")
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("kind") != "bg":
        return None
    pid, job, name = data.get("pid"), data.get("jobId"), data.get("name")
    if not isinstance(pid, int) or not isinstance(job, str) or not _JOB.match(job):
        return None
    return Worker(pid, job, name if isinstance(name, str) else None)


def job_of(session: Session, claude_dir: Path) -> str | None:
    """The session's job: its live worker's PID file, else what the session remembers."""
    if session.pid is not None:
        worker = worker_from_pid_file(claude_dir / "sessions" / f"{session.pid}.json")
        if worker is not None:
            return worker.job
    background = session.background
    return background.job if background is not None else None


def _job_from_cli(session: Session, claude_dir: Path) -> str | None:
    """The job the CLI lists for this session (``claude agents --json --all``): for a session
    whose worker is gone and whose job nothing here remembers. A user's explicit Stop or
    Remove only, never a poll."""
    try:
        result = attach.run_cli(
            _binary(claude_dir, None),
            ["agents", "--json", "--all"],
            attach.cli_environment(claude_dir, None),
            timeout=CLI_TIMEOUT_S,
        )
        listed = json.loads(result.stdout or "[]")
    except (OSError, ValueError, ActionError, subprocess.SubprocessError):
        return None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and entry.get("sessionId") == session.session_id:
            job = entry.get("id")
            if isinstance(job, str) and _JOB.match(job):
                return job
    return None


#: The binary last found running for each config dir: a stopped session's ``claude rm`` may
#: come when no worker or daemon of that CLI runs any more.
_seen_binaries: dict[Path, str] = {}


def _binary(claude_dir: Path, worker_pid: int | None) -> str:
    """The CLI that speaks to this daemon: the worker's own, else the daemon's, else the one
    seen last for this config dir, else ``$PMUX_WIDGET_CLAUDE``, else ``claude`` on PATH."""
    candidates = [worker_pid] if worker_pid is not None else []
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
        lock = json.loads((claude_dir / "daemon.lock").read_text())
        candidates.append(int(lock["pid"]))
    for pid in candidates:
        if pid_alive(pid):
            found = attach.claude_binary(pid)
            if found:
                _seen_binaries[claude_dir] = found
                return found
    seen = _seen_binaries.get(claude_dir)
    if seen is not None and os.access(seen, os.X_OK):
        return seen
    configured = shlex.split(os.environ.get("PMUX_WIDGET_CLAUDE", ""))
    if configured and os.access(configured[0], os.X_OK):
        return configured[0]
    found = attach.claude_binary(0)
    if found is None:
        raise ActionError("no `claude` binary found to reach the background session's host")
    return found


@contextlib.contextmanager
def attached(claude_dir: Path, worker: Worker) -> Iterator[PaneInfo]:
    """``claude attach <job>`` on a private pane for the block, detached after."""
    binary = _binary(claude_dir, worker.pid)
    env = attach.cli_environment(claude_dir, worker.pid)
    try:
        with attach.attached(binary, worker.job, env) as pane:
            yield pane
    except attach.AttachError as error:
        raise ActionError(f"background job {worker.job}: {error.reason}") from None


def run_cli_action(
    claude_dir: Path,
    session: Session,
    action: Literal["stop", "remove"],
    record: Callable[[str, ActionName], None] | None = None,
) -> str:
    """``claude stop <job>`` or ``claude rm <job>``: what the CLI said. Refused (ActionError)
    for a session that is not a background one, or when the CLI says no."""
    command = "stop" if action == "stop" else "rm"
    job = job_of(session, claude_dir) or _job_from_cli(session, claude_dir)
    if job is None:
        raise ActionError(
            f"{session.name} is not a Claude Code background session: only those can be "
            f"{'stopped' if action == 'stop' else 'removed'} (claude {command} works on jobs)"
        )
    if action == "stop" and (session.ended or not session.running):
        raise ActionError(f"{session.name} is not running: nothing to stop")
    binary = _binary(claude_dir, session.pid)
    env = attach.cli_environment(claude_dir, session.pid)
    if record is not None:
        record(session.session_id, action)
    try:
        result = attach.run_cli(binary, [command, job], env, timeout=CLI_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ActionError(f"claude {command} {job} did not run ({exc})") from None
    said = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise ActionError(f"claude {command} {job}: {said}")
    return said or f"{action} {job}"


def env_for(claude_dir: Path, pid: int | None) -> dict[str, str]:
    """The environment the CLI's background commands run with (for callers that start one)."""
    return attach.cli_environment(claude_dir, pid if pid is not None and pid_alive(pid) else None)


def claude_for(claude_dir: Path, pid: int | None = None) -> str:
    """The ``claude`` binary for this config dir's daemon (see :func:`_binary`)."""
    return _binary(claude_dir, pid)


#: How long an attach stays after the deciding key, for the screen to show the CLI took it
#: (detaching sooner could cut the key off on its way to the session).
REACTED_TIMEOUT_S = 2.0

#: What the screen shows once the CLI took the action's last key.
_REACTED: dict[ActionName, Callable[[Screen], bool]] = {
    "approve": lambda s: (s.dialog is None or s.dialog.kind != "permission") and s.plan is None,
    "deny": lambda s: (s.dialog is None or s.dialog.kind != "permission") and s.plan is None,
    "answer": lambda s: s.question is None,
    "interrupt": lambda s: not s.busy and not s.asking,
    "send": lambda s: s.busy or s.prompt_text == "",
}


def until_reacted(pane: Target, name: ActionName) -> None:
    """Wait (bounded) until the screen shows the CLI took the keys; never raises."""
    reacted = _REACTED.get(name)
    if reacted is None:
        return
    deadline = time.monotonic() + REACTED_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if reacted(parse_screen(keys.capture(pane))):
                return
        except OSError:
            return
        time.sleep(0.02)
