"""The widget in real JupyterLab, in headless Chromium, fed by REAL hooks.

Every test opens a notebook whose cell is what a user types (``import pmux_widget;
pmux_widget.show()``), runs it from the keyboard (click into the cell, Shift+Enter) and then
fires hooks through the INSTALLED command (``/bin/sh -c '<command>'``, payload on stdin) from
this process: the script finds the kernel's hub through the runtime file the hub wrote into
the workspace's home (see ``conftest.py``). Nothing here sleeps to "wait for it": Playwright
polls for each condition with a deadline.

Screenshots go to ``test-output/browser/``. With ``PMUX_UPDATE_DOC_IMAGES=1``,
:func:`test_readme_screenshots` also rewrites the README's images in ``docs/images/``.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from typing import Any

import pytest

from .conftest import DARK, LIGHT, OUTPUT, ROOT, Frame, LabPage, Workspace, hook_payload

pytestmark = pytest.mark.browser

SHOW = "import pmux_widget; pmux_widget.show()"
SIDEBAR = "import pmux_widget; pmux_widget.sidebar()"
CWD = "/home/dev/projects/acme-api"
SID = "5f0c3a2e-8d41-4b7a-9c6e-2b1d7e9f4a10"
OTHER = "9c1d2e3f-5a6b-4c7d-8e9f-a0b1c2d3e4f5"
RIGHT = "#jp-right-stack"
DOC_IMAGES = ROOT / "docs" / "images"

LABEL = {
    "idle": "idle",
    "busy": "busy",
    "needs-input": "needs input",
    "review": "review",
    "unknown": "unknown",
}


def fire(ws: Workspace, event: str, sid: str = SID, cwd: str = CWD, **fields: Any) -> None:
    ws.fire(hook_payload(event, sid, cwd, **fields))


def shown(lab: LabPage, ws: Workspace, *cells: str) -> None:
    """Open a notebook of ``cells`` (the first shows the widget) and run the first one."""
    lab.open_notebook(ws.notebook("status.ipynb", *cells))
    lab.run_cell(0)
    lab.root().wait_for()


def seen_text(locator: Any) -> str:
    """A row part's text as a user sees it. Rows are ``content-visibility: auto``: off screen
    (the notebook scrolled on to a running cell) Chromium skips their contents, and innerText
    reads "" — so scroll it into view first."""
    locator.scroll_into_view_if_needed()
    return str(locator.inner_text())


def expect_row(lab: LabPage, sid: str, state: str, within: str = ".jp-Notebook") -> None:
    """The row's dot (its state class) and its text label both say ``state``."""
    lab.wait_state(sid, state, within=within)
    status = seen_text(lab.row(sid, within).locator(".pmux-status"))
    assert status.startswith(LABEL[state]), (state, status)


def bell_count(lab: LabPage, within: str = ".jp-Notebook") -> int:
    return int(lab.root(within).locator(".pmux-bell-count").inner_text())


def wait_bell(lab: LabPage, n: int, within: str = ".jp-Notebook") -> None:
    lab.page.wait_for_function(
        """([within, n]) => {
          const el = document.querySelector(within + ' .pmux-root .pmux-bell-count');
          return !!el && el.textContent === String(n);
        }""",
        arg=[within, n],
        timeout=20_000,
    )


def wait_title_prefix(lab: LabPage, n: int) -> None:
    """The tab title starts with ``(n) `` (no prefix at all for 0)."""
    lab.page.wait_for_function(
        "(n) => n > 0 ? document.title.startsWith(`(${n}) `)"
        " : !/^\\(\\d+\\) /.test(document.title)",
        arg=n,
        timeout=20_000,
    )


# ------------------------------------------------------------------------ live states


