"""The timeline strips (issue 15) in real JupyterLab: each row's strip follows real hooks, its
segments read on keyboard focus, the header says today's insight, and a reloaded page draws
the same strip from the kernel's history (the ``history`` trait, read once with the model).
The README's and usage.md's strips (light, dark, a 300 px sidebar) are taken here too, over an
hour of scripted turns of a small fleet; with ``PMUX_UPDATE_DOC_IMAGES=1`` they go to
docs/images/."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import time
from typing import Any

import pytest

from tests.helpers import wait_until

from .conftest import DARK, LIGHT, LabPage, LabServer, Workspace, hook_payload
from .test_ux_browser import set_right_width
from .test_widget_browser import DOC_IMAGES, RIGHT, SHOW, SID, SIDEBAR, expect_row, fire, shown

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
        "one-light": lab.screenshot("timeline-one-light", clip=output.bounding_box())
    }
    try:
        lab.set_theme(DARK)
        shots["one-dark"] = lab.screenshot("timeline-one-dark", clip=output.bounding_box())
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
    for name, shot in shots.items():
        assert shot.stat().st_size > 0, name  # (docs/images' strips: the fleet test below)


# ------------------------------------------------------------------ the docs' screenshots

M = 60_000
#: (session, cwd, the state it is in now)
HISTORY = [
    ("1e0c4a5d-0000-4000-8000-00000000a001", "/home/dev/projects/api-server", "needs-input"),
    ("1e0c4a5d-0000-4000-8000-00000000a002", "/home/dev/projects/docs-site", "review"),
    ("1e0c4a5d-0000-4000-8000-00000000a003", "/home/dev/projects/billing", "busy"),
    ("1e0c4a5d-0000-4000-8000-00000000a004", "/home/dev/projects/ml-training", "review"),
]


def session_hooks(
    rng: random.Random, sid: str, cwd: str, final: str, begin: int, now: int
) -> tuple[list[dict[str, Any]], list[int]]:
    """One session's hooks from ``begin`` to ``now`` and when each was sent: turns of
    prompts, permission dialogs answered after a while, finished turns left unread for
    minutes; it ends in ``final``."""
    hooks: list[dict[str, Any]] = []
    sent: list[int] = []

    def add(event: str, at: int, **fields: Any) -> None:
        hooks.append(hook_payload(event, sid, cwd, **fields))
        sent.append(at)

    t = begin
    add("SessionStart", t, source="startup")
    turn = 0
    while True:
        kept = len(hooks)
        t += rng.randint(1, 6) * M  # the last answer unread, or nothing asked yet
        turn += 1
        add("UserPromptSubmit", t, prompt=f"step {turn}: make the retry tests pass")
        for _ in range(rng.choice((0, 1, 1, 2))):
            t += rng.randint(30, 240) * 1000
            add("PermissionRequest", t, tool_name="Bash", tool_input=BASH)
            t += rng.randint(20, 300) * 1000  # waiting on you
            add("PostToolUse", t, tool_name="Bash", tool_input=BASH, tool_use_id="toolu_01")
        t += rng.randint(1, 7) * M
        add("Stop", t, last_assistant_message=f"Step {turn} done; the tests pass.")
        if t > now - 10 * M:  # the last turn ends before the final state's hooks
            del hooks[kept:], sent[kept:]
            break
    if final != "review":
        add("UserPromptSubmit", now - 9 * M, prompt="now the backoff's jitter")
    if final == "needs-input":
        add("PermissionRequest", now - 4 * M, tool_name="Bash", tool_input=BASH)
    return hooks, sent


def post_history(ws: Workspace, now: int) -> dict[str, int]:
    """An hour of :func:`session_hooks` per HISTORY session, posted with their past times
    (``X-Pmux-Sent``, which the hub orders signals by). Returns each session's last hook
    time."""
    rng = random.Random(15)
    last: dict[str, int] = {}
    for k, (sid, cwd, final) in enumerate(HISTORY):
        hooks, sent = session_hooks(rng, sid, cwd, final, now - 62 * M + k * 2 * M, now)
        ws.post(hooks, sent_ms=sent)
        last[sid] = sent[-1]
    return last


def wait_stored(ws: Workspace, last: dict[str, int]) -> None:
    """Until the store holds each session's history up to its last hook: its newest
    transition into its HISTORY state, from the last half minute of its script (the widget
    reads its ``history`` trait from the store when it is created)."""
    final = {sid: state for sid, _cwd, state in HISTORY}

    def newest() -> dict[str, tuple[int, str, str]]:
        db = sqlite3.connect(f"file:{ws.pmux.db_path}?mode=ro", uri=True)
        try:
            rows = db.execute(
                "SELECT session_id, at, to_state, source FROM transitions ORDER BY session_id, at"
            ).fetchall()
        finally:
            db.close()
        return {sid: (at, state, source) for sid, at, state, source in rows}

    def done() -> bool:
        got = newest()
        return all(
            sid in got and got[sid][1] == final[sid] and got[sid][0] >= at - 30_000
            for sid, at in last.items()
        )

    wait_until(done, 30, what=lambda: f"the scripted history: {newest()} of {last}")


def test_strip_screenshots_over_an_hour_of_scripted_history(
    lab: LabPage, lab_server: LabServer
) -> None:
    """The docs' strips: four sessions with an hour of turns each, in a notebook (light,
    dark) and docked in a 300 px sidebar; every strip shows several segments."""
    lab.page.set_viewport_size({"width": 1200, "height": 900})
    ws = lab_server.workspace("timeline-docs")
    start = "import pmux_widget; pmux_widget.start()"
    lab.open_notebook(ws.notebook("day.ipynb", start, SHOW, SIDEBAR), workspace="timeline-docs")
    lab.command("application:toggle-left-area")
    lab.run_cell(0)
    wait_stored(ws, post_history(ws, int(time.time() * 1000)))
    lab.run_cell(1)
    lab.root().wait_for()
    for sid, _cwd, final in HISTORY:
        lab.wait_state(sid, final)
        segments = (
            lab.row(sid)
            .locator(".pmux-strip")
            .evaluate(
                "(e) => e.style.getPropertyValue('--pmux-strip-fill').split('var(').length - 1"
            )
        )
        assert segments >= 8, (sid, segments)
    lab.page.mouse.move(0, 0)
    lab.command("notebook:enter-command-mode")
    output = lab.cell(1).locator(".jp-OutputArea-child").first
    output.scroll_into_view_if_needed()
    shots = {"timeline-light": lab.screenshot("timeline-light", clip=output.bounding_box())}
    try:
        lab.set_theme(DARK)
        shots["timeline-dark"] = lab.screenshot("timeline-dark", clip=output.bounding_box())
    finally:
        lab.set_theme(LIGHT)

    lab.run_cell(2)
    lab.root(RIGHT).wait_for(state="visible")
    for sid, _cwd, final in HISTORY:
        lab.wait_state(sid, final, within=RIGHT)
    set_right_width(lab, 300)
    width = lab.page.evaluate(f"() => document.querySelector('{RIGHT}').offsetWidth")
    assert 285 <= width <= 315, width
    lab.page.mouse.move(0, 0)
    shots["timeline-sidebar-300"] = lab.screenshot(
        "timeline-sidebar-300", clip=lab.page.locator(RIGHT).bounding_box()
    )
    for name, shot in shots.items():
        assert 0 < shot.stat().st_size < 200_000, (name, shot.stat().st_size)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        for name, shot in shots.items():
            shutil.copyfile(shot, DOC_IMAGES / f"{name}.png")
