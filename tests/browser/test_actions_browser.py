"""Acting from the widget on a REAL Claude Code session, by clicks in real JupyterLab.

The newest pinned CLI runs in a private tmux server against the scripted model; a notebook's
kernel runs the hub over that CLI's config dir (``pmux_widget.start(claude_home=…)``, then
``show()``) and our hooks reach it through the installed script. Every step is what a user
does: click Approve / Deny on the needs-input row, type into the prompt box and press Enter,
open Peek; and a click still in transit (held on the kernel's websocket) while the dialog
changed is refused with the reason, and types nothing. The CLI's own files and screen say
what happened.

The keys and screens of both pinned versions are covered without a browser by
``tests/real_claude/test_actions.py``; this is the whole path, click to keystroke.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until
from .conftest import LabPage, Workspace, newest_cli

pytestmark = [pytest.mark.browser, pytest.mark.real_claude]


class HeldClicks:
    """A proxy on the kernel's websocket that can hold the widget's action messages in
    transit (a click that reaches the kernel late), passing everything else through."""

    def __init__(self) -> None:
        self.holding = False
        self.messages: list[str | bytes] = []
        self._server: Any = None

    def route(self, ws: Any) -> None:
        server = ws.connect_to_server()
        self._server = server
        ws.on_message(self._from_page)
        server.on_message(ws.send)

    def _from_page(self, message: str | bytes) -> None:
        raw = message.encode() if isinstance(message, str) else message
        if (self.holding and b'"type": "action"' in raw) or (
            self.holding and b'"type":"action"' in raw
        ):
            self.messages.append(message)
            return
        self._server.send(message)

    def release(self) -> None:
        self.holding = False
        for message in self.messages:
            self._server.send(message)


@pytest.fixture
def cli(workspace: Workspace) -> Iterator[TmuxClaude]:
    """The newest pinned CLI in tmux, its hooks going to the workspace's hub home."""
    binary = newest_cli()
    with ScriptedModel() as model:
        env = ClaudeEnv(model.base_url, root=workspace.dir / "cli", version=NEWEST)
        env.extra_env["PMUX_WIDGET_HOME"] = str(workspace.pmux.root)
        hooks.install(env.settings_file, workspace.pmux)
        tc = TmuxClaude(env, binary)
        try:
            yield tc
        finally:
            tc.close()


def _markers(tc: TmuxClaude) -> list[Path]:
    """Files the scripted Bash command creates (``touch sim-<n>.txt``) when it really runs."""
    return sorted(tc.env.cwd.glob("sim-*.txt"))


def _to_dialog(lab: LabPage, tc: TmuxClaude, sid: str) -> None:
    tc.type_prompt("run the command")
    tc.wait_dialog()
    lab.wait_state(sid, "needs-input", timeout=45)


def _click(lab: LabPage, sid: str, action: str) -> None:
    row = lab.row(sid)
    row.scroll_into_view_if_needed()
    row.locator(f"button.pmux-act--{action}").click()


def _dialog(screen: str) -> str | None:
    dialog = parse_screen(screen).dialog
    return None if dialog is None else dialog.fingerprint


def _note(lab: LabPage, sid: str) -> str:
    note = lab.row(sid).locator(".pmux-act-note")
    return str(note.inner_text()) if note.count() and note.is_visible() else ""


def test_approve_deny_prompt_and_peek_by_clicks(
    lab: LabPage, workspace: Workspace, cli: TmuxClaude
) -> None:
    claude_dir = cli.env.config_dir
    held = HeldClicks()
    lab.page.route_web_socket(re.compile(r".*/api/kernels/.*/channels.*"), held.route)
    lab.open_notebook(
        workspace.notebook(
            "act.ipynb",
            f"import pmux_widget; pmux_widget.start(claude_home={str(claude_dir)!r}); "
            "pmux_widget.show()",
        )
    )
    lab.run_cell(0)
    lab.root().wait_for()
    cli.start(timeout=90)
    sid = wait_until(cli.session_id, 30, what="the CLI's PID file")
    lab.wait_state(sid, "idle", timeout=45)

    # Approve: the command runs, the turn ends in review.
    _to_dialog(lab, cli, sid)
    assert "asks to run" in str(lab.row(sid).locator(".pmux-primary").inner_text())
    _click(lab, sid, "approve")
    lab.wait_state(sid, "review", timeout=45)
    assert len(_markers(cli)) == 1, "the approved command ran"

    # Deny: nothing runs, the session is idle, not review.
    _to_dialog(lab, cli, sid)
    _click(lab, sid, "deny")
    lab.wait_state(sid, "idle", timeout=45)
    cli.wait_for_screen("Interrupted")
    assert len(_markers(cli)) == 1, "the denied command did not run"

    # The prompt box (shown when the row has the focus): a turn runs to review.
    row = lab.row(sid)
    row.locator(".pmux-name").click()  # the bar shows while the row has the focus
    box = row.locator("input.pmux-prompt")
    box.fill("say hi")
    box.press("Enter")
    lab.wait_state(sid, "review", timeout=45)
    cli.wait_for_screen("Hi! I am the scripted model")

    # Peek: the pane's last lines, read-only.
    lab.row(sid).locator(".pmux-name").click()
    _click(lab, sid, "peek")
    peek = lab.row(sid).locator("pre.pmux-peek")
    wait_until(
        lambda: "Hi! I am the scripted model" in (peek.text_content() or ""),
        20,
        what=lambda: f"the peek to show the answer; it shows {peek.text_content()!r}",
    )
    lab.screenshot("actions-peek")
    _click(lab, sid, "peek")  # close it (it refreshes while open)

    # A click still in transit (held on the kernel's websocket) when the dialog it answers is
    # replaced: the kernel refuses it by its dialog token, and nothing is typed.
    _to_dialog(lab, cli, sid)
    held.holding = True
    _click(lab, sid, "approve")
    wait_until(lambda: held.messages, 10, what="the click on its way to the kernel")
    cli.deny()  # answered in the terminal meanwhile; then a new dialog
    lab.wait_state(sid, "idle", timeout=45)
    _to_dialog(lab, cli, sid)
    before = cli.screen()
    markers = _markers(cli)
    held.release()
    lab.page.wait_for_function(
        "(sid) => (document.querySelector(`.pmux-row[data-session-id='${sid}'] .pmux-act-note`)"
        " || {}).textContent?.startsWith('refused:')",
        arg=sid,
        timeout=30_000,
    )
    assert "moved on since it was shown" in _note(lab, sid), _note(lab, sid)
    lab.screenshot("actions-stale-refused")
    assert _markers(cli) == markers, "the stale click ran the command"
    # the same dialog still asks (compared as parsed: 2.1.332 animates its logo)
    assert _dialog(cli.wait_dialog(5)) == _dialog(before)
    lab.wait_state(sid, "needs-input")
