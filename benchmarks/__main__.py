"""``python -m benchmarks``: run every benchmark module, print one table, write results.md.

Each module's ``main()`` returns rows ``(name, value, budget, ok)``; a row whose budget is
``info`` is a raw number with no budget. The combined table goes to stdout and, for a full
run (no ``--quick``, no ``--only``), to ``benchmarks/results.md`` (or ``--out``). Exit status:
0 when every budget holds, 1 when one fails, 2 when a module crashed.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import ROOT, format_table, log

__all__ = ["main"]

#: (short name for --only, module), in running order: the quick ones first, the disk-heavy
#: transcript benchmark last.
MODULES = [
    ("hooks", "benchmarks.bench_hooks"),
    ("cost", "benchmarks.bench_cost"),
    ("codexcost", "benchmarks.bench_codex_cost"),
    ("widget", "benchmarks.bench_widget"),
    ("hub", "benchmarks.bench_hub"),
    ("jupyter", "benchmarks.bench_jupyter"),
    ("timeline", "benchmarks.bench_timeline"),
    ("fleet", "benchmarks.bench_fleet"),
    ("actions", "benchmarks.bench_actions"),
    ("codexactions", "benchmarks.bench_codex_actions"),
    ("answer", "benchmarks.bench_answer"),
    ("kill", "benchmarks.bench_kill"),
    ("notify", "benchmarks.bench_notify"),
    ("terminal", "benchmarks.bench_terminal_actions"),
    ("bg", "benchmarks.bench_bg_actions"),
    ("sdk", "benchmarks.bench_sdk"),
    ("transcript", "benchmarks.bench_transcript"),
    ("browser", "benchmarks.bench_browser"),
    ("dialog", "benchmarks.bench_dialog"),
    ("codexdialog", "benchmarks.bench_codex_dialog"),
]
RESULTS = ROOT / "benchmarks" / "results.md"
#: Smaller sizes for modules whose main() takes no ``quick`` argument (bench_transcript).
QUICK_KWARGS = {"size_mb": 50, "p6_size_mb": 100, "runs": 1, "appends_count": 100}


def _call_main(module: Any, quick: bool) -> list[tuple[Any, ...]]:
    params = inspect.signature(module.main).parameters
    if "quick" in params:
        return list(module.main(quick=quick))
    kwargs = {k: v for k, v in QUICK_KWARGS.items() if k in params} if quick else {}
    return list(module.main(**kwargs))


def _machine() -> str:
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = "?"
    return (
        f"{os.cpu_count()} cores, Linux {platform.release()}, Python {platform.python_version()}"
        f", commit {rev or '?'}"
    )


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="short smoke run (not a result)")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated modules to run: {', '.join(n for n, _ in MODULES)}",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="write the table here (default: results.md for a full run, nowhere otherwise)",
    )
    args = parser.parse_args(argv)
    wanted = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = wanted - {name for name, _ in MODULES}
    if unknown:
        parser.error(f"unknown module(s): {', '.join(sorted(unknown))}")
    selected = [(n, m) for n, m in MODULES if not wanted or n in wanted]
    machine = _machine()
    load_before = _load()
    started = time.monotonic()
    rows: list[tuple[Any, ...]] = []
    crashed = False
    timings = []
    for name, module_name in selected:
        t0 = time.monotonic()
        try:
            # Inside the try: a module that cannot be imported crashed (2). Raised out of
            # main, Python's own exit code (1) read as a missed budget in CI.
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:
                    raise
                log(f"{module_name} not present: skipped")
                continue
            log(f"running {module_name}")
            got = _call_main(module, args.quick)
        except Exception:
            crashed = True
            trace = traceback.format_exc()
            print(trace, file=sys.stderr)
            last = trace.strip().splitlines()[-1]
            got = [(f"{name}: crashed", last[:200], "runs", False)]
        rows.extend(got)
        timings.append(f"{name} {time.monotonic() - t0:.0f} s")
    table = format_table(rows)
    print()
    print(table)
    failed = [row for row in rows if not row[3]]
    summary = f"{len(rows) - len(failed)}/{len(rows)} rows within budget" + (
        f"; FAILED: {'; '.join(str(row[0]) for row in failed)}" if failed else ""
    )
    print(f"\n{summary}\n({', '.join(timings)}; total {time.monotonic() - started:.0f} s)")
    out = args.out
    if out is None and not args.quick and not wanted:
        out = RESULTS
    if out is not None:
        kind = "quick smoke run, not a result" if args.quick else "full run"
        text = (
            "# Benchmark results\n\n"
            f"`make bench` ({kind}), {time.strftime('%Y-%m-%d %H:%M %Z')}: {machine}; "
            f"load average (1, 5, 15 min) {load_before} before the run, {_load()} after "
            "(other work shares this machine: latencies and CPU times depend on it). "
            'Budgets from DESIGN.md ("Budgets"); how each is measured: the docstrings of '
            '`benchmarks/bench_*.py`. "info" rows are raw numbers without a budget.\n\n'
            f"{table}\n\n{summary}\n\n"
            f"Durations: {', '.join(timings)}; total {time.monotonic() - started:.0f} s.\n"
        )
        Path(out).write_text(text)
        log(f"wrote {out}")
    if crashed:
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
