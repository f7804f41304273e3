// P10 (render 500 sessions ≤ 150 ms, apply one change ≤ 3 ms, in jsdom). The numbers are
// printed; the assertions are 10× the budget because CI machines are loaded and jsdom is not
// a browser. `node js/bench/run.mjs` prints the same numbers as JSON for `make bench`.
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
  expect(result.render_ms).toBeLessThan(1500);
  expect(result.apply_one_ms).toBeLessThan(30);
  expect(result.apply_move_ms).toBeLessThan(30);
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
  expect(r.render_ms).toBeLessThan(2000);
  expect(r.add_one_ms).toBeLessThan(30);
}, 120_000);