def test_states_bell_and_title_follow_real_hooks(lab: LabPage, workspace: Workspace) -> None:
    """busy → needs-input → busy → review, each shown by the row's dot AND its text label;
    the bell counts needs-input + review; the tab title carries the same ``(N)``."""
    shown(lab, workspace, SHOW)
    assert bell_count(lab) == 0

    fire(workspace, "SessionStart", source="startup", model="claude-sonnet-4-5-20250929")
    expect_row(lab, SID, "idle")
    assert seen_text(lab.row(SID).locator(".pmux-name")) == "acme-api"

    fire(workspace, "UserPromptSubmit", prompt="the retry helper hammers the gateway: back off")
    expect_row(lab, SID, "busy")
    bash = {"command": "pytest -q tests/test_retry.py", "description": "Run the retry tests"}
    fire(workspace, "PreToolUse", tool_name="Bash", tool_input=bash, tool_use_id="toolu_01")
    lab.page.wait_for_function(
        "(sid) => (document.querySelector(`.pmux-row[data-session-id='${sid}'] .pmux-lines`)"
        " || {}).textContent?.includes('pytest -q tests/test_retry.py')",
        arg=SID,
    )
    wait_title_prefix(lab, 0)

    fire(workspace, "PermissionRequest", tool_name="Bash", tool_input=bash)
    expect_row(lab, SID, "needs-input")
    wait_bell(lab, 1)
    wait_title_prefix(lab, 1)
    # A needs-input row moves to the pinned "Needs you" block, saying what it asks.
    group = lab.root().locator('section.pmux-group[data-group="Needs you"]')
    assert group.locator(f'li[data-session-id="{SID}"]').count() == 1
    line = seen_text(lab.row(SID).locator(".pmux-primary"))
    assert line.strip() == "asks to run: pytest -q tests/test_retry.py", line

    fire(
        workspace,
        "PostToolUse",
        tool_name="Bash",
        tool_input=bash,
        tool_response={"stdout": "4 passed", "stderr": "", "interrupted": False},
        tool_use_id="toolu_01",
    )
    expect_row(lab, SID, "busy")
    wait_bell(lab, 0)
    wait_title_prefix(lab, 0)

    answer = "Done: the retry helper backs off exponentially (capped at 5 s) and the tests pass."
    fire(workspace, "Stop", stop_hook_active=False, last_assistant_message=answer)
    expect_row(lab, SID, "review")
    assert answer in seen_text(lab.row(SID).locator(".pmux-lines"))
    wait_bell(lab, 1)
    wait_title_prefix(lab, 1)

    # A second session needing input: the count is the fleet's, not one session's.
    fire(workspace, "SessionStart", OTHER, "/home/dev/projects/web-app", source="startup")
    fire(workspace, "UserPromptSubmit", OTHER, "/home/dev/projects/web-app", prompt="deploy")
    fire(
        workspace,
        "Notification",
        OTHER,
        "/home/dev/projects/web-app",
        message="Claude needs your permission to use Bash",
        notification_type="permission_prompt",
    )
    expect_row(lab, OTHER, "needs-input")
    wait_bell(lab, 2)
    wait_title_prefix(lab, 2)
    # Both wait for you: the pinned "Needs you" block holds as many rows as the bell counts,
    # the needs-input one above the review one (one meaning of "need you", issue 30).
    order = (
        lab.root()
        .locator("section.pmux-group")
        .evaluate_all("(els) => els.map((e) => e.dataset.group)")
    )
    assert order == ["Needs you"], order
    ids = group.locator("li.pmux-row").evaluate_all("(els) => els.map((e) => e.dataset.sessionId)")
    assert ids == [OTHER, SID], ids
    assert group.locator(".pmux-group-summary").inner_text() == "2 sessions"
    lab.screenshot("states-bell-title")


def test_show_renders_the_widget_once(lab: LabPage, workspace: Workspace) -> None:
    """``pmux_widget.show()`` as a cell's last line shows ONE widget."""
    shown(lab, workspace, SHOW)
    outputs = lab.cell(0).locator(".pmux-root")
    assert outputs.count() == 1


