"""Which tmux sockets a poll asks: only those a server listens on (a dead server leaves its
socket file behind; asking it would cost a tmux process every poll)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from pmux_widget.system import tmux


def test_socket_paths_skip_a_dead_servers_socket(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TMUX_TMPDIR", str(tmp_path))
    monkeypatch.delenv("PMUX_WIDGET_TMUX_SOCKETS", raising=False)
    base = tmp_path / f"tmux-{os.getuid()}"
    base.mkdir()
    dead = base / "dead"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
        gone.bind(str(dead))  # bound, never listening, then closed: the file stays
    live = base / "live"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(live))
    server.listen(1)
    try:
        assert tmux.socket_paths() == [live]
    finally:
        server.close()


@pytest.mark.tmux
def test_a_live_tmux_server_is_listed_and_keeps_running(tmp_path: Path, monkeypatch) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux not installed")
    monkeypatch.setenv("TMUX_TMPDIR", str(tmp_path))
    monkeypatch.delenv("PMUX_WIDGET_TMUX_SOCKETS", raising=False)
    env = {**os.environ, "TMUX_TMPDIR": str(tmp_path)}
    subprocess.run(["tmux", "-L", "probe", "new", "-d", "sleep 60"], env=env, check=True)
    try:
        (path,) = tmux.socket_paths()
        assert path.name == "probe"
        assert len(tmux.list_panes()) == 1  # the connect left the server well
    finally:
        subprocess.run(["tmux", "-L", "probe", "kill-server"], env=env, check=False)
