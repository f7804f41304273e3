"""Front-end budgets in a plain page of headless Chromium (no JupyterLab): the BUILT widget
with the front-end's fake model and fleet fixtures. Run by ``bench_browser.py`` first, on a
quiet page, before JupyterLab and its kernel load the machine.

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
import shutil
import statistics
import subprocess
from typing import Any

from benchmarks._util import ROOT, Row, log, percentile

__all__ = ["jsdom_rows", "ms", "p10", "p10_rows", "p14", "p14_rows"]

P10_RENDER_MS = 150.0
P10_CHANGE_MS = 3.0
P14_RENDER_MS = 200.0
P14_ADD_MS = 3.0
STATIC = ROOT / "pmux_widget" / "static"


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


def p14(browser: Any, quick: bool) -> dict[str, Any]:
    options = {"n": 500, "per": 200, "renders": 3 if quick else 9, "changes": 40 if quick else 200}
    return dict(p10(browser, quick, script=_P14, options=options))


def _median(values: list[float]) -> float:
    return statistics.median(values)


def p10(
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


def p14_rows(p14: dict[str, Any]) -> list[Row]:
    full = _median(p14["withHistory"])
    strips = full - _median(p14["without"])
    add = _median(p14["add"])
    return [
        (
            "P14 render strips, 500 sessions x 200 transitions (Chromium: added by the strips)",
            ms(strips),
            f"≤ {P14_RENDER_MS:.0f} ms",
            strips <= P14_RENDER_MS and p14["strips"] == 500,
        ),
        (
            "P14 render 500 sessions with their history, whole (JS + layout, median)",
            ms(full),
            "info",
            True,
        ),
        (
            "P14 add one transition (Chromium: JS + layout, median / p95)",
            f"{ms(add)} / {ms(percentile(p14['add'], 95))}",
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


def ms(value: float) -> str:
    return f"{value:.1f} ms" if value >= 10 else f"{value:.2f} ms"


def p10_rows(p10: dict[str, Any]) -> list[Row]:
    """P10's rows: render 500 sessions, one change (fields, state + re-sort)."""
    renders = p10["renders"]
    render_layout = _median([r["layout"] for r in renders])
    one = _median([c["layout"] for c in p10["one"]])
    move = _median([c["layout"] for c in p10["move"]])
    shown = p10["rowsShown"] == 500 and all(r["rows"] == 500 for r in renders)
    return [
        (
            "P10 render 500 sessions (Chromium: JS + style/layout, median)",
            ms(render_layout),
            f"≤ {P10_RENDER_MS:.0f} ms",
            render_layout <= P10_RENDER_MS and shown,
        ),
        (
            "P10 render 500: JavaScript only / until painted (median)",
            f"{ms(_median([r['js'] for r in renders]))} / "
            f"{ms(_median([r['frame'] for r in renders]))}",
            "info",
            True,
        ),
        (
            "P10 render 500: cold first render (JS + layout)",
            ms(p10["cold"]["layout"]),
            "info",
            True,
        ),
        (
            "P10 apply one change, fields (Chromium: JS + layout, median)",
            ms(one),
            f"≤ {P10_CHANGE_MS:g} ms",
            one <= P10_CHANGE_MS,
        ),
        (
            "P10 apply one change, state + re-sort (Chromium: JS + layout, median)",
            ms(move),
            f"≤ {P10_CHANGE_MS:g} ms",
            move <= P10_CHANGE_MS,
        ),
        (
            "P10 one change p95 fields / state (Chromium: JS + layout)",
            f"{ms(percentile([c['layout'] for c in p10['one']], 95))} / "
            f"{ms(percentile([c['layout'] for c in p10['move']], 95))}",
            "info",
            True,
        ),
    ]


def jsdom_rows() -> list[Row]:
    """P10 in jsdom (``node js/bench/run.mjs``, the front-end's own bench): info rows."""
    log("P10 in jsdom: node js/bench/run.mjs")
    jsdom = _jsdom()
    if jsdom is None:
        return [("P10 jsdom (node js/bench/run.mjs)", "unavailable", "info", True)]
    return [
        (
            "P10 jsdom: render 500 median / cold / CPU",
            f"{ms(jsdom['render_ms'])} / {ms(jsdom['render_cold_ms'])} / "
            + (ms(jsdom["render_cpu_ms"]) if jsdom.get("render_cpu_ms") else "n/a"),
            "info",
            True,
        ),
        (
            "P10 jsdom: one change fields / state (median, p95)",
            f"{ms(jsdom['apply_one_ms'])} ({ms(jsdom['apply_one_p95_ms'])}) / "
            f"{ms(jsdom['apply_move_ms'])} ({ms(jsdom['apply_move_p95_ms'])})",
            "info",
            True,
        ),
    ]
