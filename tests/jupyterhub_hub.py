"""A real JupyterHub for the tests: DummyAuthenticator, SimpleLocalProcessSpawner, the
configurable-http-proxy of this checkout's ``node_modules`` (package.json), on loopback ports.

Every user runs under this test's uid (SimpleLocalProcessSpawner spawns as the hub's user),
each with a HOME, PMUX_WIDGET_HOME, CLAUDE_CONFIG_DIR and Jupyter dirs of their own, given by
the spawner's ``environment`` (as an admin would, docs/jupyterhub.md). The single-user servers
run this venv's ``jupyterhub-singleuser`` with the editable install's extensions (the venv's
``etc/jupyter``, ``share/jupyter``), as a wheel installs them in a single-user image.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from pmux_widget.system.home import PmuxHome
from pmux_widget.system.processes import pid_alive

from .helpers import free_port, running, runtime_files, wait_until

ROOT = Path(__file__).resolve().parents[1]
PROXY = ROOT / "node_modules" / ".bin" / "configurable-http-proxy"
SERVER_CONFIG = ROOT / "jupyter-config" / "server-config" / "pmux_widget.json"
#: the admin service's token (the test's own: creates users' tokens, starts servers)
ADMIN_TOKEN = "pmux-test-hub-admin-0123456789abcdef"

LAB_CONFIG = {
    "ServerApp": {"jpserver_extensions": {"jupyter_lsp": False}},
    "LabApp": {
        "expose_app_in_browser": True,
        "news_url": None,
        "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
    },
}

CONFIG = """\
import json, sys
c = get_config()  # noqa: F821
spec = json.loads({spec!r})
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = spec["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = spec["hub_port"]
c.JupyterHub.db_url = "sqlite:///" + spec["dir"] + "/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = spec["dir"] + "/cookie_secret"
c.JupyterHub.pid_file = spec["dir"] + "/jupyterhub.pid"
c.ConfigurableHTTPProxy.command = [spec["proxy"]]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%d" % spec["proxy_api_port"]
c.ConfigurableHTTPProxy.pid_file = spec["dir"] + "/proxy.pid"
c.ConfigurableHTTPProxy.auth_token = "pmux-test-proxy-token"
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set(spec["users"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = spec["dir"] + "/home/{{username}}"
# docs/jupyterhub.md's second command, as written there: each user's hooks, as that user
c.Spawner.cmd = ["sh", "-c", 'pmux-widget install --create >/dev/null 2>&1; '
                 'exec jupyterhub-singleuser "$@"', "jupyterhub-singleuser"]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.args = ["--ServerApp.root_dir=" + spec["dir"] + "/home"]
if spec["allow_root"]:
    c.Spawner.args.append("--allow-root")
c.JupyterHub.services = [{{"name": "pmux-test", "api_token": spec["admin_token"]}}]
c.JupyterHub.load_roles = [{{
    "name": "pmux-test", "services": ["pmux-test"],
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
}}]


def user_env(spawner):
    home = spec["dir"] + "/home/" + spawner.user.name
    return {{
        "PMUX_WIDGET_HOME": home + "/.pmux_widget",
        "CLAUDE_CONFIG_DIR": spec["claude"].get(spawner.user.name, home + "/.claude"),
        "JUPYTER_CONFIG_DIR": home + "/.jupyter",
        "JUPYTER_DATA_DIR": home + "/.local/share/jupyter",
        "JUPYTER_RUNTIME_DIR": home + "/.local/share/jupyter/runtime",
        "PMUX_WIDGET_NOTIFY_DELAY": "0",
    }}


# a value of Spawner.environment may be a callable of the spawner: one per variable
c.Spawner.environment = {{
    name: (lambda spawner, name=name: user_env(spawner)[name])
    for name in ("PMUX_WIDGET_HOME", "CLAUDE_CONFIG_DIR", "JUPYTER_CONFIG_DIR",
                 "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "PMUX_WIDGET_NOTIFY_DELAY")
}}
c.Spawner.env_keep = ["PATH", "PYTHONPATH", "LANG", "LC_ALL", "TMUX_TMPDIR"]
"""


class HubUnavailable(RuntimeError):
    """JupyterHub or configurable-http-proxy is not installed (`make install` installs both)."""


def check_available() -> None:
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "jupyterhub").exists() or not (bin_dir / "jupyterhub-singleuser").exists():
        raise HubUnavailable(f"no jupyterhub in {bin_dir}: pip install -e '.[test]'")
    if not PROXY.exists():
        raise HubUnavailable(f"no {PROXY}: npm ci")


@dataclass
class HubUser:
    """One user of the hub: their home, pmux home, Claude dir, and an API token of theirs."""

    hub: JupyterHub
    name: str
    token: str = ""

    @property
    def home(self) -> Path:
        return self.hub.dir / "home" / self.name

    @property
    def pmux(self) -> PmuxHome:
        return PmuxHome(self.home / ".pmux_widget")

    @property
    def claude(self) -> Path:
        return self.hub.claude.get(self.name) or self.home / ".claude"

    @property
    def base_url(self) -> str:
        return f"/user/{self.name}/"

    @property
    def env(self) -> dict[str, str]:
        """The user's environment, as their server has it (for hooks fired as them)."""
        return {
            **os.environ,
            "HOME": str(self.home),
            "PMUX_WIDGET_HOME": str(self.pmux.root),
            "CLAUDE_CONFIG_DIR": str(self.claude),
        }

    def url(self, path: str = "") -> str:
        return f"{self.hub.origin}{self.base_url}{path}"

    def get(self, path: str, token: str | None = None) -> requests.Response:
        headers = {"Authorization": f"token {token or self.token}"}
        return requests.get(self.url(path), headers=headers, allow_redirects=False, timeout=30)

    def post(self, path: str, body: Any, token: str | None = None) -> requests.Response:
        headers = {"Authorization": f"token {token or self.token}"}
        return requests.post(
            self.url(path), json=body, headers=headers, allow_redirects=False, timeout=30
        )

    def runtime_files(self) -> list[dict[str, Any]]:
        return runtime_files(self.pmux)


class JupyterHub:
    """``jupyterhub`` as a subprocess, in ``dir``; ``users`` are allowed (any password)."""

    def __init__(self, dir: Path, users: tuple[str, ...], claude: dict[str, Path]) -> None:
        check_available()
        self.dir = dir
        self.claude = claude
        self.port = free_port()
        self.origin = f"http://127.0.0.1:{self.port}"
        self.log_file = dir / "jupyterhub.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.users = {name: HubUser(self, name) for name in users}
        for name in users:
            # window.jupyterapp for the browser tests, no news toast (as tests/browser's lab)
            config = dir / "home" / name / ".jupyter" / "jupyter_server_config.json"
            config.parent.mkdir(parents=True, exist_ok=True)
            config.write_text(json.dumps(LAB_CONFIG))
            # the server extension enabled as the wheel's conf.d file enables it (an editable
            # install has it in the venv's etc/jupyter only after `make js`)
            conf_d = config.parent / "jupyter_server_config.d"
            conf_d.mkdir(exist_ok=True)
            (conf_d / "pmux_widget.json").write_bytes(SERVER_CONFIG.read_bytes())
            news = config.parent / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
            news.mkdir(parents=True, exist_ok=True)
            (news / "notification.jupyterlab-settings").write_text(
                json.dumps({"fetchNews": "false", "checkForUpdates": False})
            )
        spec = {
            "port": self.port,
            "hub_port": free_port(),
            "proxy_api_port": free_port(),
            "dir": str(dir),
            "proxy": str(PROXY),
            "users": list(users),
            "admin_token": ADMIN_TOKEN,
            "allow_root": os.getuid() == 0,
            "claude": {name: str(path) for name, path in claude.items()},
        }
        self.config = dir / "jupyterhub_config.py"
        self.config.write_text(CONFIG.format(spec=json.dumps(spec)))

    def start(self) -> JupyterHub:
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        env = {
            **os.environ,
            "PATH": path,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            # the hub's own Jupyter dirs: never the real ~/.jupyter
            "JUPYTER_CONFIG_DIR": str(self.dir / "hub-jupyter"),
            "JUPYTER_RUNTIME_DIR": str(self.dir / "hub-jupyter" / "runtime"),
        }
        with self.log_file.open("ab") as log:
            self.proc = subprocess.Popen(
                [str(Path(sys.executable).parent / "jupyterhub"), "-f", str(self.config)],
                cwd=self.dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(
            lambda: (
                running(self.proc, "JupyterHub", self.log)
                and self.api("GET", "").status_code == 200
            ),
            90,
            interval=0.2,
            what=lambda: f"JupyterHub to answer; its log:\n{self.log()}",
            not_yet=(requests.RequestException,),
        )
        return self

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")[-8000:]

    def api(self, method: str, path: str, body: Any = None) -> requests.Response:
        return requests.request(
            method,
            f"{self.origin}/hub/api/{path}",
            json=body,
            headers={"Authorization": f"token {ADMIN_TOKEN}"},
            timeout=30,
        )

    def spawn(self, name: str) -> HubUser:
        """Start ``name``'s server (as a login does), wait until it and its pmux hub answer,
        and give the user an API token of their own."""
        user = self.users[name]
        answer = self.api("POST", f"users/{name}/tokens", {"note": "pmux tests"})
        assert answer.status_code in (200, 201), answer.text
        user.token = answer.json()["token"]
        answer = self.api("POST", f"users/{name}/server")
        assert answer.status_code in (201, 202), answer.text

        def ready() -> bool:
            model = self.api("GET", f"users/{name}").json()
            server = model.get("servers", {}).get("", {})
            return bool(server.get("ready"))

        wait_until(ready, 120, interval=0.3, what=lambda: f"{name}'s server; log:\n{self.log()}")
        wait_until(
            lambda: user.get("pmux/api/sessions").status_code == 200,
            60,
            interval=0.2,
            what=lambda: f"{name}'s pmux hub; log:\n{self.log()}",
            not_yet=(requests.RequestException,),
        )
        return user

    def server_pids(self) -> list[int]:
        """The single-user servers' pids (their hubs' runtime files say them)."""
        return [int(info["pid"]) for user in self.users.values() for info in user.runtime_files()]

    def stop(self) -> list[int]:
        """SIGTERM: JupyterHub stops every user's server (``cleanup_servers``) and its proxy.
        Returns the pids of what it left running (then killed): none, when all is well."""
        proc, self.proc = self.proc, None
        if proc is None:
            return []
        servers = self.server_pids()
        proxy = self.dir / "proxy.pid"
        with contextlib.suppress(OSError, ValueError):
            servers.append(int(proxy.read_text().strip()))
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        left = [pid for pid in servers if pid_alive(pid)]
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return left
