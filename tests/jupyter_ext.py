"""A real ``jupyter server`` with pmux-widget's server extension, for the tests.

Run as a subprocess on a free loopback port, with its own JUPYTER_CONFIG_DIR (holding the
repo's ``jupyter-config/server-config/pmux_widget.json`` in ``jupyter_server_config.d``, as a
wheel install puts it in ``etc/jupyter``: an editable install does not), JUPYTER_DATA_DIR,
JUPYTER_RUNTIME_DIR, CLAUDE_CONFIG_DIR, PMUX_WIDGET_HOME and a token. The front-end's browser
tests can start one the same way (``LabServer(tmp_path).start()``; ``lab=True`` for
``jupyter lab``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from pmux_widget import hooks
from pmux_widget.system.home import PmuxHome

from .helpers import free_port, running, runtime_files, wait_until

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "jupyter-config" / "server-config" / "pmux_widget.json"
TOKEN = "pmux-test-token-0123456789abcdef"


class LabServer:
    """One Jupyter server process; ``url(path)`` is ``http://127.0.0.1:<port><base_url><path>``."""

    def __init__(
        self,
        tmp: Path,
        *,
        base_url: str = "/",
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        lab: bool = False,
        claude: Path | None = None,
        pmux: Path | None = None,
    ) -> None:
        self.tmp = tmp
        self.base_url = base_url
        self.port = free_port()
        self.claude = claude or tmp / "claude"
        self.pmux = PmuxHome(pmux or tmp / "pmux")
        self.config_dir = tmp / "jupyter-config"
        self.log_file = tmp / "jupyter-server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.claude.mkdir(parents=True, exist_ok=True)
        self.pmux.ensure()
        conf_d = self.config_dir / "jupyter_server_config.d"
        conf_d.mkdir(parents=True, exist_ok=True)
        shutil.copy(CONFIG, conf_d / "pmux_widget.json")
        (tmp / "notebooks").mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "JUPYTER_CONFIG_DIR": str(self.config_dir),
            "JUPYTER_DATA_DIR": str(tmp / "jupyter-data"),
            "JUPYTER_RUNTIME_DIR": str(tmp / "jupyter-runtime"),
            "CLAUDE_CONFIG_DIR": str(self.claude),
            "PMUX_WIDGET_HOME": str(self.pmux.root),
            "PMUX_WIDGET_TEST_ROUTES": "1",
            **(env or {}),
        }
        self.args = args
        self.lab = lab

    # ------------------------------------------------------------------ lifecycle

    def command(self) -> list[str]:
        app = "jupyterlab" if self.lab else "jupyter_server"
        command = [
            sys.executable,
            "-m",
            app,
            "--no-browser",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.base_url={self.base_url}",
            f"--ServerApp.root_dir={self.tmp / 'notebooks'}",
            *self.args,
        ]
        if os.getuid() == 0:
            command.append("--allow-root")
        return command

    def start(self, *, hub: bool = True) -> LabServer:
        """Start it; return once Jupyter answers (and, with ``hub``, the extension's hub)."""
        with self.log_file.open("ab") as log:
            # no tty, as a service manager or JupyterHub's spawner runs it
            self.proc = subprocess.Popen(
                self.command(),
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until(
            lambda: (
                running(self.proc, "the Jupyter server", self.log)
                and self.get("api/status").status_code == 200
            ),
            60,
            what=lambda: f"the Jupyter server to answer; its log:\n{self.log()}",
            not_yet=(requests.RequestException,),
        )
        if hub:
            wait_until(
                lambda: (
                    running(self.proc, "the Jupyter server", self.log)
                    and self.get("pmux/api/sessions").status_code == 200
                ),
                60,
                what=lambda: f"the server's hub to answer; its log:\n{self.log()}",
                not_yet=(requests.RequestException,),
            )
        return self

    def stop(self) -> int:
        """A clean stop (SIGTERM, as a service manager or JupyterHub's spawner sends)."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return proc.returncode if proc is not None else 0
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            raise AssertionError(
                f"the Jupyter server did not stop; its log:\n{self.log()}"
            ) from None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")[-6000:]

    # ------------------------------------------------------------------ HTTP

    def url(self, path: str = "", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}{self.base_url}{path}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {TOKEN}"}

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("headers", self.headers())
        return requests.get(self.url(path), timeout=kwargs.pop("timeout", 15), **kwargs)

    def post(self, path: str, body: Any, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("headers", self.headers())
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return requests.post(self.url(path), data=data, timeout=kwargs.pop("timeout", 30), **kwargs)

    def cookie_session(self) -> requests.Session:
        """A browser-like session: logged in with Jupyter's login cookie (no token after
        that), holding the ``_xsrf`` cookie a page gets."""
        session = requests.Session()
        answer = session.get(self.url("login"), timeout=15)
        assert answer.status_code == 200, answer.status_code
        xsrf = session.cookies.get("_xsrf")
        answer = session.post(
            self.url("login"),
            data={"password": TOKEN, "_xsrf": xsrf},
            allow_redirects=False,
            timeout=15,
        )
        assert answer.status_code in (200, 302), (answer.status_code, answer.text[:500])
        assert any(c.name.startswith("username-") for c in session.cookies), session.cookies
        return session

    # ------------------------------------------------------------------ the hub

    def runtime_files(self) -> list[dict[str, Any]]:
        return runtime_files(self.pmux)

    def server_hubs(self) -> list[dict[str, Any]]:
        """The runtime files of hubs that run in the server's process."""
        return [info for info in self.runtime_files() if info.get("pid") == self.pid]


class Hooks:
    """Our hooks installed in the server's Claude settings; fired like Claude Code does
    (the installed command, ``sh -c``, the payload on stdin)."""

    def __init__(self, server: LabServer) -> None:
        self.server = server
        settings = server.claude / "settings.json"
        hooks.install(settings, server.pmux, tool_hooks=True)  # tests fire every event
        groups = json.loads(settings.read_text())["hooks"]
        self.commands = {event: g[0]["hooks"][0]["command"] for event, g in groups.items()}

    def fire(self, event: str, session_id: str, **fields: Any) -> None:
        body = {
            "session_id": session_id,
            "transcript_path": f"/nowhere/{session_id}.jsonl",
            "cwd": "/home/dev/projects/acme-api",
            "hook_event_name": event,
            **fields,
        }
        env = {**self.server.env, "TMUX_PANE": ""}
        result = subprocess.run(
            ["/bin/sh", "-c", self.commands[event]],
            input=json.dumps(body).encode() + b"\n",
            env=env,
            capture_output=True,
            timeout=15,
        )
        assert result.returncode == 0 and result.stdout == b"", result
