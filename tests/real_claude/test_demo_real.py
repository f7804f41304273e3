"""``make demo DEMO_ARGS=--real``: the demo fleet made of real Claude Code CLIs in tmux.

The demo runs ``python -m pmux_widget.demo --real --no-lab`` (its own dirs in a temp dir, never
the user's): five real CLIs in private tmux servers against the scripted model, driven by
keystrokes, and a sixth left undriven for the notebook. A hub in this process watches the same
homes and records when each state and indicator first showed, as the widget would show them.
The demo must use the real CLIs (no fallback to the scripted fleet); every scripted session
must reach every state and indicator its script names (``real_fleet.Step.shows``: auto mode's
"can't check" dialog included), with no step running out of its budget; on Ctrl+C's signal it
must end its sessions (``/exit``) and leave no process, tmux server or CLI of its own behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pmux_widget.core.model import Change, Session, State
from pmux_widget.demo.real_fleet import BACKGROUND_NAME, expected_features
from pmux_widget.runtime.assemble import make_hub as Hub  # a Hub with its file sources

from ..helpers import wait_until
from ..test_demo import REPO, STATES, DemoProcess, Observer, features, save_timings

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


def _shows(session: Session) -> set[str]:
    """:func:`features`, and auto mode's "can't check actions" dialog: needs-input while the
    PID file says a dialog is open (not a permission prompt), or in the Notification's words."""
    found = features(session)
    asked = session.waiting_for or ""
    if session.state is State.NEEDS_INPUT and ("can't check" in asked or asked == "dialog open"):
        found.add("auto_dialog")
    return found


class PerProject:
    """A hub listener: what each project's sessions showed, live (entered since its start)."""

    def __init__(self) -> None:
        self.since_ms = int(time.time() * 1000)
        self.seen: dict[str, set[str]] = {}

    def __call__(self, changes: list[Change], fleet: dict[str, Session]) -> None:
        for change in changes:
            after = change.after
            if after.project and after.state_since >= self.since_ms:
                self.seen.setdefault(after.project, set()).update(_shows(after))

    def missing(self, expected: dict[str, frozenset[str]]) -> dict[str, list[str]]:
        gaps = {p: sorted(want - self.seen.get(p, set())) for p, want in expected.items()}
        return {p: gap for p, gap in gaps.items() if gap}


def _demo_tmux_servers(pid: int) -> list[Path]:
    """The tmux sockets the demo process ``pid`` created (``pmux-demo-<pid>-<project>``)."""
    base = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
    return sorted(base.glob(f"pmux-demo-{pid}-*")) if base.is_dir() else []


def _server_alive(socket: Path) -> bool:
    done = subprocess.run(
        ["tmux", "-S", str(socket), "list-sessions"], capture_output=True, check=False
    )
    return done.returncode == 0


@pytest.mark.timeout(600)
def test_real_demo_fleet_shows_every_state_and_stops_clean(
    tmp_path: Path, claude_cli: Path
) -> None:
    demo_dir = tmp_path / "demo"
    (demo_dir / "claude" / "projects").mkdir(parents=True)
    hub = Hub(home=demo_dir / "pmux", claude_home=demo_dir / "claude").start()
    seen, per_project = Observer(), PerProject()
    hub.call(lambda: hub.add_listener(seen))
    hub.call(lambda: hub.add_listener(per_project))
    demo = DemoProcess(tmp_path, "--real", "--no-lab", "--duration", "600")
    expected = expected_features()
    try:
        demo.wait_for_output(r"Running; stops", 300)
        assert "not possible here" not in demo.output(), demo.output()
        assert "start-up took" in demo.output()
        sockets = _demo_tmux_servers(demo.proc.pid)
        assert len(sockets) == 6, (sockets, demo.output())  # five driven, and the playground

        # Every session reaches what its script names; the slowest script's cycle (infra's
        # ten steps) takes about a minute, two on a loaded 2-core machine.
        wait_until(
            lambda: not per_project.missing(expected),
            240,
            what=lambda: f"never seen: {per_project.missing(expected)}\n{demo.output()}",
        )

        def missing() -> list[str]:
            return [name for name in REAL_REQUIRED if name not in seen.first]

        wait_until(lambda: not missing(), 60, what=lambda: f"never seen: {missing()}")
        states_seen = max(seen.first[name] for name in STATES)
        print(f"\nfirst seen (s after start): {seen.first}")
        save_timings("real_fleet", {"first_seen_s": seen.first, "states_s": states_seen})

        # the terminal's view of the same fleet, as a user beside the demo would run it
        table = subprocess.run(
            [sys.executable, "-m", "pmux_widget", "status"],
            env={
                **os.environ,
                "CLAUDE_CONFIG_DIR": str(demo_dir / "claude"),
                "PMUX_WIDGET_HOME": str(demo_dir / "pmux"),
                "COLUMNS": "80",
            },
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        print(table)
        assert all(project in table for project in expected)
        assert "hook:" not in table and "0/0" not in table

        demo.signal(signal.SIGINT)
        assert demo.wait(60) == 0, demo.output()
        assert "Stopping (SIGINT)" in demo.output()
        assert "Stopped; no demo process is left running." in demo.output()
        assert " failed (" not in demo.output(), demo.output()  # no step ran out of its budget
        demo.assert_nothing_left()
        assert not [s for s in sockets if _server_alive(s)], "a demo tmux server is still up"

        sessions = hub.call(lambda: list(hub.fleet.values()))
        projects = {s.project for s in sessions}
        assert projects >= set(expected)
        # the real claude --bg session (issue 26): a background row, in no pane
        background = [s for s in sessions if s.background is not None]
        assert [s.background.name for s in background if s.background] == [BACKGROUND_NAME]
        assert all(s.tmux is None for s in background)
        # A pre-warmed spare worker whose SessionStart came before its PID file said "spare"
        # made a row that the file then ended silently (pid:spare): not a session, and in a
        # pane only when the daemon that runs it was started from one (which CLI starts the
        # daemon first varies from run to run)
        spares = [s for s in sessions if s.tracking.spare]
        assert all(s.ended and s.source == "pid:spare" for s in spares), spares
        paneless = [
            (s.session_id[:8], s.project, s.source, s.ended, s.tmux)
            for s in sessions
            # a Codex TUI's pane is its own, located (s.tmux): its hooks name the daemon's
            if s.background is None and not (s.tracking.pane or s.tmux) and not s.tracking.spare
        ]
        assert not paneless, f"sessions with no pane: {paneless}"
        # one tmux session name for all Claude's: one workspace in the widget (--real's Codex
        # TUI runs in its harness's own tmux server, session "codex")
        assert {s.tmux.session for s in sessions if s.tmux is not None and s.agent == "claude"} == {
            "demo"
        }
        assert {s.tmux.session for s in sessions if s.tmux is not None and s.agent == "codex"} <= {
            "codex"
        }
        # /exit in every pane: SessionEnd reached the hub, and no CLI runs any more.
        # (the background worker is ended by pid: not running, its job kept)
        wait_until(
            lambda: all(
                (s.ended or s.background is not None) and not s.running
                for s in hub.call(lambda: list(hub.fleet.values()))
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


def test_every_scripted_session_names_what_it_shows() -> None:
    """Each script names at least one state or indicator, and only names the test knows."""
    known = {*STATES, *REAL_REQUIRED, "auto_dialog"}
    expected = expected_features()
    assert set(expected) == {"acme-api", "web-frontend", "data-pipeline", "infra", "ops-auto"}
    assert all(shows and shows <= known for shows in expected.values()), expected
    assert "auto_dialog" in expected["ops-auto"]
