"""P12 for Codex (issue 36's Measures): an action (approve / deny / interrupt / send) → the
real Codex TUI reacted, side by side with Claude's (:mod:`benchmarks.bench_actions`).

The real Codex TUI (the pin) runs in a private tmux server against the scripted Responses
API, with our hooks installed in its sealed home (``install_codex``: entries and trust),
watched by a real Hub, which finds the session's TUI (its pid, then its pane) as it does for
any Codex row. Each action goes through ``runtime.actions.act`` with every check (the pane
holds the session's TUI; its screen shows what the action answers). Latency = from the call
to the first sample of the pane (every 10 ms) taken after the decisive key (``y``, Esc, the
Enter after a prompt) that differs from the one just before it: Codex writes no PID file, so
its screen is the only sign. Approve and deny come 1.2 s after the approval is drawn, as a
click after reading it does; the interrupt comes while text streams (one word every 3 s, so
a word that happens to arrive is rarely taken for the reaction). Budget: P12's, p95 ≤ 300 ms
over 20 actions of each kind (``--quick``: 3); with ``--claude`` Claude's P12 runs right
after, in the same process, and the ratio of the p95s is reported.

``python -m benchmarks.bench_codex_actions [--quick] [--claude]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import bench_actions
from benchmarks._util import Row, log, print_table, rows_or_failure, wait_until
from benchmarks.bench_actions import READ_S, KeyClock, Watch, _one, p12_rows
from pmux_widget import hooks
from pmux_widget.core.model import Session, State
from pmux_widget.demo.claude_env import CliUnavailable
from pmux_widget.demo.codex_cli import APPROVAL, TmuxCodex
from pmux_widget.demo.codex_env import CODEX_VERSION, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import SLOW_TEXT, ScriptedResponses
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.hub import Hub
from pmux_widget.system.home import PmuxHome

__all__ = ["codex_rows", "main"]


class CodexScreen:
    """The TUI's pane as :class:`~benchmarks.bench_actions.Watch` samples it (no PID file)."""

    def __init__(self, tc: TmuxCodex) -> None:
        self.tc = tc

    def screen(self) -> str:
        return self.tc.screen()

    def pid_info(self) -> dict[str, Any] | None:
        return None


def _state(hub: Hub, sid: str, state: State, tc: TmuxCodex, timeout: float = 60.0) -> Session:
    def reached() -> Session | None:
        s = hub.fleet.get(sid)
        return s if s is not None and s.state is state else None

    try:
        return wait_until(reached, timeout, f"{sid[:8]} {state.value}")
    except TimeoutError:
        s = hub.fleet.get(sid)
        log(f"P12 Codex: {sid[:8]} is {s.state.value if s else 'gone'} ({s and s.source})")
        log("P12 Codex: the pane shows:\n" + tc.screen())
        raise


def _measure(quick: bool = False, rounds: int | None = None) -> list[Row]:
    n = rounds or (3 if quick else 20)
    try:
        cli = ensure_codex(CODEX_VERSION)
    except CliUnavailable as exc:
        return [("P12 Codex action → CLI reacted", f"unavailable: {exc}", "<= 300 ms", False)]
    samples: dict[str, list[tuple[float, float]]] = {
        "approve": [],
        "deny": [],
        "interrupt": [],
        "send": [],
    }
    with (
        tempfile.TemporaryDirectory(prefix="pmux-bench-p12-codex-") as tmp,
        ScriptedResponses(slow_interval=3.0) as server,
    ):
        root = Path(tmp)
        env = CodexEnv(server.base_url, root=root / "codex")
        home = PmuxHome(root / "pmux").ensure()
        hooks.install_codex(env.codex_home, home)
        env.extra_env["PMUX_WIDGET_HOME"] = str(home.root)
        (root / "claude").mkdir()
        hub = make_hub(home=home.root, claude_home=root / "claude").start()
        tc = TmuxCodex(env, cli)
        watch: Watch | None = None
        try:
            tc.start(timeout=120)
            tc.type_prompt("hello (warm-up)")

            def mine() -> Session | None:
                rows = [s for s in hub.fleet.values() if s.agent == "codex" and s.pid == tc.pid]
                ok = rows and rows[0].tmux is not None and rows[0].state is State.REVIEW
                return rows[0] if ok else None

            sid = wait_until(mine, 90, "the Codex row with its TUI and pane").session_id
            watch = Watch(CodexScreen(tc))
            with KeyClock() as clock:
                for i in range(n):
                    for answer in ("approve", "deny"):
                        tc.type_prompt(f"please SHELL ({answer} {i})")
                        _state(hub, sid, State.NEEDS_INPUT, tc)
                        tc.wait_for_screen(APPROVAL)
                        time.sleep(READ_S)  # a click comes after the approval was read
                        samples[answer].append(_one(hub, watch, clock, sid, answer))
                        _state(hub, sid, State.REVIEW if answer == "approve" else State.IDLE, tc)
                    tc.type_prompt(f"please SLOW now (round {i})")
                    _state(hub, sid, State.BUSY, tc)
                    # this round's first word, not an earlier round's still on screen
                    first = SLOW_TEXT.split()[0]
                    tc.wait_for_screen(rf"\(round {i}\)\n(?:.*\n)*?.*{first}")
                    samples["interrupt"].append(_one(hub, watch, clock, sid, "interrupt"))
                    _state(hub, sid, State.IDLE, tc)
                    samples["send"].append(_one(hub, watch, clock, sid, "send", text=f"hi ({i})"))
                    _state(hub, sid, State.REVIEW, tc)
                    log(f"P12 Codex round {i + 1}/{n}")
        finally:
            if watch is not None:
                watch.stop()
            tc.close()
            hub.stop()
    return codex_rows(samples)


def codex_rows(samples: dict[str, list[tuple[float, float]]]) -> list[Row]:
    return p12_rows(samples, f"P12 Codex {CODEX_VERSION} {{kind}} → TUI reacted")


def _side_by_side(codex: list[Row], claude: list[Row]) -> list[Row]:
    """One info row: each action's p95, Codex / Claude, from rows of the same run."""

    def p95s(rows: list[Row], word: str) -> dict[str, float]:
        found = {}
        for name, value, *_ in rows:
            for kind in ("approve", "deny", "interrupt", "send"):
                if str(name).startswith(word) and f" {kind} → " in str(name):
                    found[kind] = float(str(value).split()[0])
        return found

    mine, theirs = p95s(codex, "P12 Codex"), p95s(claude, "P12 ")
    ratios = [f"{k} {mine[k] / theirs[k]:.2f}x" for k in mine if theirs.get(k)]
    return [("P12 Codex / Claude p95, same run", ", ".join(ratios) or "n/a", "info", True)]


def main(quick: bool = False, claude: bool = False, rounds: int | None = None) -> list[Row]:
    """P12 Codex rows; ``claude``: Claude's right after, and the ratios; ``rounds``: actions
    of each kind (default 20, ``quick`` 3), for both."""
    rows = rows_or_failure(
        lambda q: _measure(q, rounds), quick, "P12 Codex action → CLI reacted", "<= 300 ms"
    )
    if claude:
        theirs = bench_actions.main(quick, rounds)
        rows = rows + theirs + _side_by_side(rows, theirs)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_codex_actions")
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument("--claude", action="store_true", help="Claude's P12 after, same run")
    parser.add_argument("--rounds", type=int, default=0, help="actions of each kind")
    args = parser.parse_args()
    found = main(args.quick, args.claude, args.rounds or None)
    print_table(found)
    sys.exit(0 if all(row[3] for row in found) else 1)
