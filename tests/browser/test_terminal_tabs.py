"""Sessions in JupyterLab terminals, in real JupyterLab with the extension (issue 21).

A real terminal made through the server's REST API runs a stand-in for Claude Code: a script
named ``claude`` (the hub knows Claude's process by that name, above the hooks it fires) that
fires each hook it is told to (a line typed into the terminal) through the INSTALLED hook
command, as the CLI does. Its tab in the page carries the session's dot
(``pmux-state-<state>``: the class, the tooltip, the accessible name) through idle → busy →
needs-input → review; the row's "Open terminal" activates the tab, and reopens it once closed;
the panel's "New session" form starts a session (the server's PMUX_WIDGET_CLAUDE: the same
stand-in) whose tab opens and whose row appears; axe-core finds nothing on the form.
The screenshot of a dotted terminal tab for docs/usage.md goes to docs/images/ with
PMUX_UPDATE_DOC_IMAGES=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from ..helpers import wait_until
from ..jupyter_ext import LabServer as ExtServer
from ..lab_terminal import LabTerminal
from .conftest import (
    KERNEL_CLAUDE_DIR,
    KERNEL_PMUX_HOME,
    OUTPUT,
    LabPage,
    LabServer,
    Workspace,
    hook_payload,
)
from .test_ux_browser import AXE

pytestmark = pytest.mark.browser

PANEL = "#pmux-widget-panel"
WS = "terms"
DOC_IMAGES = OUTPUT.parents[1] / "docs" / "images"
SID = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
NEW_HOOK = "session-start.cmd"
#: the hook command the Codex stand-in runs (Codex's entry: the script told its agent)
NEW_CODEX_HOOK = "codex-session-start.cmd"

#: The stand-in: fires ``<dir>/<step>.json`` through ``<dir>/<step>.cmd`` for each line read.
STAND_IN = """#!/bin/sh
echo "stand-in claude ready"
while read step; do
  sh -c "$(cat "$1/$step.cmd")" < "$1/$step.json" && echo "fired $step"
done
"""

#: What "New session" runs (the server's PMUX_WIDGET_CLAUDE): fires SessionStart through the
#: installed hook command in ``$1`` with a fresh session id, shows its arguments, waits.
NEW_STAND_IN = """#!/bin/sh
sid=$(cat /proc/sys/kernel/random/uuid)
printf '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup","cwd":"%s"}\\n' \\
  "$sid" "$PWD" | sh -c "$(cat "$1")"
shift
echo "new claude $sid: $*"
exec sleep 600
"""


class _Rest:
    """The browser tests' server as tests/lab_terminal.py's LabTerminal wants it (REST and
    the terminal's websocket with the token)."""

    def __init__(self, server: LabServer) -> None:
        self.server = server

    def url(self, path: str = "", scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.server.port}/{path}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"token {self.server.token}"}

    def post(self, path: str, body: Any, **kwargs: Any) -> Any:
        import requests

        return requests.post(self.url(path), json=body, headers=self.headers(), timeout=30)


def _stand_in(base: Path, text: str = STAND_IN) -> Path:
    script = base / "bin" / "claude"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(text)
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def term_server() -> Iterator[LabServer]:
    server = LabServer(extension=True, terminals=True)
    ws_dir = server.notebooks / WS
    # "New session" runs a stand-in where claude would run (its hook command: NEW_HOOK)
    new = server.base / "new"
    fake = _stand_in(new, NEW_STAND_IN)
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
        PMUX_WIDGET_CLAUDE=f"{fake} {new / NEW_HOOK}",
        # and where codex would run (issue 36: the form's agent choice)
        PMUX_WIDGET_CODEX=f"{fake} {new / NEW_CODEX_HOOK}",
    )
    server.start_or_fail()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def lab(term_server: LabServer, browser_context: Any) -> Iterator[tuple[LabPage, Workspace]]:
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    yield LabPage(term_server, page), term_server.workspace(WS)
    page.close()


class Session:
    """The stand-in running in a real terminal: ``step(event, **fields)`` fires that hook
    from inside the terminal (the hook command's parent is the ``claude`` process)."""

    def __init__(self, ws: Workspace, base: Path, sid: str = SID) -> None:
        self.ws, self.sid, self.cwd = ws, sid, str(base)
        self.steps = base / "steps"
        self.steps.mkdir(parents=True, exist_ok=True)
        script = _stand_in(base)
        self.term = LabTerminal(cast(ExtServer, _Rest(ws.server)), cwd=base)
        self.name = self.term.name
        self.term.type(f"PMUX_WIDGET_HOME={ws.pmux.root} {script} {self.steps}\r")
        self.term.wait_for("stand-in claude ready", 20)
        self.n = 0

    def step(self, event: str, **fields: Any) -> None:
        self.n += 1
        name = f"{self.n}-{event}"
        body = hook_payload(event, self.sid, self.cwd, **fields)
        (self.steps / f"{name}.json").write_text(json.dumps(body) + "\n")
        (self.steps / f"{name}.cmd").write_text(self.ws.commands[event])
        self.term.type(f"{name}\r")
        self.term.wait_for(f"fired {name}", 20)

    def close(self) -> None:
        self.term.close()


