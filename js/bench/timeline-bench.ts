// P14 in numbers: render the strips of N sessions × M transitions each (all within the hour
// the strips show by default, the worst case), then one new transition, in whatever DOM is
// global (jsdom under vitest). Drives the same code as anywidget (Link + WidgetView).
import { Link, type Model } from "../src/link";
import { WidgetView } from "../src/render/view";
import type { History, Row, State, TransitionJSON } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeFleet, T0 } from "../testing/fixtures";

export interface TimelineBenchResult {
  sessions: number;
  transitions: number;
  /** initialize + render with every strip drawn, median of warm runs (wall clock) */
  render_ms: number;
  /** the same without any history: what the strips add is the difference */
  render_without_history_ms: number;
  /** one session's new transition (a patch whose row changed state): median */
  add_one_ms: number;
  add_one_p95_ms: number;
  budget: { render_ms: 200; add_one_ms: 3 };
}

const CYCLE: State[] = ["busy", "needs-input", "busy", "review", "idle"];

function history(rows: Row[], perSession: number, now: number): History {
  const sessions: Record<string, TransitionJSON[]> = {};
  const step = Math.floor(3_600_000 / (perSession + 1));
  for (const [i, row] of rows.entries()) {
    const list: TransitionJSON[] = [];
    for (let k = 0; k < perSession; k++) {
      list.push({ at: now - 3_600_000 + k * step + (i % 7), state: CYCLE[(k + i) % CYCLE.length]!, source: "hook:Stop" });
    }
    sessions[row.session_id] = list;
  }
  return { since: now - 86_400_000, sessions };
}

function mount(rows: Row[], hist: History | undefined, now: number) {
  const fake = new FakeModel({ snapshot: { ...snapshotOf(rows, 1), now }, history: hist, title_prefix: false });
  const host = document.createElement("div");
  document.body.appendChild(host);
  const model = fake.proxy(Symbol("bench")) as Model;
  const start = performance.now();
  const link = new Link(model);
  const view = new WidgetView(model, link, host, { now: () => now, tickMs: 3_600_000 });
  const ms = performance.now() - start;
  return {
    ms,
    fake,
    dispose() {
      view.destroy();
      link.dispose();
      host.remove();
    },
  };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? 0;
const p95 = (v: number[]) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * 0.95))] ?? 0;
const round = (ms: number) => Math.round(ms * 1000) / 1000;

export function runTimelineBench(sessions = 500, transitions = 200, runs = 5): TimelineBenchResult {
  const now = T0 + 3_600_000;
  // rows whose state_since is older than their history's last transition: the snapshot adds none
  const rows = makeFleet(sessions, T0 - 3_600_000);
  const hist = history(rows, transitions, now);
  const withHistory: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < runs + 1; i++) {
    const a = mount(rows, hist, now);
    a.dispose();
    const b = mount(rows, undefined, now);
    b.dispose();
    if (i > 0) {
      withHistory.push(a.ms);
      without.push(b.ms);
    }
  }
  const mounted = mount(rows, hist, now);
  const adds: number[] = [];
  for (let k = 0; k < 200; k++) {
    const row = rows[(k * 13) % sessions]!;
    const start = performance.now();
    mounted.fake.emitCustom({
      type: "patch",
      seq: 2 + k,
      now: now + 1 + k,
      upsert: [{ ...row, state: CYCLE[k % CYCLE.length]!, state_since: now + 1 + k, source: "hook:Stop" }],
      remove: [],
    });
    adds.push(performance.now() - start);
  }
  mounted.dispose();
  return {
    sessions,
    transitions,
    render_ms: round(median(withHistory)),
    render_without_history_ms: round(median(without)),
    add_one_ms: round(median(adds)),
    add_one_p95_ms: round(p95(adds)),
    budget: { render_ms: 200, add_one_ms: 3 },
  };
}
