"""Demo fleets: Claude Code sessions for ``make demo``, behind one small interface.

A *fleet* is anything with ``start()`` / ``stop()`` / ``describe()`` (:class:`Fleet`). The demo
(:mod:`pmux_widget.demo`) only talks to that interface, so the fleet is replaceable:

* :class:`ScriptedFleet` (the default; no Claude account, no network, no CLI): five scripted
  sessions, one thread each, that pipe realistic hook payloads through the INSTALLED hook
  command (``/bin/sh -c '<command from settings.json>'``, payload on stdin, ``$TMUX_PANE``
  set for the "tmux" ones) exactly as Claude Code runs it, and append transcript lines to
  ``<claude>/projects/<encoded cwd>/<session>.jsonl``. Payload shapes, key orders and event
  orders follow the recordings in ``tests/fixtures/real/*/hooks.jsonl``; transcript records
  follow ``tests/fixtures/real/*/transcripts``. Each session loops over its own script with
  jittered pauses; together they show, within ~15 s and then again every minute or so: idle,
  busy with a current tool, needs-input (PermissionRequest, then the permission Notification),
  review with the last answer, a StopFailure error, compaction (PreCompact … PostCompact),
  sub-agents, token and context counts, an Esc interrupt (transcript marker, no hook), an exit
  (SessionEnd) and a ``/clear``. With ``history`` (``make demo``: an hour), each session first
  lives that long in the past, in a few seconds: the same scripts on a virtual clock whose
  pauses stretch to minutes, through the same installed hook script (stamped with the past
  time: posted to a live hub or spooled for the next), so ``timeline()`` and ``stats()`` have
  a day to show at once; the live sessions then go on from there.
* :class:`RealFleet` (``--real``): real Claude Code CLIs in private tmux servers against the
  scripted model (:mod:`pmux_widget.demo.scripted_model`), driven by keystrokes, plus one
  undriven session, ``playground``, for the notebook's actions.
"""

from __future__ import annotations

import contextlib
import os
import random
import subprocess
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .scripts import (
    Script,
    script_compact,
    script_errors,
    script_lifecycle,
    script_subagents,
    script_tests,
)
from .simulated import InstalledHooks, SimSession, log

__all__ = ["Fleet", "InstalledHooks", "RealFleet", "ScriptedFleet", "SimSession"]


class Fleet(Protocol):
    """What the demo runs. ``start()`` returns once the sessions are under way; ``stop()``
    ends them and every process the fleet started, and may be called twice."""

    kind: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def describe(self) -> list[str]: ...


# ============================================================================ personas


@dataclass(frozen=True)
class Persona:
    """One demo session: its project, its tmux pane (None: not in tmux) and its script."""

    project: str
    pane: str | None
    model: str
    script: Script
    about: str


PERSONAS: tuple[Persona, ...] = (
    Persona("acme-api", "%1", "claude-opus-4-8", script_tests,
            "permission dialogs → needs-input, then review"),
    Persona("web-frontend", "%2", "claude-opus-4-8", script_subagents,
            "two sub-agents, a dialog, review"),
    Persona("data-pipeline", None, "claude-sonnet-4-5-20250929", script_errors,
            "StopFailure errors (429, 529), then a retry"),
    Persona("infra", "%3", "claude-opus-4-8", script_compact,
            "auto-compaction, then an Esc interrupt"),
    Persona("docs-site", "%4", "claude-sonnet-4-5-20250929", script_lifecycle,
            "an Esc, exit + restart, /clear"),
)  # fmt: skip


def _make_project(root: Path, name: str) -> Path:
    """A working directory that looks like a git checkout (the project name is its root's)."""
    path = root / name
    (path / ".git").mkdir(parents=True, exist_ok=True)
    readme = path / "README.md"
    if not readme.exists():
        readme.write_text(f"# {name}\n\nA project of the pmux-widget demo.\n")
    return path


# ============================================================================ scripted fleet


