"""P15 — hook script start → status-bar dot painted (JupyterLab extension, no kernel): p95 no
slower than P4's widget path in the same run, and hub receipt → painted p95 ≤ 25 ms.
P16 — the same for a JupyterLab terminal tab's dot (its session's).

Run by ``bench_browser.py`` right after P4, in the same browser: a real JupyterLab with the
server extension (its hub over the workspace's pmux home) and this checkout's labextension,
no notebook, no kernel. One session is moved back and forth (PermissionRequest → needs-input,
PostToolUse → busy) by the INSTALLED hook command run as Claude Code runs it, exactly as P4
does. Each sample runs from ``time.time()`` just before ``Popen`` of the hook to the paint of
the status item's new dot: a MutationObserver on ``#pmux-widget-status`` notes ``Date.now()``
when the dot's state class changes, and when the frame that includes it is painted
(``STAMP_PAINT_JS``: a task posted from that frame's animation callback, which runs once its
style, layout and paint are done; the page↔Python clock offset is subtracted). Until
2026-12-02 the rows took the start of the frame after (two animation frames), a whole frame
(~16 ms) after the paint: that upper bound is still reported, as info. The panel's row is
observed too (P4's observer, inside the panel), reported as info. Samples are spaced 60–160 ms
apart, as P4's.

Hub receipt: the time the hub applied the hook, as its store keeps it (``state.db``'s
``sessions.updated_at``: the hub's ``now`` for the step that applied it, written before the
hook is answered), read back after each sample. Same machine, same clock as ``time.time()``;
a value outside [hook start, painted] (a later change of the row) is left out and counted.

P16 is P15's harness on a terminal tab: the server's terminals on, a real terminal (REST)
runs a stand-in Claude (tests/browser/test_terminal_tabs.py: a script named ``claude`` that
fires SessionStart through the installed hook command, so the hub knows its process and maps
it to the terminal), its tab open in the page. The timed hooks then run as in P15 and the
observer watches the terminal tab's ``pmux-state-<state>`` class.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks._util import STAMP_PAINT_JS, Row, percentile
from tests.browser.conftest import (
    KERNEL_CLAUDE_DIR,
    KERNEL_PMUX_HOME,
    LabPage,
    LabServer,
    hook_payload,
)

__all__ = [
    "P15_P95_MS",
    "P16_P95_MS",
    "hub_receipt",
    "p15",
    "p15_rows",
    "p16",
    "p16_rows",
    "stages",
]

#: hub receipt → painted, p95 (and hook script start → painted no slower than P4's)
P15_P95_MS = 25.0
P16_P95_MS = 25.0
PANEL = "#pmux-widget-panel"
STATUS = "#pmux-widget-status"
SID = "5e6f7081-92a3-4b4c-8d5e-6f708192a3b4"
CWD = "/home/dev/projects/latency-probe"

#: In the page: each change of the status item's dot class, with Date.now() at the mutation
#: and the stamps of ``STAMP_PAINT_JS`` (as P4's).
_OBSERVE_STATUS = (
    """(sel) => {"""
    + STAMP_PAINT_JS
    + """
  const item = document.querySelector(sel);
  const seen = (window.__pmuxStatus = []);
  let last = null;
  const check = () => {
    const dot = item.querySelector('.pmux-dot');
    const state = dot && [...dot.classList].find((c) => /^pmux-dot--(?!static)/.test(c));
    if (!state || state === last) return;
    last = state;
    const entry = {state: state.slice(10), mutation: Date.now(),
                   frame: null, painted: null, next: null};
    seen.push(entry);
    stamp(entry);
  };
  new MutationObserver(check).observe(item, {subtree: true, attributes: true,
    attributeFilter: ['class']});
  check();
  return true;
}"""
)


def p15(browser: Any, samples: int, observe: str, clock_offset: Any) -> dict[str, Any]:
    """``observe``/``clock_offset``: bench_browser's row observer and clock offset."""
    server = LabServer(extension=True)
    ws_dir = server.notebooks / "p15"
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    with server:
        ws = server.workspace("p15")
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        try:
            lab = LabPage(server, context.new_page())
            lab.page.goto(server.url("lab"))
            lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=90_000)
            lab.command("pmux-widget:show-panel")
            bash = {"command": "pytest -q tests/test_latency.py", "description": "Run the tests"}
            for event, fields in [
                ("SessionStart", {"source": "startup"}),
                ("UserPromptSubmit", {"prompt": "measure the latency"}),
                ("PreToolUse", {"tool_name": "Bash", "tool_input": bash, "tool_use_id": "t1"}),
            ]:
                ws.fire(hook_payload(event, SID, CWD, **fields))
            lab.wait_state(SID, "busy", within=PANEL)
            lab.page.evaluate(_OBSERVE_STATUS, STATUS)
            lab.page.evaluate(observe, [SID, PANEL])
            offset = clock_offset(lab.page)
            response = {"stdout": "1 passed", "stderr": "", "interrupted": False}
            steps = [
                ("PermissionRequest", "needs-input", {"tool_name": "Bash", "tool_input": bash}),
                ("PostToolUse", "busy", {"tool_name": "Bash", "tool_input": bash,
                                         "tool_response": response, "tool_use_id": "t1"}),
            ]  # fmt: skip
            times = _samples(lab, ws, steps, samples, offset)
            kernels = server.api("GET", "/api/kernels")[1]
        finally:
            context.close()
    return {**times, "offset": offset, "kernels": kernels}


