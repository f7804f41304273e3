"""Upgrade the newest pinned Claude Code CLI in one command: install, pin, record, show the diff.

Why: users run the newest CLI, and its behaviour drifts (auto mode, background agents, new PID
fields). Moving the newest pin must be cheap, and what changed must be *seen* before any rule
of the monitor is touched. Usage, from a checkout::

    .venv/bin/python -m devtools.upgrade_cli 2.1.340 [--keep-previous] [scenario ...]

1. installs ``@anthropic-ai/claude-code@<version>`` beside the others (:func:`ensure_cli`);
2. rewrites :data:`CLI_VERSIONS` in ``pmux_widget/demo/claude_env.py`` (the oldest pin stays,
   the newest becomes ``<version>``);
3. records every scenario on it into ``tests/fixtures/real/<version>/`` and, unless
   ``--keep-previous``, removes the previous newest pin's fixtures (git keeps them);
4. regenerates ``docs/claude-code-behaviour.md`` and prints its ``git diff``.

Then read the "Differences that matter to a monitor" table, run the matrix
(``PYTHONPATH=$PWD CI=1 .venv/bin/pytest tests/real_claude``), and update the rules.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from devtools import record
from pmux_widget.demo.claude_env import CLI_VERSIONS, ensure_cli, version_key

ROOT = Path(__file__).resolve().parents[1]
CLI_MODULE = ROOT / "pmux_widget" / "demo" / "claude_env.py"
FIXTURES = ROOT / "tests" / "fixtures" / "real"
DOC = ROOT / "docs" / "claude-code-behaviour.md"
_PIN = re.compile(r"^(CLI_VERSIONS: tuple\[str, \.\.\.\] = )\((.*)\)$", re.M)


def repin(source: str, version: str) -> str:
    """``claude_env.py``'s text with the newest pin of ``CLI_VERSIONS`` set to ``version``."""
    m = _PIN.search(source)
    if m is None:
        raise ValueError("CLI_VERSIONS = (...) not found in claude_env.py")
    pins = re.findall(r'"([^"]+)"', m.group(2))
    pins = [*pins[:-1], version] if len(pins) > 1 else [*pins, version]
    line = m.group(1) + "(" + ", ".join(f'"{p}"' for p in pins) + ")"
    return source[: m.start()] + line + source[m.end() :]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Move the newest pinned Claude Code CLI.")
    parser.add_argument("version", help="the new newest version, e.g. 2.1.340")
    parser.add_argument("scenarios", nargs="*", help="scenarios to record (default: all)")
    parser.add_argument(
        "--keep-previous",
        action="store_true",
        help="keep the previous newest pin's fixtures (and its section of the doc)",
    )
    args = parser.parse_args(argv)
    version = args.version
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        parser.error(f"not a version: {version!r}")
    previous = CLI_VERSIONS[-1]
    if version_key(version) <= version_key(previous):
        parser.error(f"{version} is not newer than the newest pin {previous}")

    print(f"upgrade_cli: installing {version} …", flush=True)
    print(f"upgrade_cli: {ensure_cli(version)}")
    CLI_MODULE.write_text(repin(CLI_MODULE.read_text(), version))
    print(f"upgrade_cli: CLI_VERSIONS now ends with {version} (was {previous})")

    status = record.main(
        ["--version", version, "--out", str(FIXTURES), *args.scenarios]
    )  # the doc is written below, once the previous pin's fixtures are gone
    if not args.keep_previous and previous != CLI_VERSIONS[0]:
        shutil.rmtree(FIXTURES / previous, ignore_errors=True)
        print(f"upgrade_cli: removed the fixtures of {previous} (git keeps them)")
    DOC.write_text(record.render_doc(FIXTURES))
    print(f"upgrade_cli: wrote {DOC.relative_to(ROOT)}; its diff:\n", flush=True)
    subprocess.run(["git", "--no-pager", "diff", "--", str(DOC)], cwd=ROOT, check=False)
    if status:
        print("upgrade_cli: some scenarios failed to record (see above)", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
