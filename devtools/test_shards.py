"""``make test``'s pytest: the suite as shards that run side by side, one pytest each.

Most of the real-CLI suites' time is waiting: for the CLI to start, for the scripted model, for
a screen to be drawn. Run alone, those waits leave a core idle; run beside the rest of the suite
they overlap with its work. Shards share no state: each pytest has its own temp dirs (pytest's
numbered base dirs), homes, tmux sockets (named per test), ports (ephemeral) and config dirs
(tests/conftest.py's guard is per process). The real-CLI suites (``tests/real_*``) are one
shard, ``agents``, so that their CLIs' daemons (Claude Code's background daemon, Codex's shared
daemon: each keyed by its own config dir, with a socket under /tmp) never start two at once;
the browser and demo tests that drive a real CLI run in ``rest``, each with homes of its own.

Each shard's output goes to ``test-output/shard-<name>.log`` and is printed whole when it ends;
a line every minute says how far each got. The run ends with one line per shard and pytest's
own closing line for the whole run (``N passed, N failed, N skipped in S s``). The exit status
is the first failing shard's, as pytest's (5, no tests collected, is a failure here too).

    python -m devtools.test_shards [--serial] [PYTEST_ARGS ...]

Sharded by default (``make test``); ``--serial`` (``make test PYTEST_ARGS=--serial``) runs one
plain pytest, as do arguments that select tests (paths, ``-k``). The first whole sharded run
on a fresh clone that was green (2026-12-07, ci7: 1436 passed, 0 failed, 9 skipped) took
1508 s of pytest, against 2314 s serially on the CI run before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test-output"

#: name → the pytest arguments that select it. Together they are the whole of ``tests/``.
AGENT_SUITES = ("tests/real_claude", "tests/real_codex", "tests/real_sdk")
SHARDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("agents", AGENT_SUITES),
    ("rest", ("tests", *(f"--ignore={suite}" for suite in AGENT_SUITES))),
)

_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")
_PROGRESS = re.compile(r"\[\s*(\d+)%\]")
HEARTBEAT_S = 60.0


@dataclass
class Shard:
    name: str
    args: tuple[str, ...]
    log: Path
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    ended: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    def start(self, pytest: str, extra: list[str]) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        out: IO[bytes] = self.log.open("wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [pytest, *self.args, *_timings(self.name), *extra],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        out.close()

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def progress(self) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        found = _PROGRESS.findall(text)
        return f"{found[-1]}%" if found else "starting"

    def finish(self) -> str:
        self.ended = time.monotonic()
        text = self.log.read_text(errors="replace")
        closing = [line for line in text.splitlines() if line.startswith("=") and " in " in line]
        if closing:
            for number, word in _COUNT.findall(closing[-1]):
                key = "errors" if word.startswith("error") else word
                self.counts[key] = self.counts.get(key, 0) + int(number)
        return text


def _timings(name: str) -> list[str]:
    """Where a run's time went: the slowest tests at the end of its output (CI keeps a failed
    run's output) and every test's time in ``test-output/junit-<name>.xml``."""
    return ["--durations=25", f"--junitxml={OUT / f'junit-{name}.xml'}"]


def _existing(args: tuple[str, ...]) -> tuple[str, ...]:
    """The arguments less paths that do not exist (pytest refuses a path it cannot find)."""
    return tuple(a for a in args if a.startswith("-") or (ROOT / a).exists())


def run_shards(pytest: str, extra: list[str]) -> int:
    shards = [Shard(name, _existing(args), OUT / f"shard-{name}.log") for name, args in SHARDS]
    print(f"shards: {', '.join(s.name for s in shards)} side by side (logs in {OUT}/)")
    sys.stdout.flush()
    for shard in shards:
        shard.start(pytest, extra)
    pending = list(shards)
    beat = time.monotonic()
    try:
        while pending:
            for shard in list(pending):
                if shard.returncode is not None:
                    pending.remove(shard)
                    text = shard.finish()
                    print(f"\n{'#' * 30} shard {shard.name} (exit {shard.returncode}) {'#' * 30}")
                    print(text, end="" if text.endswith("\n") else "\n")
                    sys.stdout.flush()
            if pending and time.monotonic() - beat >= HEARTBEAT_S:
                beat = time.monotonic()
                print("shards: " + ", ".join(f"{s.name} {s.progress()}" for s in pending))
                sys.stdout.flush()
            time.sleep(0.5)
    except KeyboardInterrupt:
        for shard in pending:
            if shard.proc is not None:
                shard.proc.terminate()
        raise
    return summarize(shards)


def summarize(shards: list[Shard]) -> int:
    total: dict[str, int] = {}
    status = 0
    print()
    for shard in shards:
        code = shard.returncode or 0
        words = ", ".join(f"{n} {k}" for k, n in shard.counts.items()) or "no result"
        print(f"shard {shard.name}: {words} in {shard.ended - shard.started:.0f} s (exit {code})")
        for key, n in shard.counts.items():
            total[key] = total.get(key, 0) + n
        if code != 0 and status == 0:
            status = code
    wall = max(s.ended for s in shards) - min(s.started for s in shards)
    parts = [f"{total.get('passed', 0)} passed", f"{total.get('failed', 0)} failed"]
    parts += [
        f"{total[k]} {k}" for k in ("skipped", "errors", "xfailed", "xpassed") if total.get(k)
    ]
    print(f"{'=' * 20} {', '.join(parts)} in {wall:.2f}s {'=' * 20}")
    return status


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    pytest = str(Path(sys.executable).with_name("pytest"))
    sharded = "--serial" not in args
    args = [a for a in args if a not in ("--serial", "--shards")]
    if not sharded or any(not a.startswith("-") or a.startswith("-k") for a in args):
        return subprocess.call([pytest, *_timings("all"), *args], cwd=ROOT)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run_shards(pytest, args)


if __name__ == "__main__":
    sys.exit(main())
