""" "Attach in a terminal" where JupyterLab's pmux-widget extension is not loaded (issue 26): the
notebook's widget alone, as in classic Notebook or VS Code. A background row (the real newest
pinned CLI, ``claude --bg`` against the scripted model) still offers the button; a click asks
the kernel, which opens a window running ``claude attach <job>`` in a PRIVATE tmux server
(``TMUX_TMPDIR`` in the test's folder, ``PMUX_WIDGET_TMUX_SOCKET``), and the row says where
("attached in tmux window …: tmux … attach -t …"); a second click brings the same window back.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pmux_widget import hooks
from pmux_widget.agents.claude.screen import parse_screen
from pmux_widget.demo.claude_bg import BgClaude
from pmux_widget.demo.claude_env import NEWEST, ClaudeEnv, CliUnavailable, ensure_cli
from pmux_widget.demo.scripted_model import ScriptedModel

from ..helpers import wait_until
from .conftest import LabPage, Workspace

pytestmark = [pytest.mark.browser, pytest.mark.real_claude]

SOCKET = "pmux-attach-browser"


@pytest.fixture
def bg(workspace: Workspace) -> Iterator[BgClaude]:
    try:
        binary = ensure_cli(NEWEST)
    except CliUnavailable as exc:
        pytest.fail(f"the real Claude Code CLI is needed: {exc}", pytrace=False)
    with ScriptedModel() as model:
        env = ClaudeEnv(model.base_url, root=workspace.dir / "cli", version=NEWEST)
        env.extra_env["PMUX_WIDGET_HOME"] = str(workspace.pmux.root)
        hooks.install(env.settings_file, workspace.pmux)
        made = BgClaude(env, binary)
        try:
            yield made
        finally:
            made.close()


def _tmux(folder: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE")}
    env["TMUX_TMPDIR"] = str(folder)
    done = subprocess.run(["tmux", "-L", SOCKET, *args], env=env, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def test_attach_without_the_labextension_opens_a_tmux_window(
    lab: LabPage, workspace: Workspace, bg: BgClaude
) -> None:
    # a short folder: a unix socket's path is limited to ~107 bytes
    folder = Path(tempfile.mkdtemp(prefix="pmux-t-"))
    lab.open_notebook(
        workspace.notebook(
            "attach.ipynb",
            f"import os; os.environ['TMUX_TMPDIR'] = {str(folder)!r}; "
            f"os.environ['PMUX_WIDGET_TMUX_SOCKET'] = {SOCKET!r}\n"
            "import pmux_widget; "
            f"pmux_widget.start(claude_home={str(bg.env.config_dir)!r}); pmux_widget.show()",
        )
    )
    try:
        lab.run_cell(0)
        lab.root().wait_for()
        assert lab.page.evaluate("() => !document.querySelector('#pmux-widget-panel')")
        job = bg.start("run the command", "tmuxed")
        found = wait_until(lambda: bg.worker(job), 90, what=f"job {job}'s worker")
        sid = str(found[1]["sessionId"])
        lab.wait_state(sid, "needs-input", timeout=90)

        button = lab.row(sid).locator("button.pmux-act--attach")
        assert f"claude attach {job}" in (button.get_attribute("aria-label") or "")
        button.click()
        note = lab.row(sid).locator(".pmux-act-note")
        expected = (
            f"attached in tmux window pmux-attach:0: tmux -L {SOCKET} attach -t pmux-attach:0"
        )
        wait_until(lambda: note.inner_text() == expected, 60, what=lambda: note.inner_text())
        lab.screenshot("attach-tmux-window")
        windows = _tmux(folder, "list-windows", "-a", "-F", "#{window_index} #{@pmux-attach}")
        assert windows.split("\n")[0] == f"0 {job}"

        def dialog() -> str | None:
            shown = parse_screen(_tmux(folder, "capture-pane", "-p", "-t", "pmux-attach:0"))
            return shown.dialog.title if shown.dialog else None

        wait_until(lambda: dialog() == "Bash command", 60, what="the dialog in the window")

        # another window in front; a second click selects the same one, opens none
        _tmux(folder, "new-window", "-t", "pmux-attach:", "sleep 300")
        lab.row(sid).locator("button.pmux-act--attach").click()
        wait_until(
            lambda: "open already: brought to the front" in note.inner_text(),
            60,
            what=lambda: note.inner_text(),
        )
        current = _tmux(folder, "display-message", "-p", "-t", "pmux-attach", "#{window_index}")
        assert current.strip() == "0"
        assert len(_tmux(folder, "list-windows", "-a").splitlines()) == 2
    finally:
        _tmux(folder, "kill-server")
        shutil.rmtree(folder, ignore_errors=True)
