"""``POST pmux/api/actions`` delivers: the scripted demo session (``demo/sim_claude.py``, a
simulated Claude Code process in a private tmux pane) is approved and interrupted through the
Jupyter server's hub, with the same checks and codes as the hub's own HTTP actions.

Real components: a ``jupyter server`` with the extension, the demo's private tmux server, the
installed hook script, the server hub's file sources (PID files, transcripts).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.demo.driver import ScriptedFleet

from .helpers import wait_until
from .jupyter_ext import LabServer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")


@pytest.fixture
def lab_fleet(tmp_path: Path) -> Iterator[tuple[LabServer, ScriptedFleet]]:
    server = LabServer(tmp_path).start()
    hooks.install(server.claude / "settings.json", server.pmux)
    (server.claude / "projects").mkdir(exist_ok=True)
    fleet = ScriptedFleet(
        server.claude, server.pmux.root, tmp_path / "projects", sessions=1, seed=11, speed=2.0
    )
    try:
        fleet.start()
        assert fleet.panes is not None, fleet.note
        yield server, fleet
    finally:
        fleet.stop()
        server.stop()


def acme(server: LabServer) -> dict[str, Any] | None:
    answer = server.get("pmux/api/sessions")
    assert answer.status_code == 200, answer.text
    found = [s for s in answer.json()["sessions"] if s["project"] == "acme-api"]
    return found[0] if found else None


def act_when(server: LabServer, state: str, action: str, what: str) -> dict[str, Any]:
    """Post ``action`` once the session is in ``state`` and running; a 409 because the script
    moved on meanwhile is "not yet" (the next dialog or turn comes)."""
    answers: list[tuple[int, Any]] = []

    def delivered() -> dict[str, Any] | None:
        session = acme(server)
        if session is None or session["state"] != state or not session["running"]:
            return None
        answer = server.post(
            "pmux/api/actions", {"action": action, "session_id": session["session_id"]}
        )
        answers.append((answer.status_code, answer.json()))
        assert answer.status_code in (202, 409), answers
        return answer.json() if answer.status_code == 202 else None

    return wait_until(delivered, 60, 0.05, what=lambda: f"{what}; answers: {answers[-5:]}")


@pytest.mark.timeout(180)
def test_actions_reach_the_scripted_session(lab_fleet: tuple[LabServer, ScriptedFleet]) -> None:
    server, _ = lab_fleet
    approved = act_when(server, "needs-input", "approve", "an approve delivered")
    assert approved["action"] == "approve" and approved["queued"] is False
    assert approved["dialog"]  # the dialog it answered, by its title
    wait_until(
        lambda: (s := acme(server)) is not None and s["source"] == "action:approve",
        20,
        what="the state the approve led to",
    )
    interrupted = act_when(server, "busy", "interrupt", "an interrupt delivered")
    assert interrupted["action"] == "interrupt"
    wait_until(
        lambda: (
            (s := acme(server)) is not None
            and s["state"] == "idle"
            and s["source"] == "action:interrupt"
        ),
        20,
        what="idle after Esc",
    )
