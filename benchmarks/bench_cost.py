"""P18: what our hooks add to Claude's own work, on each pinned CLI (issue 28).

The real CLI in print mode (``claude -p``) runs one turn of 40 fast tool calls against the
scripted model (scenario ``forty_tools``: one ``Read`` of a small file per model response, the
fastest tool there is, so the hooks' cost shows best), in two sealed environments per CLI
version: one with no hooks, one with ours installed by ``pmux_widget.hooks.install``. Runs
alternate in pairs (none, ours; ours, none; …), both CLIs side by side, in one run.

The turn is what the scripted model sees: from the arrival of the turn's first request to the
end of its last answer (all 40 tool calls, with their PreToolUse and PostToolUse hooks; not the
CLI's start-up, nor the hooks that come once per turn or session). Per pair, the cost per tool
call is (turn with ours − turn without) / 40; budget: its p50 ≤ +3 ms, for each CLI and each
of three hub cases: a hub up (``pmux-widget serve`` watching that config dir), no hub (every
event spooled) and a hub that accepts connections and never answers (P2's case). The share
of the turn (p50 turn with ours / without − 1) and the whole process's wall time are reported
too.

Ours is what ``pmux-widget install`` writes: since issue 28 no hook per tool call (the
transcript names the current tool). The opt-in ``install --tool-hooks`` (PreToolUse and
PostToolUse, async) is measured beside it with the hub up, as information: a third
environment per CLI, in the same alternation.

Nothing lost: with no hub and with the hung hub, every hook of every run must end up in the
spool (1 SessionStart, 1 UserPromptSubmit, 1 Stop, 1 SessionEnd; with the opt-in, 40
PreToolUse and 40 PostToolUse too; counted once the CLI has exited and its hooks are done);
with the hub up, nothing is spooled and each session ends as the hooks say (idle, not
running, no tool left, set by SessionEnd).

``python -m benchmarks.bench_cost [--quick] [--pairs N] [--modes hub,spool,hung]``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import (
    Homes,
    Row,
    ServeProcess,
    get_json,
    log,
    percentile,
    print_table,
    rows_or_failure,
    wait_until,
)
from benchmarks.bench_hooks import HungHub
from pmux_widget import hooks
from pmux_widget.demo.claude_env import CLI_VERSIONS, ClaudeEnv, CliUnavailable, ensure_cli
from pmux_widget.demo.forty_tools import HOOKS as EXPECTED
from pmux_widget.demo.forty_tools import PROMPT, TOOLS
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.system.home import PmuxHome

__all__ = ["main", "spooled_events"]

P18_MAX_MS = 3.0
MODES = ("hub", "spool", "hung")
MODE_TEXT = {"hub": "hub up", "spool": "no hub (spooled)", "hung": "hub hung"}


@dataclass
class Run:
    """One measured run: the turn and the process's wall time, Claude's own CPU seconds."""

    turn: float
    wall: float
    own_cpu: float


@dataclass
class Side:
    """One CLI version's two environments, and what was measured on them."""

    version: str
    cli: Path
    none: ClaudeEnv
    ours: ClaudeEnv
    home: PmuxHome
    #: ``install --tool-hooks`` (own home, so its spool and hub are its own)
    tools: ClaudeEnv
    tools_home: PmuxHome
    turns: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    walls: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    own_cpu: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    all_cpu: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    runs_checked: collections.Counter[str] = field(default_factory=collections.Counter)


def _side(model: ScriptedModel, version: str, root: Path) -> Side:
    cli = ensure_cli(version)
    home = PmuxHome(root / "pmux").ensure()
    none = ClaudeEnv(model.base_url, root=root / "none", version=version)
    ours = ClaudeEnv(model.base_url, root=root / "ours", version=version)
    hooks.install(ours.settings_file, home)
    ours.extra_env["PMUX_WIDGET_HOME"] = str(home.root)
    tools_home = PmuxHome(root / "pmux-tools").ensure()
    tools = ClaudeEnv(model.base_url, root=root / "tools", version=version)
    hooks.install(tools.settings_file, tools_home, tool_hooks=True)
    tools.extra_env["PMUX_WIDGET_HOME"] = str(tools_home.root)
    return Side(version, cli, none, ours, home, tools, tools_home)


