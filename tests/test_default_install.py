"""A plain ``pip install pmux-widget`` (no extras) in a real venv (issue 30 item 2): Web Push
works (``pywebpush`` is a dependency), channels without Apprise say how to get it, and no
route of ours answers 500 for a missing optional part.

The venv is real: Python's ``venv`` with the base dependencies only (``[project]
dependencies`` of pyproject.toml, no extra) and this checkout's wheel installed into it
(``--no-deps``, so its shared data enables the server extension as on a user's machine).
It is kept under ``.cache/base-venv/<hash of the dependencies>/`` between runs (the first
build takes a minute or two from pip's cache; later runs reinstall only the wheel).

One case is SIMULATED: Web Push's packages missing from a server's Python (only a broken
install lacks a dependency). A directory on ``PYTHONPATH`` shadows ``py_vapid`` and
``pywebpush`` with modules whose import fails as an absent module's does.

Slow; the only stand-in is the push service (tests/notify_servers.py), as in
tests/test_push_routes.py.
"""

from __future__ import annotations

import email.parser
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from pmux_widget.notify.config import Channel, edit_config

from .jupyter_ext import LabServer
from .notify_servers import PushService

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "base-venv"

pytestmark = pytest.mark.slow

#: a module that fails to import as a package that is not installed does
ABSENT = "raise ModuleNotFoundError(f'No module named {__name__!r}', name=__name__)\n"


def _run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=900, check=False,
                          **kwargs)  # type: ignore[call-overload]  # fmt: skip
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the base dependencies and this checkout's wheel; returns its bin dir."""
    wheels = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)])
    [wheel] = wheels.glob("pmux_widget-*.whl")
    # the base dependencies as the wheel declares them (Requires-Dist without an extra)
    meta = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-py')[0]}.dist-info/METADATA")
    parsed = email.parser.BytesParser().parsebytes(meta)
    deps = sorted(d for d in parsed.get_all("Requires-Dist") or [] if "extra ==" not in d)
    key = hashlib.sha256(json.dumps([sys.version, deps]).encode()).hexdigest()[:12]
    venv = CACHE / key
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".ready").exists():
            _run([sys.executable, "-m", "venv", "--clear", str(venv)])
            _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *deps])
            (venv / ".ready").touch()
        _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps",
              "--force-reinstall", str(wheel)])  # fmt: skip
    bin_dir = venv / "bin"
    probe = (
        "import importlib.util as u; "
        "print([m for m in ('apprise', 'pywebpush', 'py_vapid') if u.find_spec(m)])"
    )
    found = _run([str(bin_dir / "python"), "-c", probe]).stdout.strip()
    assert found == "['pywebpush', 'py_vapid']", f"the base venv holds {found}"
    return bin_dir


class BaseServer(LabServer):
    """A Jupyter server run by the base venv's Python, importing the installed wheel."""

    def __init__(self, tmp: Path, bin_dir: Path, pythonpath: Path | None = None) -> None:
        super().__init__(tmp, env={"PMUX_WIDGET_NOTIFY_DELAY": "0"})
        self.bin_dir = bin_dir
        self.env.pop("PYTHONPATH", None)  # never this checkout: the wheel in the venv
        if pythonpath is not None:
            self.env["PYTHONPATH"] = str(pythonpath)
        self.env["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"

    def command(self) -> list[str]:
        command = super().command()
        return [str(self.bin_dir / "python"), *command[1:]]


@pytest.fixture
def push() -> Iterator[PushService]:
    service = PushService().start()
    yield service
    service.stop()


def _routes(server: BaseServer, subscription: dict[str, object]) -> dict[str, requests.Response]:
    """Every push route once (and the overview the panel reads)."""
    presence = {"device": "phone", "sessions": [], "visible": True, "focused": True}
    return {
        "key": server.get("pmux/api/push/key"),
        "subscribe": server.post("pmux/api/push/subscriptions", subscription),
        "browsers": server.get("pmux/api/push/subscriptions"),
        "presence": server.post("pmux/api/push/presence", presence),
        "answer": server.post("pmux/api/push/answer", {"token": "t" * 22, "action": "approve"}),
        "notify": server.get("pmux/api/notify"),
    }


def test_web_push_works_on_a_plain_install(
    base_venv: Path, tmp_path: Path, push: PushService
) -> None:
    server = BaseServer(tmp_path, base_venv)
    with edit_config(server.pmux) as box:  # a channel, though Apprise is not there
        box[0] = type(box[0])((Channel("json://127.0.0.1:9/x"),), box[0].settings)
    server.start()
    try:
        phone = push.browser("phone")
        answers = _routes(server, {**phone.subscription(), "device": "Pixel 8"})
        codes = {name: answer.status_code for name, answer in answers.items()}
        wanted = {"key": 200, "subscribe": 201, "browsers": 200, "presence": 204, "answer": 404,
                  "notify": 200}  # fmt: skip
        assert codes == wanted, {n: a.text for n, a in answers.items()}
        assert len(answers["key"].json()["public_key"]) == 87
        overview = answers["notify"].json()
        # masked without Apprise too (its scheme and host only)
        assert [c["url"] for c in overview["channels"]] == ["json://***@127.0.0.1:9/…"]
        # a message really goes: pywebpush signs and encrypts it in the base venv; the channel
        # says what it lacks (exit 1: not everything went)
        sent = subprocess.run(
            [str(base_venv / "pmux-widget"), "notify", "test"],
            env={**server.env, "PMUX_WIDGET_HOME": str(server.pmux.root)},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert sent.returncode == 1, sent.stdout + sent.stderr
        lines = sent.stdout.splitlines()
        apprise = "pip install 'pmux-widget[notify]'"
        failed = f"FAIL json://***@127.0.0.1:9/…: channels need Apprise: {apprise}"
        assert failed in lines, lines
        assert [line for line in lines if line.startswith("OK   browser Pixel 8 (push:")], lines
        [delivered] = push.delivered
        assert delivered.vapid_ok and delivered.payload["state"] == "test", delivered
    finally:
        server.stop()
    assert "Traceback" not in server.log(), server.log()


def test_channels_without_apprise_say_how_to_get_it(base_venv: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PMUX_WIDGET_HOME": str(tmp_path / "pmux")}
    env.pop("PYTHONPATH", None)
    added = subprocess.run(
        [str(base_venv / "pmux-widget"), "notify", "add", "ntfys://ntfy.sh/claude-7f3c9e1b2a"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert added.returncode == 2, added.stdout + added.stderr
    assert "channels need Apprise: pip install 'pmux-widget[notify]'" in added.stderr
    assert "Traceback" not in added.stderr


def test_push_routes_without_web_push_packages_answer_503_with_the_fix(
    base_venv: Path, tmp_path: Path, push: PushService
) -> None:
    shadow = tmp_path / "shadow"  # SIMULATED absence (see the module doc)
    for name in ("py_vapid", "pywebpush", "http_ece"):
        (shadow / name).mkdir(parents=True)
        (shadow / name / "__init__.py").write_text(ABSENT)
    server = BaseServer(tmp_path / "server", base_venv, pythonpath=shadow).start()
    try:
        answers = _routes(server, {**push.browser("phone").subscription(), "device": "phone"})
        assert not [n for n, a in answers.items() if a.status_code >= 500 and a.status_code != 503]
        key = answers["key"]
        assert key.status_code == 503, key.text
        assert key.json()["error"] == (
            "Web Push needs py_vapid, which this Jupyter server's Python lacks: "
            "pip install 'pywebpush>=2.5,<3' 'py-vapid>=1.9,<2'"
        )
    finally:
        server.stop()
