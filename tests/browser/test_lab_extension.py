"""pmux-widget's JupyterLab extension in real JupyterLab and Notebook 7, with no kernel.

The server runs the server extension (its hub over one workspace's pmux home) and this
checkout's labextension build. Hooks go through the INSTALLED hook script, as Claude Code runs
it; the page shows them in the status bar (JupyterLab) and in the side panel, which runs the
anywidget's own view over the server's websocket. No notebook is opened, no kernel starts:
``GET /api/kernels`` stays empty throughout. A reload comes back to the same state; axe-core
finds no WCAG 2 A/AA violation in the panel nor in the status item, light and dark.
Screenshots for docs/usage.md ("In JupyterLab") go to docs/images/ with PMUX_UPDATE_DOC_IMAGES=1.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    DARK,
    KERNEL_CLAUDE_DIR,
    KERNEL_PMUX_HOME,
    LIGHT,
    OUTPUT,
    LabPage,
    LabServer,
    LabUnavailable,
    Workspace,
    codex_hook_payload,
    hook_payload,
)
from .test_ux_browser import AXE, axe_violations

PANEL = "#pmux-widget-panel"
STATUS = "#pmux-widget-status"
#: the same item in the top bar, where the page has no status bar (Notebook 7)
TOPBAR = "#pmux-widget-topbar"
CWD = "/home/dev/projects/acme-api"
SID = "1b7e4c20-6d5f-4f0e-9a3b-8c2d1e0f9a71"
OTHERS = {
    "2c8f5d31-7e60-4a1f-8b4c-9d3e2f1a0b82": "/home/dev/projects/billing",
    "3d9a6e42-8f71-4b2a-9c5d-ae4f3a2b1c93": "/home/dev/projects/web-ui",
    "4eab7f53-9a82-4c3b-8d6e-bf5a4b3c2da4": "/home/dev/projects/infra",
}
#: a Codex session beside them (issue 36: its row carries the agent's mark)
CODEX_SID = "01a24ee7-5a25-7393-962f-a68388b392cd"
CODEX_CWD = "/home/dev/projects/payments"
DOC_IMAGES = OUTPUT.parents[1] / "docs" / "images"
WS = "ext"

pytestmark = pytest.mark.browser


def _server(app: str = "jupyterlab") -> LabServer:
    """A server with the extension, its hub over the ``ext`` workspace's homes."""
    server = LabServer(extension=True, app=app)
    ws_dir = server.notebooks / WS
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    return server


@pytest.fixture(scope="module")
def ext_server() -> Iterator[LabServer]:
    server = _server()
    server.start_or_fail()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def ext(ext_server: LabServer, browser_context: Any) -> Iterator[tuple[LabPage, Workspace]]:
    page = browser_context.new_page()
    page.set_default_timeout(30_000)
    lab = LabPage(ext_server, page)
    try:
        yield lab, ext_server.workspace(WS)
    finally:
        page.close()


def fire(ws: Workspace, event: str, sid: str = SID, cwd: str = CWD, **fields: Any) -> None:
    ws.fire(hook_payload(event, sid, cwd, **fields))


def fire_codex(ws: Workspace, event: str, **fields: Any) -> None:
    """Codex's hook for ``event``, through the command ``install`` writes for Codex."""
    argv, kwargs = ws.codex_hook_command(codex_hook_payload(event, CODEX_SID, CODEX_CWD, **fields))
    result = subprocess.run(argv, **kwargs, capture_output=True, timeout=10)
    assert result.returncode == 0 and result.stdout == b"", result


def no_kernel(server: LabServer) -> None:
    status, kernels = server.api("GET", "/api/kernels")
    assert (status, kernels) == (200, []), "a kernel was started"


def open_lab(lab: LabPage, path: str = "lab") -> None:
    lab.page.goto(lab.server.url(path))
    lab.page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=60_000)


def status_text(lab: LabPage) -> str:
    return str(lab.page.locator(f"{STATUS} .pmux-lab-status-text").inner_text())