#: The tab element of the terminal named ``name`` (found through the shell's tab bars, by the
#: terminal's session name, not through anything the extension adds).
TAB_JS = """(name) => {
  const shell = window.jupyterapp.shell;
  const widget = [...shell.widgets('main')].find((w) => w.content?.session?.name === name);
  if (!widget) return null;
  for (const bar of shell._dockPanel.tabBars()) {
    const i = bar.titles.indexOf(widget.title);
    if (i >= 0) return bar.contentNode.children[i] ?? null;
  }
  return null;
}"""


def tab_info(lab: LabPage, name: str) -> dict[str, Any] | None:
    info: dict[str, Any] | None = lab.page.evaluate(
        f"""(name) => {{
          const tab = ({TAB_JS})(name);
          if (!tab) return null;
          return {{cls: tab.className, title: tab.getAttribute('title'),
                   aria: tab.getAttribute('aria-label'),
                   current: tab.classList.contains('lm-mod-current'),
                   dot: getComputedStyle(tab.querySelector('.lm-TabBar-tabLabel'), '::before')
                     .content}};
        }}""",
        name,
    )
    return info


def wait_tab_state(lab: LabPage, name: str, state: str | None) -> dict[str, Any]:
    """Wait until the terminal's tab shows ``state``'s class (None: no pmux class at all)."""
    lab.page.wait_for_function(
        f"""([name, state]) => {{
          const tab = ({TAB_JS})(name);
          if (!tab) return false;
          // (an agent's mark, pmux-agent-<agent>, is no state)
          const ours = [...tab.classList].filter(
            (c) => c.startsWith('pmux-') && !c.startsWith('pmux-agent-'));
          return state === null ? ours.length === 0
            : ours.includes('pmux-tab') && ours.includes('pmux-state-' + state)
              && ours.length === 2;
        }}""",
        arg=[name, state],
        timeout=30_000,
        polling="raf",
    )
    info = tab_info(lab, name)
    assert info is not None
    return info


def open_lab(lab: LabPage) -> None:
    lab.page.goto(lab.server.url("lab"))
    lab.page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=60_000)
    # the layout restorer may collapse the sidebar after a panel was shown: a CI run's form
    # summary went "not visible" under the click
    lab.page.evaluate("() => window.jupyterapp.restored.then(() => true)")


def show_panel(lab: LabPage) -> None:
    lab.command("pmux-widget:show-panel")
    lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="visible")


