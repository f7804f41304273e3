"""``make demo``: JupyterLab with the widget over a demo fleet of Claude Code sessions.

No Claude account, no network, nothing of yours touched: everything lives in the demo dir
(``--dir``, else ``$PMUX_DEMO_DIR``, else ``<checkout>/.demo``)::

    claude/      the demo's CLAUDE_CONFIG_DIR: settings.json with our hooks, projects/ transcripts
    pmux/        the demo's PMUX_WIDGET_HOME: hook script, token, runtime/, spool/, state.db
    projects/    the demo sessions' working directories (one per project)
    jupyter/     JUPYTER_CONFIG_DIR, _DATA_DIR, _RUNTIME_DIR, workspaces, settings, lab.log
    notebooks/   a fresh copy of notebooks/demo.ipynb (the checkout's copy stays output-free)

Steps: reset the demo's session state (unless a hub is using the demo home right now), install
our hooks into the demo's ``settings.json``, start the fleet (:mod:`pmux_widget.demo.driver`;
the scripted one first plays ``--history`` minutes (default 60) of backdated history, for
``timeline()``; ``--real``: real Claude Code CLIs in tmux, falling back to the scripted fleet),
then JupyterLab on the notebook (its own config/runtime/workspace dirs, a free port, a token)
with the demo's ``CLAUDE_CONFIG_DIR`` / ``PMUX_WIDGET_HOME`` in its environment, so the
notebook's hub receives the demo's hooks. Ctrl+C (SIGINT) or SIGTERM stops everything it
started: the fleet, JupyterLab (its own process group) and the kernels (each in its own
session: they are found as the server's descendants), then checks that none of them is left.

Before printing the URL it runs the notebook's first cell in the notebook's own kernel
(:meth:`JupyterLab.prerun`), so the notebook opens on the live widget (``--no-prerun``: not).

``--no-lab`` runs the fleet only, for a Jupyter of your own; ``--duration N`` stops after N s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil

from .driver import Fleet, RealFleet, ScriptedFleet

__all__ = ["DemoDirs", "JupyterLab", "default_demo_dir", "main"]

ENV_DIR = "PMUX_DEMO_DIR"
CHECKOUT = Path(__file__).resolve().parents[2]
NOTEBOOK = CHECKOUT / "notebooks" / "demo.ipynb"
#: How long JupyterLab may take to answer (first start builds nothing, but imports a lot).
LAB_START_TIMEOUT = 90.0
#: How long the server and its kernels get to stop on SIGTERM before they are killed.
STOP_GRACE = 10.0


def _say(message: str = "") -> None:
    print(message, flush=True)


def default_demo_dir() -> Path:
    """``$PMUX_DEMO_DIR``, else ``<checkout>/.demo`` (source checkout), else a cache dir."""
    env = os.environ.get(ENV_DIR)
    if env:
        return Path(env).expanduser().absolute()
    if (CHECKOUT / "pyproject.toml").is_file():
        return CHECKOUT / ".demo"
    return Path.home() / ".cache" / "pmux-widget" / "demo"


class DemoDirs:
    """The paths under the demo dir (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()
        self.claude = self.root / "claude"
        self.pmux = self.root / "pmux"
        self.projects = self.root / "projects"
        self.jupyter = self.root / "jupyter"
        self.notebooks = self.root / "notebooks"

    def env(self) -> dict[str, str]:
        """What every process of the demo gets: the demo's Claude and pmux-widget homes."""
        return {
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "PMUX_WIDGET_HOME": str(self.pmux),
            ENV_DIR: str(self.root),
        }

    def prepare(self) -> bool:
        """Create the dirs, reset old session state, install the hooks. True if reset."""
        from pmux_widget import hooks
        from pmux_widget.system.home import PmuxHome

        home = PmuxHome(self.pmux)
        in_use = bool(self.pmux.is_dir() and hooks.live_hubs(home))
        if not in_use:  # a hub of yours is reading it right now (--no-lab): keep it
            for name in ("state.db", "state.db-wal", "state.db-shm"):
                with contextlib.suppress(FileNotFoundError):
                    (self.pmux / name).unlink()
            for sub in (self.pmux / "spool", self.pmux / "runtime"):
                shutil.rmtree(sub, ignore_errors=True)
            for sub in (self.claude / "projects", self.claude / "sessions"):
                shutil.rmtree(sub, ignore_errors=True)
        for directory in (self.claude / "projects", self.projects, self.jupyter, self.notebooks):
            directory.mkdir(parents=True, exist_ok=True)
        hooks.install(self.claude / "settings.json", home.ensure())
        return not in_use


# ============================================================================ JupyterLab


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _fallback_notebook() -> dict[str, Any]:
    """Outside a source checkout (no notebooks/demo.ipynb): a one-cell notebook."""
    source = ["import pmux_widget\n", "\n", "pmux_widget.show()"]
    return {
        "cells": [
            {"cell_type": "code", "execution_count": None, "id": "show", "metadata": {},
             "outputs": [], "source": source}
        ],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)",
                                    "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }  # fmt: skip


def _set_pdeathsig() -> None:
    """In the child before exec (Linux): die with SIGTERM if the demo itself dies (kill -9)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class JupyterLab:
    """A JupyterLab server for the demo: own dirs, a port, a token, its own process group."""

    def __init__(self, dirs: DemoDirs, port: int = 0) -> None:
        self.dirs = dirs
        self.port = port or free_port()
        self.token = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = dirs.jupyter / "lab.log"
        #: every process seen under the server (kernels live in sessions of their own)
        self.family: dict[int, psutil.Process] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/lab/tree/demo.ipynb?token={self.token}"

    def _configure(self) -> dict[str, str]:
        jup = self.dirs.jupyter
        config, data, runtime = jup / "config", jup / "data", jup / "runtime"
        for directory in (config / "labconfig", data, runtime, jup / "workspaces", jup / "ipython"):
            directory.mkdir(parents=True, exist_ok=True)
        # No network: no update check, no news feed, no "receive news?" toast.
        server_config = {
            "LabApp": {
                "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                "news_url": None,
            },
        }
        (config / "jupyter_server_config.json").write_text(json.dumps(server_config, indent=2))
        page = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
        (config / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2))
        notebook = self.dirs.notebooks / "demo.ipynb"
        if NOTEBOOK.is_file():
            shutil.copyfile(NOTEBOOK, notebook)
        else:
            notebook.write_text(json.dumps(_fallback_notebook(), indent=1))
        shutil.rmtree(self.dirs.notebooks / ".ipynb_checkpoints", ignore_errors=True)
        return {
            **os.environ,
            **self.dirs.env(),
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_DATA_DIR": str(data),
            "JUPYTER_RUNTIME_DIR": str(runtime),
            "JUPYTER_PLATFORM_DIRS": "1",
            "IPYTHONDIR": str(jup / "ipython"),
            "MPLCONFIGDIR": str(jup / "matplotlib"),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "BROWSER": "true",
        }

    def start(self, stop: threading.Event | None = None) -> bool:
        """Start the server and wait until it answers; False if ``stop`` was set first."""
        env = self._configure()
        jup = self.dirs.jupyter
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.dirs.notebooks}",
            f"--LabApp.workspaces_dir={jup / 'workspaces'}",
            f"--LabApp.user_settings_dir={jup / 'settings'}",
            "--LabApp.extension_manager=readonly",  # no PyPI queries
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")  # containers and CI run as root
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                command,
                cwd=self.dirs.notebooks,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: Ctrl+C reaches us, not it
                preexec_fn=_set_pdeathsig if sys.platform.startswith("linux") else None,
            )
        return self._wait_ready(stop or threading.Event())

    def _wait_ready(self, stop: threading.Event) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + LAB_START_TIMEOUT
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/api/status",
            headers={"Authorization": f"token {self.token}"},
        )
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited ({self.proc.returncode}):\n{self.log_tail()}"
                )
            with (
                contextlib.suppress(OSError, urllib.error.URLError),
                urllib.request.urlopen(request, timeout=2) as answer,
            ):
                if answer.status == 200:
                    return True
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer in time:\n{self.log_tail()}")
            if stop.wait(0.25):
                return False

    def _api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"null")

    def prerun(self, timeout: float = 60.0) -> str:
        """Run the notebook's first code cell (the one that shows the widget) before anyone
        opens it, so that it opens on the live widget.

        The server starts the notebook's kernel (``POST /api/sessions``: the browser then
        joins that session's kernel); the cell runs there through the kernel's connection
        file; its outputs go into the notebook file, which is then signed as trusted in the
        demo's data dir (JupyterLab renders a widget output only in a trusted notebook). The
        browser's widget manager restores the live models from the kernel. Returns the
        cell's text output."""
        import importlib

        from jupyter_client.blocking.client import BlockingKernelClient

        # nbformat has no type hints: Any, rather than an ignore on every call
        nbformat: Any = importlib.import_module("nbformat")
        notary: Any = importlib.import_module("nbformat.sign").NotebookNotary

        path = self.dirs.notebooks / "demo.ipynb"
        notebook = nbformat.read(path, as_version=4)
        cell = next(c for c in notebook.cells if c.cell_type == "code")
        body = {"path": path.name, "name": path.name, "type": "notebook"}
        session = self._api("POST", "/api/sessions", {**body, "kernel": {"name": "python3"}})
        connection = self.dirs.jupyter / "runtime" / f"kernel-{session['kernel']['id']}.json"
        deadline = time.monotonic() + timeout
        while not connection.is_file():
            if time.monotonic() > deadline:
                raise RuntimeError(f"no connection file {connection}")
            time.sleep(0.1)
        client = BlockingKernelClient(connection_file=str(connection))
        client.load_connection_file()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=timeout)
            outputs: list[Any] = []
            reply = client.execute_interactive(
                cell.source,
                timeout=timeout,
                output_hook=lambda msg: _collect_output(msg, outputs),
                allow_stdin=False,
            )
        finally:
            client.stop_channels()
        content = reply["content"]
        if content.get("status") != "ok":
            raise RuntimeError(f"{content.get('ename')}: {content.get('evalue')}")
        cell.outputs = outputs
        cell.execution_count = content.get("execution_count")
        notary(data_dir=str(self.dirs.jupyter / "data")).sign(notebook)
        nbformat.write(notebook, path)
        return "".join(o.get("text", "") for o in outputs)

    def log_tail(self, lines: int = 20) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def descendants(self) -> list[psutil.Process]:
        """The server's descendants now (kernels, terminals); all ever seen are kept."""
        if self.proc is None:
            return []
        try:
            found = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.Error:
            found = []
        for proc in found:
            self.family.setdefault(proc.pid, proc)
        return found

    def stop(self) -> list[psutil.Process]:
        """SIGTERM the server's group (it shuts its kernels down), then kill what is left.
        Returns the processes that survived even SIGKILL (should be none)."""
        if self.proc is None:
            return []
        self.descendants()
        family = [proc for proc in self.family.values() if proc.is_running()]
        pgid = self.proc.pid
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            self.proc.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, signal.SIGKILL)
            self.proc.wait(5)
        _, alive = psutil.wait_procs(family, timeout=3)
        for proc in alive:  # kernels live in sessions of their own: their groups too
            with contextlib.suppress(psutil.Error, OSError):
                group = os.getpgid(proc.pid)
                if group != os.getpgid(0):  # never our own group (or the terminal's)
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(psutil.Error):
                proc.kill()
        _, alive = psutil.wait_procs(alive, timeout=3)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)  # anything still in the server's group
        return alive


