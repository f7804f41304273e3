"""Tab dots in real JupyterLab (issue 21): a terminal tab whose terminal runs a Claude session
shows the session's dot (the tab element gets ``pmux-tab pmux-state-<state>``), its state in
the tooltip and the accessible name, following idle → busy → needs-input → review; a plain
shell's tab gets none; "Open terminal" (the panel row's button, and the command
``pmux-widget:open-terminal``) brings the tab back.

The session is a stand-in for Claude Code run in the terminal: a script named ``claude`` (the
hub knows Claude's process by that name, above the hooks it fires; the server extension finds
it under the terminal's shell). Each line typed into the terminal fires that hook through the
installed hook command, as the CLI does. With the real CLI in a terminal (mapping, states,
actions): tests/real_claude/test_terminal_sessions.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import KERNEL_CLAUDE_DIR, KERNEL_PMUX_HOME, LabPage, LabServer
from .test_lab_extension import open_lab

pytestmark = pytest.mark.browser

SID = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
WS = "terms"
TAB = "li.lm-TabBar-tab.pmux-tab"

FAKE_CLAUDE = """#!/bin/sh
# A stand-in for Claude Code: each line read is a hook event it fires, as its own children.
hooks="$1"; sid="$2"
fire() {
  extra=""
  [ "$1" = PermissionRequest ] && extra=',"tool_name":"Bash","tool_input":{"command":"make deploy"}'
  [ "$1" = SessionStart ] && extra=',"source":"startup"'
  printf '{"session_id":"%s","hook_event_name":"%s","cwd":"%s"%s}\\n' \\
    "$sid" "$1" "$PWD" "$extra" | sh -c "$(cat "$hooks/$1")"
}
fire SessionStart
echo "stand-in ready"
while read -r event; do
  [ -f "$hooks/$event" ] && fire "$event" && echo "fired $event"
done
"""


@pytest.fixture(scope="module")
def term_server() -> Iterator[LabServer]:
    server = LabServer(extension=True, terminals=True)
    ws_dir = server.notebooks / WS
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    server.start_or_fail()
    try:
        yield server
    finally:
        server.stop()


def stand_in(server: LabServer, workspace: str = WS) -> tuple[Path, Path]:
    """The stand-in script and the folder of the workspace's hook commands it fires."""
    ws = server.workspace(workspace)
    root = server.base / f"stand-in-{workspace}"
    hooks = root / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for event, command in ws.commands.items():
        (hooks / event).write_text(command)
    script = root / "bin" / "claude"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(FAKE_CLAUDE)
    script.chmod(0o755)
    return script, hooks


def new_terminal(lab: LabPage) -> str:
    lab.page.wait_for_function(
        "() => !!window.jupyterapp && window.jupyterapp.commands.hasCommand('terminal:open')",
        timeout=90_000,
    )
    status, model = lab.server.api("POST", "/api/terminals", {})
    assert status == 200, (status, model)
    name = str(model["name"])
    lab.command("terminal:open", {"name": name})
    lab.page.locator(".jp-Terminal .xterm-screen").last.wait_for(timeout=30_000)
    return name


def type_line(lab: LabPage, text: str) -> None:
    lab.page.locator(".jp-Terminal:visible .xterm-screen").last.click()
    lab.page.keyboard.type(text)
    lab.page.keyboard.press("Enter")


def _tab_state(lab: LabPage, state: str) -> dict[str, Any]:
    lab.page.wait_for_function(
        """([sel, state]) => {
          const tabs = document.querySelectorAll(sel);
          return tabs.length === 1 && tabs[0].classList.contains('pmux-state-' + state)
            && (tabs[0].getAttribute('aria-label') || '').includes('Claude: ');
        }""",
        arg=[TAB, state],
        timeout=30_000,
        polling="raf",
    )
    info: dict[str, Any] = lab.page.evaluate(
        """(sel) => { const tab = document.querySelector(sel);
             const all = document.querySelectorAll('#jp-main-dock-panel li.lm-TabBar-tab');
             return {title: tab.getAttribute('title') || '',
                     aria: tab.getAttribute('aria-label') || '',
                     before: getComputedStyle(tab.querySelector('.lm-TabBar-tabLabel'),
                                              '::before').transform,
                     tabs: all.length}; }""",
        TAB,
    )
    return info


def test_a_terminal_tab_shows_its_sessions_dot_and_open_terminal_goes_there(
    term_server: LabServer, browser_context: Any
) -> None:
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    lab = LabPage(term_server, page)
    try:
        script, hooks = stand_in(term_server)
        open_lab(lab)
        plain = new_terminal(lab)  # a plain shell: never a dot
        name = new_terminal(lab)
        type_line(lab, f"{script} {hooks} {SID}")
        info = _tab_state(lab, "idle")
        assert "Claude: idle" in info["title"] and "Claude: idle" in info["aria"]
        assert info["tabs"] >= 2  # the plain shell's tab is there, without a dot
        type_line(lab, "UserPromptSubmit")
        _tab_state(lab, "busy")
        type_line(lab, "PermissionRequest")
        info = _tab_state(lab, "needs-input")
        assert "needs input" in info["title"] and "make deploy" in info["title"]
        assert "rotate" in info["before"] or "matrix" in info["before"]  # the diamond
        # the panel's row of a session in a terminal: "Open terminal" brings its tab back
        lab.command("terminal:open", {"name": plain})
        lab.command("pmux-widget:show-panel")
        button = lab.page.locator("#pmux-widget-panel button.pmux-act--terminal")
        button.wait_for(timeout=30_000)
        assert f"Open terminal {name}" in (button.get_attribute("aria-label") or "")
        button.click()
        lab.page.wait_for_function(
            """(name) => window.jupyterapp.shell.currentWidget.content.session.name === name""",
            arg=name,
            timeout=30_000,
        )
        type_line(lab, "Stop")
        _tab_state(lab, "review")
        # Open terminal: another tab in front, then the command brings the session's back
        lab.command("terminal:open", {"name": plain})
        lab.command("pmux-widget:open-terminal", {"session_id": SID})
        lab.page.wait_for_function(
            """(sel) => { const tab = document.querySelector(sel);
                 return !!tab && tab.classList.contains('lm-mod-current'); }""",
            arg=TAB,
            timeout=30_000,
        )
        current = lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.session.name"
        )
        assert current == name
    finally:
        page.close()