def wait_status(lab: LabPage, text: str, dot: str, item: str = STATUS) -> None:
    lab.page.wait_for_function(
        """([sel, text, dot]) => {
          const item = document.querySelector(sel);
          return !!item && item.querySelector('.pmux-lab-status-text').textContent === text
            && item.querySelector('.pmux-dot').classList.contains('pmux-dot--' + dot);
        }""",
        arg=[item, text, dot],
        timeout=30_000,
        polling="raf",
    )


def wait_title(lab: LabPage, n: int) -> None:
    lab.page.wait_for_function(
        "(n) => n > 0 ? document.title.startsWith(`(${n}) `)"
        " : !/^\\(\\d+\\) /.test(document.title)",
        arg=n,
        timeout=20_000,
    )


def show_panel(lab: LabPage) -> None:
    lab.page.locator(STATUS).click()
    lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="visible")


def status_axe(lab: LabPage, item: str = STATUS) -> list[dict[str, Any]]:
    """axe-core on the status item (a button: its name, its contrast). Notebook 7 wraps its
    whole shell in a 0 px high ``.jp-ThemedContainer`` with ``overflow: hidden`` (its content
    overflows it), which axe takes for a clip that hides everything: its contrast check would
    not run (found as "unmeasured"). The clip is lifted while axe runs; nothing moves."""
    if not lab.page.evaluate("() => !!window.axe"):
        lab.page.add_script_tag(path=str(AXE))
    result: list[dict[str, Any]] = lab.page.evaluate(
        """async (sel) => {
          const unclip = document.createElement('style');
          unclip.textContent = '.jp-ThemedContainer { overflow: visible !important; }';
          document.head.appendChild(unclip);
          try {
            const r = await window.axe.run(document.querySelector(sel), {
              runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']},
            });
            const found = r.violations.map((v) => ({id: v.id, nodes: v.nodes.length}));
            if (!r.passes.some((p) => p.id === 'color-contrast')) found.push({id: 'unmeasured'});
            return found;
          } finally {
            unclip.remove();
          }
        }""",
        item,
    )
    return result


def needs_you_agree(lab: LabPage, n: int) -> None:
    """One meaning of "need you" (issue 30): the bell's count, the panel's "Needs you" section
    (its rows and its summary) and the bell's sheet all hold the ``n`` the item says."""
    root = lab.root(PANEL)
    section = root.locator('section.pmux-group[data-group="Needs you"]')
    lab.page.wait_for_function(
        """([sel, n]) => {
          const root = document.querySelector(sel + ' .pmux-root');
          const section = root?.querySelector('section.pmux-group[data-group="Needs you"]');
          return root?.querySelector('.pmux-bell-count')?.textContent === String(n)
            && section?.querySelectorAll('li.pmux-row').length === n;
        }""",
        arg=[PANEL, n],
        timeout=20_000,
    )
    summary = section.locator(".pmux-group-summary").inner_text()
    assert summary == (f"{n} sessions" if n != 1 else "1 session"), summary


def shot(lab: LabPage, name: str) -> None:
    """A screenshot for the docs: test-output/browser/, and docs/images/ with
    PMUX_UPDATE_DOC_IMAGES=1 (a test run leaves the checkout as it was), once the main area
    has drawn its launcher, so that the picture is the page a user sees."""
    if lab.page.locator(".jp-LabShell").count():  # Notebook 7's pages have no launcher
        with contextlib.suppress(Exception):
            lab.page.locator(".jp-LauncherCard").first.wait_for(state="visible", timeout=10_000)
    path = lab.screenshot(name)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOC_IMAGES / f"{name}.png")


