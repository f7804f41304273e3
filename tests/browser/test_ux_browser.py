"""The widget's UX in real JupyterLab (issue 16): access for everyone, checked in the browser.

- axe-core (``node_modules/axe-core/axe.min.js``, injected into the page) finds no WCAG 2 A/AA
  violation in the widget — contrast of every label and detail line, ARIA — in the light and
  the dark theme, with the sheet open;
- a keyboard-only walk: Tab to a row, to its actions, Enter on the bell opens the sheet,
  Escape closes it and gives the focus back;
- (the attention count on a collapsed side area's tab is the JupyterLab extension's panel's:
  test_lab_extension.py);
- a dismiss clicked while a cell runs shows at once, and says why it waits;
- the README's screenshots (light, dark, a 320 px sidebar), written to docs/images/ with
  ``PMUX_UPDATE_DOC_IMAGES=1``.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from .conftest import DARK, LIGHT, ROOT, LabPage, Workspace
from .test_widget_browser import (
    DOC_IMAGES,
    FLEET_STATES,
    RIGHT,
    SHOW,
    SID,
    SIDEBAR,
    expect_row,
    fire,
    post_fleet,
    shown,
    wait_bell,
    widen_right_area,
)

pytestmark = pytest.mark.browser

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
ASKING = "0a1b2c3d-0000-4000-8000-000000000002"


def fleet_shown(lab: LabPage, ws: Workspace, within: str = ".jp-Notebook") -> None:
    post_fleet(ws)
    for sid, state in FLEET_STATES.items():
        lab.wait_state(sid, state, within=within)


def axe_violations(lab: LabPage, within: str = ".jp-Notebook") -> list[dict[str, Any]]:
    """axe-core's WCAG 2 A/AA violations inside the widget (each with its nodes' summaries)."""
    if not lab.page.evaluate("() => !!window.axe"):
        lab.page.add_script_tag(path=str(AXE))
    # JupyterLab's <body> is 0 px high with overflow: hidden (its shell is positioned
    # absolutely): axe takes everything in the page for clipped away and would measure only
    # form controls. The body gets the window's height for the check (no color changes).
    lab.page.add_style_tag(content="body { height: 100vh !important; }")
    lab.root(within).scroll_into_view_if_needed()
    result = lab.page.evaluate(
        """async (sel) => {
          const root = document.querySelector(sel + ' .pmux-root');
          const r = await window.axe.run(root, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa']},
          });
          const contrast = r.passes.find((p) => p.id === 'color-contrast');
          const unsure = r.incomplete.find((p) => p.id === 'color-contrast');
          const found = r.violations.map((v) => ({
            id: v.id,
            help: v.help,
            nodes: v.nodes.map((n) => n.failureSummary + ' @ ' + n.html.slice(0, 160)),
          }));
          // axe must really have measured the text (a check that measured nothing passes too)
          if (!contrast || contrast.nodes.length < 20) found.push({id: 'too-few-measured',
            help: String(contrast ? contrast.nodes.length : 0),
            nodes: (contrast ? contrast.nodes : []).map((n) => n.html.slice(0, 100))
              .concat(r.inapplicable.map((x) => 'inapplicable ' + x.id))});
          // Undetermined is a failure too, except a lone symbol (the ✓: axe cannot tell a glyph
          // from text; it has the button's text color, measured on the other buttons).
          const symbol = ['shortTextContent', 'nonBmp'];
          const glyph = (n) => n.any.some((a) => symbol.includes((a.data || {}).messageKey));
          const undetermined = unsure ? unsure.nodes.filter((n) => !glyph(n)) : [];
          if (undetermined.length) found.push({id: 'contrast-undetermined', help: unsure.help,
            nodes: undetermined.map((n) => n.html.slice(0, 160) + ' ' + JSON.stringify(
              n.any.map((a) => a.data)))});
          return found;
        }""",
        within,
    )
    return list(result)


@pytest.fixture(autouse=True)
def _axe_installed() -> None:
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: npm install (axe-core is a devDependency)")


def assert_no_axe_violation_with_the_sheet_open(lab: LabPage) -> None:
    """Open the bell's sheet; axe-core finds nothing in the light theme nor in the dark one."""
    lab.root().locator(".pmux-bell").click()
    lab.root().locator(".pmux-sheet").wait_for(state="visible")
    found = {"light": axe_violations(lab)}
    try:
        lab.set_theme(DARK)
        found["dark"] = axe_violations(lab)
    finally:
        lab.set_theme(LIGHT)
    assert found == {"light": [], "dark": []}, json.dumps(found, indent=1)


def test_axe_finds_no_contrast_or_aria_violation_in_light_and_dark(
    lab: LabPage, workspace: Workspace
) -> None:
    shown(lab, workspace, SHOW)
    fleet_shown(lab, workspace)
    assert_no_axe_violation_with_the_sheet_open(lab)


