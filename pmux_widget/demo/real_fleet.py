"""The ``--real`` demo fleet: real Claude Code CLIs in private tmux servers against the
scripted model (:mod:`pmux_widget.demo.scripted_model`), driven by keystrokes, plus one
undriven session, ``playground``, for the notebook's actions; one of Claude Code's own
background sessions (``claude --bg``, asking for permission late in its turn: answer it from
the widget) with the agent view (``claude agents``) open in a private tmux server; and a real
Codex TUI against the scripted Responses API (:mod:`.real_codex`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .real_codex import RealCodex
from .scripted_fleet import make_project
from .simulated import log

__all__ = ["PLAYGROUND", "RealFleet", "Step", "expected_features"]


#: Budgets of the steps that wait (seconds): generous, so that they hold on a loaded 2-core
#: machine where six CLIs start and answer at once; a step that still runs out is logged, the
#: pane gets an Esc and its script goes on.
ECHO_S = 30.0  # a typed prompt echoed on screen
DIALOG_S = 120.0  # a dialog shown, a turn busy, a turn over
#: How long auto mode's "can't check" dialog stays open before Enter: long enough for its
#: Notification (fired ~6 s after the dialog, 2.1.332), so the widget words what it asks.
AUTO_HOLD_S = 8.0
#: Every CLI at its prompt (they start side by side).
START_S = 180.0


@dataclass(frozen=True)
class Step:
    """One step of a real session's script: ``action`` (what the driver does, with
    ``argument``), the ``pause`` after it, and what the widget ``shows`` once it is done: the
    states and indicators (as tests/test_demo.py's ``features`` names them) that
    tests/real_claude/test_demo_real.py checks every session reaches."""

    action: str
    argument: str = ""
    pause: float = 0.0
    shows: tuple[str, ...] = ()


#: The steps each real session cycles through.
_REAL_SCRIPTS: dict[str, tuple[Step, ...]] = {
    "acme-api": (
        Step("prompt", "please run the command", shows=("busy",)),
        Step("dialog", pause=6, shows=("needs-input", "current_tool")),
        Step("approve"),
        Step("idle", pause=12, shows=("review",)),
        Step("prompt", "please run the command"),
        Step("dialog", pause=4),
        Step("deny", pause=8, shows=("idle",)),
    ),
    "web-frontend": (
        # 2.1.332 runs the agent in the background: busy through the first Stop ("1
        # background agent"), woken by a <task-notification>, review at the very end
        Step("prompt", "start a background agent please", shows=("busy", "background_agent")),
        Step("idle", pause=12, shows=("review",)),
        Step("prompt", "read both in parallel"),
        Step("idle", pause=10),
    ),
    "data-pipeline": (
        Step("prompt", "please fail with 429"),
        Step("idle", pause=12, shows=("review", "error")),
        Step("prompt", "stream slowly", pause=2.5, shows=("busy",)),
        Step("escape", pause=8, shows=("idle", "interrupt")),  # Esc once the answer streams
        Step("prompt", "read the readme"),
        Step("idle", pause=10),
    ),
    "infra": (
        Step("prompt", "say hi"),
        Step("idle", pause=3, shows=("review",)),
        Step("prompt", "read the readme"),
        Step("idle", pause=3),
        Step("command", "/compact", shows=("compacting",)),
        Step("idle", pause=8),
        Step("prompt", "run a long command", shows=("busy",)),
        Step("dialog", pause=3, shows=("needs-input",)),
        Step("approve"),
        Step("idle", pause=12),
    ),
    # auto mode (the newest CLI's default): through our gateway its classifier cannot run, so
    # it asks first ("can't check actions": needs-input, once per session), then shows a
    # "No"-first permission dialog
    "ops-auto": (
        Step("prompt", "please install the tool", shows=("busy", "auto_mode")),
        Step("auto", pause=2, shows=("needs-input", "auto_dialog")),
        Step("dialog", pause=3),
        Step("approve"),
        Step("idle", pause=12, shows=("review",)),
    ),
}


def expected_features(projects: Iterable[str] | None = None) -> dict[str, frozenset[str]]:
    """What each scripted session must show once its script ran (see :class:`Step`)."""
    names = list(_REAL_SCRIPTS) if projects is None else list(projects)
    return {
        name: frozenset(f for step in _REAL_SCRIPTS[name] for f in step.shows)
        for name in names
        if name in _REAL_SCRIPTS
    }


#: The real session no script drives: left to the notebook (``await session.ask(...)``,
#: ``approve()``), so that its actions do not race the driver's keystrokes.
PLAYGROUND = "playground"
#: The real background session (``claude --bg``): its name and first prompt (the scripted
#: model's ``ask_late``: a harmless command, then one that asks, then a ``result:`` line).
BACKGROUND = "background"
BACKGROUND_NAME = "nightly-check"
BACKGROUND_PROMPT = "ask later, please"
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
        #: the background session's harness (``claude_bg.BgClaude``: its daemon, the view)
        self.bg: Any = None
        self.bg_job: str | None = None
        #: the real Codex TUI beside them (issue 36), when Codex can be had
        self.codex: RealCodex | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def describe(self) -> list[str]:
        return (
            [
                f"{name:<14} real claude in tmux  "
                + (
                    ", ".join(step.action for step in _REAL_SCRIPTS[name])
                    if name in _REAL_SCRIPTS
                    else "no script: yours to drive from the notebook (ask, approve, …)"
                )
                for name in self.projects
            ]
            + [
                f"{BACKGROUND:<14} real claude --bg   asks late in its turn: approve it from the "
                "widget (claude attach on a pane of pmux-widget's); the agent view runs in tmux",
            ]
            + ([self.codex.describe()] if self.codex is not None else [])
        )

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
            env.trust(make_project(self.work_dir, BACKGROUND))  # before any CLI starts
            for cwd in cwds.values():
                (cwd / "notes.txt").write_text("This is a draft note.\n")
                (cwd / "README.md").write_text("# Demo project\n\nHello from the README.\n")
                # All trusted before the first start: a running CLI (2.1.332) rewrites
                # .claude.json from memory, dropping what was added after it started.
                env.trust(cwd)
            # All at once, then each waited for: one after the other, six CLIs took minutes
            # to start on a loaded 2-core machine.
            began = time.monotonic()
            for name, cwd in cwds.items():
                pane = TmuxClaude(
                    env,
                    cli,
                    _REAL_ARGS.get(name, ()),
                    cwd=cwd,
                    socket_name=f"pmux-demo-{os.getpid()}-{name}",
                )
                self.panes.append(pane)
                pane.start(wait_ready=False)
                # One tmux session name for all: the widget groups them as one workspace
                # (renamed before the CLI's first hook names its pane).
                subprocess.run(
                    ["tmux", "-L", pane.socket_name, "rename-session", "-t", "claude", "demo"],
                    capture_output=True,
                    check=False,
                )
            for pane in self.panes:
                left = max(10.0, START_S - (time.monotonic() - began))
                pane.wait_for_screen(pane.READY, left)
        except Exception:
            self.stop()
            raise
        try:
            self._start_background(env, cli)
        except Exception as exc:  # the rest of the fleet runs without it
            log(f"{BACKGROUND}: claude --bg did not start ({exc.__class__.__name__}: {exc})")
        codex = RealCodex(self.home, self.work_dir)
        try:
            codex.start()
            self.codex = codex
        except Exception as exc:  # the Claude sessions run without it
            log(f"codex: the real Codex TUI did not start ({exc.__class__.__name__}: {exc})")
        for name, pane in zip(self.projects, self.panes, strict=True):
            if name not in _REAL_SCRIPTS:
                continue  # the playground
            thread = threading.Thread(
                target=self._run, args=(name, pane), name=f"demo-real-{name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _start_background(self, env: Any, cli: Any) -> None:
        """The agent view in a private tmux server (its daemon then serves the session), and
        one ``claude --bg`` session in a folder of its own."""
        import re

        from .claude_bg import BgClaude

        self.bg = BgClaude(env, cli)
        self.bg.view()
        cwd = self.work_dir / BACKGROUND
        argv = [str(cli), "--bg", "--permission-mode", "default", "--name", BACKGROUND_NAME]
        proc = subprocess.run(
            [*argv, BACKGROUND_PROMPT],
            cwd=cwd,
            env=env.env(),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        found = re.search(r"backgrounded\s*·\s*([0-9A-Za-z_-]+)", proc.stdout + proc.stderr)
        if found is None:
            raise OSError(f"claude --bg said {proc.stdout.strip()!r} {proc.stderr.strip()!r}")
        self.bg_job = found.group(1)
        log(f"{BACKGROUND}: job {self.bg_job}; the agent view: tmux -L {self.bg.socket} attach")

    def _run(self, name: str, pane: Any) -> None:
        while not self._stop.is_set():
            for step in _REAL_SCRIPTS[name]:
                if self._stop.is_set():
                    return
                try:
                    self._step(pane, step)
                except Exception as exc:
                    if self._stop.is_set():
                        return
                    log(f"{name}: {step.action} failed ({exc.__class__.__name__}); going on")
                    pane.escape()
                if self._stop.wait(step.pause):
                    return

    def _step(self, pane: Any, step: Step) -> None:
        """One step, waiting for what it needs on screen or in the PID file first."""
        action = step.action
        if action == "prompt":
            pane.type_prompt(step.argument, ECHO_S)
        elif action == "command":
            pane.command_line(step.argument, ECHO_S)
        elif action == "dialog":
            pane.wait_dialog(DIALOG_S)
        elif action == "auto":
            # asked once per session: later turns go straight to the permission dialog
            if pane.wait_auto_dialog(DIALOG_S) and not self._stop.wait(AUTO_HOLD_S):
                pane.stay_in_auto_mode(DIALOG_S)
        elif action == "approve":
            pane.approve(DIALOG_S)
        elif action == "deny":
            pane.deny(DIALOG_S)
        elif action == "escape":
            pane.wait_status("busy", DIALOG_S)  # the answer streams: Esc interrupts it
            pane.escape()
        elif action == "idle":
            pane.wait_status("idle", DIALOG_S)
        else:
            raise ValueError(f"unknown step {action!r}")

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
        if self.bg is not None:
            # the daemon, its workers and spares, the agent view: every process of the demo's
            # config dir that is left, by pid (they live outside any temp dir)
            with contextlib.suppress(Exception):
                self.bg.close()
        if self.codex is not None:
            self.codex.stop()
        if self.model is not None:
            self.model.stop()
        self.panes, self._threads, self.model, self.bg = [], [], None, None
        self.codex = None
