"""The command line: ``python -m devtools.record`` (see the package docstring)."""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from devtools.record.doc import render_doc
from devtools.record.recording import record_scenario, write_fixtures
from devtools.record.scenarios import ONLY_ON, SCENARIOS, applies
from pmux_widget.demo.claude_env import (
    CLI_VERSIONS,
    NEWEST,
    ensure_cli,
)


def main(argv: list[str] | None = None) -> int:
    """Record scenarios into fixtures (and regenerate the behaviour doc)."""
    parser = argparse.ArgumentParser(
        prog="python -m devtools.record", description="Record real Claude Code runs into fixtures."
    )
    parser.add_argument("scenarios", nargs="*", help=f"default: all of {', '.join(SCENARIOS)}")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("tests/fixtures/real"),
        help="fixtures root: recordings go to <out>/<version>/<scenario>/",
    )
    parser.add_argument(
        "--version",
        default=NEWEST,
        help=f"CLI version to record ({', '.join(CLI_VERSIONS)}, or 'all'; default {NEWEST})",
    )
    parser.add_argument(
        "--doc",
        type=Path,
        default=None,
        help="regenerate this markdown file from everything under --out",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep raw recordings (temp dirs and raw.json) under this folder",
    )
    parser.add_argument("--cli", default=None, help="claude binary (default: ensure_cli(version))")
    parser.add_argument(
        "--from-raw",
        type=Path,
        default=None,
        help="rewrite fixtures from raw recordings kept earlier with --keep (no CLI run)",
    )
    parser.add_argument(
        "--doc-only",
        action="store_true",
        help="only regenerate --doc from the fixtures already under --out",
    )
    args = parser.parse_args(argv)
    if args.doc_only:
        if not args.doc:
            parser.error("--doc-only needs --doc")
        args.doc.write_text(render_doc(args.out))
        print(f"wrote {args.doc}")
        return 0
    versions = list(CLI_VERSIONS) if args.version == "all" else [args.version]
    names = args.scenarios or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenarios: {unknown}")
    if args.from_raw:
        for version in versions:
            for name in names:
                raw = args.from_raw / version / f"{name}.raw.json"
                if raw.exists():
                    write_fixtures(json.loads(raw.read_text()), args.out / version)
                    print(f"{version} {name:28s} rewritten from {raw}")
        if args.doc:
            args.doc.write_text(render_doc(args.out))
            print(f"wrote {args.doc}")
        return 0
    failed = 0
    for version in versions:
        cli = Path(args.cli) if args.cli else ensure_cli(version)
        work = (args.keep / version) if args.keep else Path(tempfile.mkdtemp(prefix="pmux-record-"))
        work.mkdir(parents=True, exist_ok=True)
        try:
            for name in names:
                if not applies(name, version):
                    print(f"{version} {name:28s} skipped: {ONLY_ON[name][1]} on {version}")
                    continue
                t0 = time.monotonic()
                rec = record_scenario(name, cli, work, version=version)
                (work / f"{name}.raw.json").write_text(json.dumps(rec, indent=1))
                write_fixtures(rec, args.out / version)
                status = "FAILED: " + rec["error"] if rec["error"] else "ok"
                failed += bool(rec["error"])
                print(f"{version} {name:28s} {time.monotonic() - t0:6.1f}s  {status}", flush=True)
        finally:
            if args.keep is None:
                shutil.rmtree(work, ignore_errors=True)
    if args.doc:
        args.doc.write_text(render_doc(args.out))
        print(f"wrote {args.doc}")
    return 1 if failed else 0
