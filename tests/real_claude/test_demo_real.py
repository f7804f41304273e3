"""``make demo DEMO_ARGS=--real``: the demo fleet made of real Claude Code CLIs in tmux.

The demo runs ``python -m pmux_widget.demo --real --no-lab`` (its own dirs in a temp dir, never
the user's): five real CLIs in private tmux servers against the scripted model, driven by
keystrokes, and a sixth left undriven for the notebook. A hub in this process watches the same
homes and records when each state and indicator first showed, as the widget would show them.
The demo must use the real CLIs (no fallback to the scripted fleet); on Ctrl+C's signal it
must end its sessions (``/exit``) and leave no process, tmux server or CLI of its own behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from pmux_widget.runtime.assemble import make_hub as Hub  # a Hub with its file sources

from ..helpers import wait_until
from ..test_demo import STATES, DemoProcess, Observer, save_timings

#: What five real sessions show within the run: every state, and what the scripts provoke
#: (a tool, tokens, a background agent, a 429 that ends in an error, an Esc, real tmux panes,
#: auto mode).
REAL_REQUIRED = (
    *STATES,
    "current_tool",
    "tokens",
    "context",
    "error",
    "subagents",
    "compacting",
    "interrupt",
    "tmux_pane",
    "background_agent",
    "auto_mode",
)


def _demo_tmux_servers(pid: int) -> list[Path]:
    """The tmux sockets the demo process ``pid`` created (``pmux-demo-<pid>-<project>``)."""
    base = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    return sorted(base.glob(f"pmux-demo-{pid}-*")) if base.is_dir() else []


def _server_alive(socket: Path) -> bool:
    done = subprocess.run(
        ["tmux", "-S", str(socket), "list-sessions"], capture_output=True, check=False
    )
    return done.returncode == 0


@pytest.mark.timeout(420)
def test_real_demo_fleet_shows_every_state_and_stops_clean(
    tmp_path: Path, claude_cli: Path
) -> None:
    demo_dir = tmp_path / "demo"
    (demo_dir / "claude" / "projects").mkdir(parents=True)
    hub = Hub(home=demo_dir / "pmux", claude_home=demo_dir / "claude").start()
    seen = Observer()
    hub.call(lambda: hub.add_listener(seen))
    demo = DemoProcess(tmp_path, "--real", "--no-lab", "--duration", "300")
    try:
        demo.wait_for_output(r"Running; stops", 240)
        assert "not possible here" not in demo.output(), demo.output()
        sockets = _demo_tmux_servers(demo.proc.pid)
        assert len(sockets) == 6, (sockets, demo.output())  # five driven, and the playground

        missing = lambda: [name for name in REAL_REQUIRED if name not in seen.first]  # noqa: E731
        wait_until(lambda: not missing(), 75, what=lambda: f"never seen: {missing()}")
        states_seen = max(seen.first[name] for name in STATES)
        print(f"\nfirst seen (s after start): {seen.first}")
        save_timings("real_fleet", {"first_seen_s": seen.first, "states_s": states_seen})

        demo.signal(signal.SIGINT)
        assert demo.wait(60) == 0, demo.output()
        assert "Stopping (SIGINT)" in demo.output()
        assert "Stopped; no demo process is left running." in demo.output()
        demo.assert_nothing_left()
        assert not [s for s in sockets if _server_alive(s)], "a demo tmux server is still up"

        sessions = hub.call(lambda: list(hub.fleet.values()))
        projects = {s.project for s in sessions}
        assert projects >= {"acme-api", "web-frontend", "data-pipeline", "infra", "ops-auto"}
        assert all(s.tracking.pane for s in sessions if s.project in projects)
        # /exit in every pane: SessionEnd reached the hub, and no CLI runs any more.
        wait_until(
            lambda: all(
                s.ended and not s.running for s in hub.call(lambda: list(hub.fleet.values()))
            ),
            15,
            what=lambda: (
                "every session to end: "
                + str(
                    [
                        (s.project, s.ended, s.running)
                        for s in hub.call(lambda: list(hub.fleet.values()))
                    ]
                )
            ),
        )
    finally:
        demo.cleanup()
        hub.stop()