def expected_hooks(tool_hooks: bool) -> dict[str, int]:
    """The events one run fires at our command, and how often (the scenario's, installed)."""
    events = hooks.registered_events(tool_hooks)
    return {event: n for event, n in EXPECTED.items() if event in events}


def _hook_scripts(home: PmuxHome) -> int:
    """How many hook scripts of ``home`` still run (async ones outlive the CLI)."""
    script = str(home.hook_script)
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                count += script.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    return count


def _cpu_ticks(pid: int) -> tuple[int, int]:
    """(the process's own CPU ticks, its reaped children's) from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _run(model: ScriptedModel, side: Side, env: ClaudeEnv) -> Run:
    """One print-mode turn: the turn as the model saw it, the process's wall and CPU time."""
    first = len(model.requests)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [str(side.cli), "-p", PROMPT],
        cwd=env.cwd,
        env=env.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    own = 0
    # Claude's own CPU, sampled while it runs (the hooks' is in its total once it exits)
    reader = threading.Thread(target=lambda: out.append(proc.communicate(timeout=600)))
    out: list[tuple[bytes, bytes]] = []
    reader.start()
    while reader.is_alive():
        with contextlib.suppress(OSError, ValueError, IndexError):
            own = _cpu_ticks(proc.pid)[0]
        reader.join(0.02)
    wall = time.perf_counter() - t0
    stdout, stderr = out[0] if out else (b"", b"")
    if proc.returncode != 0 or b"Ran all 40 steps" not in stdout:
        raise RuntimeError(f"{side.version}: claude -p failed: {proc.returncode} {stderr!r}")
    steps = [r for r in model.requests[first:] if r.kind == "scenario"]
    if len(steps) != TOOLS + 1 or any(r.finished_at is None for r in steps):
        raise RuntimeError(f"{side.version}: {len(steps)} scripted requests, not {TOOLS + 1}")
    finished = steps[-1].finished_at
    assert finished is not None
    tick = os.sysconf("SC_CLK_TCK")
    return Run(finished - steps[0].received_at, wall, own / tick)


def _hooked(side: Side, kind: str) -> tuple[ClaudeEnv, PmuxHome]:
    """The env and our home of ``kind``: ``ours`` (the default install) or ``tools``."""
    return (side.tools, side.tools_home) if kind == "tools" else (side.ours, side.home)


def spooled_events(home: PmuxHome) -> collections.Counter[str]:
    """Once no hook script of ``home`` runs (async ones outlive the CLI): the events its spool
    holds, counted (none with a hub up); the spool is then emptied for the next run."""
    wait_until(lambda: not _hook_scripts(home), 60, "the hooks of the run to finish")
    # what scripts killed mid-POST left (Codex's exec kills its async hooks), as a hub
    # adopts it (once ORPHAN_AGE_S old; none of them runs any more)
    hooks.adopt_orphans(home, min_age_s=0)
    entries = hooks.read_spool(home)
    got = collections.Counter(
        json.loads(e.payload_bytes or b"{}").get("hook_event_name", "?") for e in entries
    )
    hooks.remove_spool_entries(entries)
    return got


def _check_spool(side: Side, mode: str, kind: str) -> None:
    """Every hook of the run just made is in the spool, exactly once; then empty it."""
    got = spooled_events(_hooked(side, kind)[1])
    if dict(got) != expected_hooks(kind == "tools"):
        side.problems.append(f"{mode}: spooled {dict(got)}")
    side.runs_checked[mode] += 1


def _check_hub(side: Side, kind: str, hub: ServeProcess) -> None:
    """Nothing spooled, and every session of the hooked env ended as its hooks say."""
    env, home = _hooked(side, kind)
    spooled = sum(spooled_events(home).values())
    if spooled:
        side.problems.append(f"hub: {spooled} events spooled")

    def ended() -> list[dict[str, object]] | None:
        rows = get_json(hub.port, hub.token, "/api/sessions?ended=1")["sessions"]
        mine = [r for r in rows if str(r.get("cwd")) == str(env.cwd)]
        done = all(r["source"] == "hook:SessionEnd" for r in mine)
        return mine if mine and done else None

    try:
        rows = wait_until(ended, 10, "the hub to see every session end")
    except TimeoutError:
        side.problems.append("hub: a session did not end by its SessionEnd")
        return
    for row in rows:
        if row["state"] != "idle" or row["running"] or row["current_tool"] is not None:
            side.problems.append(f"hub: {row['session_id']} ended as {row}")
    side.runs_checked["hub"] += 1


