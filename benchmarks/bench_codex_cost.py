"""P18 for Codex (issue 36's Measures): what our hooks add to a Codex turn of 40 tool calls.

As :mod:`benchmarks.bench_cost` does for Claude Code: the real Codex CLI at its pin, headless
(``codex exec``, Codex's print mode: the same turn loop and hooks as the TUI, without the TUI
or the shared daemon), runs one turn of 40 fast tool calls against the scripted Responses API
(``TOOLS40``: one ``exec_command`` of ``true N`` per model response, each needing no
approval), in two sealed Codex homes: one with no hooks, one with ours installed by
``pmux_widget.hooks.install_codex`` (entries and trust, as ``pmux-widget install`` writes
them). Runs alternate in pairs (none, ours; ours, none; …), in one run.

The turn is what the scripted server sees: from the arrival of the turn's first request to
the arrival of its last (all 40 tool calls with their hooks; the final answer is a few bytes,
the CLI's start-up and the once-per-turn hooks are outside it but SessionStart and
UserPromptSubmit, which Codex runs before the first request). Per pair, the cost per tool
call is (turn with ours − turn without) / 40; budget: P18's, p50 ≤ +3 ms, for each of the
three hub cases of P2: a hub up (``pmux-widget serve``), no hub (every event spooled) and a
hub that accepts connections and never answers.

Unlike Claude's, our Codex entries include one hook per tool call: PostToolUse (DESIGN.md:
it is what moves a row back to busy after an approval or an answer). Codex waits for a hook
before it goes on, so its cost is on the turn's path for every tool call.

As information, with the hub up, a third home has our entries with PostToolUse made ``async``
(Codex runs an async hook without waiting for it: checked on 0.171.0), alternated with the
other two: what the cost would be if our PostToolUse did not hold the turn.

Nothing lost: with no hub and with the hung hub every hook of every run must end up in the
spool exactly once (1 SessionStart, 1 UserPromptSubmit, 40 PostToolUse, 1 Stop); with the
hub up nothing is spooled and the session ends as its hooks say (review, by ``hook:Stop``,
agent ``codex``).

``python -m benchmarks.bench_codex_cost [--quick] [--pairs N] [--modes hub,spool,hung]``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
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
from benchmarks.bench_cost import MODE_TEXT, MODES, P18_MAX_MS, spooled_events
from benchmarks.bench_hooks import HungHub
from pmux_widget import hooks
from pmux_widget.agents.codex import trust_hash
from pmux_widget.demo.claude_env import CliUnavailable
from pmux_widget.demo.codex_cli import end_codex_processes
from pmux_widget.demo.codex_env import CODEX_VERSION, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import ScriptedResponses
from pmux_widget.hooks.script import is_our_command
from pmux_widget.system.home import PmuxHome

__all__ = ["EXPECTED", "PROMPT", "TOOLS", "main"]

TOOLS = 40
PROMPT = f"TOOLS{TOOLS}: please make forty fast tool calls"
#: What one ``codex exec`` of the prompt fires at our entries (PreToolUse only matches
#: ``request_user_input``; no PermissionRequest: nothing needs approval; no Interrupt).
EXPECTED = {"SessionStart": 1, "UserPromptSubmit": 1, "PostToolUse": TOOLS, "Stop": 1}


@dataclass
class Side:
    """The two Codex homes, and what was measured on them."""

    cli: Path
    none: CodexEnv
    ours: CodexEnv
    home: PmuxHome
    #: ours with the PostToolUse entry ``async`` (Codex runs it without waiting), same home
    asynced: CodexEnv
    turns: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    walls: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    cpu: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    runs_checked: collections.Counter[str] = field(default_factory=collections.Counter)


def _side(server: ScriptedResponses, root: Path) -> Side:
    cli = ensure_codex(CODEX_VERSION)
    home = PmuxHome(root / "pmux").ensure()
    none = CodexEnv(server.base_url, root=root / "none")
    ours = CodexEnv(server.base_url, root=root / "ours")
    hooks.install_codex(ours.codex_home, home)
    ours.extra_env["PMUX_WIDGET_HOME"] = str(home.root)
    asynced = CodexEnv(server.base_url, root=root / "async")
    hooks.install_codex(asynced.codex_home, home)
    asynced.extra_env["PMUX_WIDGET_HOME"] = str(home.root)
    _async_post_tool_use(asynced)
    return Side(cli, none, ours, home, asynced)


def _async_post_tool_use(env: CodexEnv) -> None:
    """Our PostToolUse entry made ``async: true``, its trust re-hashed (the key stays: its
    place in hooks.json is the same), as a user who trusts the changed hook would."""
    doc = json.loads(env.hooks_file.read_text())
    config = env.config_file.read_text()
    for group in doc["hooks"]["PostToolUse"]:
        for hook in group["hooks"]:
            if is_our_command(hook.get("command")):
                old = trust_hash("PostToolUse", hook, group.get("matcher"))
                hook["async"] = True
                new = trust_hash("PostToolUse", hook, group.get("matcher"))
                if old not in config:
                    raise RuntimeError("our PostToolUse entry's trust is not in config.toml")
                config = config.replace(old, new)
    env.hooks_file.write_text(json.dumps(doc, indent=2) + "\n")
    env.config_file.write_text(config)


def _run(server: ScriptedResponses, side: Side, env: CodexEnv) -> tuple[float, float]:
    """One headless turn: (the turn as the server saw it, the process's wall time)."""
    first = len(server.responses())
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(side.cli), "exec", "--skip-git-repo-check", PROMPT],
        cwd=env.cwd,
        env=env.env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0 or b"Done. The tool said" not in proc.stdout:
        raise RuntimeError(f"codex exec failed: {proc.returncode} {proc.stderr[-600:]!r}")
    # the turn's requests offer tools (a title request, if any, offers none)
    steps = [r for r in server.responses()[first:] if r.tool_names()]
    if len(steps) != TOOLS + 1:
        raise RuntimeError(f"{len(steps)} turn requests, not {TOOLS + 1}")
    return steps[-1].t - steps[0].t, wall