def test_a_widget_shown_over_an_existing_fleet_shows_it(lab: LabPage, workspace: Workspace) -> None:
    """Hooks fired while no hub ran are spooled; ``show()`` starts the hub, which replays them:
    the new widget shows that fleet at once (no further change needed), and a page reload
    shows the current one."""
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "UserPromptSubmit", prompt="index the docs")
    fire(workspace, "Stop", last_assistant_message="Indexed 120 pages.")
    assert list(workspace.pmux.spool_dir.iterdir()), "no hub ran: the hooks must be spooled"
    path = workspace.notebook("status.ipynb", SHOW)
    lab.open_notebook(path)
    lab.run_cell(0)
    known = {s["session_id"]: s["state"] for s in workspace.sessions()["sessions"]}
    assert known == {SID: "review"}, known
    expect_row(lab, SID, "review")
    wait_bell(lab, 1)
    fire(workspace, "UserPromptSubmit", prompt="and the API reference")
    expect_row(lab, SID, "busy")
    # Saved, then reloaded: the views are re-created from the live kernel's CURRENT snapshot
    # (updated in place by every patch, never synced as a whole).
    lab.command("docmanager:save")
    lab.page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    lab.page.reload()
    lab.wait_kernel_idle()
    expect_row(lab, SID, "busy")
    wait_bell(lab, 0)


# ------------------------------------------------------------------------ the sheet


def test_dismiss_from_the_sheet(lab: LabPage, workspace: Workspace) -> None:
    """Bell → sheet → dismiss: the kernel (idle) applies it and the row becomes idle."""
    shown(lab, workspace, SHOW)
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "UserPromptSubmit", prompt="summarise the incident")
    fire(workspace, "Stop", last_assistant_message="The outage came from an expired cert.")
    expect_row(lab, SID, "review")
    wait_bell(lab, 1)

    root = lab.root()
    sheet = root.locator(".pmux-sheet")
    assert sheet.is_hidden()
    root.locator(".pmux-bell").click()
    sheet.wait_for(state="visible")
    assert root.locator(".pmux-bell").get_attribute("aria-expanded") == "true"
    item = sheet.locator(f'li.pmux-sheet-item[data-session-id="{SID}"]')
    assert "expired cert" in item.inner_text()
    lab.screenshot("sheet-open")
    item.locator("button.pmux-dismiss").click()

    expect_row(lab, SID, "idle")
    wait_bell(lab, 0)
    wait_title_prefix(lab, 0)
    sheet.locator(".pmux-sheet-empty").wait_for(state="visible")
    assert item.count() == 0


# ------------------------------------------------------------------------ sidebar


