"""P16 — hook script start → a JupyterLab terminal tab's dot painted, p95 ≤ 25 ms.

Run by ``bench_browser.py`` after P15, in the same browser: a real JupyterLab with terminals,
the server extension and this checkout's labextension. A stand-in for Claude Code (a script
named ``claude``: tests/browser/test_lab_terminal_tabs.py) runs in a terminal opened in the
page, so the server extension maps its session to that terminal; then the session is moved
back and forth (PermissionRequest → needs-input, PostToolUse → busy) by the INSTALLED hook
command run as Claude Code runs it, as P4 and P15 do. Each sample runs from ``time.time()``
just before ``Popen`` of the hook to the paint of the terminal tab's new class: a
MutationObserver on the tab bar notes ``Date.now()`` when the tab's ``pmux-state-*`` class
changes, then two animation frames later (the page↔Python clock offset is subtracted).
"""

from __future__ import annotations

import random
import subprocess
import time
from typing import Any

from benchmarks._util import Row, percentile
from tests.browser.conftest import (
    KERNEL_CLAUDE_DIR,
    KERNEL_PMUX_HOME,
    LabPage,
    LabServer,
    hook_payload,
)
from tests.browser.test_lab_terminal_tabs import SID, TAB, new_terminal, stand_in, type_line

__all__ = ["P16_P95_MS", "p16", "p16_rows"]

P16_P95_MS = 25.0
CWD = "/home/dev/projects/latency-probe"

_OBSERVE_TAB = """(sel) => {
  const seen = (window.__pmuxTab = []);
  let last = null;
  const check = () => {
    const tab = document.querySelector(sel);
    const state = tab && [...tab.classList].find((c) => c.startsWith('pmux-state-'));
    if (!state || state === last) return;
    last = state;
    const entry = {state: state.slice(11), mutation: Date.now(), frame: null, painted: null};
    seen.push(entry);
    requestAnimationFrame(() => {
      entry.frame = Date.now();
      requestAnimationFrame(() => { entry.painted = Date.now(); });
    });
  };
  new MutationObserver(check).observe(document.querySelector('#jp-main-dock-panel'),
    {subtree: true, attributes: true, attributeFilter: ['class']});
  check();
  return true;
}"""


def p16(browser: Any, samples: int, clock_offset: Any) -> dict[str, Any]:
    server = LabServer(extension=True, terminals=True)
    ws_dir = server.notebooks / "p16"
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    with server:
        ws = server.workspace("p16")
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            lab = LabPage(server, context.new_page())
            lab.page.goto(server.url("lab"))
            lab.page.wait_for_function("() => !!window.jupyterapp", timeout=90_000)
            script, hooks = stand_in(server, "p16")
            new_terminal(lab)
            type_line(lab, f"{script} {hooks} {SID}")
            lab.page.locator(f"{TAB}.pmux-state-idle").wait_for(timeout=30_000)
            bash = {"command": "pytest -q tests/test_latency.py", "description": "Run the tests"}
            ws.fire(hook_payload("UserPromptSubmit", SID, CWD, prompt="measure the latency"))
            lab.page.locator(f"{TAB}.pmux-state-busy").wait_for(timeout=30_000)
            lab.page.evaluate(_OBSERVE_TAB, TAB)
            offset = clock_offset(lab.page)
            response = {"stdout": "1 passed", "stderr": "", "interrupted": False}
            steps = [
                ("PermissionRequest", "needs-input", {"tool_name": "Bash", "tool_input": bash}),
                ("PostToolUse", "busy", {"tool_name": "Bash", "tool_input": bash,
                                         "tool_response": response, "tool_use_id": "t1"}),
            ]  # fmt: skip
            times = _samples(lab, ws, steps, samples, offset)
        finally:
            context.close()
    return {**times, "offset": offset}


def _samples(
    lab: LabPage, ws: Any, steps: list[Any], samples: int, offset: float
) -> dict[str, list[float]]:
    painted: list[float] = []
    mutation: list[float] = []
    rng = random.Random(16)
    for i in range(samples):
        event, state, fields = steps[i % 2]
        argv, kwargs = ws.hook_command(hook_payload(event, SID, CWD, **fields))
        data = kwargs.pop("input")
        t0 = time.time() * 1000
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            **kwargs,
        )  # fmt: skip
        proc.communicate(data, timeout=10)
        lab.page.wait_for_function(
            """([n, state]) => { const seen = window.__pmuxTab;
                 return seen.length > n && seen[n].state === state
                   && seen[n].painted !== null; }""",
            arg=[i + 1, state],
            timeout=10_000,
            polling="raf",
        )
        entry = lab.page.evaluate("(n) => window.__pmuxTab[n]", i + 1)
        painted.append(entry["painted"] - offset - t0)
        mutation.append(entry["mutation"] - offset - t0)
        lab.page.wait_for_timeout(rng.uniform(60, 160))
    return {"painted": painted, "mutation": mutation}


def _ms(value: float) -> str:
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def p16_rows(result: dict[str, Any]) -> list[Row]:
    painted = result["painted"]
    p95 = percentile(painted, 95)
    return [
        (
            f"P16 hook script start → terminal tab's dot painted, p95 (n={len(painted)})",
            _ms(p95),
            f"≤ {P16_P95_MS:.0f} ms",
            p95 <= P16_P95_MS,
        ),
        (
            "P16 → tab class in the DOM p50 / p95; painted p50 / max",
            f"{_ms(percentile(result['mutation'], 50))} / "
            f"{_ms(percentile(result['mutation'], 95))}; "
            f"{_ms(percentile(painted, 50))} / {_ms(max(painted))}",
            "info",
            True,
        ),
    ]
