"""Watching a running CLI: the :class:`Observer` polls its PID files and transcripts,
a :class:`Run` holds one scenario while it is driven (the live objects, the actions, the
waits)."""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    ClaudeEnv,
    wait_until,
)
from pmux_widget.demo.scripted_model import ScriptedModel

PLACEHOLDER_HOME = "/home/dev"
PLACEHOLDER_PID = 4242


def _now_ms() -> int:
    return int(time.time() * 1000)


# --------------------------------------------------------------------------- observation


class Observer:
    """Polls a :class:`ClaudeEnv`'s PID files and transcripts on a thread, logging changes.

    Events are dicts ``{"t": ms epoch, "source": "pid" | "transcript", ...}`` appended to
    ``events`` in the order they were seen.
    """

    def __init__(self, env: ClaudeEnv, interval: float = 0.02) -> None:
        self.env = env
        self.interval = interval
        self.events: list[dict[str, Any]] = []
        self._pid_seen: dict[str, str] = {}
        self._offsets: dict[Path, int] = {}
        self._partial: dict[Path, bytes] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="observer", daemon=True)

    def start(self) -> Observer:
        """Start polling."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Poll one last time and stop."""
        self._stop.set()
        self._thread.join(5)
        self.poll()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def poll(self) -> None:
        """One pass over the PID files and transcripts."""
        now = _now_ms()
        sessions = self.env.sessions_dir
        current: dict[str, str] = {}
        if sessions.is_dir():
            for f in sessions.iterdir():
                if re.fullmatch(r"\d+\.json", f.name):
                    with contextlib.suppress(OSError):
                        current[f.name] = f.read_text()
        for name, text in current.items():
            if self._pid_seen.get(name) != text:
                try:
                    data = json.loads(text)
                except ValueError:
                    continue  # torn write: see it on the next pass
                self._pid_seen[name] = text
                self.events.append({"t": now, "source": "pid", "file": name, "data": data})
        for name in list(self._pid_seen):
            if name not in current:
                del self._pid_seen[name]
                self.events.append({"t": now, "source": "pid", "file": name, "data": None})
        projects = self.env.config_dir / "projects"
        if projects.is_dir():
            for f in sorted(projects.rglob("*.jsonl")):
                self._tail(f, now)

    def _tail(self, path: Path, now: int) -> None:
        off = self._offsets.get(path, 0)
        try:
            with open(path, "rb") as fh:
                fh.seek(off)
                chunk = fh.read()
        except OSError:
            return
        if not chunk:
            return
        self._offsets[path] = off + len(chunk)
        data = self._partial.pop(path, b"") + chunk
        lines = data.split(b"\n")
        if lines[-1]:
            self._partial[path] = lines[-1]
        rel = str(path.relative_to(self.env.config_dir))
        for line in lines[:-1]:
            if line.strip():
                with contextlib.suppress(ValueError):
                    self.events.append(
                        {"t": now, "source": "transcript", "file": rel, "record": json.loads(line)}
                    )


# --------------------------------------------------------------------------- a run


@dataclass
class Run:
    """One recorded scenario: the live objects while driving, and what was seen."""

    name: str
    env: ClaudeEnv
    model: ScriptedModel
    tmux: TmuxClaude | None
    observer: Observer
    started_ms: int
    cli: Path | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def act(self, what: str, fn: Callable[[], Any] | None = None) -> Any:
        """Log a user action (with its time), then perform it."""
        self.actions.append({"t": _now_ms(), "source": "action", "action": what})
        return fn() if fn else None

    # --- waiting helpers used by the drivers

    def hook_names(self) -> list[str]:
        """Recorded hook event names so far."""
        return self.env.hook_events()

    def wait_hook(self, name: str, timeout: float = 60.0, count: int = 1) -> None:
        """Wait until ``name`` has fired ``count`` times."""
        wait_until(lambda: self.hook_names().count(name) >= count, timeout, what=f"hook {name}")

    def pid_status(self) -> str | None:
        """The live PID file's status."""
        info = self.tmux.pid_info() if self.tmux else None
        return info.get("status") if info else None

    def wait_status(self, status: str, timeout: float = 60.0) -> None:
        """Wait for a PID-file status."""
        assert self.tmux is not None
        self.tmux.wait_status(status, timeout)

    def wait_transcript(
        self,
        pred: Callable[[dict[str, Any]], bool],
        timeout: float = 30.0,
        what: str = "transcript record",
    ) -> None:
        """Wait until a transcript record (observed by the observer) satisfies ``pred``."""
        wait_until(
            lambda: any(
                e["source"] == "transcript" and pred(e["record"])
                for e in list(self.observer.events)
            ),
            timeout,
            what=what,
        )

    def settle(self, quiet: float = 1.5, timeout: float = 20.0) -> None:
        """Wait until no new hook, PID or transcript event arrived for ``quiet`` seconds.

        Used at the end of a scenario so late writes (flushes, metadata) are captured.
        """

        def count() -> int:
            return len(self.observer.events) + len(self.hook_names())

        last = count()
        last_change = time.monotonic()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(0.1)
            c = count()
            if c != last:
                last, last_change = c, time.monotonic()
            elif time.monotonic() - last_change >= quiet:
                return