def _kinds(mode: str) -> tuple[str, ...]:
    """The hooked environments measured in ``mode`` (the opt-in only with the hub up)."""
    return ("ours", "tools") if mode == "hub" else ("ours",)


@contextlib.contextmanager
def _hub_case(
    mode: str, sides: list[Side], root: Path
) -> Iterator[dict[tuple[str, str], ServeProcess]]:
    """Each hooked env's hub for ``mode``: a ``serve`` process, a hung socket, or none."""
    with contextlib.ExitStack() as stack:
        hubs: dict[tuple[str, str], ServeProcess] = {}
        for side in sides:
            for kind in _kinds(mode):
                env, home = _hooked(side, kind)
                homes = Homes(root / f"hub-{side.version}-{kind}", home, env.config_dir)
                homes.root.mkdir(exist_ok=True)
                if mode == "hub":
                    hubs[side.version, kind] = stack.enter_context(ServeProcess(homes))
                elif mode == "hung":
                    stack.callback(HungHub(homes).close)
        yield hubs


def _measure_mode(
    model: ScriptedModel, sides: list[Side], mode: str, pairs: int, root: Path, warm: bool
) -> None:
    kinds = ("none", *_kinds(mode))
    with _hub_case(mode, sides, root) as hubs:
        for side in sides if warm else ():  # the first runs of a CLI pay for its caches
            _run(model, side, side.none)
            for kind in kinds[1:]:
                _run(model, side, _hooked(side, kind)[0])
                _after(side, mode, kind, hubs)
        for i in range(pairs):
            for side in sides:
                for kind in kinds if i % 2 == 0 else kinds[::-1]:
                    env = side.none if kind == "none" else _hooked(side, kind)[0]
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    run = _run(model, side, env)
                    if kind != "none":
                        _after(side, mode, kind, hubs)  # its async hooks done, CPU counted
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    spent = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
                    side.turns.setdefault((mode, kind), []).append(run.turn)
                    side.walls.setdefault((mode, kind), []).append(run.wall)
                    side.own_cpu.setdefault((mode, kind), []).append(run.own_cpu)
                    side.all_cpu.setdefault((mode, kind), []).append(spent)
                log(
                    f"P18 {side.version} {mode} pair {i + 1}/{pairs}: "
                    + ", ".join(f"{k} {side.turns[mode, k][-1]:.3f} s" for k in kinds)
                )


def _after(side: Side, mode: str, kind: str, hubs: dict[tuple[str, str], ServeProcess]) -> None:
    if mode == "hub":
        _check_hub(side, kind, hubs[side.version, kind])
    else:
        _check_spool(side, mode, kind)


