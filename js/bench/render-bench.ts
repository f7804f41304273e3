// P10 in numbers: render N sessions, apply one change, refresh the ages — in whatever DOM is
// global (jsdom under vitest, or the one js/bench/run.mjs sets up for the Python benchmark).
//
// It drives the same code as anywidget does (a Link = initialize, WidgetView = render)
// over the fake model, with a controllable clock so that every age changes on the tick.
import { Link, type Model } from "../src/link";
import { WidgetView } from "../src/render/view";
import type { Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { T0, makeFleet } from "../testing/fixtures";

export interface BenchOptions {
  sessions?: number;
  /** patches measured per kind of change */
  changes?: number;
  /** full renders measured (after `warmup` unmeasured ones) */
  renders?: number;
  warmup?: number;
}

export interface BenchResult {
  sessions: number;
  /** the first render in this process: includes JIT warm-up, what a fresh page pays */
  render_cold_ms: number;
  /** initialize + render of the whole fleet, median of `renders` warm runs (wall clock) */
  render_ms: number;
  /** the fastest of those runs: the least disturbed by other processes */
  render_best_ms: number;
  /** median process CPU time of a render (Node only, else null): unlike wall time, it does
   * not grow when other processes compete for the CPU */
  render_cpu_ms: number | null;
  /** one session's patch that changes its fields but not its place */
  apply_one_ms: number;
  apply_one_p95_ms: number;
  /** one session's patch that changes its state: re-sort, workspace dot, header counts */
  apply_move_ms: number;
  apply_move_p95_ms: number;
  /** the once-a-second age refresh when every age changed */
  tick_ms: number;
  budget: { render_ms: 150; apply_one_ms: 3 };
}

interface Mounted {
  fake: FakeModel;
  model: Model;
  view: WidgetView;
  dispose(): void;
}

let clock = T0;

/** Process CPU time in ms (user + system), when running under Node. */
function cpuMs(): number | null {
  const proc = (globalThis as { process?: { cpuUsage?: () => { user: number; system: number } } }).process;
  if (!proc?.cpuUsage) return null;
  const { user, system } = proc.cpuUsage();
  return (user + system) / 1000;
}

function mountFleet(rows: Row[]): { mounted: Mounted; ms: number; cpu: number | null } {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, 1), title_prefix: false });
  const host = document.createElement("div");
  document.body.appendChild(host);
  const model = fake.proxy(Symbol("bench")) as Model;
  const cpuStart = cpuMs();
  const start = performance.now();
  const link = new Link(model);
  const view = new WidgetView(model, link, host, { now: () => clock, tickMs: 3_600_000 });
  const ms = performance.now() - start;
  const cpuEnd = cpuMs();
  return {
    ms,
    cpu: cpuStart === null || cpuEnd === null ? null : cpuEnd - cpuStart,
    mounted: {
      fake,
      model,
      view,
      dispose() {
        view.destroy();
        link.dispose();
        host.remove();
      },
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] ?? 0;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

export function runRenderBench(options: BenchOptions = {}): BenchResult {
  const n = options.sessions ?? 500;
  const changes = options.changes ?? 200;
  const renders = options.renders ?? 7;
  const warmup = options.warmup ?? 2;
  const rows = makeFleet(n, T0);
  clock = T0;

  const cold = mountFleet(rows);
  cold.mounted.dispose();
  for (let i = 0; i < warmup; i++) mountFleet(rows).mounted.dispose();
  const renderTimes: number[] = [];
  const renderCpu: number[] = [];
  for (let i = 0; i < renders; i++) {
    const { mounted, ms, cpu } = mountFleet(rows);
    renderTimes.push(ms);
    if (cpu !== null) renderCpu.push(cpu);
    mounted.dispose();
  }

  const { mounted } = mountFleet(rows);
  let seq = 1;
  const current = new Map(rows.map((r) => [r.session_id, r]));
  const patchOne = (row: Row): number => {
    current.set(row.session_id, row);
    const start = performance.now();
    mounted.fake.emitCustom({ type: "patch", seq: ++seq, upsert: [row], remove: [] });
    return performance.now() - start;
  };

  const oneTimes: number[] = [];
  for (let i = 0; i < changes; i++) {
    const row = current.get(rows[(i * 7) % n]!.session_id)!;
    oneTimes.push(
      patchOne({
        ...row,
        tool_summary: `$ make test-${i}`,
        current_tool: "Bash",
        tokens: { ...row.tokens, output: row.tokens.output + 100 },
        context_tokens: row.context_tokens + 500,
      }),
    );
  }

  const cycle = ["busy", "needs-input", "review", "idle", "unknown"] as const;
  const moveTimes: number[] = [];
  for (let i = 0; i < changes; i++) {
    const row = current.get(rows[(i * 13) % n]!.session_id)!;
    const state = cycle[(cycle.indexOf(row.state as (typeof cycle)[number]) + 1) % cycle.length]!;
    moveTimes.push(patchOne({ ...row, state, state_since: clock, source: "hook:Stop" }));
  }

  clock = T0 + 3_600_000 + 1234; // an hour later: every age text changes
  const tickStart = performance.now();
  mounted.view.tick();
  const tickMs = performance.now() - tickStart;
  mounted.dispose();

  return {
    sessions: n,
    render_cold_ms: round(cold.ms),
    render_ms: round(median(renderTimes)),
    render_best_ms: round(Math.min(...renderTimes)),
    render_cpu_ms: renderCpu.length ? round(median(renderCpu)) : null,
    apply_one_ms: round(median(oneTimes)),
    apply_one_p95_ms: round(p95(oneTimes)),
    apply_move_ms: round(median(moveTimes)),
    apply_move_p95_ms: round(p95(moveTimes)),
    tick_ms: round(tickMs),
    budget: { render_ms: 150, apply_one_ms: 3 },
  };
}
