"""Starting a new Claude Code session: the command line, and a tmux window running it (a
JupyterLab terminal is opened by the server extension: ``pmux_widget.jupyter.terminals``), or
a background session of the CLI's own daemon (``claude --bg``).

The CLI is ``$PMUX_WIDGET_CLAUDE`` when set (a path, or a command line: tests point it at a
pinned CLI), else ``claude`` from ``PATH``. The tmux server is the user's default one, or
``$PMUX_WIDGET_TMUX_SOCKET`` (a socket name, as ``tmux -L``).

"Attach in a terminal" outside JupyterLab is a tmux window too (:func:`attach_in_tmux`): one
per background job, found again by its window option ``@pmux-attach``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import threading
from pathlib import Path

import libtmux

from pmux_widget.core.agents import AGENTS, DEFAULT_AGENT, FACTS, Agent, agent_of
from pmux_widget.core.model import TmuxWindow

__all__ = [
    "ATTACH_OPTION",
    "ATTACH_SESSION",
    "PERMISSION_MODES",
    "LaunchError",
    "agent_command",
    "attach_command",
    "attach_in_tmux",
    "check_request",
    "start_in_background",
    "start_in_tmux",
]

#: ``claude --permission-mode``'s values (the CLI refuses others).
PERMISSION_MODES = ("default", "acceptEdits", "plan", "auto", "bypassPermissions")
#: A first prompt longer than this is refused (it goes on the command line).
MAX_PROMPT = 10_000
#: Where a new session can run.
WHERE = ("terminal", "tmux", "background")
#: How long ``claude --bg`` may take (~0.4 s; seconds when it starts the daemon first).
BACKGROUND_TIMEOUT_S = 60.0
#: ``claude --bg`` says ``backgrounded · <job>`` (then ``· <name>``).
_BACKGROUNDED = re.compile(r"backgrounded\s*·\s*([0-9A-Za-z_-]+)")


class LaunchError(Exception):
    """A session cannot be started as asked (``reason`` says why)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def check_request(
    cwd: object,
    prompt: object,
    permission_mode: object,
    where: object,
    agent: object = DEFAULT_AGENT,
) -> str:
    """The reason a request to start a session is bad, or "" when it is good."""
    known = agent_of(agent)
    if known is None:
        return f'"agent" must be one of {", ".join(AGENTS)}'
    facts = FACTS[known]
    if where == "background" and not facts.background_sessions:
        return f"{facts.title} has no background sessions: start it in a terminal or tmux"
    if permission_mode is not None and not facts.permission_modes:
        return f'"permission_mode" is Claude Code\'s: {facts.title} takes its own from its config'

    if not isinstance(cwd, str) or not cwd:
        return '"cwd" must be a folder\'s path'
    if not Path(cwd).expanduser().is_dir():
        return f"no folder {cwd}"
    if prompt is not None and (not isinstance(prompt, str) or len(prompt) > MAX_PROMPT):
        return f'"prompt" must be a text of at most {MAX_PROMPT} characters'
    if isinstance(prompt, str) and any(ord(ch) < 32 and ch not in "\n\t" for ch in prompt):
        return '"prompt" has control characters'
    if permission_mode is not None and permission_mode not in PERMISSION_MODES:
        return f'"permission_mode" must be one of {", ".join(PERMISSION_MODES)}'
    if where not in WHERE:
        return '"where" must be "terminal", "tmux" or "background"'
    if where == "background" and not (isinstance(prompt, str) and prompt.strip()):
        return "a background session needs a prompt (claude --bg starts with one)"
    return ""


def agent_command(
    agent: Agent, prompt: str | None = None, permission_mode: str | None = None
) -> list[str]:
    """The argv that starts an interactive session of ``agent`` (with its first prompt, if
    any; ``permission_mode`` only for an agent that takes one: see check_request): its
    program's variable (``$PMUX_WIDGET_CLAUDE``, ``$PMUX_WIDGET_CODEX``) split as a shell
    would, else its program from ``PATH``."""
    facts = FACTS[agent]
    base = os.environ.get(facts.program_env, "").strip()
    argv = shlex.split(base) if base else [facts.program]
    if permission_mode and facts.permission_modes:
        argv += ["--permission-mode", permission_mode]
    if prompt:
        argv.append(prompt)
    return argv


def start_in_tmux(cwd: str, argv: list[str]) -> str:
    """A new tmux window (in the first session of the server, else a new session ``claude``)
    in ``cwd`` running ``argv``; its pane id (``%N``)."""
    socket = os.environ.get("PMUX_WIDGET_TMUX_SOCKET") or None
    server = libtmux.Server(socket_name=socket)
    command = shlex.join(argv)
    try:
        sessions = server.sessions if server.is_alive() else []
    except Exception:
        sessions = []
    if sessions:
        result = server.cmd(
            "new-window", "-P", "-F", "#{pane_id}", "-t", f"{sessions[0].session_id}:",
            "-c", cwd, command,
        )  # fmt: skip
    else:
        result = server.cmd(
            "new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "claude", "-c", cwd, command
        )
    if result.stderr or not result.stdout:
        raise LaunchError(f"tmux could not open a window: {' '.join(result.stderr)}")
    return str(result.stdout[0]).strip()


