"""The attach host (``system.attach``): ``<claude> attach <job>`` on a private tmux server, read
and typed through ``system.keys``, detached with Ctrl+Z, its server and folder gone after, and
a client that does not detach ended by pid. A stand-in client here (a script that draws a
line and exits on Ctrl+Z, as ``claude attach`` does); the real CLI:
tests/real_claude/test_bg_actions.py."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from pmux_widget.system import attach, keys
from pmux_widget.system.processes import pid_alive

from .helpers import wait_until

pytestmark = pytest.mark.tmux

CLIENT = """#!{python}
import os, signal, sys, tty
marker = {marker!r}
if not {detaches}:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # outlives its terminal: ended by pid
job = sys.argv[2]
tty.setraw(0)
sys.stdout.write(f"attached to {{job}}\\r\\n")
sys.stdout.flush()
while True:
    data = os.read(0, 64)
    if {detaches} and b"\\x1a" in data:
        open(marker, "w").write("detached")
        sys.exit(0)
    if data:
        os.write(1, data.replace(b"\\r", b"\\r\\n"))
"""


def _client(tmp_path: Path, detaches: bool) -> tuple[Path, Path]:
    marker = tmp_path / "detached"
    script = tmp_path / "claude"
    script.write_text(CLIENT.format(python=sys.executable, marker=str(marker), detaches=detaches))
    script.chmod(0o755)
    return script, marker


def _folders() -> set[str]:
    return {p.name for p in Path(os.environ.get("TMPDIR", "/tmp")).glob("pmux-attach-*")}


@pytest.fixture(autouse=True)
def _tmux() -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")


def test_attach_reads_types_and_detaches_with_ctrl_z(tmp_path: Path) -> None:
    script, marker = _client(tmp_path, detaches=True)
    before = _folders()
    env = attach.cli_environment(tmp_path / "config", None)
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / "config") and "TMUX_PANE" not in env
    with attach.attached(str(script), "ab12cd34", env) as pane:
        assert not pane.socket.startswith(f"/tmp/tmux-{os.getuid()}/")  # no poll lists it
        wait_until(lambda: "attached to ab12cd34" in keys.capture(pane), 10)
        keys.send_keys(pane, "hello", literal=True)
        wait_until(lambda: "hello" in keys.capture(pane), 10)
        client = pane.shell_pid
    assert marker.read_text() == "detached"  # Ctrl+Z, not a kill
    assert not pid_alive(client)
    assert _folders() == before


def test_a_client_that_stays_is_ended_by_pid(tmp_path: Path) -> None:
    script, marker = _client(tmp_path, detaches=False)
    with attach.attached(str(script), "ab12cd34", attach.cli_environment(tmp_path, None)) as pane:
        wait_until(lambda: "attached to" in keys.capture(pane), 10)
        client = pane.shell_pid
    assert not marker.exists()
    wait_until(lambda: not pid_alive(client), 10)


def test_the_attach_ends_with_its_holder(tmp_path: Path) -> None:
    """A hub killed without its stop() (a killed kernel) must not leave its attach running: the
    server's watchdog ends it once the holder's pid is gone, and the client with it (it
    detaches on its terminal's hang-up). A hub that takes the attach over holds it on."""

    script, _ = _client(tmp_path, detaches=True)
    env = attach.cli_environment(tmp_path / "config", None)
    holders = [subprocess.Popen(["sleep", "600"]) for _ in range(2)]
    try:
        opened = attach.open_attach(str(script), "ab12cd34", env, holder_pid=holders[0].pid)
        wait_until(lambda: "attached to" in keys.capture(opened.pane), 10)
        attach.hold(opened, holders[1].pid)  # taken over
        holders[0].kill()
        holders[0].wait()
        # a watchdog that still watched the first holder would end it within WATCHDOG_S
        deadline = attach.WATCHDOG_S * 2
        with pytest.raises(TimeoutError):
            wait_until(lambda: not attach.attach_alive(opened), deadline)
        holders[1].kill()
        holders[1].wait()
        wait_until(
            lambda: not pid_alive(opened.client_pid) and not Path(opened.folder).exists(),
            attach.WATCHDOG_S * 5,
            what="the attach ended with its holder",
        )
    finally:
        for holder in holders:
            holder.kill()
            holder.wait()


def test_the_watchdog_keeps_an_attach_handed_over_during_its_check(tmp_path: Path) -> None:
    """The race behind a flaky run of the test above: the watchdog read the old holder's pid,
    the attach was handed over (the file replaced) and the old holder died before the
    watchdog's ``kill -0``. Replayed exactly with a ``cat`` that replaces the file right after
    its first read: the watchdog must keep watching the new holder, and end the attach once
    that one is gone."""

    folder = tmp_path / "attach"
    folder.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(folder / "tmux.sock"))
    dead = subprocess.Popen(["true"])
    dead.wait()
    new_holder = subprocess.Popen(["sleep", "600"])
    (folder / "holder").write_text(f"{dead.pid}\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_cat = bin_dir / "cat"
    real_cat = shutil.which("cat")
    fake_cat.write_text(
        "#!/bin/sh\n"
        f'if [ ! -e "{tmp_path}/read-once" ]; then\n'
        f'  : > "{tmp_path}/read-once"\n'
        f'  {real_cat} "$@"\n'
        f'  echo {new_holder.pid} > "{folder}/holder.new" && mv "{folder}/holder.new" "$1"\n'
        "  exit 0\n"
        "fi\n"
        f'exec {real_cat} "$@"\n'
    )
    fake_cat.chmod(0o755)
    script = tmp_path / "watchdog.sh"
    script.write_text(attach._WATCHDOG.replace("{every}", "0.05"))
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    watchdog = subprocess.Popen(["/bin/sh", str(script), str(folder)], env=env)
    try:
        wait_until(lambda: (tmp_path / "read-once").exists(), 10, what="the first read")
        with pytest.raises(TimeoutError):  # the old code ended it here, on the dead old pid
            wait_until(lambda: not folder.exists(), 1.0)
        new_holder.kill()
        new_holder.wait()
        wait_until(lambda: not folder.exists(), 10, what="the attach ended with its new holder")
        assert watchdog.wait(10) == 0
    finally:
        sock.close()
        new_holder.kill()
        new_holder.wait()
        watchdog.kill()
        watchdog.wait()