def test_sidebar_in_notebook_7_shows_the_widget_in_the_cell(
    lab: LabPage, workspace: Workspace
) -> None:
    """Notebook 7 has no sidecar area: ``sidebar()`` shows the whole widget in the cell, with a
    note saying why (the same server serves Notebook 7 under /notebooks/)."""
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 is not installed")
    path = workspace.notebook("nb7.ipynb", SIDEBAR)
    page = lab.page
    page.goto(lab.server.url(f"notebooks/{path}"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    assert page.evaluate("!document.querySelector('.jp-LabShell')")  # really Notebook 7
    page.wait_for_selector(
        ".jp-Notebook-ExecutionIndicator[data-status='idle']", state="attached", timeout=90_000
    )
    root = page.locator(".jp-Cell .pmux-root").first

    def run_first_cell() -> bool:
        # Notebook 7 may still be wiring the cell up when the kernel reports idle: a Shift+Enter
        # pressed then is lost, so press again until the prompt shows the run was taken.
        page.click(".jp-Cell .jp-InputArea-editor")
        page.keyboard.press("Control+Enter")
        prompt = page.locator(".jp-Cell .jp-InputPrompt").first
        try:
            page.wait_for_function(
                "(el) => el.textContent.trim() !== '[ ]:'",
                arg=prompt.element_handle(),
                timeout=5_000,
            )
        except Exception:
            return False
        return True

    assert any(run_first_cell() for _ in range(6)), "Notebook 7 never ran the cell"
    root.wait_for(state="visible", timeout=60_000)
    assert "pmux-root--stub" not in (root.get_attribute("class") or "")
    assert "cannot dock" in root.locator(".pmux-note").inner_text()
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "Stop", last_assistant_message="Docs rebuilt.")
    page.wait_for_function(
        "(sid) => { const row = document.querySelector(`.pmux-row[data-session-id='${sid}']`);"
        " return !!row && row.className.includes('review'); }",
        arg=SID,
        timeout=30_000,
    )
    lab.screenshot("notebook7-sidebar-fallback")


def test_sidebar_docks_the_widget_in_the_right_area(lab: LabPage, workspace: Workspace) -> None:
    """``pmux_widget.sidebar()`` puts a live widget in JupyterLab's right area."""
    lab.open_notebook(workspace.notebook("sidebar.ipynb", SIDEBAR))
    lab.run_cell(0)
    docked = lab.root(RIGHT)
    docked.wait_for(state="visible")
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "UserPromptSubmit", prompt="refactor the client")
    expect_row(lab, SID, "busy", within=RIGHT)
    # The cell itself keeps only a note pointing to the sidebar, not a second list.
    stub = lab.cell(0).locator(".pmux-root--stub")
    stub.wait_for(state="visible")
    assert "sidebar" in stub.locator(".pmux-note").inner_text().lower()
    assert stub.locator(".pmux-list").is_hidden() and stub.locator(".pmux-header").is_hidden()
    assert lab.cell(0).locator(".pmux-row:visible").count() == 0
    assert lab.page.locator(f"{RIGHT} .pmux-root").count() == 1

    # Two widget models now (the docked one and the stand-in), each with its own copy of the
    # front-end module: the attention count in the tab title must still be one, and follow.
    bash = {"command": "make deploy"}
    fire(workspace, "PermissionRequest", tool_name="Bash", tool_input=bash)
    expect_row(lab, SID, "needs-input", within=RIGHT)
    wait_title_prefix(lab, 1)
    fire(workspace, "SessionStart", OTHER, source="startup")
    fire(workspace, "Stop", OTHER, last_assistant_message="Deployed.")
    wait_bell(lab, 2, within=RIGHT)
    wait_title_prefix(lab, 2)
    fire(workspace, "PostToolUse", tool_name="Bash", tool_input=bash, tool_response={})
    wait_bell(lab, 1, within=RIGHT)
    wait_title_prefix(lab, 1)
    lab.screenshot("sidebar")


# ------------------------------------------------------------------------ theme


def _colors(lab: LabPage) -> dict[str, str]:
    return lab.root().evaluate(
        """(root) => {
          const row = root.querySelector('.pmux-row .pmux-name') || root;
          const s = getComputedStyle(root);
          return {bg: s.backgroundColor, fg: s.color, name: getComputedStyle(row).color};
        }"""
    )


def test_dark_theme(lab: LabPage, workspace: Workspace) -> None:
    """Switching JupyterLab to its dark theme restyles the widget (JupyterLab CSS variables)."""
    shown(lab, workspace, SHOW)
    fire(workspace, "SessionStart", source="startup")
    fire(workspace, "UserPromptSubmit", prompt="check the logs")
    expect_row(lab, SID, "busy")
    light = _colors(lab)
    lab.screenshot("theme-light")
    try:
        lab.set_theme(DARK)
        dark = _colors(lab)
        lab.screenshot("theme-dark")
    finally:
        lab.set_theme(LIGHT)
    assert dark["bg"] != light["bg"], (light, dark)
    assert dark["fg"] != light["fg"], (light, dark)
    assert _luminance(dark["bg"]) < _luminance(light["bg"]), (light, dark)
    assert _luminance(dark["name"]) > _luminance(dark["bg"]), dark


