"""``make demo``: JupyterLab with the widget over a demo fleet of Claude Code sessions.

No Claude account, no network, nothing of yours touched: everything lives in the demo dir
(``--dir``, else ``$PMUX_DEMO_DIR``, else ``<checkout>/.demo``)::

    claude/      the demo's CLAUDE_CONFIG_DIR: settings.json with our hooks, projects/ transcripts
    codex/       the demo's CODEX_HOME: hooks.json with our hooks (trusted), sessions/ rollouts
    pmux/        the demo's PMUX_WIDGET_HOME: hook script, token, runtime/, spool/, state.db
    projects/    the demo sessions' working directories (one per project)
    jupyter/     JUPYTER_CONFIG_DIR, _DATA_DIR, _RUNTIME_DIR, workspaces, settings, lab.log
    notebooks/   fresh copies of notebooks/demo.ipynb and sdk_agents.ipynb (agents run from
                 cells with the Agent SDK, answered from the panel; the checkout's copies stay
                 output-free)

Steps: reset the demo's session state (unless a hub is using the demo home right now), install
our hooks into the demo's ``settings.json``, start the fleet (:mod:`pmux_widget.demo.driver`;
the scripted one first plays ``--history`` minutes (default 60) of backdated history, for
``timeline()``, and a simulated Codex TUI beside them (:mod:`.sim_codex`); ``--real``: real
Claude Code CLIs in tmux and a real Codex TUI against the scripted Responses API, falling back
to the scripted fleet),
then JupyterLab on the notebook (its own config/runtime/workspace dirs, a free port, a token)
with the demo's ``CLAUDE_CONFIG_DIR`` / ``PMUX_WIDGET_HOME`` in its environment, so the
notebook's hub receives the demo's hooks. With the scripted fleet, one more simulated session
runs in a JupyterLab terminal (started through the server's ``POST pmux/api/sessions/new``,
its tab open in the workspace: a terminal tab with a dot, a row whose Approve answers it), and
the server's "New session" starts simulated sessions too (:mod:`.lab_sim`). Ctrl+C (SIGINT)
or SIGTERM stops everything it started: the fleet, JupyterLab (its own process group) and the
kernels (each in its own session: they are found as the server's descendants), then checks
that none of them is left.

Before printing the URL it runs the notebook's first cell in the notebook's own kernel
(:meth:`JupyterLab.prerun`), so the notebook opens on the live widget (``--no-prerun``: not).

``--no-lab`` runs the fleet only, for a Jupyter of your own; ``--duration N`` stops N s after
the fleet runs, and the launcher says how long start-up took before (``--real`` starts six
CLIs: a minute or more on a loaded 2-core machine).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import psutil

from .dirs import ENV_DIR, SDK_NOTEBOOK, DemoDirs, default_demo_dir
from .driver import Fleet, RealFleet, ScriptedFleet
from .lab import JupyterLab
from .scripted_fleet import PERSONAS

__all__ = ["DemoDirs", "JupyterLab", "default_demo_dir", "main"]

#: The project of the demo's session in a JupyterLab terminal (issue 21).
TERMINAL_PROJECT = "lab-terminal"


def _say(message: str = "") -> None:
    print(message, flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pmux_widget.demo",
        description="JupyterLab with the pmux-widget over a demo fleet of Claude Code sessions "
        "(isolated: no Claude account, no network, nothing of yours touched).",
    )
    parser.add_argument("--no-lab", action="store_true", help="run the fleet only")
    parser.add_argument("--port", type=int, default=0, help="JupyterLab's port (0: a free one)")
    parser.add_argument(
        "--duration",
        type=float,
        default=0,
        help="stop by itself N seconds after the fleet runs (start-up not counted; 0: never)",
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="real Claude Code CLIs in tmux against the scripted model (falls back to the "
        "scripted fleet when the CLI cannot be installed)",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=len(PERSONAS),
        help=f"how many sessions (1-{len(PERSONAS)}; --real: 1-5)",
    )
    parser.add_argument(
        "--history",
        type=float,
        default=60,
        help="minutes of backdated history the scripted sessions start with (0: none)",
    )
    parser.add_argument(
        "--no-prerun",
        action="store_true",
        help="open the notebook without running its first cell (the widget) beforehand",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the fleet's jitter")
    parser.add_argument(
        "--dir", default=None, help=f"demo dir (default ${ENV_DIR} or <checkout>/.demo)"
    )
    return parser


def _make_fleet(args: argparse.Namespace, dirs: DemoDirs) -> Fleet:
    if args.real:
        real = RealFleet(dirs.claude, dirs.pmux, dirs.projects, sessions=min(args.sessions, 5))
        _say("Starting real Claude Code sessions in tmux (installing the CLI if needed)…")
        try:
            real.start()
            return real
        except Exception as exc:
            _say(f"note: --real is not possible here ({exc}); using the scripted fleet instead.")
    fleet = ScriptedFleet(
        dirs.claude,
        dirs.pmux,
        dirs.projects,
        sessions=args.sessions,
        seed=args.seed,
        history=args.history * 60,
        codex_home=dirs.codex,
    )
    if args.history > 0:
        _say(f"Seeding {args.history:g} min of history (hooks stamped in the past)…")
    fleet.start()
    return fleet


def _leftovers(lab: JupyterLab | None) -> list[psutil.Process]:
    """Processes of ours still running: our descendants and the server's known family
    (``psutil.Process.is_running`` also checks the start time: a reused pid is not ours)."""
    found: dict[int, psutil.Process] = {}
    with contextlib.suppress(psutil.Error):
        found = {p.pid: p for p in psutil.Process().children(recursive=True)}
    if lab is not None:
        found = {**lab.family, **found}
    alive = []
    for proc in found.values():
        with contextlib.suppress(psutil.Error):
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
    return alive


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    dirs = DemoDirs(Path(args.dir).expanduser() if args.dir else default_demo_dir())
    os.environ.update(dirs.env())  # every child carries the demo's homes (and its marker)

    launched = time.monotonic()  # what start-up took is said: --duration counts from the run
    stop = threading.Event()
    received: list[str] = []

    def on_signal(signum: int, frame: object) -> None:
        received.append(signal.Signals(signum).name)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, on_signal)
    fleet: Fleet | None = None
    lab: JupyterLab | None = None
    code = 0
    try:
        reset = dirs.prepare()
        _say(f"pmux-widget demo in {dirs.root}")
        _say(f"  CLAUDE_CONFIG_DIR={dirs.claude}")
        _say(f"  CODEX_HOME={dirs.codex}")
        _say(f"  PMUX_WIDGET_HOME={dirs.pmux}")
        if not reset:
            _say("  (a hub is using the demo home: earlier demo sessions were kept)")
        fleet = _make_fleet(args, dirs)
        _say(f"Fleet ({fleet.kind}), hooks through {dirs.pmux / 'hooks' / 'status-hook.sh'}:")
        for line in fleet.describe():
            _say(f"  {line}")
        if args.no_lab:
            _say("\nFleet only (--no-lab). Watch it from your own Jupyter, in a fresh kernel:")
            _say(
                f"  import pmux_widget; pmux_widget.start(claude_home={str(dirs.claude)!r}, "
                f"home={str(dirs.pmux)!r}); pmux_widget.show()"
            )
            _say(
                f"or a terminal: CLAUDE_CONFIG_DIR={dirs.claude} PMUX_WIDGET_HOME={dirs.pmux} "
                "pmux-widget status --watch"
            )
        elif not stop.is_set():
            lab = JupyterLab(dirs, args.port, simulated=fleet.kind == "scripted")
            _say("Starting JupyterLab…")
            if lab.start(stop):
                if lab.simulated:
                    # one session in a JupyterLab terminal, its tab open for the newcomer
                    try:
                        name = lab.start_terminal_session(dirs.projects / TERMINAL_PROJECT)
                        _say(
                            f"  {TERMINAL_PROJECT}: a simulated session in JupyterLab "
                            f"terminal {name} (its tab is open)"
                        )
                    except Exception as exc:  # the rest of the demo still works
                        _say(f"note: no session in a JupyterLab terminal ({exc})")
                if not args.no_prerun:
                    _say("Running the notebook's first cell (the widget)…")
                    try:
                        lab.prerun()
                    except Exception as exc:  # the notebook still works: run the cell
                        _say(f"note: could not pre-run the first cell ({exc}); run it yourself.")
                _say("")
                _say("  Open the demo notebook in your browser:")
                _say(f"  URL: {lab.url}")
                _say("")
                _say(f"  (JupyterLab log: {lab.log}; the notebook is a fresh copy of demo.ipynb)")
                if (dirs.notebooks / SDK_NOTEBOOK.name).is_file():
                    _say(
                        f"  {SDK_NOTEBOOK.name} beside it runs agents from cells (the Agent "
                        "SDK, offline): approve one from the side panel"
                    )
        if not stop.is_set():
            took = f"start-up took {time.monotonic() - launched:.0f} s"
            if args.duration:
                limit = f"after {args.duration:g} s ({took}, not counted)"
                _say(f"Running; stops {limit} or on Ctrl+C.")
            else:
                _say(f"Running; stops on Ctrl+C ({took}).")
        deadline = time.monotonic() + args.duration if args.duration else None
        while not stop.wait(0.5):
            if deadline is not None and time.monotonic() >= deadline:
                _say("Duration reached.")
                break
            if lab is not None:
                if not lab.alive():
                    _say(f"JupyterLab exited ({lab.proc and lab.proc.returncode}); stopping.")
                    code = 1
                    break
                lab.descendants()  # remember its kernels, to stop them for sure
    except Exception as exc:
        _say(f"demo failed: {exc}")
        code = 1
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl+C must not cut the cleanup
        why = f" ({received[0]})" if received else ""
        parts = "fleet, JupyterLab and its kernels" if lab is not None else "fleet"
        _say(f"Stopping{why}: {parts}…")
        if fleet is not None:
            fleet.stop()
        survivors = lab.stop() if lab is not None else []
        left = survivors or _leftovers(lab)
        if left:
            _, left = psutil.wait_procs(left, timeout=3)  # some were only just exiting
        if left:
            for proc in left:
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            names = ", ".join(f"{p.pid}" for p in left)
            _say(f"warning: had to kill leftover processes: {names}")
        else:
            _say("Stopped; no demo process is left running.")
    return code


if __name__ == "__main__":
    sys.exit(main())
