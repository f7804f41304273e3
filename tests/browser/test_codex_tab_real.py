"""A REAL Codex TUI in a JupyterLab terminal, seen in Chromium (issue 36, part 5): its tab
carries the session's dot and says Codex; the panel's Send puts a prompt in (a bracketed
paste: runtime/codex_actions.py), the approval it asks for turns the tab needs-input, the
panel's Approve answers it, and bringing the tab to the front after the turn ends review.

Codex (the pin) runs against the scripted Responses API, started in the terminal through its
websocket as a person would start it; the Jupyter server's own hub (the server extension)
gets Codex's hooks, and ``CODEX_HOME`` tells it where Codex keeps its threads. Every process
Codex starts (the TUI, the shared daemon, its helper) is ended by pid.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest

from pmux_widget import hooks
from pmux_widget.agents.codex.screen import parse_screen
from pmux_widget.demo.claude_env import CliUnavailable
from pmux_widget.demo.codex_cli import READY, codex_processes, end_codex_processes
from pmux_widget.demo.codex_env import CODEX_VERSION, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import HELLO, ScriptedResponses
from pmux_widget.system.home import PmuxHome

from ..helpers import wait_until
from ..jupyter_ext import LabServer as ExtServer
from ..lab_terminal import LabTerminal, close_terminal
from ..real_codex.conftest import unavailable
from .conftest import LabPage, LabServer
from .test_terminal_tabs import PANEL, _Rest, open_lab, show_panel, tab_info, wait_tab_state

pytestmark = [pytest.mark.browser, pytest.mark.real_codex]


@dataclass
class CodexLab:
    page: LabPage
    env: CodexEnv
    term: LabTerminal

    def row(self) -> dict[str, Any] | None:
        """The one Codex row of this terminal, as the server's hub has it."""
        rows = self.page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
        mine = [
            r
            for r in rows
            if r["agent"] == "codex" and (r.get("terminal") or {}).get("name") == self.term.name
        ]
        return mine[0] if len(mine) == 1 else None


@pytest.fixture
def codex_lab(request: pytest.FixtureRequest, browser_context: Any) -> Iterator[CodexLab]:
    try:
        binary = ensure_codex(CODEX_VERSION)
    except CliUnavailable as exc:
        unavailable(str(exc))
    if shutil.which("tmux") is None:  # the hook script's pane lookup; no tmux server is used
        unavailable("tmux is not installed")
    responses = ScriptedResponses()
    responses.start()
    server = LabServer(extension=True, terminals=True)
    base = server.base / "codex"
    env = CodexEnv(responses.base_url, root=base / "codex")
    pmux = PmuxHome(base / "pmux").ensure()
    hooks.install_codex(env.codex_home, pmux)
    claude = base / "claude"
    claude.mkdir(parents=True)
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(pmux.root),
        CLAUDE_CONFIG_DIR=str(claude),
        CODEX_HOME=str(env.codex_home.root),
    )
    page = term = None
    try:
        server.start_or_fail()
        page = browser_context.new_page()
        page.set_default_timeout(30_000)
        term = LabTerminal(cast(ExtServer, _Rest(server)), cwd=env.cwd)
        assigns = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.env().items())
        term.type(f"cd {shlex.quote(str(env.cwd))} && env -i {assigns} {binary}\r")
        term.wait_for(READY, 90)
        yield CodexLab(LabPage(server, page), env, term)
    finally:
        close_terminal(term, request)
        if page is not None:
            with contextlib.suppress(Exception):
                page.close()
        server.stop()
        end_codex_processes(env)
        responses.stop()
        shutil.rmtree(env.codex_home.root / "packages", ignore_errors=True)
        assert [p.pid for p in codex_processes(env)] == [], "Codex processes left"


def test_a_codex_tab_shows_its_dot_and_the_panel_answers_it(codex_lab: CodexLab) -> None:
    lab, term = codex_lab.page, codex_lab.term
    # the first prompt, typed in the terminal before the page draws it (the page resizes
    # the terminal, and this test's own screen of it is drawn at its first size)
    term.type("hello one")
    term.wait_screen(lambda s: "hello one" in (parse_screen(s).prompt_text or ""), 20, "echo")
    time.sleep(0.4)  # Codex's paste-burst window after typed keys: it shows nothing on screen
    term.type("\r")
    row = wait_until(
        lambda: (codex_lab.row() or {}).get("state") == "review" and codex_lab.row(),
        60,
        what=lambda: f"the Codex row in review: {codex_lab.row()}",
    )
    assert isinstance(row, dict) and row["last_assistant"] == HELLO
    sid = row["session_id"]

    # its tab opened in front: a look, so review ends (silently); the tab says Codex
    open_lab(lab)
    show_panel(lab)
    lab.command("terminal:open", {"name": term.name})
    wait_tab_state(lab, term.name, "idle")
    seen = codex_lab.row()
    assert seen is not None and (seen["state"], seen["source"]) == ("idle", "user:seen"), seen
    info = tab_info(lab, term.name)
    assert info is not None and (info["title"] or "").startswith("Codex: idle"), info
    lab.command("launcher:create")  # now behind another tab: no look
    wait_until(lambda: not (tab_info(lab, term.name) or {}).get("current"), 10, what="behind")

    # the panel's Send: the prompt goes in and is submitted; the approval turns the tab
    shown = lab.page.locator(f'{PANEL} li.pmux-row[data-session-id="{sid}"]')
    shown.click()
    prompt = shown.locator("input.pmux-prompt")
    prompt.fill("please SHELL now")
    prompt.press("Enter")
    wait_tab_state(lab, term.name, "needs-input")
    lab.wait_state(sid, "needs-input", within=PANEL, timeout=30)
    asked = codex_lab.row()
    assert asked is not None and "touch approved.txt" in (asked["tool_summary"] or ""), asked

    # the panel's Approve answers it in the terminal
    shown.locator(".pmux-act--approve").click()
    wait_until(
        lambda: (codex_lab.row() or {}).get("state") == "review",
        60,
        what=lambda: f"review after Approve: {codex_lab.row()}",
    )
    after = codex_lab.row()
    assert after is not None and (after["last_assistant"] or "").startswith("Done."), after
    assert (codex_lab.env.cwd / "approved.txt").exists()  # the command ran
    wait_tab_state(lab, term.name, "review")

    # bringing its tab to the front again is a look
    lab.command("terminal:open", {"name": term.name})
    wait_tab_state(lab, term.name, "idle")