def _luminance(css: str) -> float:
    numbers = [float(x) for x in re.findall(r"[\d.]+", css)[:3]]
    r, g, b = [*numbers, 0, 0, 0][:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


# ------------------------------------------------------------------------ blocking cell


def test_updates_arrive_while_a_cell_blocks(lab: LabPage, workspace: Workspace) -> None:
    """A cell blocking the kernel's main thread does not stop the hub thread → iopub path."""
    # (Interrupted once checked: the sleep only has to outlast the checks on a loaded machine.)
    shown(lab, workspace, SHOW, "import time; time.sleep(30)")
    fire(workspace, "SessionStart", source="startup")
    expect_row(lab, SID, "idle")

    lab.run_cell(1, wait=False)
    lab.page.wait_for_function(
        "() => (document.querySelectorAll('.jp-Notebook .jp-Cell')[1]"
        " .querySelector('.jp-InputPrompt') || {}).textContent?.includes('*')"
    )
    lab.page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'busy'"
    )
    blocked_at = time.monotonic()
    latencies = []
    for event, state, fields in [
        ("UserPromptSubmit", "busy", {"prompt": "while you sleep"}),
        (
            "PermissionRequest",
            "needs-input",
            {"tool_name": "Bash", "tool_input": {"command": "ls"}},
        ),
        ("Stop", "review", {"last_assistant_message": "Listed."}),
    ]:
        start = time.monotonic()
        fire(workspace, event, **fields)
        expect_row(lab, SID, state)
        latencies.append(time.monotonic() - start)
    # All of it happened while the cell was still running.
    assert lab.kernel_status() == "busy"
    assert time.monotonic() - blocked_at < 30
    assert max(latencies) < 5, latencies
    lab.screenshot("blocking-cell")

    # A dismiss clicked meanwhile waits (browser → kernel messages are handled when the kernel
    # is idle): the button says so, and the row goes idle once the cell is interrupted.
    button = lab.row(SID).locator("button.pmux-dismiss")
    button.click()
    assert button.get_attribute("aria-disabled") == "true"
    lab.command("notebook:interrupt-kernel")
    lab.wait_kernel_idle()
    expect_row(lab, SID, "idle")


# ------------------------------------------------------------------------ traffic (P9)


def _starts(n: int, prefix: str) -> list[dict[str, Any]]:
    return [
        hook_payload(
            "SessionStart",
            f"{prefix}{i:04d}-0000-4000-8000-000000000000",
            f"/home/dev/fleet/service-{i:03d}",
            source="startup",
        )
        for i in range(n)
    ]


def measure_one_change(lab: LabPage, ws: Workspace, sid: str) -> list[Frame]:
    """The widget's messages the page receives for ONE session's realistic change (a new prompt
    on a session that has a tool summary and an answer: its row is near its largest)."""
    cwd = "/home/dev/fleet/measured-service"
    long_prompt = "rewrite the retry helper so that it backs off exponentially " * 6
    answer = "I changed the retry helper to back off exponentially with jitter; tests pass. " * 4
    bash = {"command": "pytest -q tests/test_retry.py -k backoff", "description": "Run tests"}
    with lab.recording() as frames:
        ws.post(
            [
                hook_payload("SessionStart", sid, cwd, source="startup", model="claude-opus-4-1"),
                hook_payload("UserPromptSubmit", sid, cwd, prompt=long_prompt),
                hook_payload("PreToolUse", sid, cwd, tool_name="Bash", tool_input=bash),
                hook_payload("Stop", sid, cwd, last_assistant_message=answer),
            ]
        )
        # The review notification is the last message of this set-up: wait for it to be in.
        lab.wait_frame(
            lambda f: (
                f.custom.get("type") == "notify" and f.custom["notification"]["session_id"] == sid
            )
        )
        lab.wait_state(sid, "review")
        start = len(frames)
        fire(ws, "UserPromptSubmit", sid, cwd, prompt=long_prompt)
        lab.wait_state(sid, "busy")
        lab.wait_frame(lambda f: f.custom.get("type") == "patch", since=start)
        measured = [f for f in frames[start:] if f.msg_type == "comm_msg"]
    return measured


