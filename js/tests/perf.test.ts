// P10 (render 500 sessions ≤ 150 ms, apply one change ≤ 3 ms, in jsdom). The numbers are
// printed; budgets are judged by `make bench` (`node js/bench/run.mjs` prints the same numbers
// as JSON for it), never here: a timed assertion failed this suite at load 15 (10× the budget
// was not enough). Here the benches must run to the end and measure something.
import { expect, it } from "vitest";
import { runRenderBench } from "../bench/render-bench";

it("P10: render 500 sessions, apply one change", () => {
  const result = runRenderBench({ sessions: 500, changes: 200 });
  console.log(
    `P10 (jsdom): render ${result.sessions} sessions ${result.render_ms.toFixed(1)} ms ` +
      `(best ${result.render_best_ms.toFixed(1)}, cpu ${result.render_cpu_ms?.toFixed(1) ?? "n/a"}, ` +
      `cold ${result.render_cold_ms.toFixed(1)} ms, budget 150) · ` +
      `apply one change ${result.apply_one_ms.toFixed(3)} ms (p95 ${result.apply_one_p95_ms.toFixed(3)}, budget 3) · ` +
      `state change + re-sort ${result.apply_move_ms.toFixed(3)} ms (p95 ${result.apply_move_p95_ms.toFixed(3)}) · ` +
      `age tick ${result.tick_ms.toFixed(1)} ms`,
  );
  for (const ms of [result.render_ms, result.apply_one_ms, result.apply_move_ms]) {
    expect(Number.isFinite(ms) && ms > 0).toBe(true);
  }
}, 120_000);

// P14 (render strips for 500 sessions × 200 transitions ≤ 200 ms; add one transition ≤ 3 ms).
it("P14: strips of 500 sessions × 200 transitions, one new transition", async () => {
  const { runTimelineBench } = await import("../bench/timeline-bench");
  const r = runTimelineBench(500, 200);
  console.log(
    `P14 (jsdom): render ${r.sessions} × ${r.transitions} ${r.render_ms.toFixed(1)} ms ` +
      `(without history ${r.render_without_history_ms.toFixed(1)} ms, budget 200) · ` +
      `one new transition ${r.add_one_ms.toFixed(3)} ms (p95 ${r.add_one_p95_ms.toFixed(3)}, budget 3)`,
  );
  for (const ms of [r.render_ms, r.add_one_ms]) expect(Number.isFinite(ms) && ms > 0).toBe(true);
}, 120_000);
