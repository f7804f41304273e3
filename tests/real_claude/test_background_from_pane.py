"""``/background`` of an interactive session in a tmux pane, against the real CLI (issue 26,
item 2): the session goes on in a background worker (both pins: the interactive process
exits and a worker runs a fork of it, under a new id; 2.1.197's first worker hook names the
OLD id, see docs/claude-code-behaviour.md). The row follows it: one live row, the worker's,
with no pane; the pane is forgotten once it no longer holds the session.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from pmux_widget.core.model import State
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

pytestmark = [pytest.mark.all_versions, pytest.mark.timeout(240)]


def test_background_of_a_session_in_a_pane_is_followed_and_its_pane_forgotten(
    make_bg: Callable[..., BgClaude], claude_cli: Path, tmp_path: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    home = PmuxHome(tmp_path / "pmux")
    bg = make_bg(home)
    hub = make_hub(home=home.root, claude_home=bg.env.config_dir).start()
    tc = TmuxClaude(bg.env, claude_cli)
    try:
        tc.start(timeout=90)
        tc.type_prompt("please keep busy")
        first = wait_until(
            lambda: next((s for s in hub.fleet.values() if s.state is State.BUSY and s.tmux), None),
            timeout=30,
            what="the interactive session busy, in its pane",
        )
        pane = first.tmux.pane  # type: ignore[union-attr]
        tc.command_line("/background")

        def followed() -> bool:
            live = [s for s in hub.fleet.values() if not s.ended]
            return (
                len(live) == 1
                and live[0].background is not None
                and live[0].running
                and live[0].tmux is None
            )

        wait_until(followed, timeout=60, what="one live row: the background worker's")
        (row,) = [s for s in hub.fleet.values() if not s.ended]
        agents = bg.agents()
        assert [a["sessionId"] for a in agents] == [row.session_id]
        assert row.pid == agents[0]["pid"] and row.background.job == agents[0]["id"]  # type: ignore[union-attr]
        # the pane no longer holds the session: no live row names it
        assert all(
            (s.tmux is None or s.tmux.pane != pane) and s.tracking.pane != pane
            for s in hub.fleet.values()
            if not s.ended
        )
        assert hub.fleet[first.session_id].ended or first.session_id == row.session_id
        assert hub.errors == 0
    finally:
        tc.close()
        hub.stop()
