"""An Agent SDK run in a notebook's kernel, answered by clicks in JupyterLab's panel (issue 35).

Real JupyterLab with the extension (its hub in the server), real Chromium, the pinned
``claude-agent-sdk`` with the CLI it bundles (2.1.337) against the scripted model. The
notebook's cells run ``query()`` with ``pmux_widget.agent_options``, as a user writes it; the
kernel runs no hub, so ``can_use_tool`` waits in the server's hub over loopback HTTP. The
panel's row is needs-input with what is asked and names the notebook; its SDK badge opens that
notebook; a click on Approve (then, for a question, on an option) resolves the kernel's
waiting call, and the cell ends with the tool run (the CLI's transcript and files say so).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pmux_widget import hooks
from pmux_widget.demo.claude_env import ClaudeEnv
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until
from ..real_claude.sdk_runs import SDK_CLI_VERSION, bundled_cli
from .conftest import LabPage, LabServer, Workspace
from .test_lab_extension import PANEL, open_lab

pytestmark = [pytest.mark.browser, pytest.mark.real_claude]

#: One cell per run: ``query()`` with our options; its result's denials and text printed.
CELL = """\
import json, pmux_widget
from claude_agent_sdk import ResultMessage, query

options = pmux_widget.agent_options(cwd={cwd!r}, env=json.loads({env!r}))
async for message in query(prompt={prompt!r}, options=options):
    if isinstance(message, ResultMessage):
        print("DENIALS", len(message.permission_denials), "RESULT", message.result)