def _check_spool(side: Side, mode: str) -> None:
    """Every hook of the run just made is in the spool, exactly once; then empty it."""
    got = spooled_events(side.home)
    if dict(got) != EXPECTED:
        side.problems.append(f"{mode}: spooled {dict(got)}")
    side.runs_checked[mode] += 1


def _check_hub(side: Side, env: CodexEnv, hub: ServeProcess, seen: set[str]) -> None:
    """Nothing spooled, and the run's session (the newest of the env's folder) ended in
    review by its Stop hook, as a Codex row."""
    spooled = sum(spooled_events(side.home).values())
    if spooled:
        side.problems.append(f"hub: {spooled} events spooled")

    def ended() -> dict[str, object] | None:
        rows = get_json(hub.port, hub.token, "/api/sessions?ended=1")["sessions"]
        new = [r for r in rows if str(r.get("cwd")) == str(env.cwd)]
        new = [r for r in new if r["session_id"] not in seen]
        return new[0] if len(new) == 1 and new[0]["source"] == "hook:Stop" else None

    try:
        row = wait_until(ended, 10, "the hub to see the turn end")
    except TimeoutError:
        side.problems.append("hub: the session did not end by its Stop")
        return
    seen.add(str(row["session_id"]))
    if row["state"] != "review" or row["agent"] != "codex" or row["current_tool"] is not None:
        side.problems.append(f"hub: {row['session_id']} ended as {row}")
    side.runs_checked["hub"] += 1


@contextlib.contextmanager
def _hub_case(mode: str, side: Side, root: Path) -> Iterator[ServeProcess | None]:
    """The hooked home's hub for ``mode``: a ``serve`` process, a hung socket, or none."""
    homes = Homes(root / f"hub-{mode}", side.home, root / f"hub-{mode}" / "claude")
    homes.claude.mkdir(parents=True, exist_ok=True)
    if mode == "hub":
        with ServeProcess(homes) as hub:
            yield hub
    elif mode == "hung":
        hung = HungHub(homes)
        try:
            yield None
        finally:
            hung.close()
    else:
        yield None


def _measure_mode(
    server: ScriptedResponses, side: Side, mode: str, pairs: int, root: Path, warm: bool
) -> None:
    seen: set[str] = set()
    envs = {"none": side.none, "ours": side.ours, "async": side.asynced}
    # the async variant with the hub up only, as information (as Claude's --tool-hooks)
    kinds = ("none", "ours", "async") if mode == "hub" else ("none", "ours")

    def after(hub: ServeProcess | None, env: CodexEnv) -> None:
        if hub is not None:
            _check_hub(side, env, hub, seen)
        else:
            _check_spool(side, mode)

    with _hub_case(mode, side, root) as hub:
        if warm:  # the first runs pay for the binary's pages and Codex's first-run files
            _run(server, side, side.none)
            for kind in kinds[1:]:
                _run(server, side, envs[kind])
                after(hub, envs[kind])
        for i in range(pairs):
            for kind in kinds if i % 2 == 0 else kinds[::-1]:
                env = envs[kind]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                turn, wall = _run(server, side, env)
                if kind != "none":
                    after(hub, env)
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                spent = (used.ru_utime + used.ru_stime) - (before.ru_utime + before.ru_stime)
                side.turns.setdefault((mode, kind), []).append(turn)
                side.walls.setdefault((mode, kind), []).append(wall)
                side.cpu.setdefault((mode, kind), []).append(spent)
            log(
                f"P18 Codex {mode} pair {i + 1}/{pairs}: "
                + ", ".join(f"{k} {side.turns[mode, k][-1]:.3f} s" for k in kinds)
            )


