"""Kill: ``kill -9`` of the real Claude Code CLI → ``running: false`` in the hub (issue 19).

Both pinned CLIs, each round in a fresh sealed env with our hooks installed, against the
scripted model. Started **before** the hub: a CLI typed into a tmux pane's shell (a direct
child of the shell), one under ``bash -c`` (a grandchild), one outside tmux on a pty; the hub
starts, and each is killed right after the hub knows its session (the moment the old boot
window held a kill back 5 s). Then, with the same hub, a CLI in a pane and one outside started
**after** the hub, killed likewise. Latency = from ``kill(pid, SIGKILL)`` to the change that
made the session not running, timestamped by a hub listener (on the hub thread). The harness
is the real-CLI test's (``tests/real_claude/test_kill9.py``: ``Launcher``). Budget: p95 ≤ 2 s,
for each CLI started before and after the hub. Rounds per CLI: 8, so 24 kills before and 16
after the hub (``--quick``: 1).
"""

from __future__ import annotations

import time
from pathlib import Path

from benchmarks._util import Row, log, percentile, rows_or_failure, run_alone, temp_homes
from pmux_widget.demo.claude_env import CLI_VERSIONS, CliUnavailable, ensure_cli
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.assemble import make_hub
from tests.real_claude.test_kill9 import (
    AFTER,
    BEFORE,
    OUTSIDE_AFTER,
    OUTSIDE_BEFORE,
    Launcher,
    hooked_env,
    kill_and_wait,
)
from tests.real_claude.tracking import ChangeLog

__all__ = ["main"]

NAME = "kill -9 → running false"
BUDGET_MS = 2000.0
#: Waiting longer than this for one session means it is broken, not slow.
GIVE_UP_S = 30.0


def _round(cli: Path, version: str, model: ScriptedModel, root: Path) -> dict[str, list[float]]:
    """One round: three CLIs before the hub, two after; ms per kill, by "before"/"after"."""
    env, home = hooked_env(model, root, version)
    launcher = Launcher(env, cli)
    got: dict[str, list[float]] = {"before": [], "after": []}
    hub = None
    try:
        for case, (session, grandchild) in BEFORE.items():
            launcher.in_pane(case, session, grandchild)
        launcher.outside_tmux(OUTSIDE_BEFORE)
        launcher.wait_started([*BEFORE, OUTSIDE_BEFORE])
        hub = make_hub(home=home.root, claude_home=env.config_dir).start()
        changes = ChangeLog(hub)
        for case in [*BEFORE, OUTSIDE_BEFORE]:
            seconds, source = kill_and_wait(hub, changes, launcher, case, GIVE_UP_S)
            got["before"].append(seconds * 1000)
            if source != "process:gone":
                raise RuntimeError(f"{case}: ended by {source}, not process:gone")
        for case, (session, grandchild) in AFTER.items():
            launcher.in_pane(case, session, grandchild)
        launcher.outside_tmux(OUTSIDE_AFTER)
        launcher.wait_started([*AFTER, OUTSIDE_AFTER])
        for case in [*AFTER, OUTSIDE_AFTER]:
            seconds, source = kill_and_wait(hub, changes, launcher, case, GIVE_UP_S)
            got["after"].append(seconds * 1000)
        if hub.errors:
            raise RuntimeError(f"hub errors: {hub.errors}")
    finally:
        if hub is not None:
            hub.stop()
        launcher.close()
    return got


def _measure(quick: bool = False) -> list[Row]:
    rounds = 1 if quick else 8
    rows: list[Row] = []
    everything: list[float] = []
    with temp_homes("kill") as homes, ScriptedModel() as model:
        for version in CLI_VERSIONS:
            try:
                cli = ensure_cli(version)
            except CliUnavailable as exc:
                rows.append((f"{NAME}, CLI {version}", f"unavailable: {exc}", "runs", False))
                continue
            samples: dict[str, list[float]] = {"before": [], "after": []}
            for n in range(rounds):
                t0 = time.monotonic()
                got = _round(cli, version, model, Path(homes.root) / f"{version}-{n}")
                for when, values in got.items():
                    samples[when].extend(values)
                took = time.monotonic() - t0
                shown = {k: [round(v) for v in vs] for k, vs in got.items()}
                log(f"kill: CLI {version} round {n + 1}/{rounds}: {shown} ms ({took:.0f} s)")
            for when in ("before", "after"):
                values = samples[when]
                everything.extend(values)
                p95 = percentile(values, 95)
                rows.append(
                    (
                        f"{NAME}, CLI {version}, started {when} the hub, p95",
                        f"{p95:.0f} ms (p50 {percentile(values, 50):.0f}, "
                        f"max {max(values):.0f} ms, N={len(values)})",
                        f"<= {BUDGET_MS:.0f} ms",
                        p95 <= BUDGET_MS,
                    )
                )
    if everything:
        rows.append(
            (
                f"{NAME}, both CLIs, before and after the hub: p50 / p95 / max",
                f"{percentile(everything, 50):.0f} / {percentile(everything, 95):.0f} / "
                f"{max(everything):.0f} ms (N={len(everything)})",
                "info",
                True,
            )
        )
    return rows


def main(quick: bool = False) -> list[Row]:
    return rows_or_failure(_measure, quick, NAME, f"<= {BUDGET_MS:.0f} ms")


if __name__ == "__main__":
    run_alone(main)