def _collect_output(msg: dict[str, Any], outputs: list[Any]) -> None:
    """One iopub message of the pre-run cell into notebook outputs (as a front-end keeps
    them: streams merged, ``clear_output`` honoured)."""
    import importlib

    output_from_msg: Any = importlib.import_module("nbformat.v4").output_from_msg
    kind = msg["msg_type"]
    if kind == "clear_output":
        outputs.clear()
    elif kind in ("stream", "display_data", "execute_result", "error"):
        output = output_from_msg(msg)
        last = outputs[-1] if outputs else None
        if kind == "stream" and last is not None and last.get("name") == output.get("name"):
            last["text"] += output["text"]
        else:
            outputs.append(output)


# ============================================================================ main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pmux_widget.demo",
        description="JupyterLab with the pmux-widget over a demo fleet of Claude Code sessions "
        "(isolated: no Claude account, no network, nothing of yours touched).",
    )
    parser.add_argument("--no-lab", action="store_true", help="run the fleet only")
    parser.add_argument("--port", type=int, default=0, help="JupyterLab's port (0: a free one)")
    parser.add_argument(
        "--duration", type=float, default=0, help="stop by itself after N seconds (0: never)"
    )
    parser.add_argument(
        "--real",
        action="store_true",
        help="real Claude Code CLIs in tmux against the scripted model (falls back to the "
        "scripted fleet when the CLI cannot be installed)",
    )
    parser.add_argument("--sessions", type=int, default=5, help="how many sessions (1-5)")
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
            lab = JupyterLab(dirs, args.port)
            _say("Starting JupyterLab…")
            if lab.start(stop):
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
        if not stop.is_set():
            limit = f"after {args.duration:g} s or on " if args.duration else "on "
            _say(f"Running; stops {limit}Ctrl+C.")
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