def _row_count(lab: LabPage) -> int:
    return lab.root().locator("li.pmux-row").count()


def test_one_change_costs_the_same_bytes_with_10_and_500_sessions(
    lab: LabPage, workspace: Workspace
) -> None:
    """P9: one session's change sends that session's row only: ≤ 2 KB on the websocket, the
    same with 10 and with 500 sessions known (no full-fleet sync)."""
    shown(lab, workspace, SHOW)
    port = workspace.hub_port()
    workspace.post(_starts(9, "aaaaaaaa"), port)
    at_10 = measure_one_change(lab, workspace, "bbbbbbbb-0000-4000-8000-000000000010")
    assert _row_count(lab) == 10

    workspace.post(_starts(489, "cccccccc"), port)
    at_500 = measure_one_change(lab, workspace, "dddddddd-0000-4000-8000-000000000500")
    assert _row_count(lab) == 500

    report = []
    for label, frames in (("10 sessions", at_10), ("500 sessions", at_500)):
        kinds = [(f.data or {}).get("method") for f in frames]
        # One custom patch; never a trait update (that would be the whole snapshot).
        assert kinds == ["custom"], (label, kinds, [f.size for f in frames])
        content = (frames[0].data or {}).get("content", {})
        assert content.get("type") == "patch" and len(content.get("upsert", [])) == 1, content
        assert frames[0].size <= 2048, (label, frames[0].size)
        report.append(f"{label}: {frames[0].size} B frame, {frames[0].content_size} B content")
    difference = abs(at_500[0].size - at_10[0].size)
    assert difference <= 32, report
    OUTPUT.mkdir(parents=True, exist_ok=True)
    (OUTPUT / "p9-bytes.txt").write_text("\n".join(report) + "\n")
    print("P9:", "; ".join(report))


# ------------------------------------------------------------------------ README images

