"""A Claude Code background session (``claude --bg``, the real newest pinned CLI against the
scripted model) in real JupyterLab (issue 26): its panel row offers "Attach in a terminal",
which opens a JupyterLab terminal running ``claude attach <job>`` (the session's dialog on its
screen); a second click brings that same terminal to the front rather than opening another.
Stop session asks for a second click before ``claude stop`` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pmux_widget import hooks as pmux_hooks
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv, CliUnavailable, ensure_cli, wait_until
from pmux_widget.demo.scripted_model import ScriptedModel
from pmux_widget.jupyter.attach_terminal import terminal_attached
from pmux_widget.system import jupyter_terminals
from pmux_widget.system.home import PmuxHome

from .conftest import LabPage, LabServer, LabUnavailable
from .test_lab_extension import open_lab

pytestmark = pytest.mark.browser

PANEL = "#pmux-widget-panel"


class BgLab:
    def __init__(self, server: LabServer, bg: BgClaude, home: PmuxHome) -> None:
        self.server, self.bg, self.home = server, bg, home

    def sessions(self) -> list[dict[str, Any]]:
        status, body = self.server.api("GET", "/pmux/api/sessions")
        return list(body.get("sessions", [])) if status == 200 else []

    def terminals(self) -> set[str]:
        status, body = self.server.api("GET", "/api/terminals")
        return {str(t["name"]) for t in body} if status == 200 else set()


@pytest.fixture(scope="module")
def bg_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BgLab]:
    try:
        cli = ensure_cli(NEWEST)
    except CliUnavailable as exc:
        pytest.fail(f"the real Claude Code CLI is needed: {exc}")
    root = tmp_path_factory.mktemp("bglab")
    model = ScriptedModel()
    model.start()
    home = PmuxHome(root / "pmux")
    env = ClaudeEnv(
        model.base_url,
        root=root / "claude",
        version=NEWEST,
        extra_env={"PMUX_WIDGET_HOME": str(home.root)},
    )
    pmux_hooks.install(env.settings_file, home)
    bg = BgClaude(env, cli)
    server = LabServer(
        extension=True,
        terminals=True,
        env={"PMUX_WIDGET_HOME": str(home.root), "CLAUDE_CONFIG_DIR": str(env.config_dir)},
    )
    try:
        server.start()
    except LabUnavailable as exc:
        bg.close()
        model.stop()
        pytest.fail(f"JupyterLab with the extension did not start: {exc}")
    try:
        yield BgLab(server, bg, home)
    finally:
        server.stop()
        bg.close()
        model.stop()


def _current_terminal(lab: LabPage) -> str | None:
    name = lab.page.evaluate(
        "() => window.jupyterapp.shell.currentWidget?.content?.session?.name ?? null"
    )
    return None if name is None else str(name)


def test_attach_in_a_terminal_opens_claude_attach_and_brings_it_back(
    bg_lab: BgLab, browser_context: Any
) -> None:
    job = bg_lab.bg.start("run the command", "browsed")

    def asking() -> dict[str, Any] | None:
        return next(
            (
                s
                for s in bg_lab.sessions()
                if (s.get("background") or {}).get("job") == job and s["state"] == "needs-input"
            ),
            None,
        )

    row = wait_until(asking, 90, what=f"job {job} needs input in the server's hub")
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    lab = LabPage(bg_lab.server, page)
    try:
        open_lab(lab)
        lab.command("pmux-widget:show-panel")
        button = page.locator(f"{PANEL} button.pmux-act--attach")
        button.wait_for(timeout=60_000)
        assert f"claude attach {job}" in (button.get_attribute("aria-label") or "")
        button.click()
        page.wait_for_function(
            "() => !!window.jupyterapp.shell.currentWidget?.content?.session?.name",
            timeout=60_000,
        )
        name = _current_terminal(lab)
        assert name is not None

        # the terminal's shell runs claude attach <job>, and it draws the session's dialog
        def attached() -> str | None:
            for server in jupyter_terminals.read_servers(bg_lab.home):
                found = terminal_attached(dict(server.shells), job)
                if found:
                    return found
            return None

        assert wait_until(attached, 60, what="claude attach under the terminal's shell") == name
        # xterm draws on a canvas: its buffer holds the text
        page.wait_for_function(
            """() => { const term = window.jupyterapp.shell.currentWidget?.content?._term;
                 if (!term) return false;
                 const buf = term.buffer.active; const rows = [];
                 for (let i = 0; i < buf.length; i++)
                   rows.push(buf.getLine(i)?.translateToString());
                 return rows.join('\\n').includes('Do you want to proceed'); }""",
            timeout=60_000,
        )
        before = bg_lab.terminals()
        # another tab in front; the button brings the same terminal back, opens none
        lab.command("launcher:create")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget?.content?.session")
        button.click()
        page.wait_for_function(
            "(name) => window.jupyterapp.shell.currentWidget?.content?.session?.name === name",
            arg=name,
            timeout=30_000,
        )
        assert bg_lab.terminals() == before
        # Stop session: the first click only asks
        stop = page.locator(f"{PANEL} button.pmux-act--stop")
        stop.click()
        assert stop.inner_text() == "Confirm stop"
        assert (bg_lab.bg.agent(job) or {}).get("state") != "stopped"
        stop.click()
        wait_until(
            lambda: (bg_lab.bg.agent(job) or {}).get("state") == "stopped",
            60,
            what="claude agents: stopped",
        )
        assert row["tmux"] is None
    finally:
        page.close()