def start_in_background(
    cwd: str, prompt: str, permission_mode: str | None = None, name: str | None = None
) -> str:
    """``claude --bg`` in ``cwd``: a session of the CLI's daemon; its job id.

    The daemon keeps the environment of whatever started it, ``TMUX_PANE`` included (its
    workers' hooks would all name that pane): it goes without ``TMUX`` and ``TMUX_PANE``."""
    argv = agent_command("claude", None, permission_mode)
    argv.append("--bg")
    if name:
        argv += ["--name", name]
    argv.append(prompt)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    try:
        result = subprocess.run(
            argv,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=BACKGROUND_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise LaunchError(f"claude --bg did not run ({exc})") from None
    said = result.stdout + result.stderr
    found = _BACKGROUNDED.search(said)
    if result.returncode != 0 or found is None:
        tail = " | ".join(said.strip().splitlines()[-3:]) or f"exit code {result.returncode}"
        raise LaunchError(f"claude --bg failed: {tail}")
    return found.group(1)


#: The window option naming the job a window attaches (a window's name is the user's to change).
ATTACH_OPTION = "@pmux-attach"
#: The session made for attach windows when no tmux server runs.
ATTACH_SESSION = "pmux-attach"
#: A new detached session's size: the daemon's own PTY's (``bg-pty-host <sock> 200 50``), so
#: the attach draws the session as it is until a client of the user's sets its own size.
ATTACH_COLS, ATTACH_ROWS = 200, 50
_attaching = threading.Lock()
#: How long one tmux command may take.
TMUX_TIMEOUT_S = 10.0


def attach_command(binary: str, job: str, config_dir: Path, home: str | None = None) -> list[str]:
    """``claude attach <job>`` with the config dir (and the worker's HOME) named: the window's
    environment is the tmux server's, which may have neither."""
    settings = [f"CLAUDE_CONFIG_DIR={config_dir}"] + ([f"HOME={home}"] if home else [])
    return ["env", *settings, binary, "attach", job]


def _tmux(*args: str) -> subprocess.CompletedProcess[str]:
    """One tmux command on the user's server (``$PMUX_WIDGET_TMUX_SOCKET``, else the default
    one). Without ``TMUX``/``TMUX_PANE``: a process started from a pane (an agent view's daemon,
    a kernel run in tmux) would otherwise name that pane's server, and its pane, to tmux."""
    socket = os.environ.get("PMUX_WIDGET_TMUX_SOCKET") or None
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    argv = ["tmux", *(["-L", socket] if socket else []), *args]
    try:
        return subprocess.run(
            argv, env=env, capture_output=True, text=True, timeout=TMUX_TIMEOUT_S,
            stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise LaunchError(f"tmux did not run ({exc})") from None


def _window_of(job: str) -> tuple[str, str, bool] | None:
    """The window (id, ``session:index``, its pane dead) already attaching ``job``, if any."""
    found = _tmux(
        "list-windows", "-a", "-F",
        f"#{{window_id}}\t#{{session_name}}:#{{window_index}}\t#{{{ATTACH_OPTION}}}\t#{{pane_dead}}",
    )  # fmt: skip
    if found.returncode != 0:  # no server: nothing open
        return None
    for line in found.stdout.splitlines():
        window_id, target, named, dead = [*line.split("\t"), "", "", "", ""][:4]
        if named == job:
            return window_id, target, dead == "1"
    return None


def attach_in_tmux(job: str, argv: list[str], cwd: str, label: str) -> TmuxWindow:
    """A tmux window running ``argv`` (``claude attach <job>``), brought to the front: the one
    that attaches ``job`` already (restarted if its client exited and the pane stayed), else a
    new one in the server's first session, else in a new detached session ``pmux-attach``."""
    if shutil.which("tmux") is None:
        raise LaunchError("tmux is not installed: no window to attach in")
    # one at a time: a second click while the first window is being made (its option not set
    # yet) would open another
    with _attaching:
        return _attach_in_tmux(job, argv, cwd, label)


def _attach_in_tmux(job: str, argv: list[str], cwd: str, label: str) -> TmuxWindow:
    socket = os.environ.get("PMUX_WIDGET_TMUX_SOCKET") or None
    command = shlex.join(argv)
    open_already = _window_of(job)
    if open_already is not None:
        window_id, target, dead = open_already
        if dead:
            _tmux("respawn-pane", "-k", "-t", window_id, command)
        _front(window_id)
        return TmuxWindow(target=target, socket=socket, opened=False)
    listed = _tmux("list-sessions", "-F", "#{session_id}")
    sessions = listed.stdout.split() if listed.returncode == 0 else []
    name = f"attach {label}"[:60]
    out = "#{window_id}\t#{session_name}:#{window_index}"
    if sessions:
        made = _tmux(
            "new-window", "-d", "-P", "-F", out, "-t", f"{sessions[0]}:", "-n", name, "-c", cwd,
            command,
        )  # fmt: skip
    else:
        made = _tmux(
            "new-session", "-d", "-P", "-F", out, "-s", ATTACH_SESSION, "-n", name, "-c", cwd,
            "-x", str(ATTACH_COLS), "-y", str(ATTACH_ROWS), command,
        )  # fmt: skip
    window_id, _, target = made.stdout.strip().partition("\t")
    if made.returncode != 0 or not target:
        raise LaunchError(f"tmux could not open a window: {made.stderr.strip() or 'no answer'}")
    _tmux("set-option", "-w", "-t", window_id, ATTACH_OPTION, job)
    _front(window_id)
    return TmuxWindow(target=target, socket=socket, opened=True)


def _front(window_id: str) -> None:
    """The window becomes its session's current one (what an attached client shows)."""
    _tmux("select-window", "-t", window_id)
