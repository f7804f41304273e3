"""P11: the real CLI's permission dialog → the amber dot in the browser, on each pinned CLI.

A real JupyterLab (``tests/browser/conftest.py``'s :class:`LabServer`) shows the widget from a
kernel whose hub watches a workspace's Claude config dir, with our hooks installed there. The
real Claude Code CLI (each pinned version, manual permission mode) runs in a private tmux
server against the scripted model, with that config dir and pmux home. Each sample: a prompt
whose answer asks to run a command; a sampler thread reads the pane (``capture-pane``, every
few ms) and notes ``time.time()`` when the dialog is first drawn; a MutationObserver in the
page notes ``Date.now()`` when the session's row turns needs-input and when that frame is
painted (the page↔Python clock offset is measured and subtracted). P11 = painted − drawn:
negative when the dot is painted before the terminal shows the dialog. Budget: p95 ≤ 0 ms.
The dialog is then answered "No" and the next sample starts once the session is idle.

Each version is measured twice: through the widget (a kernel's hub, the comm) and through the
JupyterLab extension (the Jupyter server's own hub, the panel's websocket; no kernel), each
row's state read in the extension's side panel.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._util import Row, log, percentile, rows_or_failure, run_alone
from benchmarks.bench_browser import _OBSERVE, _clock_offset_ms
from pmux_widget.demo.claude_cli import TmuxClaude
from pmux_widget.demo.claude_env import (
    CLI_VERSIONS,
    ClaudeEnv,
    CliUnavailable,
    ensure_cli,
)
from pmux_widget.demo.scripted_model import ScriptedModel
from tests.browser.conftest import (
    LabPage,
    LabServer,
    LabUnavailable,
    Workspace,
    check_available,
    launch_chromium,
)

__all__ = ["main"]

P11_P95_MS = 0.0
PANEL = "#pmux-widget-panel"
API_KEY = "sk-ant-api03-" + "0" * 32 + "pmuxbenchAA"


class DialogClock:
    """Samples a pane (``screen``) on a thread; ``drawn`` holds each time (``time.time()``
    ms) the ``dialog`` first showed after it was not shown."""

    def __init__(self, screen: Callable[[], str], dialog: re.Pattern[str]) -> None:
        self.screen = screen
        self.dialog = dialog
        self.drawn: list[float] = []
        self._was_shown = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            shown = bool(self.dialog.search(self.screen()))
            if shown and not self._was_shown:
                self.drawn.append(time.time() * 1000)
            self._was_shown = shown
            time.sleep(0.003)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)


def painted_minus_drawn(
    lab: LabPage, clock: DialogClock, offset: float, ask: Callable[[], None]
) -> float:
    """One sample: ``ask`` makes the CLI open its dialog; ms from the dialog drawn in the
    pane to the row's needs-input frame painted in the page (the page's clock offset
    subtracted: negative when the dot came first)."""
    seen_before = lab.page.evaluate("() => window.__pmuxSeen.length")
    drawn_before = len(clock.drawn)
    ask()
    lab.page.wait_for_function(
        "([n]) => window.__pmuxSeen.slice(n).some("
        "(e) => e.state === 'needs-input' && e.painted !== null)",
        arg=[seen_before],
        timeout=60_000,
        polling="raf",
    )
    deadline = time.monotonic() + 30
    while len(clock.drawn) == drawn_before and time.monotonic() < deadline:
        time.sleep(0.01)
    if len(clock.drawn) == drawn_before:
        raise RuntimeError("the dialog never showed")
    entries = lab.page.evaluate("(n) => window.__pmuxSeen.slice(n)", seen_before)
    painted = next(e["painted"] for e in entries if e["state"] == "needs-input")
    return float(painted - offset - clock.drawn[drawn_before])


def _env_for(ws: Workspace, model: ScriptedModel, version: str, root: Path) -> ClaudeEnv:
    """A sealed CLI environment whose config dir and pmux home are the workspace's (the
    kernel's hub watches them; our hooks are installed there)."""
    # One key for every version: the first run seeds .claude.json (with the key approved)
    env = ClaudeEnv(model.base_url, root=root, version=version, api_key=API_KEY)
    seeded = json.loads(env.settings_file.read_text()) if env.settings_file.exists() else {}
    env.config_dir = ws.claude
    env.extra_env["CLAUDE_CONFIG_DIR"] = str(ws.claude)
    env.extra_env["PMUX_WIDGET_HOME"] = str(ws.pmux.root)
    env._seed_state()
    if seeded.get("permissions"):  # manual mode on the newest CLI (classic dialogs)
        env.merge_settings({"permissions": seeded["permissions"]})
    env.trust(env.cwd)
    return env


