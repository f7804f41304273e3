"""P11 for Codex (issue 36's Measures): the real Codex TUI's approval → the amber dot in the
browser, as :mod:`benchmarks.bench_dialog` measures it for Claude Code.

A real JupyterLab shows the widget from a kernel whose hub uses a workspace's pmux home; the
real Codex TUI (the pin) runs in a private tmux server against the scripted Responses API,
its sealed home carrying our hooks (``install_codex``, into that pmux home). Each sample: a
prompt whose answer asks to run an escalated command; a sampler thread reads the pane
(``capture-pane``, every few ms) and notes ``time.time()`` when the approval ("Would you like
to run the following command?") is first drawn; a MutationObserver in the page notes when the
session's row turns needs-input and when that frame is painted (the page↔Python clock offset
is measured and subtracted). P11 = painted − drawn: negative when the dot is painted before
the terminal shows the approval. Budget: p95 ≤ 0 ms. The approval is then declined (Esc) and
the next sample starts once the row is idle.

Measured twice, as Claude's: through the widget (a kernel's hub, the comm) and through the
JupyterLab extension (the Jupyter server's own hub, the side panel's websocket; no kernel).

``python -m benchmarks.bench_codex_dialog [--quick]``.
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import Row, log, percentile, rows_or_failure, run_alone, wait_until
from benchmarks.bench_browser import _OBSERVE, _clock_offset_ms
from benchmarks.bench_dialog import P11_P95_MS, PANEL, DialogClock, painted_minus_drawn
from pmux_widget import hooks
from pmux_widget.demo.claude_env import CliUnavailable
from pmux_widget.demo.codex_cli import APPROVAL, TmuxCodex
from pmux_widget.demo.codex_env import CODEX_VERSION, CodexEnv, ensure_codex
from pmux_widget.demo.scripted_responses import ScriptedResponses
from tests.browser.conftest import (
    LabPage,
    LabServer,
    LabUnavailable,
    Workspace,
    check_available,
    launch_chromium,
)

__all__ = ["main"]


def _env_for(ws: Workspace, server: ScriptedResponses, root: Path) -> CodexEnv:
    """A sealed Codex home whose hooks post into the workspace's pmux home."""
    env = CodexEnv(server.base_url, root=root)
    hooks.install_codex(env.codex_home, ws.pmux)
    env.extra_env["PMUX_WIDGET_HOME"] = str(ws.pmux.root)
    return env


def _thread_id(env: CodexEnv) -> str | None:
    """The first thread's id: its rollout is ``rollout-<local time>-<thread id>.jsonl``."""
    found = env.rollouts()
    return found[0].stem[-36:] if found else None


def _run(
    lab: LabPage,
    ws: Workspace,
    server: ScriptedResponses,
    samples: int,
    root: Path,
    within: str = ".jp-Notebook",
) -> list[float]:
    env = _env_for(ws, server, root)
    results: list[float] = []
    with TmuxCodex(env, ensure_codex(CODEX_VERSION)) as tc:
        tc.type_prompt("hello (the thread opens at the first prompt)")
        sid = wait_until(lambda: _thread_id(env), 60, "the TUI's rollout")
        row = f'{within} li.pmux-row[data-session-id="{sid}"]'
        lab.page.wait_for_selector(row, timeout=60_000)
        lab.wait_state(sid, "review", within, timeout=60)
        lab.page.evaluate(_OBSERVE, [sid, within])
        offset = _clock_offset_ms(lab.page)
        clock = DialogClock(tc.screen, APPROVAL)
        try:
            for i in range(samples):
                ask = functools.partial(tc.type_prompt, f"please SHELL (sample {i})")
                results.append(painted_minus_drawn(lab, clock, offset, ask))
                tc.send_keys("Escape")  # declined: "tell Codex what to do differently"
                lab.wait_state(sid, "idle", within, timeout=30)
                wait_until(lambda: not APPROVAL.search(tc.screen()), 10, "the approval gone")
                log(f"P11 Codex sample {i + 1}/{samples}: {results[-1]:.0f} ms")
        finally:
            clock.stop()
    return results


def _panel(browser: Any, server: ScriptedResponses, samples: int) -> list[float]:
    """Through the JupyterLab extension: the server's hub, the side panel, no kernel."""
    lab_server = LabServer(extension=True)
    ws = Workspace(lab_server, "p11-codex-panel")
    lab_server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws.pmux.root), CLAUDE_CONFIG_DIR=str(ws.claude)
    )
    with lab_server:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            lab = LabPage(lab_server, context.new_page())
            lab.page.goto(lab_server.url("lab"))
            lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=90_000)
            lab.command("pmux-widget:show-panel")
            return _run(lab, ws, server, samples, ws.dir / "codex-env", PANEL)
        finally:
            context.close()


def _measure(quick: bool = False) -> list[Row]:
    samples = 3 if quick else 12
    try:
        check_available()
        from playwright.sync_api import sync_playwright

        ensure_codex(CODEX_VERSION)
    except (LabUnavailable, CliUnavailable) as exc:
        return [("P11 Codex approval → amber dot", f"unavailable: {exc}", "≤ 0 ms", False)]
    results: dict[str, list[float]] = {}
    with sync_playwright() as playwright, ScriptedResponses() as server, LabServer() as lab_server:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            try:
                lab = LabPage(lab_server, context.new_page())
                ws = lab_server.workspace("p11-codex")
                notebook = ws.notebook("p11.ipynb", "import pmux_widget; pmux_widget.show()")
                lab.open_notebook(notebook)
                lab.run_cell(0)
                lab.root().wait_for()
                results["widget"] = _run(lab, ws, server, samples, ws.dir / "codex-env")
            finally:
                context.close()
                lab_server.shutdown_kernels()
            results["panel"] = _panel(browser, server, samples)
        finally:
            lab_server.shutdown_kernels()
            browser.close()
    rows: list[Row] = []
    for where, values in results.items():
        p95 = percentile(values, 95)
        rows += [
            (
                f"P11 Codex {CODEX_VERSION} {where}: approval drawn → amber dot painted, p95 ms "
                f"(n={len(values)})",
                f"{p95:.1f}",
                f"≤ {P11_P95_MS:.0f} ms",
                p95 <= P11_P95_MS,
            ),
            (
                f"P11 Codex {where}: min / median / max ms",
                f"{min(values):.0f} / {sorted(values)[len(values) // 2]:.0f} / {max(values):.0f}",
                "info",
                True,
            ),
        ]
    return rows


def main(quick: bool = False) -> list[Row]:
    return rows_or_failure(_measure, quick, "P11 Codex approval → amber dot", "≤ 0 ms")


if __name__ == "__main__":
    run_alone(main)
