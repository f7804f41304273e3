"""Shared benchmark helpers: temp homes, fake Claude processes, a ``serve`` subprocess,
realistic hook payloads (:mod:`benchmarks._payloads`, re-exported), HTTP calls, statistics
and the results table.

Nothing here touches ``~/.claude`` or ``~/.pmux_widget``: every home is a fresh temp dir, and
subprocesses get ``PMUX_WIDGET_HOME`` / ``CLAUDE_CONFIG_DIR`` pointing into it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psutil

from benchmarks._payloads import session_cycle, session_start
from pmux_widget import hooks as pmux_hooks
from pmux_widget.agents.claude.paths import encode_project_dir
from pmux_widget.agents.claude.pidfiles import process_start_ticks
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.system.home import PmuxHome

__all__ = [
    "ROOT",
    "Homes",
    "Row",
    "ServeProcess",
    "Sleepers",
    "format_table",
    "get_json",
    "hooked_claude",
    "log",
    "percentile",
    "post_hook",
    "print_table",
    "session_cycle",
    "session_start",
    "summary_ms",
    "temp_homes",
    "wait_until",
    "write_pid_file",
]

#: One line of the results table: (name, value, budget, ok). Rows whose budget is "info"
#: report a number with no budget (always ok).
Row = tuple[str, str, str, bool]

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


#: In the page, pasted into each latency observer: ``stamp(entry)`` notes when a change seen by
#: a MutationObserver is painted. ``frame``: the next animation frame starts (its rendering
#: includes the change); ``painted``: that frame's rendering is done (a message posted from its
#: rAF callback runs once the frame's style, layout and paint are: the "after frame" measure,
#: the budget rows'); ``next``: the frame after starts (an upper bound, a whole frame later).
STAMP_PAINT_JS = """
  const stamp = (entry) => {
    requestAnimationFrame(() => {
      entry.frame = Date.now();
      const channel = new MessageChannel();
      channel.port1.onmessage = () => { entry.painted = Date.now(); };
      channel.port2.postMessage(null);
      requestAnimationFrame(() => { entry.next = Date.now(); });
    });
  };"""


def log(message: str) -> None:
    """Progress goes to stderr; stdout is the table."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def wait_until(predicate: Callable[[], T], timeout: float, what: str, interval=0.05) -> T:
    """Poll ``predicate`` until truthy; ``TimeoutError`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------------- statistics


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def summary_ms(values_ms: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / p99 / max / mean of millisecond values."""
    return {
        "n": len(values_ms),
        "p50": percentile(values_ms, 50),
        "p95": percentile(values_ms, 95),
        "p99": percentile(values_ms, 99),
        "max": max(values_ms),
        "mean": sum(values_ms) / len(values_ms),
    }


# ---------------------------------------------------------------------------- temp homes


@dataclass
class Homes:
    """A benchmark's own pmux-widget home and Claude config dir, under one temp ``root``."""

    root: Path
    pmux: PmuxHome
    claude: Path

    @property
    def settings(self) -> Path:
        return self.claude / "settings.json"

    @property
    def sessions_dir(self) -> Path:
        return self.claude / "sessions"

    @property
    def projects_dir(self) -> Path:
        return self.claude / "projects"

    def env(self, **extra: str) -> dict[str, str]:
        """Environment for a subprocess using these homes (default 30 s poll: no override)."""
        env = dict(os.environ)
        env["PMUX_WIDGET_HOME"] = str(self.pmux.root)
        env["CLAUDE_CONFIG_DIR"] = str(self.claude)
        env.pop("PMUX_WIDGET_POLL_SECONDS", None)
        env.pop("TMUX_PANE", None)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.update(extra)
        return env

    def transcript_path(self, cwd: str, session_id: str) -> Path:
        return self.projects_dir / encode_project_dir(cwd) / f"{session_id}.jsonl"


@contextlib.contextmanager
def temp_homes(name: str) -> Iterator[Homes]:
    """Fresh homes in a temp dir, removed afterwards (whatever happens)."""
    root = Path(tempfile.mkdtemp(prefix=f"pmux-bench-{name}-"))
    try:
        claude = root / "claude"
        (claude / "sessions").mkdir(parents=True)
        (claude / "projects").mkdir()
        yield Homes(root, PmuxHome(root / "pmux").ensure(), claude)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def hooked_claude(
    root: str | os.PathLike[str], name: str, base_url: str, **claude: Any
) -> tuple[PmuxHome, ClaudeEnv]:
    """A pmux-widget home ``<root>/pmux-<name>`` and a Claude env ``<root>/claude-<name>``
    (``claude``: its other arguments) whose settings run our hook into that home."""
    pmux_home = PmuxHome(Path(root) / f"pmux-{name}")
    env = ClaudeEnv(base_url, root=Path(root) / f"claude-{name}", **claude)
    env.extra_env["PMUX_WIDGET_HOME"] = str(pmux_home.root)
    pmux_hooks.install(env.settings_file, pmux_home)
    return pmux_home, env


# -------------------------------------------------------------------- fake Claude processes


