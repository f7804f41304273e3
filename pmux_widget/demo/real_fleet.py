"""The ``--real`` demo fleet: real Claude Code CLIs in private tmux servers against the
scripted model (:mod:`pmux_widget.demo.scripted_model`), driven by keystrokes, plus one
undriven session, ``playground``, for the notebook's actions.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from .scripted_fleet import make_project
from .simulated import log

__all__ = ["PLAYGROUND", "RealFleet"]


# ============================================================================ real fleet

#: (project, pane script): the keystrokes each real session cycles through. Each step is
#: (action, argument, pause after it in seconds).
_REAL_SCRIPTS: dict[str, list[tuple[str, str, float]]] = {
    "acme-api": [
        ("prompt", "please run the command", 0),
        ("dialog", "", 6),
        ("approve", "", 0),
        ("idle", "", 12),
        ("prompt", "please run the command", 0),
        ("dialog", "", 4),
        ("deny", "", 8),
    ],
    "web-frontend": [
        # 2.1.332 runs the agent in the background: busy through the first Stop ("1
        # background agent"), woken by a <task-notification>, review at the very end
        ("prompt", "start a background agent please", 0),
        ("idle", "", 12),
        ("prompt", "read both in parallel", 0),
        ("idle", "", 10),
    ],
    "data-pipeline": [
        ("prompt", "please fail with 429", 0),
        ("idle", "", 12),
        ("prompt", "stream slowly", 2.5),
        ("escape", "", 8),
        ("prompt", "read the readme", 0),
        ("idle", "", 10),
    ],
    "infra": [
        ("prompt", "say hi", 0),
        ("idle", "", 3),
        ("prompt", "read the readme", 0),
        ("idle", "", 3),
        ("command", "/compact", 0),
        ("idle", "", 8),
        ("prompt", "run a long command", 0),
        ("dialog", "", 3),
        ("approve", "", 0),
        ("idle", "", 12),
    ],
    # auto mode (the newest CLI's default): through our gateway its classifier cannot run, so
    # it asks first ("can't check actions": needs-input), then shows a "No"-first dialog
    "ops-auto": [
        ("prompt", "please install the tool", 0),
        ("auto", "", 4),
        ("dialog", "", 3),
        ("approve", "", 0),
        ("idle", "", 12),
    ],
}
#: The real session no script drives: left to the notebook (``await session.ask(...)``,
#: ``approve()``), so that its actions do not race the driver's keystrokes.
PLAYGROUND = "playground"
#: Extra CLI arguments per demo project.
_REAL_ARGS: dict[str, list[str]] = {"ops-auto": ["--permission-mode", "auto"]}


class RealFleet:
    """Real Claude Code CLIs (``ensure_cli``) in private tmux servers, against the scripted
    model, driven by keystrokes: prompts, approvals, denials, Esc and ``/compact``.

    ``start()`` raises :class:`~pmux_widget.demo.claude_cli.CliUnavailable` (or OSError) when
    the CLI or tmux cannot be had; the demo then falls back to :class:`ScriptedFleet`.
    """

    kind = "real"

    def __init__(self, claude_dir: Path, home: Path, work_dir: Path, *, sessions: int = 5) -> None:
        self.claude_dir = Path(claude_dir)
        self.home = Path(home)
        self.work_dir = Path(work_dir)
        scripted = list(_REAL_SCRIPTS)[: max(1, min(sessions, len(_REAL_SCRIPTS)))]
        self.projects = [*scripted, PLAYGROUND]
        self.model: Any = None
        self.panes: list[Any] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def describe(self) -> list[str]:
        return [
            f"{name:<14} real claude in tmux  "
            + (
                ", ".join(a for a, _, _ in _REAL_SCRIPTS[name])
                if name in _REAL_SCRIPTS
                else "no script: yours to drive from the notebook (ask, approve, …)"
            )
            for name in self.projects
        ]

    def start(self) -> None:
        import shutil

        from .claude_cli import TmuxClaude
        from .claude_env import ClaudeEnv, CliUnavailable, ensure_cli
        from .scripted_model import ScriptedModel

        if shutil.which("tmux") is None:
            raise CliUnavailable("tmux is not installed")
        cli = ensure_cli(timeout=300)
        self.model = ScriptedModel()
        self.model.start()
        try:
            env = ClaudeEnv(
                self.model.base_url, root=self.work_dir / ".claude-env", seed_files=False
            )
            # The demo's config dir (with our hooks), not the env's own: seed it the same way.
            env.config_dir = self.claude_dir
            env.extra_env["CLAUDE_CONFIG_DIR"] = str(self.claude_dir)
            env._seed_state()
            cwds = {name: make_project(self.work_dir, name) for name in self.projects}
            for cwd in cwds.values():
                (cwd / "notes.txt").write_text("This is a draft note.\n")
                (cwd / "README.md").write_text("# Demo project\n\nHello from the README.\n")
                # All trusted before the first start: a running CLI (2.1.332) rewrites
                # .claude.json from memory, dropping what was added after it started.
                env.trust(cwd)
            for name, cwd in cwds.items():
                pane = TmuxClaude(
                    env,
                    cli,
                    _REAL_ARGS.get(name, ()),
                    cwd=cwd,
                    socket_name=f"pmux-demo-{os.getpid()}-{name}",
                )
                self.panes.append(pane)
                pane.start(timeout=90)
                # One tmux session name for all: the widget groups them as one workspace.
                subprocess.run(
                    ["tmux", "-L", pane.socket_name, "rename-session", "-t", "claude", "demo"],
                    capture_output=True,
                    check=False,
                )
        except Exception:
            self.stop()
            raise
        for name, pane in zip(self.projects, self.panes, strict=True):
            if name not in _REAL_SCRIPTS:
                continue  # the playground
            thread = threading.Thread(
                target=self._run, args=(name, pane), name=f"demo-real-{name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _run(self, name: str, pane: Any) -> None:
        steps = _REAL_SCRIPTS[name]
        while not self._stop.is_set():
            for action, argument, pause in steps:
                if self._stop.is_set():
                    return
                try:
                    if action == "prompt":
                        pane.type_prompt(argument)
                    elif action == "command":
                        pane.command_line(argument)
                    elif action == "dialog":
                        pane.wait_dialog(60)
                    elif action == "auto":
                        pane.stay_in_auto_mode(60)
                    elif action == "approve":
                        pane.approve()
                    elif action == "deny":
                        pane.deny()
                    elif action == "escape":
                        pane.escape()
                    elif action == "idle":
                        pane.wait_status("idle", 120)
                except Exception as exc:
                    if self._stop.is_set():
                        return
                    log(f"{name}: {action} failed ({exc.__class__.__name__}); going on")
                    pane.escape()
                if self._stop.wait(pause):
                    return

    def stop(self) -> None:
        """``/exit`` in every pane (SessionEnd, like a user quitting), then kill what is left:
        the CLIs and their tmux servers."""
        self._stop.set()
        for pane in self.panes:
            with contextlib.suppress(Exception):
                pane.escape()
                pane.command_line("/exit", timeout=3)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(p.alive() for p in self.panes):
            time.sleep(0.1)
        for pane in self.panes:
            with contextlib.suppress(Exception):
                pane.close()
        for thread in self._threads:
            thread.join(5)
        if self.model is not None:
            self.model.stop()
        self.panes, self._threads, self.model = [], [], None
