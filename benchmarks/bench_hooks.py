"""Hook script budgets: P1 (one live hub, vs a bare curl) and P2 (hub hung / no hub).

The hook runs exactly as Claude Code runs it: ``/bin/sh -c '<command>'`` where ``<command>``
is read back from the ``settings.json`` that :func:`pmux_widget.hooks.install` wrote into a
temp Claude config dir, with the payload on stdin.

P1, fairness: a driver subprocess spawns both commands the same way (``subprocess.Popen`` of
``/bin/sh -c …``, stdin = the payload file, stdout/stderr to /dev/null, wall time from before
the spawn to after ``wait``), interleaved (hook, curl, curl, hook, …), against the same hub
(``python -m pmux_widget serve`` in its own process, sources on). The baseline is
``exec curl -s -o /dev/null -H 'X-Pmux-Token: …' --data-binary @payload URL``: one sh that
execs curl, like the hook command execs the script. The driver names itself ``claude``
(prctl), because Claude is the process that runs hook commands: the hub then resolves the
session's Claude pid from ``X-Pmux-Ppid`` once and caches it, as in real use. Budget: median
hook time ≤ 1.5 × median curl time, for a ~0.5 KB and a ~100 KB payload.

P2: the same command with a "hung hub" (a socket, listed in ``runtime/``, that accepts
connections and never answers) and with no hub at all; each run must exit 0 and spool the
event byte for byte.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import (
    Homes,
    Row,
    ServeProcess,
    log,
    percentile,
    run_alone,
    session_cycle,
    temp_homes,
)
from pmux_widget import hooks

__all__ = ["main"]

P1_MAX_RATIO = 1.5
P2_HUNG_MAX_S = 1.2
P2_NONE_MAX_MS = 50.0
CWD = "/home/dev/projects/orbit-service"
SESSION = "0b9c3f4e-5d6a-4b7c-8d9e-0f1a2b3c4d5e"


def installed_command(homes: Homes) -> str:
    """Install our hooks into the temp settings.json and read our command back from it."""
    hooks.install(homes.settings, homes.pmux)
    doc = json.loads(homes.settings.read_text())
    for groups in doc["hooks"].values():
        for group in groups:
            for hook in group.get("hooks", []):
                if hook.get("command", "").endswith(hooks.MARKER):
                    return hook["command"]
    raise RuntimeError(f"no pmux-widget hook command in {homes.settings}")


def write_payloads(homes: Homes) -> dict[str, Path]:
    """A ~0.5 KB PreToolUse and a ~100 KB PostToolUse (a Read of a big file)."""
    transcript = str(homes.transcript_path(CWD, SESSION))
    small = session_cycle(SESSION, CWD, transcript, seed=1)[3]
    big = session_cycle(SESSION, CWD, transcript, read_size=100_000, seed=1)[2]
    paths = {}
    for name, payload in (("small", small), ("100k", big)):
        data = json.dumps(payload, separators=(",", ":")).encode()
        path = homes.root / f"payload-{name}.json"
        path.write_bytes(data)
        paths[f"{len(data) / 1024:.1f} KB"] = path
    return paths


# ---------------------------------------------------------------------------- P1 driver


def _spawn(command: str, stdin_path: str) -> tuple[float, int]:
    with open(stdin_path, "rb") as stdin:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=stdin,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        code = proc.wait()
        return time.perf_counter() - t0, code


def _driver() -> None:
    """Subprocess: time the commands given on stdin (JSON), print the times (JSON)."""
    import ctypes

    with contextlib.suppress(Exception):  # PR_SET_NAME: look like Claude to the hub
        ctypes.CDLL(None).prctl(15, b"claude", 0, 0, 0)
    config = json.load(sys.stdin)
    commands: dict[str, str] = config["commands"]
    result: dict[str, Any] = {}
    for label, path in config["payloads"].items():
        for _ in range(config["warmup"]):
            for command in commands.values():
                _spawn(command.replace("@PAYLOAD@", path), path)
        times: dict[str, list[float]] = {kind: [] for kind in commands}
        codes: dict[str, list[int]] = {kind: [] for kind in commands}
        kinds = list(commands)
        for i in range(config["n"]):
            for kind in kinds if i % 2 == 0 else reversed(kinds):  # A B, B A, A B …
                seconds, code = _spawn(commands[kind].replace("@PAYLOAD@", path), path)
                times[kind].append(seconds)
                codes[kind].append(code)
        result[label] = {"times": times, "codes": codes}
    json.dump(result, sys.stdout)


def p1(quick: bool) -> list[Row]:
    n, warmup = (10, 2) if quick else (100, 5)
    rows: list[Row] = []
    with temp_homes("p1") as homes:
        command = installed_command(homes)
        payloads = write_payloads(homes)
        with ServeProcess(homes) as hub:
            url = f"http://127.0.0.1:{hub.port}/api/hook"
            curl = (
                f"exec curl -s -o /dev/null -H 'X-Pmux-Token: {hub.token}' "
                f"--data-binary @@PAYLOAD@ {url}"
            )
            config = {
                "commands": {"hook": command, "curl": curl},
                "payloads": {label: str(path) for label, path in payloads.items()},
                "n": n,
                "warmup": warmup,
            }
            log(f"P1: hook vs curl, {n} interleaved runs each per payload (hub port {hub.port})")
            out = subprocess.run(
                [sys.executable, "-m", "benchmarks.bench_hooks", "--p1-driver"],
                input=json.dumps(config).encode(),
                capture_output=True,
                env=homes.env(),
                check=True,
                timeout=600,
            )
            result = json.loads(out.stdout)
            spooled = len(list(homes.pmux.spool_dir.glob("*.hook")))
        runs = 0
        for label, data in result.items():
            hook_ms = [t * 1000 for t in data["times"]["hook"]]
            curl_ms = [t * 1000 for t in data["times"]["curl"]]
            runs += len(hook_ms) + warmup
            hook_med, curl_med = percentile(hook_ms, 50), percentile(curl_ms, 50)
            ratio = hook_med / curl_med
            paired = percentile([h / c for h, c in zip(hook_ms, curl_ms, strict=True)], 50)
            rows.append(
                (
                    f"P1 hook / bare curl, one live hub, {label} payload (ratio of medians)",
                    f"{ratio:.2f}x (hook {hook_med:.1f} ms, curl {curl_med:.1f} ms, N={n})",
                    f"<= {P1_MAX_RATIO}x",
                    ratio <= P1_MAX_RATIO,
                )
            )
            rows.append(
                (
                    f"P1 {label}: hook p10/p90, curl p10/p90, median of paired ratios",
                    f"hook {percentile(hook_ms, 10):.1f}/{percentile(hook_ms, 90):.1f} ms, "
                    f"curl {percentile(curl_ms, 10):.1f}/{percentile(curl_ms, 90):.1f} ms, "
                    f"{paired:.2f}x",
                    "info",
                    True,
                )
            )
            bad = [c for c in data["codes"]["hook"] + data["codes"]["curl"] if c != 0]
            if bad:
                rows.append((f"P1 {label}: non-zero exit codes", str(bad[:5]), "none", False))
        rows.append(
            (
                "P1 hook runs accepted by the live hub (events spooled instead)",
                f"{spooled} spooled of {runs}",
                "0 spooled",
                spooled == 0,
            )
        )
    return rows


# ---------------------------------------------------------------------------------- P2


class HungHub:
    """A socket that accepts connections and never answers, listed in ``runtime/``."""

    def __init__(self, homes: Homes) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()
        self.runtime = homes.pmux.runtime_dir / "hung-hub.json"
        self.runtime.write_text(json.dumps({"pid": os.getpid(), "port": self.port}))

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.held.append(conn)  # never read, never answered

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)
        self.runtime.unlink(missing_ok=True)
        for conn in self.held:
            conn.close()
        self.sock.close()


def _run_spooling(
    homes: Homes, command: str, payload: Path, runs: int
) -> tuple[list[float], int, int]:
    """Run the hook ``runs`` times from this process; (seconds, exit-0 count, spooled ok)."""
    hooks.remove_spool_entries(hooks.read_spool(homes.pmux))
    expected = payload.read_bytes().rstrip(b"\n")
    times, exit_ok, spooled_ok = [], 0, 0
    for _ in range(runs):
        before = {e.path for e in hooks.read_spool(homes.pmux)}
        seconds, code = _spawn(command, str(payload))
        times.append(seconds)
        exit_ok += code == 0
        new = [e for e in hooks.read_spool(homes.pmux) if e.path not in before]
        spooled_ok += len(new) == 1 and new[0].error is None and new[0].payload_bytes == expected
    return times, exit_ok, spooled_ok


def p2(quick: bool) -> list[Row]:
    hung_runs, none_runs = (2, 8) if quick else (5, 40)
    rows: list[Row] = []
    with temp_homes("p2") as homes:
        command = installed_command(homes)
        payload = write_payloads(homes)
        small = next(iter(payload.values()))
        _run_spooling(homes, command, small, 2)  # warm the page cache
        log(f"P2: hung hub, {hung_runs} runs")
        hung = HungHub(homes)
        try:
            times, exit_ok, spooled = _run_spooling(homes, command, small, hung_runs)
        finally:
            hung.close()
        median = percentile(times, 50)
        rows.append(
            (
                f"P2 hook, hub hung: wall time (median of {hung_runs})",
                f"{median:.3f} s (max {max(times):.3f} s)",
                f"<= {P2_HUNG_MAX_S} s",
                median <= P2_HUNG_MAX_S,
            )
        )
        rows.append(
            (
                "P2 hook, hub hung: exit 0 and event spooled byte for byte",
                f"{min(exit_ok, spooled)}/{hung_runs}",
                "all",
                exit_ok == spooled == hung_runs,
            )
        )
        log(f"P2: no hub, {none_runs} runs")
        times, exit_ok, spooled = _run_spooling(homes, command, small, none_runs)
        ms = [t * 1000 for t in times]
        median = percentile(ms, 50)
        rows.append(
            (
                f"P2 hook, no hub: wall time (median of {none_runs})",
                f"{median:.1f} ms (p95 {percentile(ms, 95):.1f}, max {max(ms):.1f} ms)",
                f"<= {P2_NONE_MAX_MS:g} ms",
                median <= P2_NONE_MAX_MS,
            )
        )
        rows.append(
            (
                "P2 hook, no hub: exit 0 and event spooled byte for byte",
                f"{min(exit_ok, spooled)}/{none_runs}",
                "all",
                exit_ok == spooled == none_runs,
            )
        )
    return rows


def main(quick: bool = False) -> list[Row]:
    """P1 and P2; returns the table rows."""
    return p1(quick) + p2(quick)


if __name__ == "__main__":
    if "--p1-driver" in sys.argv:
        _driver()
    else:
        run_alone(main)