class Sleepers:
    """``count`` real sleeping processes whose name is ``claude`` (``/bin/sleep`` run through a
    symlink called ``claude``: the kernel's comm, which psutil reports, is the file name), so
    the hub's "nearest Claude ancestor" walk and PID-file liveness work as with real sessions.
    """

    def __init__(self, directory: Path, count: int) -> None:
        bin_dir = directory / "fake-bin"
        bin_dir.mkdir(exist_ok=True)
        link = bin_dir / "claude"
        if not link.exists():
            link.symlink_to(shutil.which("sleep") or "/bin/sleep")
        self.procs = [
            subprocess.Popen(
                [str(link), "86400"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(count)
        ]
        self.pids = [p.pid for p in self.procs]

    def __enter__(self) -> Sleepers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for proc in self.procs:
            with contextlib.suppress(OSError):
                proc.kill()
        for proc in self.procs:
            with contextlib.suppress(Exception):
                proc.wait(5)


def write_pid_file(
    homes: Homes, pid: int, session_id: str, cwd: str, status: str, now_ms: int
) -> Path:
    """A ``sessions/<pid>.json`` as Claude Code 2.1.197 writes it (procStart from /proc).

    Its status is written at ``now_ms``, which must come after ``pid`` started, as with the
    real CLI: a status older than the process would say the pid was reused since (the hub
    then takes the session for gone, and P7 measured an idle hub with no live session)."""
    record: dict[str, Any] = {
        "pid": pid,
        "sessionId": session_id,
        "cwd": cwd,
        "startedAt": now_ms - 60_000,
        "procStart": process_start_ticks(pid) or "",
        "version": "2.1.197",
        "peerProtocol": 1,
        "kind": "interactive",
        "entrypoint": "cli",
        "name": f"{Path(cwd).name}-{session_id[:2]}",
        "nameSource": "derived",
        "status": status,
        "updatedAt": now_ms,
        "statusUpdatedAt": now_ms,
    }
    if status == "waiting":
        record["waitingFor"] = "permission prompt"
    path = homes.sessions_dir / f"{pid}.json"
    path.write_text(json.dumps(record, separators=(",", ":")))
    return path


# ----------------------------------------------------------------------- serve subprocess


@dataclass
class ServeProcess:
    """``python -m pmux_widget serve`` in a subprocess on ``homes`` (sources on, default poll).

    ``port`` and ``token`` come from its runtime file and the home's token.
    """

    homes: Homes
    proc: subprocess.Popen[bytes] | None = None
    port: int = 0
    token: str = ""
    ps: psutil.Process | None = None
    log_path: Path = field(default_factory=Path)

    def __enter__(self) -> ServeProcess:
        self.log_path = self.homes.root / "serve.log"
        with open(self.log_path, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "pmux_widget", "serve"],
                env=self.homes.env(),
                cwd=str(self.homes.root),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.ps = psutil.Process(self.proc.pid)
        try:
            self.port = wait_until(self._runtime_port, 60, "the serve subprocess's runtime file")
        except TimeoutError:
            self.__exit__()
            log_text = self.log_path.read_text()[-2000:]
            raise RuntimeError(f"serve did not start: {log_text}") from None
        self.token = self.homes.pmux.token()
        return self

    def _runtime_port(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"serve exited: {self.log_path.read_text()[-2000:]}")
        for path in self.homes.pmux.runtime_dir.glob("*.json"):
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(path.read_text())
                if info.get("pid") == self.proc.pid:
                    return int(info["port"])
        return 0

    def __exit__(self, *exc: object) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the hub process (threads included)."""
        assert self.ps is not None
        times = self.ps.cpu_times()
        return times.user + times.system

    def rss(self) -> int:
        assert self.ps is not None
        return self.ps.memory_info().rss

    def peak_rss(self) -> int:
        """VmHWM: the process's peak resident set size."""
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
        return 0


# ---------------------------------------------------------------------------------- HTTP


def _request(
    port: int, method: str, path: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def post_hook(port: int, token: str, payload: dict[str, Any] | bytes, ppid: int = 0) -> int:
    """POST one hook payload as the hook script does (token, pane, ppid, sent headers)."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        "X-Pmux-Token": token,
        "Content-Type": "application/json",
        "X-Pmux-Pane": "",
        "X-Pmux-Sent": str(time.time_ns() // 1_000_000),
    }
    if ppid:
        headers["X-Pmux-Ppid"] = str(ppid)
    status, _ = _request(port, "POST", "/api/hook", body, headers)
    return status


def get_json(port: int, token: str, path: str) -> Any:
    status, body = _request(port, "GET", path, None, {"X-Pmux-Token": token})
    if status != 200:
        raise RuntimeError(f"GET {path}: HTTP {status}: {body[:200]!r}")
    return json.loads(body)


# --------------------------------------------------------------------------------- table


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def result_text(row: Sequence[Any]) -> str:
    budget, ok = str(row[2]), bool(row[3])
    if budget.strip().lower() == "info":
        return "info"
    return "PASS" if ok else "FAIL"


def format_table(rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table of rows (name, value, budget, ok)."""
    lines = ["| benchmark | value | budget | result |", "|---|---|---|---|"]
    for row in rows:
        name, value, budget = (str(row[0]), format_value(row[1]), str(row[2]))
        cells = [c.replace("|", "\\|") for c in (name, value, budget, result_text(row))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def print_table(rows: Sequence[Sequence[Any]]) -> None:
    print(format_table(rows), flush=True)


def run_alone(main: Callable[..., list[Row]], argv: Sequence[str] | None = None) -> None:
    """``python -m benchmarks.bench_x [--quick]``: run, print the table, exit 1 on a FAIL."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    args = parser.parse_args(argv)
    rows = main(quick=args.quick)
    print_table(rows)
    sys.exit(0 if all(row[3] for row in rows) else 1)


def rows_or_failure(
    measure: Callable[[bool], list[Row]], quick: bool, name: str, budget: str
) -> list[Row]:
    """``measure(quick)``; a real CLI that misbehaves on a loaded machine gives one failed row
    with the reason, not a crash (``make bench`` exits 2 only when a benchmark is broken)."""
    try:
        return measure(quick)
    except (TimeoutError, RuntimeError, OSError) as exc:
        log(f"{name.split()[0]} did not complete: {exc!r}")
        return [(name, f"did not complete: {str(exc)[:120]}", budget, False)]