def test_status_bar_and_panel_live_with_no_kernel(
    ext: tuple[LabPage, Workspace], ext_server: LabServer
) -> None:
    lab, ws = ext
    open_lab(lab)
    no_kernel(ext_server)
    item = lab.page.locator(STATUS)
    wait_status(lab, "Claude: 0", "idle")
    # JupyterLab has a status bar: the top bar (Notebook 7's place for the item) shows nothing
    # of ours, only a placeholder kept out of the layout
    assert lab.page.locator(TOPBAR).count() == 0
    placeholder = lab.page.locator("#jp-top-bar .pmux-lab-topbar-none")
    assert placeholder.count() == 1 and placeholder.is_hidden()

    # A session starts and works: "Claude: 1" with a busy dot, nothing waits.
    fire(ws, "SessionStart", source="startup")
    fire(ws, "UserPromptSubmit", prompt="migrate the billing tables")
    wait_status(lab, "Claude: 1", "busy")
    assert "Nothing needs you" in (item.get_attribute("title") or "")
    wait_title(lab, 0)

    # It asks: "1 need you" (the contract's "N need you"), the amber dot, the tooltip says what
    # waits; the tab title too.
    bash = {"command": "psql -f migrate.sql"}
    fire(ws, "PermissionRequest", tool_name="Bash", tool_input=bash)
    wait_status(lab, "1 need you", "needs-input")
    tip = item.get_attribute("title") or ""
    assert tip.startswith("1 session needs you:") and "acme-api" in tip, tip
    wait_title(lab, 1)
    # The panel's tab (all a collapsed side area shows) carries the count too.
    tab = lab.page.locator(f'.lm-TabBar-tab[data-id="{PANEL[1:]}"]')
    tab.wait_for(state="visible")
    lab.page.wait_for_function(
        "(sel) => document.querySelector(sel)?.dataset.pmuxCount === '1'",
        arg=f'.lm-TabBar-tab[data-id="{PANEL[1:]}"]',
        timeout=20_000,
    )

    # A click on the item opens the panel: the widget's own rows, header and actions.
    show_panel(lab)
    lab.wait_state(SID, "needs-input", within=PANEL)
    # wide enough for a row to read on one line (JupyterLab opens side areas at 250 px)
    lab.page.wait_for_function(
        "(sel) => document.querySelector(sel).getBoundingClientRect().width >= 318",
        arg=PANEL,
        timeout=10_000,
    )
    row = lab.row(SID, within=PANEL)
    assert row.locator("button.pmux-act--approve").count() == 1
    for sid, cwd in OTHERS.items():
        fire(ws, "SessionStart", sid, cwd, source="startup")
    first = next(iter(OTHERS))
    fire(ws, "UserPromptSubmit", first, OTHERS[first], prompt="fix the invoice rounding")
    fire(ws, "Stop", first, OTHERS[first], last_assistant_message="Rounding fixed.")
    wait_status(lab, "2 need you", "needs-input")
    lab.wait_state(first, "review", within=PANEL)
    wait_title(lab, 2)
    needs_you_agree(lab, 2)
    no_kernel(ext_server)

    # A Codex session works beside them (issue 36): its row starts with the agent's small
    # mark, which its accessible name says once; Claude's rows carry none. The themes' axe
    # runs below check the mark too.
    fire_codex(ws, "SessionStart", source="startup")
    fire_codex(ws, "UserPromptSubmit", turn_id="t1", prompt="reconcile the ledgers")
    lab.wait_state(CODEX_SID, "busy", within=PANEL)
    codex_row = lab.row(CODEX_SID, within=PANEL)
    mark = codex_row.locator(".pmux-name > .pmux-agent")
    assert mark.inner_text() == "Codex" and mark.is_visible()
    assert "(Codex), busy" in (codex_row.get_attribute("aria-label") or "")
    assert lab.row(SID, within=PANEL).locator(".pmux-agent").count() == 0
    wait_status(lab, "2 need you", "needs-input")  # a busy row needs nobody

    # A reload comes back to the same state (the stream's first frame is the whole state).
    lab.page.reload()
    lab.page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    wait_status(lab, "2 need you", "needs-input")
    show_panel(lab)
    lab.wait_state(SID, "needs-input", within=PANEL)
    lab.wait_state(first, "review", within=PANEL)
    wait_title(lab, 2)

    # Screenshots (light, dark) and axe in both themes.
    found: dict[str, Any] = {}
    for theme, name in ((LIGHT, "light"), (DARK, "dark")):
        lab.set_theme(theme)
        show_panel(lab)
        shot(lab, f"lab-panel-{name}")
        found[name] = {"panel": axe_violations(lab, PANEL), "status": status_axe(lab)}
    # The bell's sheet (what waits, newest first) in the panel, checked too.
    root = lab.root(PANEL)
    root.locator(".pmux-bell").click()
    root.locator(".pmux-sheet").wait_for(state="visible")
    assert root.locator(".pmux-sheet-item").count() == 2
    found["dark-sheet"] = {"panel": axe_violations(lab, PANEL), "status": []}
    root.locator(".pmux-bell").click()
    lab.set_theme(LIGHT)
    themes = ("light", "dark", "dark-sheet")
    assert found == {t: {"panel": [], "status": []} for t in themes}, json.dumps(found, indent=1)

    # The session answered in its terminal: back to one.
    fire(ws, "PostToolUse", tool_name="Bash", tool_input=bash, tool_response={})
    wait_status(lab, "1 need you", "review")
    wait_title(lab, 1)
    no_kernel(ext_server)


