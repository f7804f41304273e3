"""What the end-to-end tests need around a hub: a change log, timings, the tracked CLIs.

* :class:`ChangeLog` is a hub listener that timestamps every change on the hub thread, so a
  test can measure "keystroke → state seen in ``hub.fleet``" and check sequences of states.
* :class:`Timings` collects one test's latencies (``conftest.py`` prints them all and writes
  ``test-output/real_claude_timings.json``).
* :class:`Tracked` bundles one :class:`ClaudeEnv` (hooks installed or not), the scripted
  model, a real :class:`Hub` with its sources, and the CLIs started in tmux.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pmux_widget.core.model import Change, Session
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.hub import Hub

from ..helpers import wait_until

__all__ = ["TIMINGS", "TIMINGS_FILE", "ChangeLog", "PidSampler", "Seen", "Timings", "Tracked"]


@dataclass(frozen=True)
class Seen:
    """One change the hub made, as a listener saw it on the hub thread."""

    t: float  # time.monotonic() when the change was applied
    wall: float  # the same moment, ms since the epoch (to compare with hook recorder times)
    before: Session | None
    after: Session


class ChangeLog:
    """A hub listener that timestamps every change (for latency measurements and sequences)."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.seen: list[Seen] = []
        self.unlisten = hub.add_listener(self._on_changes)

    def _on_changes(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        t, wall = time.monotonic(), time.time() * 1000
        for change in changes:
            self.seen.append(Seen(t, wall, change.before, change.after))

    def of(self, sid: str, since: float = 0.0) -> list[Seen]:
        return [s for s in list(self.seen) if s.after.session_id == sid and s.t >= since]

    def first(self, sid: str, since: float, pred: Callable[[Session], bool]) -> Seen | None:
        """The first change of ``sid`` at or after ``since`` whose result satisfies ``pred``."""
        return next((s for s in self.of(sid, since) if pred(s.after)), None)

    def states(self, sid: str, since: float = 0.0) -> list[tuple[str, str]]:
        """(state, source) after each state move of ``sid``, in order."""
        out = []
        for s in self.of(sid, since):
            if s.before is None or s.before.state is not s.after.state:
                out.append((s.after.state.value, s.after.source))
        return out


class Timings:
    """Latencies measured by one test; written to test-output/real_claude_timings.json."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.rows: list[dict[str, Any]] = []

    def add(self, what: str, ms: float, budget_ms: float | None = None, **extra: Any) -> float:
        row = {"what": what, "ms": round(ms, 1), "budget_ms": budget_ms, **extra}
        self.rows.append(row)
        print(f"[timing] {self.test}: {what}: {ms:.0f} ms" + (f" ({extra})" if extra else ""))
        return ms


#: test name → its timing rows, for the terminal summary and the JSON file
TIMINGS: dict[str, list[dict[str, Any]]] = {}
TIMINGS_FILE = Path(__file__).resolve().parents[2] / "test-output" / "real_claude_timings.json"


class Tracked:
    """CLIs in tmux (one ClaudeEnv), the scripted model, and a real Hub watching them."""

    def __init__(
        self, env: ClaudeEnv, hub: Hub, model: ScriptedModel, cli: Path, hooked: bool
    ) -> None:
        self.env = env
        self.hub = hub
        self.model = model
        self.cli = cli
        self.hooked = hooked
        self.log = ChangeLog(hub)
        self.claudes: list[TmuxClaude] = []

    @property
    def tc(self) -> TmuxClaude:
        return self.claudes[0]

    def spawn(self, args: Sequence[str] = ()) -> tuple[TmuxClaude, str]:
        """Start one more CLI (with ``args``, e.g. ``--permission-mode plan``) at its prompt;
        wait until the hub knows its session from its PID file; return it and its session id."""
        tc = TmuxClaude(self.env, self.cli, args)
        self.claudes.append(tc)
        tc.start(timeout=90)
        sid = wait_until(tc.session_id, 30, what="the CLI's PID file")
        # The hub has seen the PID file (its watcher is up) and, with hooks, SessionStart.
        wait_until(
            lambda: (
                (s := self.hub.fleet.get(sid)) is not None
                and s.pid == tc.pid
                and s.tracking.pid_status is not None
                and (s.hooked or not self.hooked)
            ),
            30,
            what=f"the hub to know session {sid}",
        )
        return tc, sid

    def session(self, sid: str) -> Session:
        return self.hub.fleet[sid]

    def close(self) -> None:
        for tc in self.claudes:
            with contextlib.suppress(Exception):
                tc.close()
        self.log.unlisten()
        self.hub.stop()


class PidSampler:
    """Samples a CLI's PID file every 20 ms on a thread: the ground truth of what the file said
    (statuses that lived shorter than the hub's watcher could see included), for reports."""

    def __init__(self, tc: TmuxClaude, interval: float = 0.02) -> None:
        self.tc = tc
        self.interval = interval
        self.samples: list[tuple[float, str | None, int | None]] = []  # (t, status, stamp)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pid-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        last = None
        while not self._stop.is_set():
            info = self.tc.pid_info()
            if info is not None:
                key = (info.get("status"), info.get("statusUpdatedAt"))
                if key != last:
                    self.samples.append((time.monotonic(), *key))
                    last = key
            self._stop.wait(self.interval)

    def statuses(self, since: float = 0.0) -> list[str | None]:
        return [status for t, status, _ in list(self.samples) if t >= since]

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