def hub_receipt(pmux_root: Path, sid: str) -> float | None:
    """When the hub applied ``sid``'s latest change (epoch ms), from its store."""
    path = pmux_root / "state.db"
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
        try:
            row = db.execute("SELECT updated_at FROM sessions WHERE session_id = ?", (sid,))
            found = row.fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return None
    return float(found[0]) if found else None


def receipt_to_paint(receipt: float | None, t0: float, painted: float) -> float | None:
    """Hub receipt → painted, or None when the stored time is not this sample's."""
    if receipt is None or not t0 - 1 <= receipt <= painted:
        return None
    return painted - receipt


def _samples(
    lab: LabPage,
    ws: Any,
    steps: list[Any],
    samples: int,
    offset: float,
    *,
    sid: str = SID,
    cwd: str = CWD,
    seen: str = "__pmuxStatus",
) -> dict[str, list[float]]:
    status: list[float] = []
    hub: list[float] = []
    lost = 0
    row: list[float] = []
    mutation: list[float] = []
    frame: list[float] = []
    upper: list[float] = []
    script: list[float] = []
    rng = random.Random(15)
    for i in range(samples):
        event, state, fields = steps[i % 2]
        argv, kwargs = ws.hook_command(hook_payload(event, sid, cwd, **fields))
        data = kwargs.pop("input")
        t0 = time.time() * 1000
        proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            **kwargs,
        )  # fmt: skip
        proc.communicate(data, timeout=10)
        script.append(time.time() * 1000 - t0)
        # entry 0 of each is the state seen when its observer started
        lab.page.wait_for_function(
            """([n, state, key]) => [window[key], window.__pmuxSeen].every((seen) =>
                 seen.length > n && seen[n].state === state && seen[n].next !== null)""",
            arg=[i + 1, state, seen],
            timeout=10_000,
            polling="raf",
        )
        entries = lab.page.evaluate(
            "([n, key]) => [window[key][n], window.__pmuxSeen[n]]", [i + 1, seen]
        )
        status.append(entries[0]["painted"] - offset - t0)
        after = receipt_to_paint(hub_receipt(ws.pmux.root, sid), t0, entries[0]["painted"] - offset)
        if after is None:
            lost += 1
        else:
            hub.append(after)
        mutation.append(entries[0]["mutation"] - offset - t0)
        frame.append(entries[0]["frame"] - offset - t0)
        upper.append(entries[0]["next"] - offset - t0)
        row.append(entries[1]["painted"] - offset - t0)
        lab.page.wait_for_timeout(rng.uniform(60, 160))
    return {"status": status, "row": row, "mutation": mutation, "frame": frame, "next": upper,
            "script": script, "hub": hub, "hub_lost": [float(lost)]}  # fmt: skip


def _ms(value: float) -> str:
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def budget_rows(name: str, what: str, result: dict[str, Any], p4_p95: float, ok: bool) -> list[Row]:
    """The two budget rows of P15/P16: hook script start → painted p95 against P4's p95 of
    the same run, and hub receipt → painted p95 against 25 ms."""
    painted, hub = result["status"], result["hub"]
    p95 = percentile(painted, 95)
    hub_p95 = percentile(hub, 95) if hub else float("inf")
    lost = int(result["hub_lost"][0])
    return [
        (
            f"{name} hook script start → {what} painted, p95 (n={len(painted)})",
            f"{_ms(p95)} (P4: {_ms(p4_p95)})",
            "≤ P4's p95, same run",
            p95 <= p4_p95 and ok,
        ),
        (
            f"{name} hub receipt → {what} painted, p95 (n={len(hub)}"
            + (f", {lost} left out" if lost else "")
            + ")",
            f"{_ms(hub_p95)} (p50 {_ms(percentile(hub, 50))})" if hub else "no receipt read",
            f"≤ {P15_P95_MS:.0f} ms",
            hub_p95 <= P15_P95_MS and ok and lost * 4 <= len(painted),
        ),
    ]


def p15_rows(result: dict[str, Any], p4_p95: float) -> list[Row]:
    status, row = result["status"], result["row"]
    no_kernel = result["kernels"] == []
    what = "status-bar dot" + ("" if no_kernel else " (a kernel ran!)")
    return [
        *budget_rows("P15", what, result, p4_p95, no_kernel),
        (
            "P15 → status dot painted p50 / max; panel row painted p50 / p95",
            f"{_ms(percentile(status, 50))} / {_ms(max(status))}; "
            f"{_ms(percentile(row, 50))} / {_ms(percentile(row, 95))}",
            "info",
            True,
        ),
        (
            "P15 → status dot in the DOM / frame start / next frame start, p50 / p95; "
            "hook script p50 / p95",
            stages(result) + "; "
            f"{_ms(percentile(result['script'], 50))} / {_ms(percentile(result['script'], 95))}",
            "info",
            True,
        ),
    ]