#: A realistic fleet: session id, cwd, seconds in its state, what the transcript's last answer
#: says, its token usage, and the hooks it sent after SessionStart.
FLEET: list[tuple[str, str, int, str, dict[str, int], list[tuple[str, dict[str, Any]]]]] = [
    (
        "0a1b2c3d-0000-4000-8000-000000000001",
        "/home/dev/projects/acme-api",
        42,
        "The backoff is in; running the retry tests to check the cap.",
        {"input": 1_840, "output": 6_210, "cache_read": 132_400, "cache_creation": 21_300},
        [
            ("UserPromptSubmit", {"prompt": "make the retry helper back off exponentially"}),
            (
                "PreToolUse",
                {
                    "tool_name": "Bash",
                    "tool_input": {"command": "pytest -q tests/test_retry.py"},
                    "tool_use_id": "toolu_01A",
                },
            ),
        ],
    ),
    (
        "0a1b2c3d-0000-4000-8000-000000000002",
        "/home/dev/projects/web-dashboard",
        25,
        "The migration is ready; it needs to run against staging.",
        {"input": 920, "output": 2_480, "cache_read": 64_100, "cache_creation": 9_800},
        [
            ("UserPromptSubmit", {"prompt": "run the staging migration"}),
            (
                "PermissionRequest",
                {
                    "tool_name": "Bash",
                    "tool_input": {"command": "npm run migrate -- --env staging"},
                },
            ),
        ],
    ),
    (
        "0a1b2c3d-0000-4000-8000-000000000003",
        "/home/dev/projects/docs-site",
        190,
        "Checking the guide's links.",
        {"input": 610, "output": 3_950, "cache_read": 98_700, "cache_creation": 12_100},
        [
            ("UserPromptSubmit", {"prompt": "fix the broken links in the guide"}),
            (
                "Stop",
                {
                    "last_assistant_message": "Fixed 14 broken links (moved API pages) and "
                    "added a link check to CI so they stay fixed.",
                },
            ),
        ],
    ),
    (
        "0a1b2c3d-0000-4000-8000-000000000004",
        "/home/dev/projects/data-pipeline",
        480,
        "Backfilling the partitions for 2026-11-21 to 2026-11-27.",
        {"input": 1_200, "output": 840, "cache_read": 41_000, "cache_creation": 5_500},
        [
            ("UserPromptSubmit", {"prompt": "backfill last week's partitions"}),
            ("StopFailure", {"error": "rate_limit", "error_details": "429: rate limit reached"}),
        ],
    ),
    (
        "0a1b2c3d-0000-4000-8000-000000000005",
        "/home/dev/projects/ml-training",
        130,
        "Two agents are sweeping the schedules; summarising as they finish.",
        {"input": 3_100, "output": 14_800, "cache_read": 122_000, "cache_creation": 48_000},
        [
            ("UserPromptSubmit", {"prompt": "compare the three LR schedules"}),
            ("SubagentStart", {"agent_id": "agent-1", "agent_type": "general-purpose"}),
            ("SubagentStart", {"agent_id": "agent-2", "agent_type": "general-purpose"}),
            ("PreCompact", {"trigger": "auto", "custom_instructions": None}),
        ],
    ),
    (
        "0a1b2c3d-0000-4000-8000-000000000006",
        "/home/dev/projects/infra",
        1_100,
        "Terraform plan is clean: no changes.",
        {"input": 300, "output": 520, "cache_read": 12_000, "cache_creation": 2_000},
        [],
    ),
]
FLEET_STATES = {
    "0a1b2c3d-0000-4000-8000-000000000001": "busy",
    "0a1b2c3d-0000-4000-8000-000000000002": "needs-input",
    "0a1b2c3d-0000-4000-8000-000000000003": "review",
    "0a1b2c3d-0000-4000-8000-000000000004": "review",
    "0a1b2c3d-0000-4000-8000-000000000005": "busy",
    "0a1b2c3d-0000-4000-8000-000000000006": "idle",
}
REPORT = [
    "#md\n## Retry latency, last 5 days\n\nWhile the sessions on the right work on the fix.",
    (
        "latency_ms = {'mon': 212, 'tue': 198, 'wed': 341, 'thu': 187, 'fri': 176}\n"
        "worst = max(latency_ms, key=latency_ms.get)\n"
        "print(f'p99 was worst on {worst}: {latency_ms[worst]} ms')"
    ),
    SIDEBAR,
]


def post_fleet(ws: Workspace) -> None:
    """The fleet's hooks, each session's sent as long ago as its time in state (the hub orders
    signals by ``X-Pmux-Sent``), so the ages read like a real afternoon."""
    now = int(time.time() * 1000)
    for sid, cwd, age, text, usage, events in FLEET:
        transcript = ws.write_transcript(sid, cwd, usage, text)
        start = hook_payload(
            "SessionStart",
            sid,
            cwd,
            source="startup",
            model="claude-sonnet-4-5-20250929",
            transcript_path=transcript,
        )
        hooks = [start] + [
            hook_payload(event, sid, cwd, transcript_path=transcript, **fields)
            for event, fields in events
        ]
        ends = now - age * 1000
        ws.post(hooks, sent_ms=[ends - (len(hooks) - 1 - i) * 3000 for i in range(len(hooks))])


def widen_right_area(lab: LabPage, pixels: int) -> None:
    """Drag the handle between the main area and the right sidebar to the left."""
    box = lab.page.evaluate(
        """() => {
          const right = document.querySelector('#jp-right-stack').getBoundingClientRect();
          const sel = '#jp-main-split-panel > .lm-SplitPanel-handle';
          const handles = [...document.querySelectorAll(sel)]
            .map((h) => h.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
          handles.sort((a, b) => Math.abs(a.right - right.left) - Math.abs(b.right - right.left));
          const h = handles[0];
          return h ? {x: h.left + h.width / 2, y: h.top + h.height / 2} : null;
        }"""
    )
    if box is None:
        return
    mouse = lab.page.mouse
    mouse.move(box["x"], box["y"])
    mouse.down()
    mouse.move(box["x"] - pixels, box["y"], steps=5)
    mouse.up()


