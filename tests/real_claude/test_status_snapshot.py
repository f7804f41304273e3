"""``pmux-widget status`` with no hub tells what a hub tells, on a real CLI's files.

The real CLI runs with our hooks installed and no hub: its hooks go to the spool, its PID file
and transcript are written as usual. The file snapshot (``runtime/snapshot.py``) is taken
then; a hub started afterwards over the same files replays the spool and reads the same
transcript. The two must agree field by field (``state_since`` aside: it is when each of them
applied the state), tokens and context included (they read 0/0 in the file snapshot before).
The table printed from the file snapshot says it in the widget's words.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pmux_widget import hooks as pmux_hooks
from pmux_widget.core.contract import describe_source
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.runtime.assemble import make_hub
from pmux_widget.runtime.snapshot import compute_snapshot
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until

#: When each of them applied the state: the one field that may differ.
TIMING_FIELDS = frozenset({"state_since"})


def _comparable(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` without its timing fields, and without its pane's title: the CLI retitles its
    pane on its own (the conversation's topic, from a side request, and a glyph that changes
    with its state), so the title read a moment later may differ; where the pane is may not."""
    out = {key: value for key, value in row.items() if key not in TIMING_FIELDS}
    if out.get("tmux"):
        out["tmux"] = {key: v for key, v in out["tmux"].items() if key != "title"}
    return out


def _one(snapshot: dict[str, Any], sid: str) -> dict[str, Any] | None:
    return next((s for s in snapshot["sessions"] if s["session_id"] == sid), None)


def test_file_snapshot_equals_the_hubs_on_a_real_session(
    tmp_path: Path, claude_cli: Path, cli_version: str, scripted_model: ScriptedModel
) -> None:
    home = PmuxHome(tmp_path / "pmux")
    env = ClaudeEnv(
        scripted_model.base_url,
        root=tmp_path / "claude",
        extra_env={"PMUX_WIDGET_HOME": str(home.root)},
        version=cli_version,
    )
    pmux_hooks.install(env.settings_file, home)
    with TmuxClaude(env, claude_cli) as tc:
        tc.type_prompt("read the readme")
        tc.wait_status("busy", 30)
        tc.wait_status("idle", 60)
        tc.type_prompt("please edit the notes")
        tc.wait_dialog(60)
        sid = str(wait_until(tc.session_id, 10, what="the session id"))

        # The dialog's hook reached the spool (2.1.197 adds a Notification ~6 s later).
        def settled() -> dict[str, Any] | None:
            row = _one(compute_snapshot(home, env.config_dir), sid)
            asked = ("hook:PermissionRequest", "hook:Notification")
            return row if row is not None and row["source"] in asked else None

        offline = wait_until(
            settled,
            30,
            what=lambda: (
                "the dialog's hook in the file snapshot: "
                + repr(_one(compute_snapshot(home, env.config_dir), sid))
            ),
        )
        assert offline is not None
        files = compute_snapshot(home, env.config_dir)
        assert offline["state"] == "needs-input"
        assert offline["tokens"]["output"] > 0 and offline["context_tokens"] > 0
        assert offline["current_tool"] == "Edit"
        assert offline["last_prompt"] == "please edit the notes"
        assert offline["tmux"] is not None and offline["pid"] == tc.pid

        table = subprocess.run(
            [sys.executable, "-m", "pmux_widget", "status"],
            env={
                **env.env(),
                "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
                "PMUX_WIDGET_HOME": str(home.root),
                "COLUMNS": "80",
            },
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        print(table)
        assert "asks to edit notes.txt" in table
        assert "hook:" not in table and describe_source(offline["source"]) in table
        assert max(len(line) for line in table.splitlines()) <= 80

        hub = make_hub(home=home.root, claude_home=env.config_dir).start()
        try:
            # Its pane is located on a worker thread once the session is known.
            wait_until(
                lambda: (s := hub.fleet.get(sid)) is not None and s.tmux is not None,
                30,
                what="the hub to locate the session's pane",
            )
            live = hub.call(hub.snapshot_json)
        finally:
            hub.stop()

    assert live["counts"] == files["counts"]
    assert [s["session_id"] for s in live["sessions"]] == [
        s["session_id"] for s in files["sessions"]
    ]
    for theirs, ours in zip(live["sessions"], files["sessions"], strict=True):
        assert set(ours) == set(theirs)
        a, b = _comparable(theirs), _comparable(ours)
        differ = {key: (a[key], b[key]) for key in a if a[key] != b[key]}
        assert not differ, f"hub vs file snapshot of {theirs['session_id']}: {differ}"