def test_a_terminal_tab_carries_its_sessions_dot_and_open_terminal_goes_there(
    lab: tuple[LabPage, Workspace], tmp_path: Path
) -> None:
    page, ws = lab
    open_lab(page)
    project = tmp_path / "acme-api"  # the row's name
    project.mkdir()
    session = Session(ws, project)
    try:
        page.command("terminal:open", {"name": session.name})
        session.step("SessionStart", source="startup")
        wait_until(
            lambda: any(
                r["session_id"] == SID and r["terminal"] == {"name": session.name}
                for r in page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
            ),
            30,
            what="the session in its terminal (the server's mapping)",
        )
        info = wait_tab_state(page, session.name, "idle")
        assert info["dot"] == '""', info  # the ::before dot is drawn
        assert info["title"].startswith("Claude: idle"), info
        assert "\nsession acme-api" in info["title"], info
        session.step("UserPromptSubmit", prompt="add the terminal tab dots")
        info = wait_tab_state(page, session.name, "busy")
        assert "busy" in info["title"]
        session.step("PermissionRequest", tool_name="Bash", tool_input={"command": "make test"})
        info = wait_tab_state(page, session.name, "needs-input")
        assert "needs input" in info["title"]
        page.page.wait_for_function(
            f"""(name) => ({TAB_JS})(name)?.getAttribute('aria-label')?.includes('needs input')""",
            arg=session.name,
            timeout=20_000,
        )
        named = tab_info(page, session.name)
        assert named is not None and "Claude: needs input, session acme-api" in named["aria"], named
        show_panel(page)  # the picture: the dotted tab and its row, Approve and Open terminal
        page.page.locator(
            f'{PANEL} li.pmux-row[data-session-id="{SID}"] .pmux-act--approve'
        ).wait_for()
        shot(page, "lab-terminal-tab")
        # another tab in front before the turn ends: a review whose terminal tab is in front
        # of a visible page is seen at once (issue 34: review -> idle, user:seen)
        page.command("launcher:create")
        page.page.wait_for_function(
            f"(name) => !({TAB_JS})(name)?.classList.contains('lm-mod-current')",
            arg=session.name,
        )
        session.step("PostToolUse", tool_name="Bash", tool_input={"command": "make test"},
                     tool_response={})  # fmt: skip
        session.step("Stop", last_assistant_message="Dots added.")
        info = wait_tab_state(page, session.name, "review")
        assert "review" in info["title"] and "review" in (info["aria"] or "")

        # "Open terminal" on the row brings its tab to the front: the review is seen
        show_panel(page)
        row = page.page.locator(f'{PANEL} li.pmux-row[data-session-id="{SID}"]')
        row.click()
        button = row.locator(".pmux-act--terminal")
        label = button.get_attribute("aria-label") or ""
        assert label.startswith(f"Open terminal {session.name}: "), label
        button.click()
        page.page.wait_for_function(
            f"(name) => ({TAB_JS})(name)?.classList.contains('lm-mod-current')",
            arg=session.name,
            timeout=20_000,
        )
        wait_tab_state(page, session.name, "idle")
        seen = next(
            r
            for r in page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
            if r["session_id"] == SID
        )
        assert (seen["state"], seen["source"]) == ("idle", "user:seen"), seen
        # its tab closed while the terminal runs: the button opens it again, dot and all
        page.page.evaluate(
            """(name) => [...window.jupyterapp.shell.widgets('main')]
                 .find((w) => w.content?.session?.name === name).close()""",
            session.name,
        )
        page.page.wait_for_function(f"(name) => !({TAB_JS})(name)", arg=session.name)
        assert session.name in [t["name"] for t in page.server.api("GET", "/api/terminals")[1]]
        row.click()
        row.locator(".pmux-act--terminal").click()
        info = wait_tab_state(page, session.name, "idle")
        assert info["current"], info
    finally:
        session.close()
    # the terminal gone, its session's process with it: no tab, no button

    def row() -> Any:
        rows = page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
        return next((r for r in rows if r["session_id"] == SID), None)

    # a deadline for a loaded machine (a fresh-clone run at load ~13 took over 30 s here);
    # the failure shows the row as the server has it
    wait_until(
        lambda: not (row() or {}).get("terminal"),
        90,
        what=lambda: (
            f"the session's terminal cleared: {row()}; the server's terminals: "
            f"{page.server.api('GET', '/api/terminals')[1]}"
        ),
    )


def shot(lab: LabPage, name: str) -> None:
    path = lab.screenshot(name)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOC_IMAGES / f"{name}.png")


def test_new_session_form_starts_a_session_in_a_new_terminal(
    lab: tuple[LabPage, Workspace], tmp_path: Path
) -> None:
    page, ws = lab
    open_lab(page)
    show_panel(page)
    form = page.page.locator(f"{PANEL} details.pmux-new")
    form.locator("summary").click()
    terminal = form.get_by_label("a new JupyterLab terminal")
    page.page.wait_for_function(
        "(sel) => !document.querySelector(sel).disabled",
        arg=f"{PANEL} .pmux-new-where input[value=terminal]",
    )
    assert terminal.is_checked()
    page.page.add_script_tag(path=str(AXE))
    found = page.page.evaluate(
        """async (sel) => {
          const r = await window.axe.run(document.querySelector(sel), {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']},
          });
          return r.violations.map((v) => ({id: v.id, nodes: v.nodes.map((n) => n.html)}));
        }""",
        f"{PANEL} details.pmux-new",
    )
    assert found == [], found
    before = {t["name"] for t in page.server.api("GET", "/api/terminals")[1]}
    (page.server.base / "new" / NEW_HOOK).write_text(ws.commands["SessionStart"])
    form.get_by_label("Folder").fill(str(tmp_path))
    form.get_by_label("First prompt (optional)").fill("hello from the form")
    form.get_by_label("Permission mode").select_option("plan")
    form.get_by_role("button", name="Start").click()
    status = form.locator(".pmux-new-status")
    page.page.wait_for_function(
        "(sel) => /^Started in terminal /.test(document.querySelector(sel).textContent)",
        arg=f"{PANEL} .pmux-new-status",
        timeout=30_000,
    )
    name = status.inner_text().removeprefix("Started in terminal ").rstrip(".")
    assert name not in before
    assert name in {t["name"] for t in page.server.api("GET", "/api/terminals")[1]}
    # its tab opened, in front
    page.page.wait_for_function(
        f"(name) => ({TAB_JS})(name)?.classList.contains('lm-mod-current')",
        arg=name,
        timeout=30_000,
    )
    # the session's row appears, naming its terminal
    row: dict[str, Any] | None = wait_until(
        lambda: next(
            (
                r
                for r in page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
                if r["terminal"] == {"name": name}
            ),
            None,
        ),
        30,
        what="the new session's row, in its terminal",
    )
    assert row is not None and row["cwd"] == str(tmp_path)
    page.page.locator(f'{PANEL} li.pmux-row[data-session-id="{row["session_id"]}"]').wait_for(
        state="visible", timeout=20_000
    )
    page.server.api("DELETE", f"/api/terminals/{name}")