def _rows(side: Side, modes: tuple[str, ...]) -> list[Row]:
    rows: list[Row] = []
    for mode in modes:
        none, ours = side.turns[mode, "none"], side.turns[mode, "ours"]
        per_tool = [(o - n) * 1000 / TOOLS for o, n in zip(ours, none, strict=True)]
        p50 = percentile(per_tool, 50)
        none50, ours50 = percentile(none, 50), percentile(ours, 50)
        share = (ours50 / none50 - 1) * 100
        cpu = [
            (o - n) * 1000 / TOOLS
            for o, n in zip(side.cpu[mode, "ours"], side.cpu[mode, "none"], strict=True)
        ]
        rows.append(
            (
                f"P18 Codex {CODEX_VERSION}, {MODE_TEXT[mode]}: hooks' cost per tool call, p50 "
                f"of {len(per_tool)} pairs ({TOOLS}-tool turn of codex exec, ours − none)",
                f"{p50:+.1f} ms (turn {none50:.2f} s → {ours50:.2f} s, {share:+.0f} %)",
                f"<= +{P18_MAX_MS:g} ms",
                p50 <= P18_MAX_MS,
            )
        )
        rows.append(
            (
                f"P18 Codex {CODEX_VERSION}, {MODE_TEXT[mode]}: per pair ms per tool call; "
                "CPU per tool call (Codex and the hook processes, ours − none, p50); whole "
                "codex exec wall p50 none / ours",
                f"{', '.join(f'{v:+.1f}' for v in per_tool)}; {percentile(cpu, 50):+.1f} ms "
                f"CPU; {percentile(side.walls[mode, 'none'], 50):.2f} / "
                f"{percentile(side.walls[mode, 'ours'], 50):.2f} s",
                "info",
                True,
            )
        )
    if "hub" in modes:
        none, asynced = side.turns["hub", "none"], side.turns["hub", "async"]
        per_tool = [(o - n) * 1000 / TOOLS for o, n in zip(asynced, none, strict=True)]
        share = (percentile(asynced, 50) / percentile(none, 50) - 1) * 100
        rows.append(
            (
                f"P18 Codex {CODEX_VERSION}, hub up, our PostToolUse entry made `async` (Codex "
                "runs it without waiting): cost per tool call, p50",
                f"{percentile(per_tool, 50):+.1f} ms (turn {share:+.0f} %; per pair "
                f"{', '.join(f'{v:+.1f}' for v in per_tool)})",
                "info",
                True,
            )
        )
    checked = sum(side.runs_checked[m] for m in modes)
    rows.append(
        (
            "P18 Codex no hook lost: every hooked run's events spooled exactly once (no hub, "
            "hub hung) or none spooled and the session ended by its Stop (hub up)",
            f"{checked - len(side.problems)}/{checked} runs"
            + (f"; {'; '.join(side.problems)[:300]}" if side.problems else ""),
            "all",
            not side.problems,
        )
    )
    return rows


def _measure(
    quick: bool = False, pairs: int | None = None, modes: tuple[str, ...] = MODES
) -> list[Row]:
    pairs = pairs or (1 if quick else 5)
    try:
        ensure_codex(CODEX_VERSION)
    except CliUnavailable as exc:
        return [("P18 Codex hooks' cost per tool call", f"unavailable: {exc}", "<= +3 ms", False)]
    with (
        tempfile.TemporaryDirectory(prefix="pmux-bench-p18-codex-") as tmp,
        ScriptedResponses() as server,
    ):
        root = Path(tmp)
        side = _side(server, root)
        try:
            for n, mode in enumerate(modes):
                log(f"P18 Codex: {MODE_TEXT[mode]}, {pairs} alternated pairs")
                _measure_mode(server, side, mode, pairs, root, warm=n == 0)
        finally:
            for env in (side.none, side.ours, side.asynced):
                end_codex_processes(env)
        return _rows(side, modes)


def main(quick: bool = False) -> list[Row]:
    """P18 Codex rows (a CLI that misbehaves gives one failed row, not a crash)."""
    return rows_or_failure(_measure, quick, "P18 Codex hooks' cost per tool call", "<= +3 ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_codex_cost")
    parser.add_argument("--quick", action="store_true", help="short smoke run")
    parser.add_argument("--pairs", type=int, default=0, help="alternated pairs per case")
    parser.add_argument("--modes", default=",".join(MODES), help="hub,spool,hung")
    args = parser.parse_args()
    chosen = tuple(m for m in args.modes.split(",") if m)
    found = _measure(args.quick, args.pairs or None, chosen)
    print_table(found)
    sys.exit(0 if all(row[3] for row in found) else 1)
