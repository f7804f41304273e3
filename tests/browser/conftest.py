"""Harness and fixtures for the browser tests (and ``benchmarks/bench_browser.py``).

Real JupyterLab, real kernels, real hooks, real headless Chromium:

* :class:`LabServer` — ``python -m jupyterlab`` on a free port with a known token and sealed
  temp dirs: ``JUPYTER_CONFIG_DIR`` / ``JUPYTER_DATA_DIR`` / ``JUPYTER_RUNTIME_DIR`` /
  ``IPYTHONDIR``, workspaces dir and notebook root (the venv's ``share/jupyter`` labextensions
  stay reachable through ``sys.prefix``). Its kernels inherit ``PMUX_WIDGET_HOME`` and
  ``CLAUDE_CONFIG_DIR`` as RELATIVE paths: a kernel starts in its notebook's directory, so every
  :class:`Workspace` (one directory of notebooks) gets its own hub home and Claude config dir,
  and the notebooks hold exactly what a user types: ``import pmux_widget; pmux_widget.show()``.
* :class:`Workspace` — such a directory, with our hooks installed into its Claude settings;
  :meth:`Workspace.fire` runs the INSTALLED command with ``/bin/sh -c`` and the payload on stdin,
  as Claude Code does (see ``tests/test_hook_path.py``), so the hook script finds the kernel's
  hub through the runtime file the hub wrote into the workspace's home.
* :class:`LabPage` — one JupyterLab page in Chromium (``window.jupyterapp`` is exposed): open a
  notebook, run cells with the keyboard, run commands, wait for the kernel, read the widget, and
  record the kernel websocket's frames (:class:`Frame`).

Nothing here touches ``~/.claude``, ``~/.pmux_widget`` or the real ``~/.jupyter``.

Availability: without ``/usr/bin/chromium`` (or Playwright / JupyterLab) the tests skip with the
reason; with ``CI`` set they fail loudly instead, as they do when Chromium or JupyterLab cannot
start.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.demo.claude_env import NEWEST, CliUnavailable, ensure_cli
from pmux_widget.system.home import PmuxHome

from ..helpers import CHROMIUM, free_port, launch_chromium, wait_until

ROOT = Path(__file__).resolve().parents[2]
#: Screenshots and failure evidence (git-ignored).
OUTPUT = ROOT / "test-output" / "browser"
#: The kernels' homes, relative to the notebook's directory (the kernel's cwd). Hidden, so the
#: file browser in screenshots shows only the notebook.
KERNEL_PMUX_HOME = ".pmux-home"
KERNEL_CLAUDE_DIR = ".claude-config"
LIGHT = "JupyterLab Light"
DARK = "JupyterLab Dark"

__all__ = [
    "CHROMIUM",
    "DARK",
    "LIGHT",
    "OUTPUT",
    "Frame",
    "LabPage",
    "LabServer",
    "LabUnavailable",
    "Workspace",
    "hook_payload",
    "launch_chromium",
    "must_run",
]


class LabUnavailable(RuntimeError):
    """Chromium, Playwright or JupyterLab is missing or cannot start."""


def must_run() -> bool:
    """In CI the browser tests must run: a missing or broken browser is a failure, not a skip."""
    return bool(os.environ.get("CI"))


def check_available() -> None:
    """Raise :class:`LabUnavailable` with the reason when the browser tests cannot run here."""
    if not CHROMIUM.exists():
        raise LabUnavailable(f"{CHROMIUM} not found (Debian package `chromium`)")
    try:
        import jupyterlab  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        raise LabUnavailable(f"{exc.name} is not installed (pip install -e '.[test]')") from exc


def _die_with_parent() -> None:
    """In the child, before exec: get SIGTERM when the process that started it dies (a test
    run killed mid-way must not leave a JupyterLab and its kernels behind)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


# ---------------------------------------------------------------------------- JupyterLab