def _run_version(
    lab: LabPage,
    ws: Workspace,
    model: ScriptedModel,
    version: str,
    samples: int,
    root: Path,
    within: str = ".jp-Notebook",
) -> list[float]:
    cli = ensure_cli(version)
    env = _env_for(ws, model, version, root / version)
    results: list[float] = []
    with TmuxClaude(env, cli) as tc:
        sid = None
        deadline = time.monotonic() + 30
        while sid is None and time.monotonic() < deadline:
            sid = tc.session_id()
            time.sleep(0.05)
        if sid is None:
            raise RuntimeError(f"{version}: no PID file")
        lab.page.wait_for_selector(f'{within} li.pmux-row[data-session-id="{sid}"]', timeout=30_000)
        lab.page.evaluate(_OBSERVE, [sid, within])
        offset = _clock_offset_ms(lab.page)
        clock = DialogClock(tc.screen, tc.DIALOG)
        try:
            for i in range(samples):
                ask = functools.partial(tc.type_prompt, f"please run the command (sample {i})")
                results.append(painted_minus_drawn(lab, clock, offset, ask))
                tc.deny()
                tc.wait_status("idle", 30)
                log(f"P11 {version} sample {i + 1}/{samples}: {results[-1]:.0f} ms")
        finally:
            clock.stop()
    return results


def _measure(quick: bool = False) -> list[Row]:
    samples = 3 if quick else 12
    try:
        check_available()
        from playwright.sync_api import sync_playwright

        for version in CLI_VERSIONS:
            ensure_cli(version)
    except (LabUnavailable, CliUnavailable) as exc:
        return [("P11 dialog → amber dot (browser)", f"unavailable: {exc}", "≤ 0 ms", False)]
    rows: list[Row] = []
    results: dict[str, list[float]] = {}
    with sync_playwright() as playwright, ScriptedModel() as model, LabServer() as server:
        browser = launch_chromium(playwright)
        try:
            for version in CLI_VERSIONS:
                # a workspace (Claude config dir, pmux home, kernel) and a page per version:
                # each CLI version keeps its own .claude.json
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                try:
                    lab = LabPage(server, context.new_page())
                    ws = server.workspace(f"p11-{version}")
                    notebook = ws.notebook("p11.ipynb", "import pmux_widget; pmux_widget.show()")
                    lab.open_notebook(notebook)
                    lab.run_cell(0)
                    lab.root().wait_for()
                    results[version] = _run_version(
                        lab, ws, model, version, samples, ws.dir / "cli-env"
                    )
                finally:
                    context.close()
            server.shutdown_kernels()
            for version in CLI_VERSIONS:  # the same CLIs through the extension's panel
                results[f"{version} panel"] = _panel(browser, model, version, samples)
        finally:
            server.shutdown_kernels()
            browser.close()
    for version, values in results.items():
        p95 = percentile(values, 95)
        rows.append(
            (
                f"P11 {version}: dialog drawn → amber dot painted, p95 ms (n={len(values)})"
                if "panel" in version
                else f"P11 {version} widget: dialog drawn → amber dot painted, p95 ms "
                f"(n={len(values)})",
                f"{p95:.1f}",
                f"≤ {P11_P95_MS:.0f} ms",
                p95 <= P11_P95_MS,
            )
        )
        rows.append(
            (
                f"P11 {version}: min / median / max ms",
                f"{min(values):.0f} / {sorted(values)[len(values) // 2]:.0f} / {max(values):.0f}",
                "info",
                True,
            )
        )
    return rows


def _panel(browser: Any, model: ScriptedModel, version: str, samples: int) -> list[float]:
    """P11 through the JupyterLab extension: the server's hub over the workspace's homes,
    the row read in the side panel, no kernel."""
    server = LabServer(extension=True)
    ws = Workspace(server, f"p11-panel-{version}")
    server.extra_env.update(PMUX_WIDGET_HOME=str(ws.pmux.root), CLAUDE_CONFIG_DIR=str(ws.claude))
    with server:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            lab = LabPage(server, context.new_page())
            lab.page.goto(server.url("lab"))
            lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=90_000)
            lab.command("pmux-widget:show-panel")
            return _run_version(lab, ws, model, version, samples, ws.dir / "cli-env", PANEL)
        finally:
            context.close()


def main(quick: bool = False) -> list[Row]:
    return rows_or_failure(_measure, quick, "P11 dialog → amber dot (browser)", "≤ 0 ms")


if __name__ == "__main__":
    run_alone(main)