def test_new_session_form_starts_a_codex_session(
    lab: tuple[LabPage, Workspace], tmp_path: Path
) -> None:
    """Issue 36: the form's Agent choice starts Codex (the server's PMUX_WIDGET_CODEX: the
    stand-in, whose first hook goes through Codex's command); with Codex chosen, Claude's
    permission mode and the background are off, and the form says why."""
    from pmux_widget.hooks.codex_install import AGENT
    from pmux_widget.hooks.script import hook_command

    page, ws = lab
    open_lab(page)
    show_panel(page)
    (page.server.base / "new" / NEW_CODEX_HOOK).write_text(hook_command(ws.pmux, AGENT))
    form = page.page.locator(f"{PANEL} details.pmux-new")
    form.locator("summary").click()
    page.page.wait_for_function(
        "(sel) => !document.querySelector(sel).disabled",
        arg=f"{PANEL} .pmux-new-where input[value=terminal]",
    )
    form.get_by_label("Agent").select_option("codex")
    assert form.get_by_label("Permission mode").is_disabled()
    assert form.locator(".pmux-new-where input[value=background]").is_disabled()
    note = form.locator(".pmux-new-note")
    assert note.is_visible() and "Codex takes its permission mode" in note.inner_text()
    form.get_by_label("Folder").fill(str(tmp_path))
    form.get_by_label("First prompt (optional)").fill("hello codex")
    form.get_by_role("button", name="Start").click()
    status = form.locator(".pmux-new-status")
    page.page.wait_for_function(
        "(sel) => /^Started in terminal /.test(document.querySelector(sel).textContent)",
        arg=f"{PANEL} .pmux-new-status",
        timeout=30_000,
    )
    name = status.inner_text().removeprefix("Started in terminal ").rstrip(".")
    row: dict[str, Any] | None = wait_until(
        lambda: next(
            (
                r
                for r in page.server.api("GET", "/pmux/api/sessions")[1]["sessions"]
                if r["cwd"] == str(tmp_path) and r["agent"] == "codex"
            ),
            None,
        ),
        30,
        what="the new Codex session's row",
    )
    assert row is not None
    shown = page.page.locator(f'{PANEL} li.pmux-row[data-session-id="{row["session_id"]}"]')
    shown.wait_for(state="visible", timeout=20_000)
    # the row may be drawn from a patch before the one that names its agent (a sharded run)
    mark = shown.locator(".pmux-agent")
    wait_until(
        lambda: mark.count() and mark.inner_text() == "Codex",
        20,
        what=lambda: f"the row's Codex mark: {shown.inner_text()!r}",
    )
    form.get_by_label("Agent").select_option("claude")  # back: Claude's fields are on again
    assert form.get_by_label("Permission mode").is_enabled()
    page.server.api("DELETE", f"/api/terminals/{name}")


