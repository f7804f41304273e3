"""The scripted demo fleet, ``make demo``'s default (no Claude account, no network, no CLI):
five scripted sessions, each a simulated Claude Code process (:mod:`.sim_claude`) in a
window of a private tmux server (``tmux -L pmux-demo-<pid>``; the fifth outside tmux). Each
writes its PID file like the CLI, pipes realistic hook payloads through the INSTALLED hook
command (``/bin/sh -c '<command from settings.json>'``, payload on stdin, its pane's
``$TMUX_PANE``) exactly as Claude Code runs it, appends transcript lines to
``<claude>/projects/<encoded cwd>/<session>.jsonl``, draws the CLI's screens and answers
keys, so pmux-widget's actions reach it through the same checks as a real CLI. Payload
shapes, key orders and event orders follow the recordings in
``tests/fixtures/real/*/hooks.jsonl``; transcript records follow
``tests/fixtures/real/*/transcripts``. Each session loops over its own script with jittered
pauses (a key press overrides the script's decision); together they show, within ~15 s and
then again every minute or so: idle, busy with a current tool, needs-input
(PermissionRequest, then the permission Notification), review with the last answer, a
StopFailure error, compaction (PreCompact … PostCompact), sub-agents, token and context
counts, an Esc interrupt (transcript marker, no hook), an exit (SessionEnd) and a
``/clear``. With ``history`` (``make demo``: an hour), each session first lives that long in
the past, in a few seconds, in this process: the same scripts on a virtual clock whose
pauses stretch to minutes, through the same installed hook script (stamped with the past
time: posted to a live hub or spooled for the next), so ``timeline()`` and ``stats()`` have
a day to show at once; the sessions' processes then go on from there. Without tmux, the
sessions run as threads of this process (no terminal: no actions).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import psutil

from .scripts import (
    Script,
    script_compact,
    script_errors,
    script_lifecycle,
    script_plan,
    script_question,
    script_subagents,
    script_tests,
)
from .simulated import InstalledHooks, SimSession, log

__all__ = ["CODEX_PROJECT", "PERSONAS", "PaneFleet", "Persona", "ScriptedFleet", "make_project"]


@dataclass(frozen=True)
class Persona:
    """One demo session: its project, its tmux pane (None: not in tmux) and its script."""

    project: str
    pane: str | None
    model: str
    script: Script
    about: str
    #: a background session of Claude Code's own (``claude --bg --name <this>``): its PID
    #: file and job folder as the daemon's worker writes them; None: an interactive CLI
    background: str | None = None


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
    Persona("nightly-audit", "%5", "claude-sonnet-4-5-20250929", script_tests,
            "a background session (claude --bg): asks, then finishes", background="audit-deps"),
    Persona("ui-kit", "%6", "claude-opus-4-8", script_question,
            "asks a question (AskUserQuestion): answer it from the row"),
    Persona("release-notes", "%7", "claude-opus-4-8", script_plan,
            "offers a plan (plan mode): Approve or Keep planning"),
)  # fmt: skip


#: The demo's Codex session (issue 36): its project, and what it shows.
CODEX_PROJECT = "billing-svc"
CODEX_ABOUT = "a Codex session (simulated TUI): tools, an approval (y / Esc), review"


def make_project(root: Path, name: str) -> Path:
    """A working directory that looks like a git checkout (the project name is its root's)."""
    path = root / name
    (path / ".git").mkdir(parents=True, exist_ok=True)
    readme = path / "README.md"
    if not readme.exists():
        readme.write_text(f"# {name}\n\nA project of the pmux-widget demo.\n")
    return path


# ============================================================================ scripted fleet


class ScriptedFleet:
    """The default demo fleet: :data:`PERSONAS`, each a simulated Claude Code process
    (:mod:`pmux_widget.demo.sim_claude`) in its own window of a private tmux server, the
    "not in tmux" one a process outside any pane. Each writes its PID file, fires its hooks
    through the installed script and draws the real CLI's screen, so pmux-widget's actions
    (approve, deny, interrupt, send) reach it through the same checks as a real CLI's.
    Without tmux (or with ``panes=False``) the sessions run as threads of this process, as
    hook and transcript writers only: no terminal, so actions on them are refused.

    ``claude_dir``/``home``: the demo's ``CLAUDE_CONFIG_DIR`` and ``PMUX_WIDGET_HOME`` (our
    hooks must be installed in ``claude_dir/settings.json``); ``work_dir``: where the
    sessions' working directories are created. ``speed`` > 1 shortens every pause.
    ``history``: seconds of backdated history each session gets before it goes live (0: none),
    played in this process; the live part then goes on in the sessions' processes.
    ``codex_home``: with it (and tmux), a simulated Codex TUI (:mod:`.sim_codex`) runs in a
    window of its own, its hooks those installed in that home.
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
        panes: bool = True,
        codex_home: Path | None = None,
    ) -> None:
        self.claude_dir = Path(claude_dir)
        #: the demo's CODEX_HOME (our Codex hooks installed): one simulated Codex TUI runs
        #: beside the Claude sessions (tmux only: it is a terminal program); None: none
        self.codex_home = Path(codex_home) if codex_home is not None else None
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
        self.panes = PaneFleet(self) if panes and shutil.which("tmux") else None
        self.note = (
            None
            if self.panes is not None
            else "tmux is not installed: the sessions run as threads, without a terminal, "
            "so actions on them are refused"
            if panes
            else None
        )

    def describe(self) -> list[str]:
        lines = []
        for persona in self.personas:
            pane = self.panes.pane_ids.get(persona.project) if self.panes else persona.pane
            if persona.background:
                where = f"background {persona.background}"  # its terminal is no pane of it
            elif self.panes is not None:
                where = f"tmux pane {pane}" if pane else "no tmux"
            else:
                where = f"fake pane {pane}" if pane else "no tmux"
            lines.append(f"{persona.project:<14} {where:<14} {persona.about}")
        codex_pane = self.panes.pane_ids.get(CODEX_PROJECT) if self.panes else None
        if codex_pane:
            lines.append(f"{CODEX_PROJECT:<14} {'tmux pane ' + codex_pane:<14} {CODEX_ABOUT}")
        if self.panes is not None:
            lines.append(
                f"(tmux -L {self.panes.socket} attach: watch them; actions reach them as a "
                "real CLI's)"
            )
        if self.note:
            lines.append(f"note: {self.note}")
        return lines

    def start(self) -> None:
        self.hooks = InstalledHooks(self.claude_dir / "settings.json", self.home)
        master = random.Random(self.seed)
        pane_ids: dict[str, str] = {}
        if self.panes is not None:
            try:
                pane_ids = self.panes.start()
            except (OSError, subprocess.SubprocessError, ValueError) as exc:
                log(f"tmux could not start the sessions ({exc}); running them as threads")
                self.panes.stop()
                self.panes = None
                self.note = f"tmux failed ({exc}): the sessions run as threads"
        for index, persona in enumerate(self.personas):
            rng = random.Random(master.getrandbits(64))
            pane = pane_ids.get(persona.project) if self.panes is not None else persona.pane
            if persona.background:
                pane = None  # a background worker's hooks name no pane of its own
            session = SimSession(
                self.hooks,
                self.claude_dir,
                make_project(self.work_dir, persona.project),
                pane,
                persona.model,
                rng,
                context=rng.randint(18_000, 60_000),
            )
            self.sessions.append(session)
            if self.panes is None:
                thread = threading.Thread(
                    target=self._run,
                    args=(session, persona, index * 0.3),
                    name=f"demo-{persona.project}",
                    daemon=True,
                )
                self._threads.append(thread)
        if self.history > 0:
            self._seed_history()
        if self.panes is not None:
            for index, (session, persona) in enumerate(
                zip(self.sessions, self.personas, strict=True)
            ):
                self.panes.go(persona, session, index * 0.3, session.rng.getrandbits(64))
            self.panes.wait_running()
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
        """Stop every script, then end the live sessions (SessionEnd), like exiting Claude:
        the sessions' processes do that themselves on SIGTERM; then their tmux server goes."""
        self._stop.set()
        if self.panes is not None:
            self.panes.stop()
        for thread in self._threads:
            thread.join(15)
        if self.panes is None:
            for session in self.sessions:
                with contextlib.suppress(Exception):
                    session.end("other")
        self.sessions = []
        self._threads = []

    @property
    def fired(self) -> int:
        return sum(self.hooks.fired.values()) if self.hooks is not None else 0


class PaneFleet:
    """The scripted sessions' processes: one window each of ``tmux -L pmux-demo-<pid>`` (one
    tmux session, ``demo``), and ``tmux run-shell -b`` for the one not in tmux (a child of the
    tmux server, so no pane's process tree holds it, wherever the demo itself runs).

    Each process starts at once but waits for its ``go`` file: the session it goes on with,
    once this process has seeded the history (with the panes' real ids in its hooks)."""

    #: How long to wait for every session's process to write its PID file.
    READY_TIMEOUT_S = 30.0

    def __init__(self, fleet: ScriptedFleet) -> None:
        self.fleet = fleet
        self.socket = f"pmux-demo-{os.getpid()}"
        self.dir: Path | None = None
        self.pane_ids: dict[str, str] = {}
        self._env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", os.devnull, *args],
            env=self._env,
            capture_output=True,
            text=True,
            timeout=15,
            check=check,
        )

    def _command(self, config: Path, *, in_tmux: bool, module: str = "sim_claude") -> str:
        import pmux_widget

        root = str(Path(pmux_widget.__file__).resolve().parents[1])
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        unset = "" if in_tmux else "-u TMUX -u TMUX_PANE "
        # Its messages go to a log, never onto the screen that actions read (nor, for the
        # one outside tmux, into a tmux window when run-shell ends).
        log_file = config.with_suffix(".log")
        out = "" if in_tmux else " >/dev/null"
        return (
            f"exec env {unset}PYTHONPATH={shlex.quote(path)} {shlex.quote(sys.executable)} "
            f"-m pmux_widget.demo.{module} {shlex.quote(str(config))}"
            f"{out} 2>>{shlex.quote(str(log_file))}"
        )

    def start(self) -> dict[str, str]:
        """The tmux server, a window per tmux persona, the others in the background; returns
        the pane id of each tmux persona's window."""
        fleet = self.fleet
        self.dir = Path(tempfile.mkdtemp(prefix="pmux-demo-sim-"))
        first = True
        for persona in fleet.personas:
            cwd = make_project(fleet.work_dir, persona.project)
            config = self.dir / f"{persona.project}.json"
            config.write_text(
                json.dumps(
                    {
                        "claude_dir": str(fleet.claude_dir),
                        "home": str(fleet.home),
                        "cwd": str(cwd),
                        "model": persona.model,
                        "script": persona.script.__name__,
                        "speed": fleet.speed,
                        "go_file": str(self.dir / f"{persona.project}.go.json"),
                        "background": persona.background,
                    }
                )
            )
            if persona.pane is None:
                continue
            command = self._command(config, in_tmux=True)
            if first:
                self._tmux("new-session", "-d", "-s", "demo", "-n", persona.project,
                           "-x", "160", "-y", "50", "-c", str(cwd), command)  # fmt: skip
                first = False
            else:
                self._tmux("new-window", "-d", "-t", "demo:", "-n", persona.project,
                           "-c", str(cwd), command)  # fmt: skip
        if fleet.codex_home is not None:
            cwd = make_project(fleet.work_dir, CODEX_PROJECT)
            config = self.dir / f"{CODEX_PROJECT}.json"
            config.write_text(
                json.dumps(
                    {
                        "codex_home": str(fleet.codex_home),
                        "home": str(fleet.home),
                        "cwd": str(cwd),
                        "speed": fleet.speed,
                        "seed": fleet.seed,
                    }
                )
            )
            # its CODEX_HOME named in its own environment, where pmux-widget reads a TUI's home
            command = self._command(config, in_tmux=True, module="sim_codex").replace(
                "exec env ", f"exec env CODEX_HOME={shlex.quote(str(fleet.codex_home))} ", 1
            )
            args = ["-n", CODEX_PROJECT, "-c", str(cwd), command]
            if first:
                self._tmux("new-session", "-d", "-s", "demo", "-x", "160", "-y", "50", *args)
                first = False
            else:
                self._tmux("new-window", "-d", "-t", "demo:", *args)
        if first:  # no persona in tmux: a server is still needed for the others
            self._tmux("new-session", "-d", "-s", "demo", "-n", "lobby", "cat")
        listing = self._tmux("list-panes", "-s", "-t", "demo", "-F", "#{window_name}\t#{pane_id}")
        for line in listing.stdout.splitlines():
            name, _, pane = line.partition("\t")
            self.pane_ids[name] = pane
        for persona in fleet.personas:
            if persona.pane is None:
                config = self.dir / f"{persona.project}.json"
                self._tmux("run-shell", "-b", "-t", "demo:", self._command(config, in_tmux=False))
        return dict(self.pane_ids)

    def go(self, persona: Persona, session: SimSession, offset: float, seed: int) -> None:
        """Hand the (seeded) session over to its process, which goes on with it."""
        assert self.dir is not None
        state = {
            "session": session.snapshot() if session.live else None,
            "offset": offset,
            "seed": seed,
            "context": session.context,
        }
        go = self.dir / f"{persona.project}.go.json"
        tmp = go.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        os.replace(tmp, go)

    def processes(self) -> list[psutil.Process]:
        """The sessions' processes (found by their config file on the command line)."""
        if self.dir is None:
            return []
        found = []
        marker = str(self.dir)
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info.get("cmdline") or []
            line = " ".join(cmdline)
            if any(marker in part for part in cmdline) and (
                "pmux_widget.demo.sim_claude" in line or "pmux_widget.demo.sim_codex" in line
            ):
                found.append(proc)
        return found

    def wait_running(self) -> None:
        """Until every session's process has started (or a while has passed: it then shows
        up late, never blocks the demo)."""
        deadline = time.monotonic() + self.READY_TIMEOUT_S
        count = len(self.fleet.personas) + (self.fleet.codex_home is not None)
        while time.monotonic() < deadline and len(self.processes()) < count:
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM to every session's process (each ends its session: SessionEnd, its PID
        file removed), then the tmux server; SIGKILL for whatever is left after 10 s."""
        procs = self.processes()
        for proc in procs:
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        _, alive = psutil.wait_procs(procs, timeout=10)
        for proc in alive:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        self._tmux("kill-server", check=False)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
