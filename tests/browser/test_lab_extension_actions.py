"""The extension's panel answers a REAL Claude Code session, as the widget's rows do, with no
kernel: Approve by a click on the panel's row, Deny from the command palette.

The newest pinned CLI runs in a private tmux server against the scripted model; the Jupyter
server's own hub (the server extension) watches that CLI's config dir and our hooks reach it
through the installed script. The CLI's files and screen say what happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until
from .conftest import LabPage, LabServer, Workspace, newest_cli
from .test_lab_extension import PANEL, no_kernel, open_lab

pytestmark = [pytest.mark.browser, pytest.mark.real_claude]


@pytest.fixture
def setup(browser_context: Any) -> Iterator[tuple[LabPage, TmuxClaude]]:
    binary = newest_cli()
    server = LabServer(extension=True)
    ws = Workspace(server, "cli")
    with ScriptedModel() as model:
        env = ClaudeEnv(model.base_url, root=ws.dir / "cli", version=NEWEST)
        env.extra_env["PMUX_WIDGET_HOME"] = str(ws.pmux.root)
        hooks.install(env.settings_file, ws.pmux)
        # the server's hub: this workspace's pmux home, the CLI's config dir
        server.extra_env.update(
            PMUX_WIDGET_HOME=str(ws.pmux.root), CLAUDE_CONFIG_DIR=str(env.config_dir)
        )
        server.start_or_fail()
        page = browser_context.new_page()
        tc = TmuxClaude(env, binary)
        try:
            yield LabPage(server, page), tc
        finally:
            tc.close()
            page.close()
            server.stop()


def _markers(tc: TmuxClaude) -> list[Path]:
    """Files the scripted Bash command creates (``touch sim-<n>.txt``) when it really runs."""
    return sorted(tc.env.cwd.glob("sim-*.txt"))


def _to_dialog(lab: LabPage, tc: TmuxClaude, sid: str) -> None:
    tc.type_prompt("run the command")
    tc.wait_dialog()
    lab.wait_state(sid, "needs-input", within=PANEL, timeout=45)


def test_approve_by_the_panel_and_deny_by_the_palette(
    setup: tuple[LabPage, TmuxClaude],
) -> None:
    lab, cli = setup
    open_lab(lab)
    lab.command("pmux-widget:show-panel")
    cli.start(timeout=90)
    sid = wait_until(cli.session_id, 30, what="the CLI's PID file")
    lab.wait_state(sid, "idle", within=PANEL, timeout=45)

    # Approve, by a click on the panel's row: the command runs, the turn ends in review.
    _to_dialog(lab, cli, sid)
    row = lab.row(sid, within=PANEL)
    # the CLI's "permission prompt" Notification may reach the hub before PermissionRequest's
    # script (a loaded CI run): the row then says what is asked a moment later
    wait_until(
        lambda: "asks to run" in str(row.locator(".pmux-primary").inner_text()),
        30,
        what=lambda: f"the row to say what is asked: {row.locator('.pmux-primary').inner_text()!r}",
    )
    row.scroll_into_view_if_needed()
    row.locator("button.pmux-act--approve").click()
    lab.wait_state(sid, "review", within=PANEL, timeout=45)
    assert len(_markers(cli)) == 1, "the approved command ran"

    # Deny, from the palette (the session that asks): nothing runs, the session is idle.
    _to_dialog(lab, cli, sid)
    label = lab.page.evaluate("() => window.jupyterapp.commands.label('pmux-widget:deny')")
    assert label.startswith("Deny "), label
    lab.command("pmux-widget:deny")
    lab.wait_state(sid, "idle", within=PANEL, timeout=45)
    cli.wait_for_screen("Interrupted")
    assert len(_markers(cli)) == 1, "the denied command did not run"
    no_kernel(lab.server)