def test_palette_commands_and_settings(
    ext: tuple[LabPage, Workspace], ext_server: LabServer
) -> None:
    lab, ws = ext
    open_lab(lab)
    sid, cwd = "5fbc8064-ab93-4d4c-9e7f-c06b5c4d3eb5", "/home/dev/projects/deploy"
    fire(ws, "SessionStart", sid, cwd, source="startup")
    fire(ws, "PermissionRequest", sid, cwd, tool_name="Bash", tool_input={"command": "make deploy"})
    lab.command("pmux-widget:show-panel")
    lab.wait_state(sid, "needs-input", within=PANEL)
    # The palette lists the commands; "next" opens the panel on the waiting row.
    labels = lab.page.evaluate(
        """() => ['pmux-widget:show-panel', 'pmux-widget:next-waiting', 'pmux-widget:approve',
                  'pmux-widget:deny'].map((id) => window.jupyterapp.commands.label(id))"""
    )
    assert labels[0] == "Show Claude Sessions Panel" and labels[2].startswith("Approve"), labels
    # "Next" walks the waiting sessions (longest wait first), focusing each one's row.
    focused = "() => document.activeElement?.closest?.('li.pmux-row')?.dataset.sessionId ?? null"
    visited: list[str] = []
    for _ in range(4):
        lab.command("pmux-widget:next-waiting")
        last = json.dumps(visited[-1] if visited else None)
        lab.page.wait_for_function(f"() => ({focused})() !== {last}")
        visited.append(lab.page.evaluate(focused))
        if visited[-1] == sid:
            break
    assert sid in visited, visited
    waiting = lab.page.evaluate(
        """(sel) => [...document.querySelectorAll(sel + ' li.pmux-row')]
              .filter((r) => /pmux-row--(needs-input|review)/.test(r.className))
              .map((r) => r.dataset.sessionId)""",
        PANEL,
    )
    assert set(visited) <= set(waiting), (visited, waiting)
    # Its key (Alt+Shift+N) does the same from anywhere in the page.
    lab.page.locator("#jp-main-dock-panel").click()
    assert lab.page.evaluate(focused) is None
    lab.page.keyboard.press("Alt+Shift+N")
    lab.page.wait_for_function(f"() => ({focused})() !== null", timeout=10_000)
    # The settings move the panel to the left area.
    lab.page.evaluate(
        """() => window.jupyterapp.serviceManager.settings.save('pmux-widget:plugin',
              JSON.stringify({side: 'left'}))"""
    )
    lab.page.reload()
    lab.page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
    lab.page.locator(f"#jp-left-stack {PANEL}").wait_for(state="attached", timeout=30_000)
    lab.page.evaluate(
        """() => window.jupyterapp.serviceManager.settings.save('pmux-widget:plugin', '{}')"""
    )
    no_kernel(ext_server)


