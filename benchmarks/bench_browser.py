"""Browser budgets, in real headless Chromium (Debian ``/usr/bin/chromium`` via Playwright).

P4 — hook script start → dot changed in JupyterLab, p95 ≤ 300 ms.
  A real JupyterLab (``tests/browser/conftest.py``'s :class:`LabServer`: sealed temp dirs,
  kernels with their own pmux home) shows the widget (``import pmux_widget;
  pmux_widget.show()`` run from the keyboard). One session is then moved back and forth
  (PermissionRequest → needs-input, PostToolUse → busy) by the INSTALLED hook command run as
  Claude Code runs it (``/bin/sh -c '<command>'``, payload on stdin). Each sample runs from
  ``time.time()`` taken just before ``Popen`` of the hook to the moment the new dot is painted:
  a MutationObserver in the page records ``Date.now()`` (the same system clock as Python's
  ``time.time()``; the page↔Python offset is measured by round trips and subtracted, it is
  ~1 ms) when the row's state class changes, at the next ``requestAnimationFrame`` (the
  start of the frame that paints the change), once that frame's style, layout and paint are
  done (a task posted from its animation callback: the budget row's "painted"), and at the
  frame after (an upper bound, a whole frame late: the budget row's until 2026-12-02, now
  info). Samples are spaced 60–160 ms apart
  (more than the widget's 50 ms coalescing window, so no sample waits for another's patch; the
  jitter avoids locking onto the frame clock).

P15 — the same hooks → the JupyterLab extension's status-bar dot painted, no kernel: p95 no
  slower than P4's in the same run, and hub receipt → painted p95 ≤ 25 ms
  (``benchmarks/lab_panel.py``), measured right after P4. P4's own hub receipt → painted is
  reported beside it (info): the hub's apply time from the kernel hub's store.

P16 — the same hooks → the dot on the session's JupyterLab terminal tab painted, as P15
  (``benchmarks/lab_panel.py``; the session runs in a real terminal), right after P15.

P10 — front-end: render 500 sessions ≤ 150 ms / apply one change ≤ 3 ms.
  The BUILT ``pmux_widget/static/widget.js`` (+ ``widget.css``) is loaded as an ES module in a
  plain page (served through Playwright routes), with the front-end's fake anywidget model and
  fleet fixtures (``js/testing/``, bundled with esbuild). "render" is ``initialize`` +
  ``render`` of 500 sessions plus the style and layout the browser must do before it can
  paint them (forced by reading ``offsetHeight``); "one change" is one ``patch`` message for
  one session plus the same forced style/layout. Medians of warm runs; the JavaScript-only
  part, the cold first render and the time until painted (two animation frames later) are
  reported as info. The jsdom
  numbers of ``node js/bench/run.mjs`` (the front-end's own bench) follow as info rows.

P14 — timeline: render strips for 500 sessions × 200 transitions ≤ 200 ms / add one ≤ 3 ms.
  The same page: 500 sessions whose ``history`` trait holds 200 transitions each, all within
  the hour the strips show by default (every one drawn: the worst case). "render" is what the
  strips add: initialize + render + style/layout with that history, minus the same without
  any (both medians); "add one" is one patch whose row changed state (the strip's new
  transition) plus style/layout. The full render with history is reported as info.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the project importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import lab_panel
from benchmarks._util import ROOT, STAMP_PAINT_JS, Row, log, percentile, run_alone
from tests.browser.conftest import (
    LabPage,
    LabServer,
    LabUnavailable,
    Workspace,
    check_available,
    hook_payload,
    launch_chromium,
)

__all__ = ["main"]

P4_P95_MS = 300.0
P10_RENDER_MS = 150.0
P10_CHANGE_MS = 3.0
P14_RENDER_MS = 200.0
P14_ADD_MS = 3.0
SID = "4d5e6f70-8192-4a3b-9c4d-5e6f70819203"
CWD = "/home/dev/projects/latency-probe"
STATIC = ROOT / "pmux_widget" / "static"

#: In the page: watch the first widget's row of ``sid`` (in ``.jp-Notebook``, or in the
#: element ``[sid, within]`` names); for each change of its state class, record Date.now() at
#: the mutation and the stamps of ``STAMP_PAINT_JS`` (frame start, painted, next frame).
_OBSERVE = (
    """(arg) => {"""
    + STAMP_PAINT_JS
    + """
  const [sid, within] = Array.isArray(arg) ? arg : [arg, '.jp-Notebook'];
  const root = document.querySelector(within + ' .pmux-root');
  const seen = (window.__pmuxSeen = []);
  let last = null;
  const check = () => {
    const row = root.querySelector(`li.pmux-row[data-session-id="${sid}"]`);
    const state = row && [...row.classList].find((c) => c.startsWith('pmux-row--'));
    if (!state || state === last) return;
    last = state;
    const entry = {state: state.slice(10), mutation: Date.now(),
                   frame: null, painted: null, next: null};
    seen.push(entry);
    stamp(entry);
  };
  new MutationObserver(check).observe(root, {subtree: true, childList: true,
    attributes: true, attributeFilter: ['class']});
  check();
  return true;
}"""
)


def _clock_offset_ms(page: Any, rounds: int = 15) -> float:
    """Page clock minus Python clock (ms): the median over round trips of Date.now() against
    the midpoint of the Python times around it."""
    offsets = []
    for _ in range(rounds):
        before = time.time() * 1000
        page_now = page.evaluate("() => Date.now()")
        after = time.time() * 1000
        offsets.append(page_now - (before + after) / 2)
    return statistics.median(offsets)


def _p4(lab: LabPage, ws: Workspace, samples: int) -> dict[str, Any]:
    lab.open_notebook(ws.notebook("latency.ipynb", "import pmux_widget; pmux_widget.show()"))
    lab.run_cell(0)
    lab.root().wait_for()
    bash = {"command": "pytest -q tests/test_latency.py", "description": "Run the tests"}
    for event, fields in [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": "measure the latency"}),
        ("PreToolUse", {"tool_name": "Bash", "tool_input": bash, "tool_use_id": "toolu_01"}),
    ]:
        ws.fire(hook_payload(event, SID, CWD, **fields))
    lab.wait_state(SID, "busy")
    lab.page.evaluate(_OBSERVE, SID)
    offset = _clock_offset_ms(lab.page)
    steps = [
        ("PermissionRequest", "needs-input", {"tool_name": "Bash", "tool_input": bash}),
        (
            "PostToolUse",
            "busy",
            {
                "tool_name": "Bash",
                "tool_input": bash,
                "tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False},
                "tool_use_id": "toolu_01",
            },
        ),
    ]
    mutation, frame, painted, upper, script, hub = [], [], [], [], [], []
    rng = random.Random(4)
    for i in range(samples):
        event, state, fields = steps[i % 2]
        argv, kwargs = ws.hook_command(hook_payload(event, SID, CWD, **fields))
        data = kwargs.pop("input")
        t0 = time.time() * 1000
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            **kwargs,
        )
        proc.communicate(data, timeout=10)
        script.append(time.time() * 1000 - t0)
        lab.page.wait_for_function(
            "([n, state]) => window.__pmuxSeen.length > n"
            " && window.__pmuxSeen[n].state === state && window.__pmuxSeen[n].next !== null",
            arg=[i + 1, state],  # entry 0 is the state seen when the observer started
            timeout=10_000,
            polling="raf",
        )
        entry = lab.page.evaluate("(n) => window.__pmuxSeen[n]", i + 1)
        mutation.append(entry["mutation"] - offset - t0)
        frame.append(entry["frame"] - offset - t0)
        painted.append(entry["painted"] - offset - t0)
        upper.append(entry["next"] - offset - t0)
        receipt = lab_panel.hub_receipt(ws.pmux.root, SID)
        after = lab_panel.receipt_to_paint(receipt, t0, entry["painted"] - offset)
        if after is not None:
            hub.append(after)
        lab.page.wait_for_timeout(rng.uniform(60, 160))
    return {
        "mutation": mutation,
        "frame": frame,
        "painted": painted,
        "next": upper,
        "script": script,
        "hub": hub,
        "offset": offset,
    }


# ------------------------------------------------------------------------------ P10


def _harness_js() -> str:
    """js/testing's fake model and fleet fixtures as one browser script (window.PmuxTesting)."""
    esbuild = ROOT / "node_modules" / ".bin" / "esbuild"
    entry = (
        'export { FakeModel, snapshotOf } from "./js/testing/fake-model";\n'
        'export { makeFleet, T0 } from "./js/testing/fixtures";\n'
    )
    result = subprocess.run(
        [
            str(esbuild),
            "--bundle",
            "--format=iife",
            "--global-name=PmuxTesting",
            "--target=es2020",
            "--loader=ts",
            "--log-level=error",
        ],
        input=entry.encode(),
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    if result.returncode != 0:
        raise RuntimeError(f"esbuild failed: {result.stderr.decode()[-1000:]}")
    return result.stdout.decode()


_INDEX = """<!doctype html><html><head><meta charset="utf-8"><title>P10</title>
<link rel="stylesheet" href="/widget.css"><script src="/harness.js"></script>
<style>body { margin: 0; width: 800px; }</style></head><body>
<script type="module">
import widget from "/widget.js";
window.pmuxWidget = widget;
window.pmuxReady = true;
</script></body></html>"""

#: In the page: mount 500 sessions (initialize + render) several times, then time patches.
_P10 = """async ({n, renders, warmup, changes}) => {
  const {FakeModel, snapshotOf, makeFleet} = window.PmuxTesting;
  // The default export is a factory: anywidget calls it once per model, so does mount().
  const factory = window.pmuxWidget;
  const experimental = {invoke: () => Promise.reject(new Error('unused'))};
  const rows = makeFleet(n, Date.now());
  const settle = async (x) => (x && typeof x.then === 'function' ? await x : x);
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r(performance.now())));
  async function mount() {
    const fake = new FakeModel({snapshot: snapshotOf(rows, 1), title_prefix: false});
    const host = document.body.appendChild(document.createElement('div'));
    const controller = new AbortController();
    const widget = typeof factory === 'function' ? await factory() : factory;
    await nextFrame();
    const t0 = performance.now();
    const init = widget.initialize({model: fake.proxy(Symbol('init')),
      signal: controller.signal, experimental});
    const view = widget.render({model: fake.proxy(Symbol('view')), el: host,
      signal: controller.signal, host: {}, experimental});
    const tJs = performance.now();
    void host.offsetHeight;  // style + layout, as the browser must before painting
    const tLayout = performance.now();
    await nextFrame();
    const tFrame = await nextFrame();  // the frame after the one that painted it
    const [unInit, unView] = [await settle(init), await settle(view)];
    return {fake, host, js: tJs - t0, layout: tLayout - t0, frame: tFrame - t0,
      rows: host.querySelectorAll('li.pmux-row').length,
      dispose() { controller.abort(); if (typeof unView === 'function') unView();
        if (typeof unInit === 'function') unInit(); host.remove(); }};
  }
  const cold = await mount();
  const coldTimes = {js: cold.js, layout: cold.layout, frame: cold.frame, rows: cold.rows};
  cold.dispose();
  for (let i = 0; i < warmup; i++) (await mount()).dispose();
  const renders_ = [];
  for (let i = 0; i < renders; i++) {
    const m = await mount();
    renders_.push({js: m.js, layout: m.layout, frame: m.frame, rows: m.rows});
    m.dispose();
  }
  const m = await mount();
  const current = new Map(rows.map((r) => [r.session_id, r]));
  let seq = 1;
  const patch = (row) => {
    current.set(row.session_id, row);
    const t0 = performance.now();
    m.fake.emitCustom({type: 'patch', seq: ++seq, upsert: [row], remove: []});
    const tJs = performance.now();
    void m.host.offsetHeight;
    return {js: tJs - t0, layout: performance.now() - t0};
  };
  const one = [], move = [];
  const cycle = ['busy', 'needs-input', 'review', 'idle', 'unknown'];
  for (let i = 0; i < changes; i++) {
    const row = current.get(rows[(i * 7) % n].session_id);
    one.push(patch({...row, current_tool: 'Bash', tool_summary: `$ make test-${i}`,
      tokens: {...row.tokens, output: row.tokens.output + 100},
      context_tokens: row.context_tokens + 500}));
    if (i % 10 === 0) await nextFrame();  // let the page paint now and then, as it would
  }
  for (let i = 0; i < changes; i++) {
    const row = current.get(rows[(i * 13) % n].session_id);
    const state = cycle[(cycle.indexOf(row.state) + 1) % cycle.length];
    move.push(patch({...row, state, state_since: Date.now(), source: 'hook:Stop'}));
    if (i % 10 === 0) await nextFrame();
  }
  const rowsShown = m.host.querySelectorAll('li.pmux-row').length;
  m.dispose();
  return {cold: coldTimes, renders: renders_, one, move, rowsShown};
}"""


#: In the page: mount 500 sessions with and without 200 transitions each, then add transitions.
_P14 = """async ({n, per, renders, changes}) => {
  const {FakeModel, snapshotOf, makeFleet} = window.PmuxTesting;
  const factory = window.pmuxWidget;
  const experimental = {invoke: () => Promise.reject(new Error('unused'))};
  const now = Date.now();
  const rows = makeFleet(n, now - 7200000);  // rows older than their history: it adds none
  const cycle = ['busy', 'needs-input', 'busy', 'review', 'idle'];
  const sessions = {};
  const step = Math.floor(3600000 / (per + 1));
  rows.forEach((row, i) => {
    sessions[row.session_id] = Array.from({length: per}, (_, k) => ({
      at: now - 3600000 + k * step + (i % 7), state: cycle[(k + i) % 5], source: 'hook:Stop'}));
  });
  const history = {since: now - 86400000, sessions};
  const settle = async (x) => (x && typeof x.then === 'function' ? await x : x);
  const nextFrame = () => new Promise((r) => requestAnimationFrame(() => r(performance.now())));
  async function mount(withHistory) {
    const fake = new FakeModel({snapshot: {...snapshotOf(rows, 1), now},
      history: withHistory ? history : {since: now, sessions: {}}, title_prefix: false});
    const host = document.body.appendChild(document.createElement('div'));
    const controller = new AbortController();
    const widget = typeof factory === 'function' ? await factory() : factory;
    await nextFrame();
    const t0 = performance.now();
    const init = widget.initialize({model: fake.proxy(Symbol('init')),
      signal: controller.signal, experimental});
    const view = widget.render({model: fake.proxy(Symbol('view')), el: host,
      signal: controller.signal, host: {}, experimental});
    void host.offsetHeight;
    const layout = performance.now() - t0;
    const [unInit, unView] = [await settle(init), await settle(view)];
    return {fake, host, layout,
      strips: host.querySelectorAll('.pmux-strip').length,
      dispose() { controller.abort(); if (typeof unView === 'function') unView();
        if (typeof unInit === 'function') unInit(); host.remove(); }};
  }
  (await mount(true)).dispose();  // warm-up
  (await mount(false)).dispose();
  const withH = [], without = [];
  let strips = 0;
  for (let i = 0; i < renders; i++) {
    const a = await mount(true); withH.push(a.layout); strips = a.strips; a.dispose();
    const b = await mount(false); without.push(b.layout); b.dispose();
  }
  const m = await mount(true);
  const add = [];
  for (let i = 0; i < changes; i++) {
    const row = rows[(i * 13) % n];
    const t0 = performance.now();
    m.fake.emitCustom({type: 'patch', seq: 2 + i, now: Date.now(), upsert: [{...row,
      state: cycle[i % 5], state_since: Date.now() + i, source: 'hook:Stop'}], remove: []});
    void m.host.offsetHeight;
    add.push(performance.now() - t0);
    if (i % 10 === 0) await nextFrame();
  }
  m.dispose();
  return {withHistory: withH, without, add, strips};
}"""


def _p14(browser: Any, quick: bool) -> dict[str, Any]:
    options = {"n": 500, "per": 200, "renders": 3 if quick else 9, "changes": 40 if quick else 200}
    return dict(_p10(browser, quick, script=_P14, options=options))


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _p10(
    browser: Any, quick: bool, script: str = _P10, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    files = {
        "/": ("text/html", _INDEX.encode()),
        "/widget.js": ("text/javascript", (STATIC / "widget.js").read_bytes()),
        "/widget.css": ("text/css", (STATIC / "widget.css").read_bytes()),
        "/harness.js": ("text/javascript", _harness_js().encode()),
    }
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:

        def serve(route: Any) -> None:
            path = "/" + route.request.url.split("://", 1)[1].split("/", 1)[1].split("?")[0]
            if path not in files:
                route.fulfill(status=404, body="")
                return
            content_type, body = files[path]
            route.fulfill(status=200, content_type=content_type, body=body)

        page.route("http://pmux.bench/**", serve)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto("http://pmux.bench/")
        page.wait_for_function("() => window.pmuxReady === true", timeout=30_000)
        options = options or {
            "n": 500,
            "renders": 3 if quick else 9,
            "warmup": 1 if quick else 2,
            "changes": 40 if quick else 200,
        }
        result = page.evaluate(script, options)
        if errors:
            raise RuntimeError(f"page errors: {errors[:3]}")
        return result
    finally:
        page.close()


def _p14_rows(p14: dict[str, Any]) -> list[Row]:
    full = _median(p14["withHistory"])
    strips = full - _median(p14["without"])
    add = _median(p14["add"])
    return [
        (
            "P14 render strips, 500 sessions x 200 transitions (Chromium: added by the strips)",
            _ms(strips),
            f"≤ {P14_RENDER_MS:.0f} ms",
            strips <= P14_RENDER_MS and p14["strips"] == 500,
        ),
        (
            "P14 render 500 sessions with their history, whole (JS + layout, median)",
            _ms(full),
            "info",
            True,
        ),
        (
            "P14 add one transition (Chromium: JS + layout, median / p95)",
            f"{_ms(add)} / {_ms(percentile(p14['add'], 95))}",
            f"≤ {P14_ADD_MS:g} ms",
            add <= P14_ADD_MS,
        ),
    ]


def _jsdom() -> dict[str, Any] | None:
    node = shutil.which("node")
    script = ROOT / "js" / "bench" / "run.mjs"
    if not node or not script.exists():
        return None
    result = subprocess.run(
        [node, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    if result.returncode != 0:
        log(f"js/bench/run.mjs failed: {result.stderr[-500:]}")
        return None
    return json.loads(result.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ main


def _ms(value: float) -> str:
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def main(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    try:
        check_available()
        from playwright.sync_api import sync_playwright
    except LabUnavailable as exc:
        reason = f"unavailable: {exc}"
        return [
            ("P4 hook → dot in JupyterLab, p95", reason, f"≤ {P4_P95_MS:.0f} ms", False),
            ("P10 render 500 sessions (Chromium)", reason, f"≤ {P10_RENDER_MS:.0f} ms", False),
        ]
    samples = 12 if quick else 40
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            # ---------------------------------------------------------------- P10 first:
            # a quiet page, before JupyterLab and its kernel load the machine.
            log("P10: 500 sessions in headless Chromium")
            p10 = _p10(browser, quick)
            renders = p10["renders"]
            render_layout = _median([r["layout"] for r in renders])
            one = _median([c["layout"] for c in p10["one"]])
            move = _median([c["layout"] for c in p10["move"]])
            shown = p10["rowsShown"] == 500 and all(r["rows"] == 500 for r in renders)
            rows += [
                (
                    "P10 render 500 sessions (Chromium: JS + style/layout, median)",
                    _ms(render_layout),
                    f"≤ {P10_RENDER_MS:.0f} ms",
                    render_layout <= P10_RENDER_MS and shown,
                ),
                (
                    "P10 render 500: JavaScript only / until painted (median)",
                    f"{_ms(_median([r['js'] for r in renders]))} / "
                    f"{_ms(_median([r['frame'] for r in renders]))}",
                    "info",
                    True,
                ),
                (
                    "P10 render 500: cold first render (JS + layout)",
                    _ms(p10["cold"]["layout"]),
                    "info",
                    True,
                ),
                (
                    "P10 apply one change, fields (Chromium: JS + layout, median)",
                    _ms(one),
                    f"≤ {P10_CHANGE_MS:g} ms",
                    one <= P10_CHANGE_MS,
                ),
                (
                    "P10 apply one change, state + re-sort (Chromium: JS + layout, median)",
                    _ms(move),
                    f"≤ {P10_CHANGE_MS:g} ms",
                    move <= P10_CHANGE_MS,
                ),
                (
                    "P10 one change p95 fields / state (Chromium: JS + layout)",
                    f"{_ms(percentile([c['layout'] for c in p10['one']], 95))} / "
                    f"{_ms(percentile([c['layout'] for c in p10['move']], 95))}",
                    "info",
                    True,
                ),
            ]

            # ---------------------------------------------------------------- P14
            log("P14: strips of 500 sessions x 200 transitions in headless Chromium")
            rows += _p14_rows(_p14(browser, quick))

            # ---------------------------------------------------------------- P4
            log(f"P4: JupyterLab, {samples} hooks through the installed script")
            with LabServer() as server:
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                try:
                    lab = LabPage(server, context.new_page())
                    ws = server.workspace("p4")
                    p4 = _p4(lab, ws, samples)
                finally:
                    context.close()
                    server.shutdown_kernels()
            painted_p95 = percentile(p4["painted"], 95)
            rows += [
                (
                    f"P4 hook script start → dot painted in JupyterLab, p95 (n={samples})",
                    _ms(painted_p95),
                    f"≤ {P4_P95_MS:.0f} ms",
                    painted_p95 <= P4_P95_MS,
                ),
                (
                    "P4 → dot painted p50 / max",
                    f"{_ms(percentile(p4['painted'], 50))} / {_ms(max(p4['painted']))}",
                    "info",
                    True,
                ),
                (
                    "P4 → row updated in the DOM / frame start / next frame start, p50 / p95",
                    lab_panel.stages(p4),
                    "info",
                    True,
                ),
                (
                    "P4 hook script wall time p50 / p95 (spawn → exit)",
                    f"{_ms(percentile(p4['script'], 50))} / {_ms(percentile(p4['script'], 95))}",
                    "info",
                    True,
                ),
                (
                    f"P4 hub receipt → dot painted p50 / p95 (kernel hub, n={len(p4['hub'])})",
                    f"{_ms(percentile(p4['hub'], 50))} / {_ms(percentile(p4['hub'], 95))}"
                    if p4["hub"]
                    else "no receipt read",
                    "info",
                    True,
                ),
            ]
            log(f"P4 page↔python clock offset {p4['offset']:+.1f} ms (subtracted)")

            # ---------------------------------------------------------------- P15
            # Side by side with P4: the same hooks, the extension's path (no kernel).
            log(f"P15: JupyterLab extension, {samples} hooks through the installed script")
            p15 = lab_panel.p15(browser, samples, _OBSERVE, _clock_offset_ms)
            rows += lab_panel.p15_rows(p15, painted_p95)
            log(f"P15 page↔python clock offset {p15['offset']:+.1f} ms (subtracted)")

            # ---------------------------------------------------------------- P16
            log(f"P16: a terminal tab's dot, {samples} hooks through the installed script")
            p16 = lab_panel.p16(browser, samples, _OBSERVE, _clock_offset_ms)
            rows += lab_panel.p16_rows(p16, painted_p95)
            log(f"P16 page↔python clock offset {p16['offset']:+.1f} ms (subtracted)")
        finally:
            browser.close()

    # -------------------------------------------------------------------- jsdom (info)
    log("P10 in jsdom: node js/bench/run.mjs")
    jsdom = _jsdom()
    if jsdom is None:
        rows.append(("P10 jsdom (node js/bench/run.mjs)", "unavailable", "info", True))
    else:
        rows += [
            (
                "P10 jsdom: render 500 median / cold / CPU",
                f"{_ms(jsdom['render_ms'])} / {_ms(jsdom['render_cold_ms'])} / "
                + (_ms(jsdom["render_cpu_ms"]) if jsdom.get("render_cpu_ms") else "n/a"),
                "info",
                True,
            ),
            (
                "P10 jsdom: one change fields / state (median, p95)",
                f"{_ms(jsdom['apply_one_ms'])} ({_ms(jsdom['apply_one_p95_ms'])}) / "
                f"{_ms(jsdom['apply_move_ms'])} ({_ms(jsdom['apply_move_p95_ms'])})",
                "info",
                True,
            ),
        ]
    return rows


if __name__ == "__main__":
    run_alone(main)