def test_keyboard_only_walk(lab: LabPage, workspace: Workspace) -> None:
    """Tab reaches a row (its label says state, name and what it asks), then its actions; the
    bell opens the sheet with Enter; Escape closes it and the focus returns to the bell."""
    shown(lab, workspace, SHOW)
    fleet_shown(lab, workspace)
    lab.command("notebook:enter-command-mode")
    page = lab.page
    bell = lab.root().locator(".pmux-bell")
    bell.focus()

    def active() -> dict[str, Any]:
        return page.evaluate(
            """() => { const a = document.activeElement;
                return {cls: a.className || '', label: a.getAttribute('aria-label') || '',
                        id: a.getAttribute('data-session-id') || '', text: a.textContent}; }"""
        )

    # Tab on until a row has the focus: the first row is the pinned needs-input one.
    for _ in range(8):
        page.keyboard.press("Tab")
        if "pmux-row" in active()["cls"]:
            break
    row = active()
    assert row["id"] == ASKING, row
    assert row["label"].endswith("needs input: asks to run: npm run migrate -- --env staging")
    page.keyboard.press("Tab")
    assert "pmux-act--approve" in active()["cls"], active()
    page.keyboard.press("Tab")
    assert "pmux-act--deny" in active()["cls"], active()

    bell.focus()
    page.keyboard.press("Enter")
    sheet = lab.root().locator(".pmux-sheet")
    sheet.wait_for(state="visible")
    page.keyboard.press("Tab")
    assert "pmux-mark-all" in active()["cls"], active()
    page.keyboard.press("Escape")
    sheet.wait_for(state="hidden")
    assert "pmux-bell" in active()["cls"], active()


def test_a_dismiss_while_a_cell_runs_says_why_it_waits(lab: LabPage, workspace: Workspace) -> None:
    shown(lab, workspace, SHOW, "import time; time.sleep(30)")
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "Stop", last_assistant_message="Done: `make test` passes.")
    expect_row(lab, SID, "review")
    row = lab.row(SID)
    assert row.locator(".pmux-primary code").inner_text() == "make test"
    lab.run_cell(1, wait=False)
    lab.page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'busy'"
    )
    row.locator("button.pmux-dismiss").click()
    assert row.locator(".pmux-status").inner_text().startswith("dismissing…")
    note = row.locator(".pmux-pending")
    note.wait_for(state="visible")
    assert "Jupyter delivers clicks when the running cell ends" in note.inner_text()
    lab.screenshot("dismiss-while-busy")
    lab.command("notebook:interrupt-kernel")
    lab.wait_kernel_idle()
    expect_row(lab, SID, "idle")
    assert note.is_hidden()


def test_ux_screenshots(lab: LabPage, lab_server: Any) -> None:
    """The README's images of the new rows: in a notebook (light, dark) and a 320 px sidebar."""
    lab.page.set_viewport_size({"width": 1200, "height": 820})
    shots = {}
    ws = lab_server.workspace("ux-notebook")
    lab.open_notebook(ws.notebook("sessions.ipynb", SHOW), workspace="ux-notebook")
    lab.command("application:toggle-left-area")
    lab.run_cell(0)
    lab.root().wait_for()
    fleet_shown(lab, ws)
    lab.command("notebook:enter-command-mode")
    output = lab.cell(0).locator(".jp-OutputArea-child").first
    shots["rows-light"] = lab.screenshot("ux-rows-light", clip=output.bounding_box())
    try:
        lab.set_theme(DARK)
        shots["rows-dark"] = lab.screenshot("ux-rows-dark", clip=output.bounding_box())
    finally:
        lab.set_theme(LIGHT)
    lab_server.shutdown_kernels()

    ws = lab_server.workspace("ux-sidebar")
    lab.open_notebook(ws.notebook("side.ipynb", SIDEBAR), workspace="ux-sidebar")
    lab.command("application:toggle-left-area")
    lab.run_cell(0)
    lab.root(RIGHT).wait_for(state="visible")
    fleet_shown(lab, ws, within=RIGHT)
    set_right_width(lab, 320)
    lab.command("notebook:enter-command-mode")
    box = lab.page.locator(RIGHT).bounding_box()
    shots["sidebar-320"] = lab.screenshot("ux-sidebar-320", clip=box)
    width = lab.page.evaluate(f"() => document.querySelector('{RIGHT}').offsetWidth")
    assert 300 <= width <= 340, width
    # At 320 px, each needs-input row says in one line what it asks (not cut).
    line = lab.row(ASKING, RIGHT).locator(".pmux-primary")
    assert line.evaluate("(e) => e.scrollWidth <= e.parentElement.clientWidth + 1")
    wait_bell(lab, 3, within=RIGHT)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        for name, shot in shots.items():
            shutil.copyfile(shot, DOC_IMAGES / f"{name}.png")


def set_right_width(lab: LabPage, width: int) -> None:
    """Drag the right area's handle until the area is ``width`` px wide."""
    now = lab.page.evaluate(f"() => document.querySelector('{RIGHT}').offsetWidth")
    widen_right_area(lab, width - now)
