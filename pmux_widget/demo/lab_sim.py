"""The demo's ``claude`` in JupyterLab terminals: a simulated session (:mod:`.sim_claude`) in the
folder it is started in.

``make demo`` points its JupyterLab server's ``PMUX_WIDGET_CLAUDE`` at :func:`write_wrapper`'s
script, so the server's ``POST pmux/api/sessions/new`` (the panel's "New session", and the
demo's own first terminal session) starts a simulated session in a new JupyterLab terminal
rather than a real CLI (none in the demo: no account, no network). ``python -m
pmux_widget.demo.lab_sim [claude's arguments…]`` writes the session's config (the demo's
homes from the environment, the current folder, the permission-dialog script) and becomes
that session's process (``exec``: the terminal's shell is its parent, as with ``claude``).
The first prompt and permission mode ``claude`` would take are ignored.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import sys
import tempfile
from pathlib import Path

__all__ = ["main", "write_wrapper"]

#: The persona of a session started in a terminal: permission dialogs, so Approve has work.
SCRIPT = "script_tests"
MODEL = "claude-opus-4-8"


def write_wrapper(bin_dir: Path) -> Path:
    """``bin_dir/claude``: runs this module with this interpreter and this checkout."""
    root = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "claude"
    script.write_text(
        "#!/bin/sh\n"
        "# pmux-widget demo: a simulated Claude Code session in this folder\n"
        f"PYTHONPATH={shlex.quote(path)} exec {shlex.quote(sys.executable)} "
        '-m pmux_widget.demo.lab_sim "$@"\n'
    )
    script.chmod(0o755)
    return script


def main() -> int:
    claude, home = os.environ.get("CLAUDE_CONFIG_DIR"), os.environ.get("PMUX_WIDGET_HOME")
    if not claude or not home:
        print("lab_sim: needs the demo's CLAUDE_CONFIG_DIR and PMUX_WIDGET_HOME", file=sys.stderr)
        return 2
    configs = Path(home) / "demo-terminals"
    configs.mkdir(parents=True, exist_ok=True)
    config = {
        "claude_dir": claude,
        "home": home,
        "cwd": os.getcwd(),
        "model": MODEL,
        "script": SCRIPT,
        "speed": 1.0,
        "seed": secrets.randbits(32),
    }
    fd, name = tempfile.mkstemp(prefix="session-", suffix=".json", dir=configs)
    with os.fdopen(fd, "w") as out:
        json.dump(config, out)
    # its messages go to a log, never onto the screen that actions read
    log = os.open(Path(name).with_suffix(".log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 2)
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    command = [sys.executable, "-m", "pmux_widget.demo.sim_claude", name]
    os.execve(sys.executable, command, env)


if __name__ == "__main__":
    sys.exit(main())