class LabServer:
    """A JupyterLab server in sealed temp dirs (see the module doc). ``stop()`` removes them."""

    def __init__(
        self,
        base: Path | None = None,
        extension: bool = False,
        env: dict[str, str] | None = None,
        app: str = "jupyterlab",
        terminals: bool = False,
    ) -> None:
        """``extension``: load pmux-widget's server extension and labextension (this
        checkout's build); without, the server runs neither even where the venv has them, so
        the widget's own tests see the widget alone. ``env``: more for the server's
        environment (the server extension's hub reads PMUX_WIDGET_HOME etc. from it)."""
        self.base = base or Path(tempfile.mkdtemp(prefix="pmux-lab-"))
        self.extension = extension
        self.extra_env = dict(env or {})
        self.app = app
        #: JupyterLab terminals (off by default: the widget's tests need none)
        self.terminals = terminals
        self.notebooks = self.base / "notebooks"
        self.port = 0
        self.token = secrets.token_hex(16)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.base / "jupyterlab.log"
        self._owns_base = base is None

    # directories
    @property
    def config_dir(self) -> Path:
        return self.base / "jupyter-config"

    @property
    def user_settings(self) -> Path:
        return self.config_dir / "lab" / "user-settings"

    def start_or_fail(self) -> LabServer:
        """:meth:`start`, a test's failure when it cannot (JupyterLab with the extension did
        not start)."""
        try:
            return self.start()
        except LabUnavailable as exc:
            pytest.fail(f"JupyterLab with the extension did not start: {exc}")

    def start(self, timeout: float = 120) -> LabServer:
        for directory in ("jupyter-config", "jupyter-data", "jupyter-runtime", "ipython"):
            (self.base / directory).mkdir(parents=True, exist_ok=True)
        (self.base / "workspaces").mkdir(exist_ok=True)
        self.notebooks.mkdir(exist_ok=True)
        self.port = free_port()
        config = {
            "ServerApp": {
                "ip": "127.0.0.1",
                "port": self.port,
                "port_retries": 0,
                "open_browser": False,
                "allow_root": True,
                "root_dir": str(self.notebooks),
                "terminals_enabled": self.terminals,
                "jpserver_extensions": {
                    "jupyter_lsp": False,
                    "jupyter_server_terminals": self.terminals,
                    "pmux_widget.jupyter": self.extension,
                },
            },
            "IdentityProvider": {"token": self.token},
            "LabApp": {
                "workspaces_dir": str(self.base / "workspaces"),
                "expose_app_in_browser": True,
                "news_url": None,
                "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            },
            "JupyterNotebookApp": {"expose_app_in_browser": True},
        }
        (self.config_dir / "jupyter_server_config.json").write_text(json.dumps(config, indent=1))
        self._labextension()
        # No "would you like news?" toast over the widget in screenshots.
        self.write_user_setting(
            "@jupyterlab/apputils-extension",
            "notification",
            {"fetchNews": "false", "checkForUpdates": False},
        )
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.config_dir),
            JUPYTER_DATA_DIR=str(self.base / "jupyter-data"),
            JUPYTER_RUNTIME_DIR=str(self.base / "jupyter-runtime"),
            IPYTHONDIR=str(self.base / "ipython"),
            PMUX_WIDGET_HOME=KERNEL_PMUX_HOME,
            CLAUDE_CONFIG_DIR=KERNEL_CLAUDE_DIR,
            # The kernels' hubs poll every 30 s by default; tests drive every change by hooks.
            PMUX_WIDGET_POLL_SECONDS="3600",
            PYTHONUNBUFFERED="1",
        )
        env.update(self.extra_env)
        for name in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTER_PREFER_ENV_PATH", "TMUX"):
            env.pop(name, None)
        env.pop("TMUX_PANE", None)
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", self.app],
                env=env,
                cwd=str(self.base),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        try:
            wait_until(self._ready, timeout, interval=0.1, what="JupyterLab to answer /api/status")
        except (AssertionError, LabUnavailable) as exc:
            self.stop()
            raise LabUnavailable(f"JupyterLab did not start: {exc}\n{self.log_tail()}") from None
        return self

    def _labextension(self) -> None:
        """With the extension: this checkout's labextension build, linked into the server's
        data dir (the venv may hold another checkout's, or none). Without: disabled, in case
        the venv has one (``make js`` links it there)."""
        page_config = self.config_dir / "labconfig" / "page_config.json"
        page_config.parent.mkdir(parents=True, exist_ok=True)
        if not self.extension:
            page_config.write_text(json.dumps({"disabledExtensions": {"pmux-widget": True}}))
            return
        built = ROOT / "pmux_widget" / "labextension"
        if not (built / "package.json").exists():
            raise LabUnavailable(f"{built} is not built: npm run build (or make js)")
        link = self.base / "jupyter-data" / "labextensions" / "pmux-widget"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            link.symlink_to(built, target_is_directory=True)
        page_config.write_text(json.dumps({"disabledExtensions": {}}))

    def _ready(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise LabUnavailable(f"jupyterlab exited with {self.proc.returncode}")
        try:
            status, _ = self.api("GET", "/api/status", timeout=2)
        except OSError:
            return False
        return status == 200

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            # SIGTERM: the server shuts its kernels down (their hubs remove their runtime files).
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        if self._owns_base:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> LabServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # HTTP
    def url(self, path: str = "lab") -> str:
        sep = "&" if "?" in path else "?"
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}{sep}token={self.token}"

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Authorization": f"token {self.token}"}
            if data is not None:
                headers["Content-Type"] = "application/json"
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                return response.status, raw
        finally:
            conn.close()

    def shutdown_kernels(self) -> None:
        """Shut every kernel down (each hub stops and removes its runtime file)."""
        status, sessions = self.api("GET", "/api/sessions")
        for session in sessions if status == 200 else []:
            with contextlib.suppress(OSError):
                self.api("DELETE", f"/api/sessions/{session['id']}")
        status, kernels = self.api("GET", "/api/kernels")
        for kernel in kernels if status == 200 else []:
            with contextlib.suppress(OSError):
                self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def write_user_setting(self, package: str, plugin: str, values: dict[str, Any]) -> None:
        path = self.user_settings / package / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))

    def workspace(self, name: str) -> Workspace:
        return Workspace(self, re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "ws")