def test_the_panel_says_offline_and_reconnects_by_itself(
    ext: tuple[LabPage, Workspace], ext_server: LabServer
) -> None:
    """The stream drops (as when the server restarts) and is refused for a while: the panel
    says it is offline, keeps its rows, and comes back by itself with what happened meanwhile."""
    lab, ws = ext
    outage = {"on": False, "open": []}

    def route(socket: Any) -> None:
        if outage["on"]:
            socket.close()
            return
        socket.connect_to_server()  # frames pass through both ways
        outage["open"].append(socket)

    lab.page.route_web_socket(re.compile(r".*/pmux/api/stream.*"), route)
    open_lab(lab)
    show_panel(lab)
    sid, cwd = "6a0d9175-bca4-4e5d-8f80-d17c6d5e4fc6", "/home/dev/projects/outage"
    fire(ws, "SessionStart", sid, cwd, source="startup")
    lab.wait_state(sid, "idle", within=PANEL)
    banner = lab.page.locator(f"{PANEL} .pmux-lab-offline")
    assert banner.is_hidden()

    outage["on"] = True
    for socket in outage["open"]:
        socket.close()
    banner.wait_for(state="visible", timeout=10_000)
    assert "Offline" in banner.inner_text()
    assert lab.row(sid, within=PANEL).is_visible()  # the last rows stay
    fire(ws, "UserPromptSubmit", sid, cwd, prompt="work while the page is offline")

    outage["on"] = False  # the next attempt (backoff ≤ 10 s) gets through
    banner.wait_for(state="hidden", timeout=30_000)
    lab.wait_state(sid, "busy", within=PANEL)
    no_kernel(ext_server)


def test_notebook_7_top_bar_item_and_panel(browser_context: Any) -> None:
    """Notebook 7 runs the same labextension. It has no status bar and starts its side panels
    collapsed, so the item sits in its top bar on every page (the file browser, a notebook),
    saying what the status bar says in JupyterLab; a click opens the panel. Light and dark."""
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed")
    server = _server(app="notebook")
    try:
        server.start()
    except LabUnavailable as exc:
        pytest.fail(f"Notebook 7 with the extension did not start: {exc}")
    page = browser_context.new_page()
    try:
        lab = LabPage(server, page)
        ws = server.workspace(WS)
        notebook = ws.notebook("top-bar.ipynb", "1 + 1")
        open_lab(lab, "tree")
        assert page.evaluate("!document.querySelector('.jp-LabShell')")  # really Notebook 7
        assert page.locator(STATUS).count() == 0
        top = page.locator(f"#top-panel {TOPBAR}")
        top.wait_for(state="visible", timeout=30_000)
        wait_status(lab, "Claude: 0", "idle", TOPBAR)
        fire(ws, "SessionStart", source="startup")
        fire(ws, "PermissionRequest", tool_name="Bash", tool_input={"command": "make deploy"})
        wait_status(lab, "1 need you", "needs-input", TOPBAR)
        assert (top.get_attribute("title") or "").startswith("1 session needs you:")
        wait_title(lab, 1)
        # the panel starts collapsed: the item is what shows; a click opens the panel
        assert not page.locator(f"{PANEL} .pmux-root").is_visible()
        top.click()
        page.locator(f"{PANEL} .pmux-root").wait_for(state="visible", timeout=30_000)
        lab.wait_state(SID, "needs-input", within=PANEL)
        # a second session finishes its turn: 2 need you, everywhere
        other, cwd = next(iter(OTHERS.items()))
        fire(ws, "SessionStart", other, cwd, source="startup")
        fire(ws, "UserPromptSubmit", other, cwd, prompt="fix the invoice rounding")
        fire(ws, "Stop", other, cwd, last_assistant_message="Rounding fixed.")
        wait_status(lab, "2 need you", "needs-input", TOPBAR)
        lab.wait_state(other, "review", within=PANEL)
        needs_you_agree(lab, 2)
        wait_title(lab, 2)
        no_kernel(server)

        # On the file browser page, then on a notebook's, in both themes: the item is in the
        # top bar, readable (axe), and opens the panel.
        found: dict[str, Any] = {}
        for where, path in (("tree", "tree"), ("notebook", f"notebooks/{notebook}")):
            if where != "tree":
                page.goto(server.url(path))
                page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
                page.locator(".jp-Notebook").first.wait_for(state="visible", timeout=90_000)
            for theme, name in ((LIGHT, "light"), (DARK, "dark")):
                lab.set_theme(theme)
                top.wait_for(state="visible", timeout=30_000)
                wait_status(lab, "2 need you", "needs-input", TOPBAR)
                found[f"{where}-{name}"] = status_axe(lab, TOPBAR)
                lab.screenshot(f"notebook7-topbar-{where}-{name}")
                if (where, name) == ("notebook", "light"):
                    shot(lab, "notebook7-topbar")
            top.click()
            page.locator(f"{PANEL} .pmux-root").wait_for(state="visible", timeout=30_000)
            lab.wait_state(other, "review", within=PANEL)
            needs_you_agree(lab, 2)
            if where == "tree":
                shot(lab, "notebook7-panel")
        lab.set_theme(LIGHT)
        assert all(v == [] for v in found.values()), json.dumps(found, indent=1)
        assert len(found) == 4
        server.shutdown_kernels()
    finally:
        page.close()
        server.stop()