def stages(result: dict[str, Any]) -> str:
    """p50 / p95 of the change in the DOM, the frame that paints it, the frame after (the
    "painted" of the earlier runs: an upper bound, a whole frame late)."""
    return "; ".join(
        f"{_ms(percentile(result[k], 50))} / {_ms(percentile(result[k], 95))}"
        for k in ("mutation", "frame", "next")
    )


# ------------------------------------------------------------------------------------ P16

#: In the page: each change of the terminal tab's pmux-state-<state> class (as _OBSERVE_STATUS).
_OBSERVE_TAB = (
    """([tabJs, name]) => {"""
    + STAMP_PAINT_JS
    + """
  const tab = eval(tabJs)(name);
  const seen = (window.__pmuxTab = []);
  let last = null;
  const check = () => {
    const state = [...tab.classList].find((c) => c.startsWith('pmux-state-'));
    if (!state || state === last) return;
    last = state;
    const entry = {state: state.slice(11), mutation: Date.now(),
                   frame: null, painted: null, next: null};
    seen.push(entry);
    stamp(entry);
  };
  new MutationObserver(check).observe(tab, {attributes: true, attributeFilter: ['class']});
  check();
  return true;
}"""
)


def p16(browser: Any, samples: int, observe: str, clock_offset: Any) -> dict[str, Any]:
    """P16: as :func:`p15`, the dot on the session's JupyterLab terminal tab."""
    import tempfile
    from pathlib import Path

    from tests.browser.test_terminal_tabs import TAB_JS, Session

    server = LabServer(extension=True, terminals=True)
    ws_dir = server.notebooks / "p16"
    server.extra_env.update(
        PMUX_WIDGET_HOME=str(ws_dir / KERNEL_PMUX_HOME),
        CLAUDE_CONFIG_DIR=str(ws_dir / KERNEL_CLAUDE_DIR),
    )
    with server, tempfile.TemporaryDirectory(prefix="pmux-p16-") as tmp:
        ws = server.workspace("p16")
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        base = Path(tmp) / "latency-probe"
        base.mkdir()
        session = Session(ws, base, SID)
        try:
            lab = LabPage(server, context.new_page())
            lab.page.goto(server.url("lab"))
            lab.page.locator(f"{PANEL} .pmux-root").wait_for(state="attached", timeout=90_000)
            lab.command("pmux-widget:show-panel")
            lab.command("terminal:open", {"name": session.name})
            bash = {"command": "pytest -q tests/test_latency.py", "description": "Run the tests"}
            session.step("SessionStart", source="startup")  # from inside the terminal
            ws.fire(hook_payload("UserPromptSubmit", SID, str(base), prompt="measure the latency"))
            ws.fire(
                hook_payload(
                    "PreToolUse",
                    SID,
                    str(base),
                    tool_name="Bash",
                    tool_input=bash,
                    tool_use_id="t1",
                )
            )
            lab.wait_state(SID, "busy", within=PANEL)
            lab.page.wait_for_function(
                f"(name) => ({TAB_JS})(name)?.classList.contains('pmux-state-busy')",
                arg=session.name,
                timeout=30_000,
            )
            lab.page.evaluate(_OBSERVE_TAB, [TAB_JS, session.name])
            lab.page.evaluate(observe, [SID, PANEL])
            offset = clock_offset(lab.page)
            response = {"stdout": "1 passed", "stderr": "", "interrupted": False}
            steps: list[tuple[str, str, dict[str, Any]]] = [
                ("PermissionRequest", "needs-input", {"tool_name": "Bash", "tool_input": bash}),
                ("PostToolUse", "busy", {"tool_name": "Bash", "tool_input": bash,
                                         "tool_response": response, "tool_use_id": "t1"}),
            ]  # fmt: skip
            times = _samples(lab, ws, steps, samples, offset, cwd=str(base), seen="__pmuxTab")
            terminal = [
                r["terminal"]
                for r in server.api("GET", "/pmux/api/sessions")[1]["sessions"]
                if r["session_id"] == SID
            ]
        finally:
            session.close()
            context.close()
    return {**times, "offset": offset, "terminal": terminal, "name": session.name}


def p16_rows(result: dict[str, Any], p4_p95: float) -> list[Row]:
    tab, row = result["status"], result["row"]
    mapped = result["terminal"] == [{"name": result["name"]}]
    what = "terminal tab dot" + ("" if mapped else " (not mapped to its terminal!)")
    return [
        *budget_rows("P16", what, result, p4_p95, mapped),
        (
            "P16 → tab dot painted p50 / max; panel row painted p50 / p95",
            f"{_ms(percentile(tab, 50))} / {_ms(max(tab))}; "
            f"{_ms(percentile(row, 50))} / {_ms(percentile(row, 95))}",
            "info",
            True,
        ),
        (
            "P16 → tab class in the DOM / frame start / next frame start, p50 / p95",
            stages(result),
            "info",
            True,
        ),
    ]
