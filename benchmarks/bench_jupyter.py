"""The hub inside a Jupyter server: P7 (idle CPU) for the server extension's hub.

The P7 setup of ``bench_hub`` (50 sessions: sleeping ``claude`` processes with PID files whose
``procStart`` matches, and transcripts under ``projects/``), watched by a ``jupyter server``
process with pmux-widget's server extension enabled (a conf.d file in its own config dir),
default poll. Once its hub has read every transcript (``GET pmux/api/sessions``) and settled,
the server's CPU time (user + system, all threads) is sampled for 60 s; then the same with the
hub turned off (``PMUX_WIDGET_SERVER_HUB=0``) on the same sessions. The budget (P7's 0.5 % of
one core) holds for what the hub adds to the server: the difference. RSS of both is reported
(what a hub costs a process: the figure a kernel that keeps its own hub pays too).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import (
    ROOT,
    Homes,
    Row,
    Sleepers,
    log,
    run_alone,
    temp_homes,
    wait_until,
    write_pid_file,
)
from benchmarks.bench_hub import P7_MAX_PCT, _cwd, _place_transcripts, _sid

__all__ = ["main"]

TOKEN = "pmux-bench-token"
CONFIG = ROOT / "jupyter-config" / "server-config" / "pmux_widget.json"


class JupyterProcess:
    """``python -m jupyter_server`` on ``homes`` with the extension enabled; ``hub``: its hub
    on or off."""

    def __init__(self, homes: Homes, hub: bool) -> None:
        self.homes = homes
        self.hub = hub
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.dir = homes.root / ("jupyter-on" if hub else "jupyter-off")
        self.proc: subprocess.Popen[bytes] | None = None
        self.ps: psutil.Process | None = None

    def __enter__(self) -> JupyterProcess:
        conf_d = self.dir / "config" / "jupyter_server_config.d"
        conf_d.mkdir(parents=True, exist_ok=True)
        shutil.copy(CONFIG, conf_d / "pmux_widget.json")
        (self.dir / "root").mkdir(exist_ok=True)
        env = self.homes.env(
            JUPYTER_CONFIG_DIR=str(self.dir / "config"),
            JUPYTER_DATA_DIR=str(self.dir / "data"),
            JUPYTER_RUNTIME_DIR=str(self.dir / "runtime"),
            PMUX_WIDGET_SERVER_HUB="1" if self.hub else "0",
        )
        command = [
            sys.executable,
            "-m",
            "jupyter_server",
            "--no-browser",
            f"--port={self.port}",
            "--ServerApp.port_retries=0",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={self.dir / 'root'}",
        ]
        if os.getuid() == 0:
            command.append("--allow-root")
        with open(self.dir / "server.log", "wb") as out:
            self.proc = subprocess.Popen(
                command, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
            )
        self.ps = psutil.Process(self.proc.pid)
        wait_until(lambda: self._status("api/status") == 200, 120, "the Jupyter server", 0.2)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def _get(self, path: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/{path}", headers={"Authorization": f"token {TOKEN}"}
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, None
        except OSError:
            return 0, None

    def _status(self, path: str) -> int:
        assert self.proc is not None
        if self.proc.poll() is not None:
            log_text = (self.dir / "server.log").read_text()[-2000:]
            raise RuntimeError(f"the Jupyter server exited: {log_text}")
        return self._get(path)[0]

    def all_read(self, count: int) -> bool:
        status, body = self._get("pmux/api/sessions")
        if status != 200:
            return False
        sessions = body["sessions"]
        read = [s for s in sessions if sum(s["tokens"].values()) > 0]
        return len(sessions) >= count and len(read) >= count

    def cpu_seconds(self) -> float:
        assert self.ps is not None
        times = self.ps.cpu_times()
        return times.user + times.system


def _idle(homes: Homes, count: int, hub: bool, window: int, settle: float) -> dict[str, float]:
    with JupyterProcess(homes, hub) as server:
        started = time.monotonic()
        if hub:
            wait_until(lambda: server.all_read(count), 180, "the server hub to read all", 0.5)
        ready = time.monotonic() - started
        time.sleep(settle)
        log(f"P7 (Jupyter, hub {'on' if hub else 'off'}): CPU over {window} s")
        t_start, c_start = time.monotonic(), server.cpu_seconds()
        worst, last = 0.0, c_start
        for i in range(window):
            time.sleep(max(0.0, t_start + i + 1 - time.monotonic()))
            cpu = server.cpu_seconds()
            worst, last = max(worst, cpu - last), cpu
        wall = time.monotonic() - t_start
        assert server.ps is not None
        rss = server.ps.memory_info().rss
        threads = server.ps.num_threads()
        final = server.all_read(count) if hub else True
    used = last - c_start
    return {
        "pct": used / wall * 100,
        "ms": used * 1000,
        "worst_ms": worst * 1000,
        "wall": wall,
        "rss_mb": rss / (1 << 20),
        "threads": threads,
        "ready": ready,
        "final": float(final),
    }


def p7_jupyter(quick: bool) -> list[Row]:
    count = 50
    window = 10 if quick else 60
    statuses = ["idle"] * 35 + ["busy"] * 10 + ["waiting"] * 5
    with temp_homes("p7j") as homes, Sleepers(homes.root, count) as sleepers:
        sessions = [(_sid(7, k), _cwd(k)) for k in range(count)]
        _place_transcripts(homes, sessions, 300_000, 4)
        now = time.time_ns() // 1_000_000
        for (sid, cwd), pid, status in zip(sessions, sleepers.pids, statuses, strict=True):
            write_pid_file(homes, pid, sid, cwd, status, now)
        settle = 2.0 if quick else 5.0
        on = _idle(homes, count, True, window, settle)
        off = _idle(homes, count, False, window, settle)
    added = on["pct"] - off["pct"]
    return [
        (
            f"P7 hub inside a Jupyter server, {count} live sessions, {on['wall']:.0f} s "
            "(% of one core it adds)",
            f"{added:.3f} % (server {on['pct']:.3f} % with it, {off['pct']:.3f} % without)",
            f"<= {P7_MAX_PCT} %",
            added <= P7_MAX_PCT and bool(on["final"]),
        ),
        (
            "P7 Jupyter: busiest second with / without the hub; RSS with / without; threads",
            f"{on['worst_ms']:.0f} / {off['worst_ms']:.0f} ms; {on['rss_mb']:.0f} / "
            f"{off['rss_mb']:.0f} MiB; {on['threads']} / {off['threads']} "
            f"(all read {on['ready']:.1f} s after start)",
            "info",
            True,
        ),
    ]


def main(quick: bool = False) -> list[Row]:
    """P7 for the server extension's hub; returns the table rows."""
    return p7_jupyter(quick)


if __name__ == "__main__":
    run_alone(main)