def test_make_demo_opens_on_a_terminal_tab_with_a_dot_whose_approve_answers_it(
    tmp_path: Path, browser_context: Any
) -> None:
    """``make demo``: one simulated session runs in a JupyterLab terminal, its tab open for
    the newcomer, dotted; its row's Approve answers the dialog in that terminal."""
    import signal

    from ..helpers import free_port
    from ..test_demo import DemoProcess

    demo = DemoProcess(
        tmp_path, "--port", str(free_port()), "--duration", "240", "--no-prerun", "--history", "0"
    )
    page = browser_context.new_page()
    try:
        url = demo.wait_for_output(r"URL: (http://127\.0\.0\.1:\d+/lab/\S+\?token=\w+)", 120)[1]
        name = demo.wait_for_output(
            r"lab-terminal: a simulated session in JupyterLab terminal (\S+)", 5
        )[1]
        page.goto(url)
        # the terminal's tab is open, with the session's dot (the demo's page does not expose
        # the app: the tab is found in the dock by its class)
        tab = page.locator(".lm-DockPanel-tabBar li.lm-TabBar-tab.pmux-tab")
        tab.wait_for(timeout=90_000)
        assert tab.count() == 1
        base, token = url.split("/lab/")[0], url.split("token=")[1]

        def session() -> dict[str, Any] | None:
            rows = page.evaluate(
                "(u) => fetch(u).then((r) => r.json())", f"{base}/pmux/api/sessions?token={token}"
            )["sessions"]
            return next((r for r in rows if r["terminal"] == {"name": name}), None)

        # the session asks (its script's dialogs): the row's Approve answers it in the terminal
        def asks() -> dict[str, Any] | None:
            found = session()
            return found if found is not None and found["state"] == "needs-input" else None

        asking: dict[str, Any] | None = wait_until(
            asks,
            120,
            what=lambda: f"the terminal session asking: {session()}",
        )
        assert asking is not None
        sid = asking["session_id"]
        page.locator(".lm-DockPanel-tabBar li.pmux-tab.pmux-state-needs-input").wait_for()
        page.locator(PANEL).wait_for(state="visible")
        row = page.locator(f'{PANEL} li.pmux-row[data-session-id="{sid}"]')
        row.locator(".pmux-act--approve").click()
        wait_until(
            lambda: (s := session()) is not None and s["state"] != "needs-input",
            30,
            what=lambda: f"the dialog answered: {session()}; {row.inner_text()}",
        )
        assert "refused" not in row.inner_text()
    finally:
        page.close()
        demo.signal(signal.SIGINT)
        with contextlib.suppress(AssertionError):
            demo.wait(60)
        demo.cleanup()


def test_with_terminals_off_the_form_says_sessions_cannot_run_in_terminals(
    browser_context: Any,
) -> None:
    """``terminals_enabled`` off: the form's terminal choice is disabled, with the reason the
    server gives (GET pmux/api/terminals), tmux chosen instead; no row offers Open terminal."""
    server = LabServer(extension=True)  # terminals off, as the server's own config says
    ws_dir = server.notebooks / WS
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    page = browser_context.new_page()
    try:
        server.start()
        lab = LabPage(server, page)
        open_lab(lab)
        show_panel(lab)
        form = page.locator(f"{PANEL} details.pmux-new")
        form.locator("summary").click()
        note = form.locator(".pmux-new-note")
        note.wait_for(state="visible")
        assert "cannot be started or answered in this server's terminals" in note.inner_text()
        assert "terminals_enabled" in note.inner_text()
        assert form.get_by_label("a new JupyterLab terminal").is_disabled()
        assert form.get_by_label("a new tmux window").is_checked()
    finally:
        page.close()
        server.stop()


def test_a_notebooks_widget_opens_the_terminal_through_the_extensions_page_hook(
    lab: tuple[LabPage, Workspace], tmp_path: Path, term_server: LabServer
) -> None:
    """The widget in a notebook cell (its kernel's own hub) offers "Open terminal" because the
    page has the extension (its page-wide hook, js/src/lab-panel.ts), and it activates the
    terminal's tab."""
    page, ws = lab
    project = tmp_path / "billing"
    project.mkdir()
    session = Session(ws, project, "8d2e3f40-5b6c-4d7e-8f90-a1b2c3d4e5f6")
    try:
        session.step("SessionStart", source="startup")
        page.open_notebook(ws.notebook("terminal.ipynb", "import pmux_widget; pmux_widget.show()"))
        page.run_cell(0)
        # the kernel's hub hears the next hooks (and maps the session to its terminal itself)
        session.step("UserPromptSubmit", prompt="reconcile the invoices")
        session.step("PermissionRequest", tool_name="Bash", tool_input={"command": "make sync"})
        page.wait_state(session.sid, "needs-input", timeout=30)
        button = page.row(session.sid).locator(".pmux-act--terminal")
        button.wait_for(state="visible", timeout=30_000)
        button.click()
        page.page.wait_for_function(
            f"(name) => ({TAB_JS})(name)?.classList.contains('lm-mod-current')",
            arg=session.name,
            timeout=30_000,
        )
        tab = tab_info(page, session.name)
        assert tab is not None and "pmux-state-needs-input" in tab["cls"], tab
    finally:
        session.close()
        term_server.shutdown_kernels()