# ---------------------------------------------------------------------------- workspaces


def hook_payload(event: str, session_id: str, cwd: str, **fields: Any) -> dict[str, Any]:
    """A hook payload in Claude Code's key order: common fields, the event name, the rest."""
    slug = "-" + cwd.strip("/").replace("/", "-")
    body: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/{slug}/{session_id}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
    }
    body.update(fields)
    return body


def codex_hook_payload(event: str, session_id: str, cwd: str, **fields: Any) -> dict[str, Any]:
    """A hook payload of Codex's shape (docs/codex-behaviour.md): the rollout as
    ``transcript_path``, the model and the permission mode; ``fields`` add or override
    (``turn_id``: every event but SessionStart)."""
    body: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.codex/sessions/2026/12/07/rollout-{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": event,
        "model": "gpt-6.2-sol",
        "permission_mode": "default",
    }
    body.update(fields)
    return body


class Workspace:
    """A directory in the lab's notebook root with its own pmux home and Claude config dir (the
    ones a kernel started there uses), our hooks installed into that Claude config."""

    def __init__(self, server: LabServer, name: str) -> None:
        self.server = server
        self.name = name
        self.dir = server.notebooks / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.pmux = PmuxHome(self.dir / KERNEL_PMUX_HOME).ensure()
        self.claude = self.dir / KERNEL_CLAUDE_DIR
        self.claude.mkdir(exist_ok=True)
        # the tests fire every event, the opt-in per-tool ones too
        hooks.install(self.claude / "settings.json", self.pmux, tool_hooks=True)
        settings = json.loads((self.claude / "settings.json").read_text())
        self.commands: dict[str, str] = {
            event: groups[0]["hooks"][0]["command"] for event, groups in settings["hooks"].items()
        }

    def notebook(self, name: str, *cells: str) -> str:
        """Write a notebook of code cells (a cell starting with ``#md\n`` is Markdown);
        returns its path relative to the lab's root."""

        def cell(i: int, source: str) -> dict[str, Any]:
            if source.startswith("#md\n"):
                return {
                    "cell_type": "markdown",
                    "id": f"cell-{i}",
                    "metadata": {},
                    "source": source[4:],
                }
            return {
                "cell_type": "code",
                "execution_count": None,
                "id": f"cell-{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }

        notebook = {
            "cells": [cell(i, source) for i, source in enumerate(cells)],
            "metadata": {
                "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                "language_info": {"name": "python"},
            },
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        (self.dir / name).write_text(json.dumps(notebook, indent=1))
        return f"{self.name}/{name}"

    def fire(self, body: dict[str, Any], pane: str = "") -> subprocess.CompletedProcess[bytes]:
        """Run the installed hook command for ``body``'s event exactly as Claude Code does."""
        argv, kwargs = self.hook_command(body, pane)
        result = subprocess.run(argv, **kwargs, capture_output=True, timeout=10)
        assert result.returncode == 0 and result.stdout == b"", result
        return result

    def hook_command(
        self, body: dict[str, Any], pane: str = ""
    ) -> tuple[list[str], dict[str, Any]]:
        """(argv, kwargs) for ``subprocess.run`` / ``Popen``: ``/bin/sh -c '<command>'``."""
        env = {**os.environ, "PMUX_WIDGET_HOME": str(self.pmux.root)}
        env.pop("TMUX", None)
        if pane:
            env["TMUX_PANE"] = pane
        else:
            env.pop("TMUX_PANE", None)
        data = json.dumps(body, separators=(",", ":")).encode() + b"\n"
        command = self.commands[body["hook_event_name"]]
        return ["/bin/sh", "-c", command], {"input": data, "env": env}

    def codex_hook_command(self, body: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
        """As :meth:`hook_command`, with the command ``install`` writes into Codex's
        hooks.json (the script, told its agent)."""
        from pmux_widget.hooks.codex_install import AGENT
        from pmux_widget.hooks.script import hook_command

        _, kwargs = self.hook_command({**body, "hook_event_name": "SessionStart"})
        kwargs["input"] = json.dumps(body, separators=(",", ":")).encode() + b"\n"
        return ["/bin/sh", "-c", hook_command(self.pmux, AGENT)], kwargs

    def hubs(self) -> list[dict[str, Any]]:
        """The live hubs' runtime files in this workspace's home."""
        found = []
        for path in sorted(self.pmux.runtime_dir.glob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(path.read_text())
                with contextlib.suppress(OSError):
                    os.kill(int(info["pid"]), 0)
                    found.append(info)
        return found

    def hub_port(self, timeout: float = 30) -> int:
        """The port of the (single) kernel hub serving this workspace."""
        return int(wait_until(self.hubs, timeout, what=f"a hub in {self.pmux.root}")[0]["port"])

    def post(
        self,
        body: dict[str, Any] | list[dict[str, Any]],
        port: int | None = None,
        sent_ms: list[int] | None = None,
    ) -> None:
        """POST hooks straight to the hub over HTTP (one keep-alive connection), as the script
        does but without spawning it: for creating big fleets quickly. ``sent_ms``: each hook's
        ``X-Pmux-Sent`` (when it happened; default now)."""
        port = port or self.hub_port()
        token = self.pmux.token()
        items = body if isinstance(body, list) else [body]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            for i, item in enumerate(items):
                data = json.dumps(item).encode()
                sent = sent_ms[i] if sent_ms else time.time_ns() // 1_000_000
                headers = {
                    "X-Pmux-Token": token,
                    "Content-Type": "application/json",
                    "X-Pmux-Sent": str(sent),
                }
                conn.request("POST", "/api/hook", body=data, headers=headers)
                response = conn.getresponse()
                response.read()
                assert response.status == 204, (response.status, item)
        finally:
            conn.close()

    def sessions(self, port: int | None = None) -> dict[str, Any]:
        """``GET /api/sessions`` of the workspace's hub: what the kernel knows."""
        port = port or self.hub_port()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("GET", "/api/sessions", headers={"X-Pmux-Token": self.pmux.token()})
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, (response.status, body[:200])
            return json.loads(body)
        finally:
            conn.close()

    def write_transcript(
        self, session_id: str, cwd: str, usage: dict[str, int], text: str = "On it."
    ) -> str:
        """A minimal transcript (one prompt, one answer ``text`` with ``usage``) under the
        Claude config dir; returns its path (give it as the hooks' ``transcript_path``)."""
        slug = "-" + cwd.strip("/").replace("/", "-")
        path = self.claude / "projects" / slug / f"{session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        common = {"cwd": cwd, "sessionId": session_id, "version": "2.1.197", "userType": "external"}
        lines = [
            {
                "parentUuid": None,
                "isSidechain": False,
                "type": "user",
                "message": {"role": "user", "content": "let's start"},
                "uuid": f"{session_id[:8]}-u1",
                "timestamp": "2026-07-02T14:00:00.000Z",
                **common,
            },
            {
                "parentUuid": f"{session_id[:8]}-u1",
                "isSidechain": False,
                "type": "assistant",
                "uuid": f"{session_id[:8]}-a1",
                "timestamp": "2026-07-02T14:00:09.000Z",
                "message": {
                    "id": f"msg_{session_id[:8]}",
                    "model": "claude-sonnet-4-5-20250929",
                    "role": "assistant",
                    "type": "message",
                    "stop_reason": "tool_use",
                    "usage": {
                        "input_tokens": usage.get("input", 0),
                        "cache_creation_input_tokens": usage.get("cache_creation", 0),
                        "cache_read_input_tokens": usage.get("cache_read", 0),
                        "output_tokens": usage.get("output", 0),
                    },
                    "content": [{"type": "text", "text": text}],
                },
                **common,
            },
        ]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return str(path)


# ---------------------------------------------------------------------------- the page


@dataclass
class Frame:
    """One websocket frame the page received, with the comm message it carries (if any)."""

    at: float  # time.monotonic() when Playwright reported it
    size: int  # bytes on the wire (the frame's payload)
    msg_type: str | None
    data: dict[str, Any] | None  # a comm_msg's content.data
    content_size: int  # bytes of the message's content part

    @property
    def custom(self) -> dict[str, Any]:
        """The widget's custom message (patch, notify, …), or {}."""
        data = self.data or {}
        content = data.get("content") if data.get("method") == "custom" else None
        return content if isinstance(content, dict) else {}


def parse_kernel_frame(payload: bytes | str) -> tuple[str | None, dict[str, Any] | None, int]:
    """(msg_type, content, content bytes) of a kernel websocket frame, in either protocol:
    JSON text (legacy) or ``v1.kernel.websocket.jupyter.org`` binary (offsets, then channel,
    header, parent header, metadata, content, buffers)."""
    if isinstance(payload, str):
        try:
            msg = json.loads(payload)
        except ValueError:
            return None, None, 0
        content = msg.get("content")
        size = len(json.dumps(content, separators=(",", ":")).encode()) if content else 0
        return msg.get("header", {}).get("msg_type") or msg.get("msg_type"), content, size
    try:
        (count,) = struct.unpack_from("<Q", payload, 0)
        offsets = struct.unpack_from(f"<{count}Q", payload, 8)
        parts = [payload[offsets[i] : offsets[i + 1]] for i in range(count - 1)]
        header = json.loads(parts[1])
        content_raw = parts[4]
        return header.get("msg_type"), json.loads(content_raw), len(content_raw)
    except (struct.error, IndexError, ValueError):
        return None, None, 0


#: JS: the current notebook panel's kernel, connected and idle.
_KERNEL_IDLE = """() => {
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""


class LabPage:
    """JupyterLab in one Playwright page: notebooks, cells, commands, the widget's DOM."""

    def __init__(self, server: LabServer, page: Any) -> None:
        self.server = server
        self.page = page
        self.console: list[str] = []
        self.frames: list[Frame] | None = None  # recording when a list
        page.on("console", lambda msg: self.console.append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: self.console.append(f"pageerror: {exc}"))
        page.on("websocket", self._on_websocket)

    def _on_websocket(self, ws: Any) -> None:
        if "/api/kernels/" not in ws.url:
            return

        def on_frame(payload: bytes | str) -> None:
            if self.frames is None:
                return
            size = len(payload.encode() if isinstance(payload, str) else payload)
            msg_type, content, content_size = parse_kernel_frame(payload)
            data = None
            if msg_type == "comm_msg" and isinstance(content, dict):
                data = content.get("data")
            self.frames.append(Frame(time.monotonic(), size, msg_type, data, content_size))

        ws.on("framereceived", on_frame)

    # ------------------------------------------------------------------ notebooks

    def open_notebook(self, path: str, workspace: str | None = None, timeout: float = 90) -> None:
        """Load JupyterLab on ``path`` in a fresh workspace; wait until its kernel is idle."""
        ws = workspace or re.sub(r"[^A-Za-z0-9-]+", "-", path)
        self.page.goto(self.server.url(f"lab/workspaces/{ws}/tree/{path}?reset"))
        self.page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
            " && window.jupyterapp.shell.currentWidget.content"
            " && window.jupyterapp.shell.currentWidget.content.widgets",
            timeout=timeout * 1000,
        )
        self.wait_kernel_idle(timeout)

    def wait_kernel_idle(self, timeout: float = 60) -> None:
        self.page.wait_for_function(_KERNEL_IDLE, timeout=timeout * 1000, polling=100)

    def cell(self, index: int) -> Any:
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def run_cell(self, index: int, wait: bool = True, timeout: float = 60) -> None:
        """Click into cell ``index`` and press Shift+Enter, as a user does; with ``wait``, wait
        until it ran (execution count set, kernel idle)."""
        self.cell(index).locator(".jp-InputArea-editor").click()
        self.page.keyboard.press("Shift+Enter")
        if wait:
            self.page.wait_for_function(
                """(i) => {
                  const nb = window.jupyterapp.shell.currentWidget.content;
                  const cell = nb.widgets[i];
                  const prompt = cell && cell.node.querySelector('.jp-InputPrompt');
                  return !!prompt && cell.model.executionCount !== null
                    && !prompt.textContent.includes('*');
                }""",
                arg=index,
                timeout=timeout * 1000,
                polling=100,
            )
            self.wait_kernel_idle(timeout)

    def run_all(self, timeout: float = 60) -> None:
        """Run every cell (the Run menu's "Run All Cells"); wait until the code cells ran."""
        self.command("notebook:run-all-cells")
        self.page.wait_for_function(
            """() => window.jupyterapp.shell.currentWidget.content.widgets
                  .filter((c) => c.model.type === 'code')
                  .every((c) => c.model.executionCount !== null
                    && !c.node.querySelector('.jp-InputPrompt').textContent.includes('*'))""",
            timeout=timeout * 1000,
            polling=100,
        )
        self.wait_kernel_idle(timeout)

    def command(self, command: str, args: dict[str, Any] | None = None) -> Any:
        """Execute a JupyterLab command (as the palette or a menu does)."""
        return self.page.evaluate(
            "([id, args]) => window.jupyterapp.commands.execute(id, args).then(() => true)",
            [command, args or {}],
        )

    def kernel_status(self) -> str | None:
        return self.page.evaluate(
            """() => { const w = window.jupyterapp.shell.currentWidget;
                       const k = w && w.sessionContext.session && w.sessionContext.session.kernel;
                       return k ? k.status : null; }"""
        )

    def set_theme(self, theme: str, timeout: float = 30) -> None:
        """Switch the JupyterLab theme (the ``apputils:change-theme`` command) and wait for it."""
        light = "true" if theme == LIGHT else "false"
        self.command("apputils:change-theme", {"theme": theme})
        self.page.wait_for_function(
            "([name, light]) => document.body.dataset.jpThemeName === name"
            " && document.body.dataset.jpThemeLight === light",
            arg=[theme, light],
            timeout=timeout * 1000,
        )
        # JupyterLab covers the page with its splash while it switches: wait until it is gone.
        self.page.wait_for_function(
            "() => !document.querySelector('#jupyterlab-splash')", timeout=timeout * 1000
        )
        self.page.evaluate("() => new Promise((r) => requestAnimationFrame(() => r(true)))")

    # ------------------------------------------------------------------ the widget

    def root(self, within: str = ".jp-Notebook") -> Any:
        """The first rendered widget inside ``within``."""
        return self.page.locator(f"{within} .pmux-root").first

    def row(self, session_id: str, within: str = ".jp-Notebook") -> Any:
        return self.root(within).locator(f'li.pmux-row[data-session-id="{session_id}"]')

    def wait_state(
        self, session_id: str, state: str, within: str = ".jp-Notebook", timeout: float = 20
    ) -> None:
        """Wait until the session's row shows ``state`` (its class, i.e. its dot)."""
        self.page.wait_for_function(
            """([within, sid, state]) => {
              const root = document.querySelector(within + ' .pmux-root');
              const row = root && root.querySelector(`li.pmux-row[data-session-id="${sid}"]`);
              return !!row && row.classList.contains('pmux-row--' + state);
            }""",
            arg=[within, session_id, state],
            timeout=timeout * 1000,
            polling="raf",
        )

    def screenshot(self, name: str, **kwargs: Any) -> Path:
        OUTPUT.mkdir(parents=True, exist_ok=True)
        path = OUTPUT / f"{name}.png"
        self.page.screenshot(path=str(path), **kwargs)
        return path

    # ------------------------------------------------------------------ frames

    def wait_frame(
        self, predicate: Callable[[Frame], bool], since: int = 0, timeout: float = 10
    ) -> Frame:
        """Wait until a frame recorded at index ``since`` or later satisfies ``predicate``
        (Playwright delivers frame events while it waits: this polls with wait_for_timeout)."""
        assert self.frames is not None, "not recording"
        deadline = time.monotonic() + timeout
        while True:
            for frame in self.frames[since:]:
                if predicate(frame):
                    return frame
            if time.monotonic() > deadline:
                raise TimeoutError(f"no such websocket frame within {timeout:g} s")
            self.page.wait_for_timeout(20)

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[Frame]]:
        """Record the kernel websocket frames received inside the block."""
        frames: list[Frame] = []
        self.frames = frames
        try:
            yield frames
        finally:
            self.frames = None


# ---------------------------------------------------------------------------- fixtures


def newest_cli() -> Path:
    """The newest pinned Claude Code CLI; without it the test skips (fails under ``CI`` or
    ``PMUX_REQUIRE_CLAUDE=1``)."""
    try:
        return ensure_cli(NEWEST)
    except CliUnavailable as exc:
        if os.environ.get("CI") or os.environ.get("PMUX_REQUIRE_CLAUDE") == "1":
            pytest.fail(f"real Claude Code CLI required: {exc}", pytrace=False)
        pytest.skip(f"real Claude Code CLI unavailable: {exc}")


def _unavailable(reason: str) -> None:
    if must_run():
        pytest.fail(f"browser tests must run in CI, but: {reason}", pytrace=False)
    pytest.skip(f"browser tests need Chromium + JupyterLab: {reason}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="package")
def lab_server() -> Iterator[LabServer]:
    """One JupyterLab for the whole browser suite."""
    for stale in OUTPUT.glob("FAILED-*"):
        stale.unlink()
    try:
        check_available()
        server = LabServer().start()
    except LabUnavailable as exc:
        _unavailable(str(exc))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def playwright_sync() -> Iterator[Any]:
    """The package's one Playwright (sync API). A second ``sync_playwright()`` while this one
    lives fails ("using Playwright Sync API inside the asyncio loop"): a test that needs a
    browser of its own (other flags) launches it from this one."""
    try:
        check_available()
        from playwright.sync_api import sync_playwright
    except LabUnavailable as exc:
        _unavailable(str(exc))
    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="package")
def browser_context(playwright_sync: Any) -> Iterator[Any]:
    """Headless Chromium and one browser context for the suite (pages share its HTTP cache:
    JupyterLab's bundles load once)."""
    try:
        browser = launch_chromium(playwright_sync)
    except Exception as exc:
        _unavailable(f"Chromium did not start: {exc}")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield context
    finally:
        with contextlib.suppress(Exception):
            context.close()
        browser.close()


@pytest.fixture
def lab(
    request: pytest.FixtureRequest, lab_server: LabServer, browser_context: Any
) -> Iterator[LabPage]:
    """A fresh page on the shared server; on failure, a screenshot and the page's console go
    to test-output/browser/; afterwards the page is closed and every kernel shut down."""
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    lab_page = LabPage(lab_server, page)
    try:
        yield lab_page
    finally:
        failed = any(
            getattr(getattr(request.node, f"rep_{when}", None), "failed", False)
            for when in ("setup", "call")
        )
        if failed:
            OUTPUT.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(Exception):
                # (short timeout: a hung page must not hold the suite for minutes)
                page.screenshot(path=str(OUTPUT / f"FAILED-{request.node.name}.png"), timeout=5000)
            (OUTPUT / f"FAILED-{request.node.name}.console.txt").write_text(
                "\n".join(lab_page.console) + "\n\n--- jupyterlab.log ---\n" + lab_server.log_tail()
            )
        with contextlib.suppress(Exception):
            page.close()
        with contextlib.suppress(OSError):
            lab_server.shutdown_kernels()


@pytest.fixture
def workspace(request: pytest.FixtureRequest, lab_server: LabServer) -> Workspace:
    """A fresh directory in the lab's root with its own pmux home and Claude config."""
    return lab_server.workspace(request.node.name)
