"""``make clis``: install the pinned Claude Code CLIs, and the pinned Codex CLI, before the
tests start.

The real-CLI suites need them; installing on demand inside pytest meant that one failed npm
install (a busy registry, other npm installs beside it on a fresh machine) turned into
skipped suites in a green run (issue 30). Here each pinned version is installed into
``.cache/claude-code/<version>/`` once (:func:`~pmux_widget.demo.claude_env.ensure_cli`
returns at once when it is there), retried with a pause, and npm's error is shown when it
still fails. The Codex CLI (``@openai/codex``, :data:`~pmux_widget.demo.codex_env.CODEX_VERSION`)
goes into ``.cache/codex/<version>/`` (``$PMUX_CODEX_CACHE``) the same way. The Claude Code CLI
the Agent SDK bundles comes from its wheel: the SDK installed in this interpreter (the test
extra pins it), else ``pip install --target`` into its folder.

Exit status: 0 when every pin is installed. When one cannot be had, one line per version says
why and the command that fixes it; the exit status is then 1 with ``CI`` set (CI must run
the suites), else 0 (the tests of that version are skipped, and the end of the test run
lists them again with the same fix).

    python -m devtools.install_clis [--attempts N] [--pause S] [VERSION ...]

(``VERSION``: Claude Code versions, or ``codex`` for the Codex CLI; default: all pins.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

from pmux_widget.demo.claude_env import CLI_VERSIONS, SDK_BUNDLED, CliUnavailable, ensure_cli
from pmux_widget.demo.codex_env import CODEX_VERSION, ensure_codex

#: The name that stands for the pinned Codex CLI among the versions.
CODEX = "codex"

#: seconds before the 2nd, 3rd, ... attempt (a registry hiccup is usually over in seconds)
PAUSES = (5.0, 20.0, 60.0)


def fix_for(reason: str) -> str:
    """The command that gets a pinned CLI, given why it could not be had."""
    if "pip install failed" in reason or "claude-agent-sdk" in reason:
        pins = " ".join(f"claude-agent-sdk=={sdk}" for sdk in SDK_BUNDLED.values())
        return f".venv/bin/pip install {pins} && make clis"
    if shutil.which("npm") is None or "npm is not on PATH" in reason:
        return "sudo apt-get install nodejs npm && make clis"
    return "make clis"


def install(version: str, attempts: int, pauses: tuple[float, ...] = PAUSES) -> str | None:
    """None once ``version`` runs; else the last reason."""
    reason = ""
    name = f"codex {CODEX_VERSION}" if version == CODEX else f"claude {version}"
    for attempt in range(1, attempts + 1):
        try:
            path = ensure_codex() if version == CODEX else ensure_cli(version)
        except CliUnavailable as exc:
            reason = str(exc)
        else:
            print(f"clis: {name} ready ({path})")
            return None
        print(f"clis: {name}, attempt {attempt}/{attempts} failed: {reason}")
        if shutil.which("npm") is None:
            break  # no retry brings npm
        if attempt < attempts:
            time.sleep(pauses[min(attempt - 1, len(pauses) - 1)])
    return reason


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devtools.install_clis", description=__doc__)
    parser.add_argument("versions", nargs="*", default=[*CLI_VERSIONS, CODEX])
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--pause", type=float, help="seconds between attempts (default 5, 20)")
    args = parser.parse_args(argv)
    pauses = PAUSES if args.pause is None else (args.pause,)
    failed = {v: r for v in args.versions if (r := install(v, max(1, args.attempts), pauses))}
    for version, reason in failed.items():
        what = f"Codex CLI {CODEX_VERSION}" if version == CODEX else f"Claude Code CLI {version}"
        print(f"clis: MISSING {what}: {reason} -> fix: {fix_for(reason)}", file=sys.stderr)
    if failed and os.environ.get("CI"):
        print("clis: CI is set: the real-CLI suites must run, so this step fails", file=sys.stderr)
        return 1
    if failed:
        print("clis: the tests of these versions will be skipped (listed at the end of the run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
