"""The timeline strips (issue 15) in real JupyterLab: each row's strip follows real hooks, its
segments read on keyboard focus, the header says today's insight, and a reloaded page draws
the same strip from the kernel's history (the ``history`` trait, read once with the model).
Screenshots (light, dark) go to docs/images/ with ``PMUX_UPDATE_DOC_IMAGES=1``."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from .conftest import DARK, LIGHT, LabPage, Workspace
from .test_widget_browser import DOC_IMAGES, SHOW, SID, expect_row, fire, shown

pytestmark = pytest.mark.browser

BASH = {"command": "pytest -q tests/test_retry.py", "description": "Run the retry tests"}
#: each state's color in a strip's fill (js/src/render/strip.ts SEG_COLOR)
SEG = {
    "busy": "var(--sb)",
    "needs-input": "var(--sn)",
    "review": "var(--sr)",
    "idle": "var(--si)",
    "unknown": "var(--su)",
}


def fill(lab: LabPage) -> str:
    return str(
        lab.row(SID)
        .locator(".pmux-strip")
        .evaluate("(e) => e.style.getPropertyValue('--pmux-strip-fill')")
    )


def wait_fill_ends_with(lab: LabPage, state: str) -> None:
    """The strip's last segment is ``state``, up to now (the strip's right end)."""
    lab.page.wait_for_function(
        """([sid, color]) => {
          const e = document.querySelector(`.pmux-row[data-session-id='${sid}'] .pmux-strip`);
          const fill = e ? e.style.getPropertyValue('--pmux-strip-fill') : '';
          const last = fill.split(', ').pop();
          return last.startsWith(`${color} `) && last.endsWith(' 100%)');
        }""",
        arg=[SID, SEG[state]],
        timeout=20_000,
    )


def test_strips_follow_hooks_read_on_focus_and_survive_a_reload(
    lab: LabPage, workspace: Workspace
) -> None:
    shown(lab, workspace, SHOW)
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "UserPromptSubmit", prompt="the retry helper hammers the gateway: back off")
    expect_row(lab, SID, "busy")
    fire(workspace, "PermissionRequest", tool_name="Bash", tool_input=BASH)
    expect_row(lab, SID, "needs-input")
    wait_fill_ends_with(lab, "needs-input")
    assert SEG["busy"] in fill(lab)

    strip = lab.row(SID).locator(".pmux-strip")
    strip.focus()
    tip = lab.row(SID).locator(".pmux-strip-tip")
    tip.wait_for(state="visible")
    assert tip.inner_text().startswith("needs input · from "), tip.inner_text()
    assert tip.inner_text().endswith("so far · asked for permission"), tip.inner_text()
    assert strip.get_attribute("aria-describedby") == tip.get_attribute("id")
    lab.page.keyboard.press("ArrowLeft")
    assert tip.inner_text().startswith("busy · from "), tip.inner_text()
    assert tip.inner_text().endswith("got a prompt"), tip.inner_text()

    # A live transition extends the strip; the answered wait and the finished turn show in
    # the header's insight.
    fire(workspace, "PostToolUse", tool_name="Bash", tool_input=BASH, tool_use_id="toolu_01")
    expect_row(lab, SID, "busy")
    fire(workspace, "Stop", last_assistant_message="Backoff added; 4 tests pass.")
    expect_row(lab, SID, "review")
    wait_fill_ends_with(lab, "review")
    insight = lab.root().locator(".pmux-insight")
    lab.page.wait_for_function(
        "() => (document.querySelector('.pmux-insight') || {}).textContent?.includes('1 turn')",
        timeout=20_000,
    )
    assert "median response" in insight.inner_text(), insight.inner_text()
    lab.page.mouse.move(0, 0)
    lab.command("notebook:enter-command-mode")
    strip.focus()
    output = lab.cell(0).locator(".jp-OutputArea-child").first
    shots: dict[str, Any] = {
        "timeline-light": lab.screenshot("timeline-light", clip=output.bounding_box())
    }
    try:
        lab.set_theme(DARK)
        shots["timeline-dark"] = lab.screenshot("timeline-dark", clip=output.bounding_box())
    finally:
        lab.set_theme(LIGHT)
    before = fill(lab)

    # Reloaded: the strip is drawn again from the kernel's history (not from the patches).
    lab.command("docmanager:save")
    lab.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    lab.page.reload()
    lab.wait_kernel_idle()
    expect_row(lab, SID, "review")
    wait_fill_ends_with(lab, "review")
    after = fill(lab)
    for state in ("busy", "needs-input", "review"):
        assert SEG[state] in after, (before, after)
    # (the history may hold a transition a coalesced patch left out: never fewer)
    assert after.count("var(--s") >= before.count("var(--s"), (before, after)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        for name, shot in shots.items():
            shutil.copyfile(shot, DOC_IMAGES / f"{name}.png")
