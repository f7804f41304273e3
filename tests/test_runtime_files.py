"""A hub's runtime file (``$PMUX_WIDGET_HOME/runtime/<hub id>.json``) goes away on every
stop: the Jupyter server's SIGTERM, its SIGINT without a tty (how JupyterHub's spawner stops a
server: KeyboardInterrupt ends Jupyter's loop and skips its extensions' cleanup), its own
shutdown (``POST api/shutdown``), a script that exits without ``stop()``; and a hub removes
the file of a hub that died without a stop (SIGKILL), at its start and while it runs, also
when another process has taken the dead hub's pid since.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pmux_widget.hooks.hubs import clean_stale_hub_files, live_hubs
from pmux_widget.runtime import hub as hub_module
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.clock import now_ms
from pmux_widget.system.home import PmuxHome

from .conftest import Homes
from .helpers import wait_until
from .jupyter_ext import LabServer


def _stopped(server: LabServer, how: str) -> None:
    if how == "shutdown":
        answer = server.post("api/shutdown", {})
        assert answer.status_code in (200, 202), answer.text
    else:
        assert server.proc is not None
        server.proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
    assert server.proc is not None
    try:
        server.proc.wait(45)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the server did not stop on {how}; log:\n{server.log()}") from None


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "shutdown"])
def test_the_servers_hub_file_goes_on_every_stop(tmp_path: Path, how: str) -> None:
    # stdin is /dev/null (jupyter_ext.LabServer): no tty, as under JupyterHub's spawner,
    # where jupyter_server installs no SIGINT handler of its own
    server = LabServer(tmp_path).start()
    try:
        [info] = wait_until(server.server_hubs, 30, what="the server hub's runtime file")
        pid = server.pid
        _stopped(server, how)
    finally:
        server.stop()
    assert not [i for i in server.runtime_files() if i.get("pid") == pid], (how, server.log())
    assert info["hub_id"].startswith(f"{pid}-")


SCRIPT = """
import os, signal, sys, time
from pmux_widget.runtime.hub import Hub
hub = Hub().start()
print(hub.runtime_file, flush=True)
if sys.argv[1] == "exit":
    sys.exit(0)
time.sleep(120)  # a KeyboardInterrupt (SIGINT) ends it, unhandled
"""


@pytest.mark.parametrize("how", ["exit", "SIGINT"])
def test_a_process_that_exits_without_stop_takes_its_hubs_file(homes: Homes, how: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, how],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        path = Path(proc.stdout.readline().strip())
        assert path.parent == homes.pmux.runtime_dir, path
        if how == "SIGINT":
            assert path.exists()
            proc.send_signal(signal.SIGINT)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not path.exists(), proc.stderr.read() if proc.stderr else ""


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _write(home: PmuxHome, name: str, pid: int, started_at: int) -> Path:
    path = home.runtime_dir / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pid": pid, "port": 9, "started_at": started_at}))
    return path


def test_a_starting_hub_removes_dead_hubs_files_and_reused_pids(homes: Homes) -> None:
    home = homes.pmux.ensure()
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        dead = _write(home, "dead", _dead_pid(), now_ms())
        # the dead hub's pid is another process's now: one that started after that hub did
        reused = _write(home, "reused", sleeper.pid, now_ms() - 3_600_000)
        # a live process that was already running when its hub started: kept
        alive = _write(home, "alive", sleeper.pid, now_ms() + 5_000)
        hub = Hub().start()
        try:
            assert not dead.exists() and not reused.exists()
            assert alive.exists() and hub.runtime_file.exists()
        finally:
            hub.stop()
        assert not hub.runtime_file.exists()
    finally:
        sleeper.kill()
        sleeper.wait(10)


def test_a_running_hub_sweeps_a_hub_that_died_meanwhile(
    homes: Homes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_module, "SWEEP_SECONDS", 0.2)
    home = homes.pmux.ensure()
    hub = Hub().start()
    try:
        # a second hub in a process SIGKILL ends: nothing of it runs to remove its file
        proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, "sleep"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        other = Path(proc.stdout.readline().strip())
        assert other.exists() and len(live_hubs(home)) == 2
        proc.kill()
        proc.wait(10)
        # only the sweep removes it now
        assert other.exists()
        wait_until(lambda: not other.exists(), 10, what="the sweep to remove the dead file")
        assert hub.runtime_file.exists()
        assert [h.path for h in live_hubs(home)] == [hub.runtime_file]
    finally:
        hub.stop()


def test_clean_stale_keeps_other_hubs_of_this_process(homes: Homes) -> None:
    home = homes.pmux.ensure()
    mine = _write(home, "mine", os.getpid(), now_ms() - 3_600_000 * 24 * 365)
    garbage = home.runtime_dir / "garbage.json"
    garbage.write_text("{not json")
    removed = clean_stale_hub_files(home)
    assert mine.exists(), "another hub of this process (tests run several): left alone"
    assert removed == [garbage] and not garbage.exists()
