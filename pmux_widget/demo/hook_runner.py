"""The demo's hooks, run exactly as Claude Code runs them: the command installed in the demo's
settings.json, ``/bin/sh -c``, the payload on stdin (so the demo exercises the real script).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from pmux_widget.hooks.script import is_our_command

__all__ = ["InstalledHooks"]


def log(message: str) -> None:
    print(f"[demo] {message}", file=sys.stderr, flush=True)


class InstalledHooks:
    """Our hook commands as installed in a Claude ``settings.json``; fires them like Claude.

    Claude Code runs each command with ``/bin/sh -c``, the payload (one JSON line) on stdin,
    the session's cwd as working directory, ``CLAUDE_PROJECT_DIR`` set and ``$TMUX_PANE``
    inherited from its pane (``inherit_tmux``: this process's own; else the ``pane`` given to
    :meth:`fire`, or none). Events without a command of ours are not fired (Claude only runs
    configured hooks).
    """

    def __init__(self, settings_file: Path, home: Path, *, inherit_tmux: bool = False) -> None:
        settings = json.loads(Path(settings_file).read_text())
        self.commands: dict[str, str] = {}
        for event, groups in (settings.get("hooks") or {}).items():
            for group in groups or []:
                for hook in group.get("hooks") or []:
                    if is_our_command(hook.get("command")):
                        self.commands[event] = hook["command"]
        if not self.commands:
            raise RuntimeError(f"no pmux-widget hooks installed in {settings_file}")
        # A process in a real pane passes its own $TMUX/$TMUX_PANE on (as Claude does).
        drop = () if inherit_tmux else ("TMUX", "TMUX_PANE")
        base = {k: v for k, v in os.environ.items() if k not in drop}
        self.env = {**base, "PMUX_WIDGET_HOME": str(home), "CLAUDECODE": "1"}
        self.fired: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._clock: Path | None = None

    def _clock_dir(self) -> Path:
        """A dir with a ``date`` that tells the hook script the time in ``$PMUX_DEMO_SENT_MS``:
        the installed script stamps X-Pmux-Sent (or the spool entry) with ``date``, so a
        backdated history goes through the very same script, posted or spooled."""
        with self._lock:
            if self._clock is None:
                real = shutil.which("date") or "/bin/date"
                self._clock = Path(tempfile.mkdtemp(prefix="pmux-demo-clock-"))
                shim = self._clock / "date"
                shim.write_text(
                    "#!/bin/sh\n"
                    "# the demo's history clock (pmux_widget/demo/simulated.py)\n"
                    'case "$1" in\n'
                    '  +%s%3N) echo "$PMUX_DEMO_SENT_MS" ;;\n'
                    '  +%s) echo "$((PMUX_DEMO_SENT_MS / 1000))" ;;\n'
                    f'  *) exec {real} "$@" ;;\n'
                    "esac\n"
                )
                shim.chmod(0o700)
            return self._clock

    def close(self) -> None:
        """Remove the history clock's dir (if one was made)."""
        with self._lock:
            if self._clock is not None:
                shutil.rmtree(self._clock, ignore_errors=True)
                self._clock = None

    def fire(
        self,
        payload: dict[str, Any],
        pane: str | None = None,
        cwd: str | None = None,
        at_ms: int | None = None,
    ) -> bool:
        """Run our command for the payload's event. ``at_ms``: the time the hook script
        stamps it with (a backdated history), else now."""
        command = self.commands.get(payload["hook_event_name"])
        if command is None:
            return False
        env = dict(self.env)
        if at_ms is not None:
            env["PATH"] = f"{self._clock_dir()}{os.pathsep}{env.get('PATH', os.defpath)}"
            env["PMUX_DEMO_SENT_MS"] = str(at_ms)
        if pane:
            env["TMUX_PANE"] = pane
        if cwd:
            env["CLAUDE_PROJECT_DIR"] = cwd
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        try:
            subprocess.run(
                ["/bin/sh", "-c", command],
                input=data,
                env=env,
                cwd=cwd if cwd and os.path.isdir(cwd) else None,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log(f"hook {payload['hook_event_name']} failed: {exc}")
            return False
        with self._lock:
            self.fired[payload["hook_event_name"]] += 1
        return True
