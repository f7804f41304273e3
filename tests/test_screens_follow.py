"""Issue 11 item 8: "Claude not installed" and "hooks not installed" follow the world while a
widget is open (``show()`` reuses it), and ``pmux-widget install`` does not create Claude's
config dir unless asked (``--create``). Also the issue's "tried as a new user would" check:
install into a fresh home, break the store, start the hub, fire a hook, ask ``doctor``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from pmux_widget import hooks
from pmux_widget.notebook.widget import StatusWidget
from pmux_widget.runtime.hub import Hub

from .helpers import get_sessions, wait_until
from .test_hook_path import SID, Installed, payload, run_cli


def test_item8_screens_follow_claude_and_hooks_installed_later(homes):
    shutil.rmtree(homes.claude)  # Claude not installed yet
    hub = Hub().start()
    widget = StatusWidget(hub)
    try:
        assert widget.env["claude_installed"] is False
        homes.claude.mkdir()  # Claude Code installed and run once, kernel untouched
        wait_until(lambda: widget.env["claude_installed"] is True, what="Claude installed")
        assert widget.env["hooks_installed"] is False
        hooks.install(homes.settings, homes.pmux)  # from a terminal
        wait_until(lambda: widget.env["hooks_installed"] is True, what="hooks installed")
        assert widget.env["hooks_problem"] is None
        hooks.uninstall(homes.settings, homes.pmux)
        wait_until(lambda: widget.env["hooks_installed"] is False, what="hooks removed")
    finally:
        widget.close()
        hub.stop()


def test_item8_install_does_not_create_claude_config_dir_unless_asked(homes):
    shutil.rmtree(homes.claude)
    result = run_cli(homes, "install")
    assert result.returncode == 2
    assert "does not exist" in result.stderr and "--create" in result.stderr
    assert not homes.claude.exists()
    result = run_cli(homes, "install", "--create")
    assert result.returncode == 0, result.stderr
    assert homes.settings.is_file()


def test_new_user_install_break_the_store_start_fire_a_hook_doctor_explains(homes):
    """Tried as a new user would: a fresh home, the store broken, and it still works."""
    assert run_cli(homes, "install").returncode == 0
    homes.pmux.db_path.write_bytes(b"\x00garbage, not SQLite" * 100)
    env = {
        **os.environ,
        "PMUX_WIDGET_HOME": str(homes.pmux.root),
        "CLAUDE_CONFIG_DIR": str(homes.claude),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "pmux_widget", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline().decode()
        assert "hub on http://127.0.0.1:" in line, line
        port = int(line.split("127.0.0.1:")[1].split()[0])
        token = homes.pmux.token_file.read_text().strip()
        Installed(homes).fire(payload("UserPromptSubmit", prompt="go"))
        rows = wait_until(lambda: get_sessions(port, token)["sessions"], what="the session")
        assert rows[0]["state"] == "busy"
        doctor = run_cli(homes, "doctor")
        store_line = next(line for line in doctor.stdout.splitlines() if " store:" in line)
        assert "corrupt" in store_line and "moved it aside" in store_line, doctor.stdout
        assert "hub: reachable" in doctor.stdout
    finally:
        proc.terminate()
        proc.wait(10)
    log = proc.stderr.read().decode()
    assert log.count("moved aside to state.db.corrupt-") == 1, log  # said once, in the log
    status = json.loads(run_cli(homes, "status", "--json").stdout)
    assert [r["session_id"] for r in status["sessions"]] == [SID]