class ScriptedFleet:
    """The default demo fleet: :data:`PERSONAS`, one thread each, hooks through the script.

    ``claude_dir``/``home``: the demo's ``CLAUDE_CONFIG_DIR`` and ``PMUX_WIDGET_HOME`` (our
    hooks must be installed in ``claude_dir/settings.json``); ``work_dir``: where the
    sessions' working directories are created. ``speed`` > 1 shortens every pause.
    ``history``: seconds of backdated history each session gets before it goes live (0: none).
    """

    kind = "scripted"

    def __init__(
        self,
        claude_dir: Path,
        home: Path,
        work_dir: Path,
        *,
        sessions: int = len(PERSONAS),
        seed: int | None = None,
        speed: float = 1.0,
        history: float = 0.0,
    ) -> None:
        self.claude_dir = Path(claude_dir)
        self.home = Path(home)
        self.work_dir = Path(work_dir)
        self.personas = PERSONAS[: max(1, min(sessions, len(PERSONAS)))]
        self.seed = seed
        self.speed = speed
        self.history = history
        self.hooks: InstalledHooks | None = None
        self.sessions: list[SimSession] = []
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def describe(self) -> list[str]:
        lines = []
        for persona in self.personas:
            where = f"tmux pane {persona.pane}" if persona.pane else "no tmux"
            lines.append(f"{persona.project:<14} {where:<14} {persona.about}")
        return lines

    def start(self) -> None:
        self.hooks = InstalledHooks(self.claude_dir / "settings.json", self.home)
        master = random.Random(self.seed)
        for index, persona in enumerate(self.personas):
            rng = random.Random(master.getrandbits(64))
            session = SimSession(
                self.hooks,
                self.claude_dir,
                _make_project(self.work_dir, persona.project),
                persona.pane,
                persona.model,
                rng,
                context=rng.randint(18_000, 60_000),
            )
            self.sessions.append(session)
            thread = threading.Thread(
                target=self._run,
                args=(session, persona, index * 0.3),
                name=f"demo-{persona.project}",
                daemon=True,
            )
            self._threads.append(thread)
        if self.history > 0:
            self._seed_history()
        for thread in self._threads:
            thread.start()

    def _seed_history(self) -> None:
        """Every session's last ``history`` seconds, played at once on virtual clocks (each
        session a little later than the one before, so they do not start in step)."""
        assert self.hooks is not None
        now = time.time()
        seeders = [
            threading.Thread(
                target=self._history,
                args=(session, persona, now - self.history + index * 40, now),
                name=f"demo-history-{persona.project}",
                daemon=True,
            )
            for index, (session, persona) in enumerate(
                zip(self.sessions, self.personas, strict=True)
            )
        ]
        for thread in seeders:
            thread.start()
        for thread in seeders:
            thread.join()
        self.hooks.close()

    def _history(self, session: SimSession, persona: Persona, begin: float, now: float) -> None:
        """The persona's script on a virtual clock from ``begin``: short pauses (tools, a
        step of a turn) x4, long ones (a dialog left open, an answer not read yet) x6-18, so
        that a turn takes minutes and the waits on you weigh, as in a real day. It stops at
        the first turn boundary past ``now - 90 s`` (never later than ``now``)."""
        session.virtual = begin
        steps = persona.script(session)
        try:
            for pause in steps:
                long = pause >= 5
                stretched = pause * session.rng.uniform(6, 18) if long else pause * 4
                if session.virtual + stretched >= now - 2 or self._stop.is_set():
                    break
                session.virtual += stretched
                if long and not session.pending and session.virtual >= now - 90:
                    break
        except Exception as exc:  # a partial history is still a history
            log(f"{persona.project}: history stopped early ({exc!r})")
        finally:
            if isinstance(steps, Generator):
                steps.close()
            session.virtual = None

    def _run(self, session: SimSession, persona: Persona, offset: float) -> None:
        if self._stop.wait(offset / self.speed):
            return
        while not self._stop.is_set():
            steps = persona.script(session)
            try:
                for pause in steps:
                    jitter = session.rng.uniform(0.8, 1.25)
                    if self._stop.wait(pause * jitter / self.speed):
                        return
            except Exception as exc:  # a script bug must not end the demo silently
                log(f"{persona.project}: {exc!r}; restarting its script")
                if self._stop.wait(2.0):
                    return

    def stop(self) -> None:
        """Stop every script, then end the live sessions (SessionEnd), like exiting Claude."""
        self._stop.set()
        for thread in self._threads:
            thread.join(15)
        for session in self.sessions:
            with contextlib.suppress(Exception):
                session.end("other")
        self.sessions = []
        self._threads = []

    @property
    def fired(self) -> int:
        return sum(self.hooks.fired.values()) if self.hooks is not None else 0


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
            cwds = {name: _make_project(self.work_dir, name) for name in self.projects}
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