def test_sidebar_opens_the_panel_and_leaves_a_note_in_the_cell(
    ext: tuple[LabPage, Workspace], ext_server: LabServer
) -> None:
    """``pmux_widget.sidebar()`` on a page with the extension: the panel opens (no sidecar is
    docked), the cell keeps only a note pointing to it."""
    lab, ws = ext
    check = "from pmux_widget.notebook import api; print('sidecar:', api._sidecar)"
    cells = ("import pmux_widget; pmux_widget.sidebar()", check)
    lab.open_notebook(ws.notebook("sidebar.ipynb", *cells))
    panel = lab.page.locator(f"{PANEL} .pmux-root")
    assert not panel.is_visible()
    lab.run_cell(0)
    panel.wait_for(state="visible", timeout=30_000)
    stub = lab.cell(0).locator(".pmux-root--stub")
    stub.wait_for(state="visible")
    assert "side panel" in stub.locator(".pmux-note").inner_text()
    assert lab.cell(0).locator(".pmux-row:visible").count() == 0
    # the kernel was told the panel shows it (the page's answer precedes the next cell on the
    # shell channel): no sidecar docks a second list
    lab.run_cell(1)
    assert "sidecar: None" in lab.cell(1).locator(".jp-OutputArea").inner_text()
    assert lab.page.locator(".jupyterlab-sidecar").count() == 0
    assert lab.page.locator("#jp-right-stack .pmux-root").count() == 1
    ext_server.shutdown_kernels()


def test_make_demo_opens_with_the_panel_and_status_bar_live_before_anything_runs(
    tmp_path: Path, browser_context: Any
) -> None:
    """The demo (as ``make demo`` runs it, minus its pre-run cell): JupyterLab opens with the
    extension's panel open and the status bar live over the demo fleet, no kernel started."""
    from ..helpers import free_port
    from ..test_demo import DemoProcess

    demo = DemoProcess(tmp_path, "--port", str(free_port()), "--duration", "120", "--no-prerun")
    page = browser_context.new_page()
    try:
        url = demo.wait_for_output(r"URL: (http://127\.0\.0\.1:\d+/lab/\S+\?token=\w+)", 120)[1]
        page.goto(url)
        page.locator(f"{PANEL} .pmux-row").first.wait_for(state="visible", timeout=90_000)
        page.wait_for_function(
            """(sel) => /^(\\d+ needs? you|Claude: [1-9]\\d*)$/.test(
                 document.querySelector(sel + ' .pmux-lab-status-text')?.textContent ?? '')""",
            arg=STATUS,
            timeout=60_000,
        )
        base, token = url.split("/lab/")[0], url.split("token=")[1]
        kernels = page.evaluate(
            "(u) => fetch(u).then((r) => r.json())", f"{base}/api/kernels?token={token}"
        )
        assert kernels == [], "the panel and the status bar need no kernel"
        shot_path = OUTPUT / "demo-lab-panel.png"
        OUTPUT.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shot_path))
    finally:
        page.close()
        demo.signal(signal.SIGINT)
        with contextlib.suppress(AssertionError):
            demo.wait(60)
        demo.cleanup()