"""


def _sdk_cli() -> Path:
    found = bundled_cli()
    if found is None:
        reason = "claude-agent-sdk with its bundled CLI is not installed (make install)"
        if os.environ.get("CI") or os.environ.get("PMUX_REQUIRE_CLAUDE") == "1":
            pytest.fail(f"real Claude Code CLI required: {reason}", pytrace=False)
        pytest.skip(reason)
    return found


@pytest.fixture
def setup(browser_context: Any) -> Iterator[tuple[LabPage, Workspace, ClaudeEnv]]:
    _sdk_cli()
    server = LabServer(extension=True)
    ws = Workspace(server, "sdk")
    with ScriptedModel() as model:
        env = ClaudeEnv(model.base_url, root=ws.dir / ".sdk-claude", version=SDK_CLI_VERSION)
        env.extra_env["PMUX_WIDGET_HOME"] = str(ws.pmux.root)
        hooks.install(env.settings_file, ws.pmux)
        # the server's hub (and its kernels, which inherit it): this workspace's pmux home,
        # the SDK CLI's config dir
        server.extra_env.update(
            PMUX_WIDGET_HOME=str(ws.pmux.root), CLAUDE_CONFIG_DIR=str(env.config_dir)
        )
        server.start_or_fail()
        page = browser_context.new_page()
        page.set_default_timeout(30_000)
        try:
            yield LabPage(server, page), ws, env
        finally:
            page.close()
            server.shutdown_kernels()
            server.stop()


def _cell(env: ClaudeEnv, prompt: str) -> str:
    return CELL.format(cwd=str(env.cwd), env=json.dumps(env.env()), prompt=prompt)


def _tool_results(env: ClaudeEnv, sid: str) -> list[str]:
    out = []
    for line in env.transcript_path(sid).read_text().splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        content = message.get("content") if record.get("type") == "user" else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out


def _asking_row(lab: LabPage, kind: str, timeout: float = 120) -> tuple[str, Any]:
    """The session id and panel row of the SDK run that asks (``.pmux-act--approve`` for a
    permission, option buttons for a question), once drawn."""
    offered = "pmux-act--approve" if kind == "permission" else "pmux-act--option"
    button = f"button.{offered}:visible"
    row = (
        lab.page.locator(f"{PANEL} li.pmux-row.pmux-row--needs-input.pmux-row--unattended")
        .filter(has=lab.page.locator(button))
        .first
    )
    row.wait_for(timeout=timeout * 1000)
    return str(row.get_attribute("data-session-id")), row


def _cell_output(lab: LabPage, index: int) -> str:
    return str(lab.cell(index).locator(".jp-OutputArea").inner_text())


def _current_path(lab: LabPage) -> str | None:
    """The path of the document in front (None: not a document, e.g. the launcher)."""
    path = lab.page.evaluate(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.context ? w.context.path : null; }"
    )
    return path if isinstance(path, str) else None


@pytest.mark.parametrize("kernel_hub", [False, True], ids=["server-hub", "kernel-hub"])
def test_a_kernels_sdk_run_is_approved_and_answered_from_the_panel(
    setup: tuple[LabPage, Workspace, ClaudeEnv], kernel_hub: bool
) -> None:
    """``kernel-hub``: the notebook starts a hub of its own first (``pmux_widget.start()``,
    as ``show()`` does): the call waits there, and the panel's clicks reach the server's hub,
    which forwards them to the kernel's."""
    lab, ws, env = setup
    first = 1 if kernel_hub else 0
    path = ws.notebook(
        "agents.ipynb",
        *(["import pmux_widget\npmux_widget.start()"] if kernel_hub else []),
        _cell(env, "please run the command"),
        _cell(env, "please ask me a question"),
    )
    open_lab(lab)
    lab.command("pmux-widget:show-panel")
    lab.open_notebook(path, workspace="sdk-agents")
    lab.command("pmux-widget:show-panel")
    if kernel_hub:
        lab.run_cell(0)
        wait_until(lambda: len(ws.hubs()) == 2, 30, what="the kernel's hub beside the server's")

    # The command's run: its row asks to run touch, says SDK and the notebook.
    lab.run_cell(first, wait=False)
    sid, row = _asking_row(lab, "permission")
    assert "asks to run" in row.locator(".pmux-primary").inner_text()
    assert "touch" in row.locator(".pmux-primary").inner_text()
    badge = row.locator(".pmux-badge--unattended")
    assert badge.inner_text() == "SDK · agents.ipynb"
    assert "from sdk/agents.ipynb" in str(badge.get_attribute("title"))
    # the kernel's call waits in its own hub, else in the server's
    published = ws.pmux.root / "decisions" / f"{sid}.json"
    wait_until(published.exists, 15, what="the kernel's call to wait")
    server = lab.server.proc.pid  # type: ignore[union-attr]
    assert (json.loads(published.read_text())["pid"] == server) is not kernel_hub

    # The badge opens the notebook whose kernel runs it (another tab in front first).
    lab.command("launcher:create")
    wait_until(lambda: _current_path(lab) != path, 15, what="the launcher in front")
    badge.click()
    wait_until(lambda: _current_path(lab) == path, 15, what="the badge to open the notebook")

    # Approve, by a click on the panel's row: the kernel's call is allowed, the tool runs.
    assert not list(env.cwd.glob("sim-*.txt"))
    row.locator("button.pmux-act--approve").click()
    # the whole printed line ("DENIALS" may be drawn before the rest of it: ci15)
    wait_until(lambda: "RESULT" in _cell_output(lab, first), 90, what="the run to end")
    assert "DENIALS 0" in _cell_output(lab, first), _cell_output(lab, first)
    assert len(list(env.cwd.glob("sim-*.txt"))) == 1, "the approved touch ran once"
    assert not published.exists()

    # The question's run: its options are buttons; a click on Amber answers it.
    lab.run_cell(first + 1, wait=False)
    qsid, qrow = _asking_row(lab, "question")
    assert qsid != sid
    options = qrow.locator("button.pmux-act--option")
    assert options.all_inner_texts() == ["Purple", "Amber"]
    assert qrow.locator("button.pmux-act--approve:visible").count() == 0
    options.nth(1).click()
    wait_until(
        lambda: "RESULT" in _cell_output(lab, first + 1), 90, what="the question's run to end"
    )
    assert "DENIALS 0" in _cell_output(lab, first + 1), _cell_output(lab, first + 1)
    [answered] = [r for r in _tool_results(env, qsid) if "answered" in r]
    assert '"Which colour should the badge use?"="Amber"' in answered, answered