def _rows(sides: list[Side], modes: tuple[str, ...]) -> list[Row]:
    rows: list[Row] = []
    for mode in modes:
        for side in sides:
            none, ours = side.turns[mode, "none"], side.turns[mode, "ours"]
            per_tool = [(o - n) * 1000 / TOOLS for o, n in zip(ours, none, strict=True)]
            p50 = percentile(per_tool, 50)
            none50, ours50 = percentile(none, 50), percentile(ours, 50)
            share = (ours50 / none50 - 1) * 100
            rows.append(
                (
                    f"P18 {side.version}, {MODE_TEXT[mode]}: hooks' cost per tool call, p50 of "
                    f"{len(per_tool)} pairs ({TOOLS}-tool turn, ours − none)",
                    f"{p50:+.1f} ms (turn {none50:.2f} s → {ours50:.2f} s, {share:+.0f} %)",
                    f"<= +{P18_MAX_MS:g} ms",
                    p50 <= P18_MAX_MS,
                )
            )
            walls_none = side.walls[mode, "none"]
            walls_ours = side.walls[mode, "ours"]
            rows.append(
                (
                    f"P18 {side.version}, {MODE_TEXT[mode]}: per pair ms per tool call; "
                    "whole claude -p wall p50 none / ours",
                    f"{', '.join(f'{v:+.1f}' for v in per_tool)}; "
                    f"{percentile(walls_none, 50):.2f} / {percentile(walls_ours, 50):.2f} s",
                    "info",
                    True,
                )
            )
    for side in sides if "hub" in modes else ():
        none, tools = side.turns["hub", "none"], side.turns["hub", "tools"]
        per_tool = [(o - n) * 1000 / TOOLS for o, n in zip(tools, none, strict=True)]
        share = (percentile(tools, 50) / percentile(none, 50) - 1) * 100
        rows.append(
            (
                f"P18 {side.version}, hub up, opt-in `install --tool-hooks` (PreToolUse and "
                "PostToolUse, async): cost per tool call, p50",
                f"{percentile(per_tool, 50):+.1f} ms (turn {share:+.0f} %; per pair "
                f"{', '.join(f'{v:+.1f}' for v in per_tool)})",
                "info",
                True,
            )
        )
    for mode in modes:
        for side in sides:
            own = [
                (o - n) * 1000 / TOOLS
                for o, n in zip(side.own_cpu[mode, "ours"], side.own_cpu[mode, "none"], strict=True)
            ]
            every = [
                (o - n) * 1000 / TOOLS
                for o, n in zip(side.all_cpu[mode, "ours"], side.all_cpu[mode, "none"], strict=True)
            ]
            rows.append(
                (
                    f"P18 {side.version}, {MODE_TEXT[mode]}: CPU per tool call (ours − none, "
                    "p50): Claude's own / Claude and the hook processes",
                    f"{percentile(own, 50):+.1f} ms / {percentile(every, 50):+.1f} ms "
                    "(a loaded machine's wall time hides what an idle one pays: Claude's own "
                    "CPU is on the turn's path, the async hooks' runs beside it)",
                    "info",
                    True,
                )
            )
    problems = [f"{s.version} {p}" for s in sides for p in s.problems]
    checked = sum(s.runs_checked[m] for s in sides for m in modes)
    rows.append(
        (
            "P18 no hook lost: every hooked run's events spooled exactly once (no hub, hub "
            "hung) or none spooled and each session ended by its hooks (hub up)",
            f"{checked - len(problems)}/{checked} runs"
            + (f"; {'; '.join(problems)[:300]}" if problems else ""),
            "all",
            not problems,
        )
    )
    return rows


def _measure(
    quick: bool = False, pairs: int | None = None, modes: tuple[str, ...] = MODES
) -> list[Row]:
    pairs = pairs or (1 if quick else 5)
    try:
        for version in CLI_VERSIONS:
            ensure_cli(version)
    except CliUnavailable as exc:
        return [("P18 hooks' cost per tool call", f"unavailable: {exc}", "<= +3 ms", False)]
    with tempfile.TemporaryDirectory(prefix="pmux-bench-p18-") as tmp, ScriptedModel() as model:
        root = Path(tmp)
        sides = [_side(model, v, root / v) for v in CLI_VERSIONS]
        for n, mode in enumerate(modes):
            log(f"P18: {MODE_TEXT[mode]}, {pairs} alternated pairs per CLI")
            _measure_mode(model, sides, mode, pairs, root, warm=n == 0)
        return _rows(sides, modes)


def main(quick: bool = False) -> list[Row]:
    """P18 rows (a CLI that misbehaves gives one failed row, not a crash)."""
    return rows_or_failure(_measure, quick, "P18 hooks' cost per tool call", "<= +3 ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_cost")
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument("--pairs", type=int, default=0, help="alternated pairs per case")
    parser.add_argument("--modes", default=",".join(MODES), help="hub,spool,hung")
    args = parser.parse_args()
    chosen = tuple(m for m in args.modes.split(",") if m)
    found = _measure(args.quick, args.pairs or None, chosen)
    print_table(found)
    sys.exit(0 if all(row[3] for row in found) else 1)