def _clip_to_first_output(lab: LabPage, margin: int = 0) -> dict[str, float]:
    """The page from the top to just below the first cell's first output."""
    bottom = (
        lab.cell(0)
        .locator(".jp-OutputArea-child")
        .first.evaluate("(e) => e.getBoundingClientRect().bottom")
    )
    size = lab.page.viewport_size or {"width": 1280, "height": 800}
    return {"x": 0, "y": 0, "width": size["width"], "height": min(size["height"], bottom + margin)}


def test_readme_screenshots(lab: LabPage, lab_server: Any) -> None:
    """The README's four images, over a realistic fleet (busy with a tool, needs-input with a
    permission, review with a snippet, an error, compacting with sub-agents, idle): the widget
    in a notebook, and docked in the sidebar next to other work, light and dark. Written to
    test-output/browser/; with PMUX_UPDATE_DOC_IMAGES=1 also to docs/images/."""
    lab.page.set_viewport_size({"width": 1200, "height": 820})
    shots = {}

    # The widget in a notebook.
    ws = lab_server.workspace("readme-notebook")
    lab.open_notebook(ws.notebook("sessions.ipynb", SHOW), workspace="readme-notebook")
    lab.command("application:toggle-left-area")
    lab.run_cell(0)
    lab.root().wait_for()
    post_fleet(ws)
    for sid, state in FLEET_STATES.items():
        lab.wait_state(sid, state)
    lab.page.wait_for_function(
        "() => document.querySelector('.jp-Notebook .pmux-root .pmux-badge--compacting')"
        " && document.querySelector('.jp-Notebook .pmux-root .pmux-error')"
        " && document.querySelector('.jp-Notebook .pmux-root').textContent.includes('ctx')"
    )
    lab.command("notebook:enter-command-mode")
    shots["notebook-light"] = lab.screenshot(
        "readme-notebook-light", clip=_clip_to_first_output(lab)
    )
    try:
        lab.set_theme(DARK)
        shots["notebook-dark"] = lab.screenshot(
            "readme-notebook-dark", clip=_clip_to_first_output(lab)
        )
    finally:
        lab.set_theme(LIGHT)
    lab_server.shutdown_kernels()

    # Docked in the sidebar, next to other work.
    ws = lab_server.workspace("readme-sidebar")
    lab.open_notebook(ws.notebook("report.ipynb", *REPORT), workspace="readme-sidebar")
    lab.command("application:toggle-left-area")
    lab.run_all()
    lab.root(RIGHT).wait_for(state="visible")
    post_fleet(ws)
    for sid, state in FLEET_STATES.items():
        lab.wait_state(sid, state, within=RIGHT)
    lab.page.wait_for_function(
        "(sel) => document.querySelector(sel + ' .pmux-root').textContent.includes('ctx')",
        arg=RIGHT,
    )
    widen_right_area(lab, 150)
    lab.command("notebook:enter-command-mode")
    shots["sidebar-light"] = lab.screenshot("readme-sidebar-light")
    try:
        lab.set_theme(DARK)
        shots["sidebar-dark"] = lab.screenshot("readme-sidebar-dark")
    finally:
        lab.set_theme(LIGHT)

    for name, shot in shots.items():
        assert shot.stat().st_size < 200_000, (name, shot.stat().st_size)
    if os.environ.get("PMUX_UPDATE_DOC_IMAGES") == "1":
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        for name, shot in shots.items():
            shutil.copyfile(shot, DOC_IMAGES / f"{name}.png")
