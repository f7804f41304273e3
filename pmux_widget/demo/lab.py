"""JupyterLab for the demo: its own config, data, runtime and workspace dirs, a free port and
a token; pmux-widget's JupyterLab extension loaded, its side panel open in the workspace (the
panel and the status bar are live before any kernel starts); the notebook's first cell run by
a server-managed kernel before the browser opens it (so it opens on the live widget); a clean
stop of the server and its kernels.
"""

from __future__ import annotations

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
from pathlib import Path
from typing import Any

import psutil

from .dirs import NOTEBOOK, SDK_NOTEBOOK, DemoDirs
from .lab_sim import write_wrapper

__all__ = ["JupyterLab", "free_port"]

#: How long JupyterLab may take to answer (first start builds nothing, but imports a lot).
LAB_START_TIMEOUT = 90.0
#: How long the server and its kernels get to stop on SIGTERM before they are killed.
STOP_GRACE = 10.0


def _say(message: str = "") -> None:
    print(message, flush=True)


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


#: The JupyterLab extension's side panel (js/lab/src/panel.ts).
PANEL_ID = "pmux-widget-panel"


def _link_labextension(data: Path) -> None:
    """A source checkout's labextension build, linked into the demo's data dir (JupyterLab
    looks there first): the demo shows this checkout's panel whatever the venv holds. An
    installed wheel has it in the environment's share/jupyter already."""
    built = Path(__file__).resolve().parents[1] / "labextension"
    link = data / "labextensions" / "pmux-widget"
    if not (built / "package.json").is_file() or link.exists():
        return
    link.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        link.symlink_to(built, target_is_directory=True)


def _set_pdeathsig() -> None:
    """In the child before exec (Linux): die with SIGTERM if the demo itself dies (kill -9)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class JupyterLab:
    """A JupyterLab server for the demo: own dirs, a port, a token, its own process group."""

    def __init__(self, dirs: DemoDirs, port: int = 0, simulated: bool = True) -> None:
        self.dirs = dirs
        self.port = port or free_port()
        self.token = secrets.token_hex(16)
        #: the fleet is simulated: so are the sessions started in the server's terminals
        self.simulated = simulated
        #: the terminal the demo's own terminal session runs in (None: none)
        self.terminal: str | None = None
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
        _link_labextension(data)
        (config / "jupyter_server_config.json").write_text(json.dumps(server_config, indent=2))
        # The server extension (its hub, the side panel's routes), enabled as a wheel install
        # does: a conf.d file of its own (an editable install puts none in the venv's etc/).
        conf_d = config / "jupyter_server_config.d"
        conf_d.mkdir(exist_ok=True)
        enable = {"ServerApp": {"jpserver_extensions": {"pmux_widget.jupyter": True}}}
        (conf_d / "pmux_widget.json").write_text(json.dumps(enable, indent=2))
        page = {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}
        (config / "labconfig" / "page_config.json").write_text(json.dumps(page, indent=2))
        notebook = self.dirs.notebooks / "demo.ipynb"
        if NOTEBOOK.is_file():
            shutil.copyfile(NOTEBOOK, notebook)
        else:
            notebook.write_text(json.dumps(_fallback_notebook(), indent=1))
        if SDK_NOTEBOOK.is_file():  # a source checkout's: agents run from cells (the SDK)
            shutil.copyfile(SDK_NOTEBOOK, self.dirs.notebooks / SDK_NOTEBOOK.name)
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
            # sessions started in the server's terminals ("New session", the demo's own):
            # simulated, as the fleet's (lab_sim.py)
            **(
                {"PMUX_WIDGET_CLAUDE": str(write_wrapper(self.dirs.root / "bin"))}
                if self.simulated
                else {}
            ),
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
        if not self._wait_ready(stop or threading.Event()):
            return False
        self._open_panel()
        return True

    def start_terminal_session(self, folder: Path) -> str:
        """A session in a new JupyterLab terminal, as the panel's "New session" starts one
        (``POST pmux/api/sessions/new``); its tab is open in the workspace the browser opens.
        Returns the terminal's name."""
        folder.mkdir(parents=True, exist_ok=True)
        answer = self._api(
            "POST", "/pmux/api/sessions/new", {"cwd": str(folder), "where": "terminal"}
        )
        self.terminal = str(answer["terminal"])
        self._open_panel()
        return self.terminal

    def _open_panel(self) -> None:
        """The workspace the browser opens shows the extension's side panel (a user opens it
        from the status bar; the demo starts with it open), and the demo's terminal session's
        tab when there is one (the first thing a newcomer sees: a tab with a dot)."""
        terms = [f"terminal:{self.terminal}"] if self.terminal else []
        layout = {
            "main": {"dock": {"type": "tab-area", "currentIndex": 0, "widgets": terms}},
            "left": {"collapsed": True, "visible": True, "widgets": []},
            "right": {
                "collapsed": False,
                "visible": True,
                "current": PANEL_ID,
                "widgets": [PANEL_ID],
            },
        }
        data: dict[str, Any] = {"layout-restorer:data": layout}
        for key in terms:
            data[key] = {"data": {"name": key.split(":", 1)[1]}}
        body = {"data": data, "metadata": {"id": "default"}}
        try:
            self._api("PUT", "/lab/api/workspaces/default", body)
        except (OSError, ValueError) as exc:  # the panel then starts closed: not fatal
            print(f"(the demo's workspace was not written: {exc})", file=sys.stderr)

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
        while True:
            client = BlockingKernelClient(connection_file=str(connection))
            client.load_connection_file()
            client.start_channels()
            try:
                client.wait_for_ready(timeout=max(1.0, deadline - time.monotonic()))
                break
            except RuntimeError as exc:
                # A starting kernel on a busy machine can miss a heartbeat (1 s): the client
                # then calls it dead, though the server still runs it. Ask again, in time.
                client.stop_channels()
                if "died" not in str(exc) or time.monotonic() > deadline:
                    raise
                print(f"(the kernel did not answer yet: {exc}; asking again)", file=sys.stderr)
                time.sleep(0.5)
        try:
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
