// The timeline's pure part (timeline.ts) and the strips it draws on the rows.
import { afterEach, describe, expect, it, vi } from "vitest";
import { gradient, StripView } from "../src/render/strip";
import { appendTransition, dayStart, formatLength, insight, segmentsIn, type Transition } from "../src/timeline";
import type { State } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { initModel, q, renderView, rowEl, type Mounted } from "./helpers";

const M = 60_000;
const t = (min: number, state: State, source = "hook:Stop"): Transition => ({ at: T0 + min * M, state, source });

// The same transitions core/timeline.py and core/insight.py were asked about (numbers from
// core/insight.py's today() and core/timeline.py's segments()).
const A = [
  t(0, "busy", "hook:UserPromptSubmit"),
  t(5, "needs-input", "hook:PermissionRequest"),
  t(7, "review"),
  t(9, "busy", "hook:UserPromptSubmit"),
  t(20, "review"),
  t(30, "idle", "user:dismiss"),
  t(40, "busy", "hook:UserPromptSubmit"),
  t(50, "needs-input", "hook:PermissionRequest"),
];
const B = [t(-30, "review"), t(6, "busy", "hook:UserPromptSubmit"), t(8, "busy", "pid:busy"), t(12, "review")];

describe("segments", () => {
  it("match core/timeline.py's, clipped to the range (repeats continue a segment)", () => {
    const segs = segmentsIn(B, T0 + 10 * M, T0 + 60 * M);
    expect(segs.map((s) => [s.state, s.start - T0, s.end - T0, s.open])).toEqual([
      ["busy", 6 * M, 12 * M, false],
      ["review", 12 * M, 60 * M, true],
    ]);
    expect(segs[0]!.source).toBe("hook:UserPromptSubmit"); // the entry's, not the repeat's
  });

  it("tile the range from the first transition on: no gap, no overlap, for any range", () => {
    for (let seed = 1; seed < 200; seed++) {
      let x = seed;
      const rand = () => ((x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const states: State[] = ["busy", "needs-input", "review", "idle", "unknown"];
      const entries: Transition[] = [];
      let at = T0;
      for (let i = 0; i < 1 + Math.floor(rand() * 30); i++) {
        at += Math.floor(rand() * 10 * M);
        appendTransition(entries, { at, state: states[Math.floor(rand() * 5)]!, source: "" });
      }
      const from = T0 + Math.floor(rand() * 200 * M) - 20 * M;
      const to = from + 1 + Math.floor(rand() * 120 * M);
      const segs = segmentsIn(entries, from, to);
      if (!segs.length) {
        expect(entries[0]!.at >= to || entries.length === 0).toBe(true);
        continue;
      }
      expect(Math.max(segs[0]!.start, from)).toBe(Math.max(entries[0]!.at, from));
      expect(segs[segs.length - 1]!.end).toBe(to);
      for (let i = 1; i < segs.length; i++) {
        expect(segs[i]!.start).toBe(segs[i - 1]!.end);
        expect(segs[i]!.state).not.toBe(segs[i - 1]!.state);
      }
    }
  });

  it("an ended session's last segment stops at its end", () => {
    const segs = segmentsIn([t(0, "busy"), t(10, "idle")], T0, T0 + 60 * M, T0 + 10 * M);
    expect(segs.map((s) => [s.state, s.end - T0])).toEqual([["busy", 10 * M]]);
  });

  it("a transition not newer than the last is not appended twice", () => {
    const entries = [t(0, "busy")];
    expect(appendTransition(entries, t(0, "busy"))).toBe(false);
    expect(appendTransition(entries, t(1, "review"))).toBe(true);
    expect(entries).toHaveLength(2);
  });

  it("fill the strip with the dots' colors, transparent before the history", () => {
    const segs = segmentsIn([t(30, "busy"), t(45, "review")], T0, T0 + 60 * M);
    expect(gradient(segs, T0, 60 * M)).toBe(
      "linear-gradient(to right, transparent 0% 50%, var(--sb) 50% 75%, var(--sr) 75% 100%)",
    );
  });
});

describe("insight", () => {
  it("is core/insight.py's today(): waited, median response, turns, per session", () => {
    const today = insight(
      new Map([
        ["a", A],
        ["b", B],
      ]),
      T0,
      T0 + 60 * M,
    );
    expect(today.waitedMs).toBe(4680_000);
    expect(today.medianResponseMs).toBe(1200_000);
    expect(today.responses).toBe(2);
    expect(today.turns).toBe(3);
    expect([...today.waitedBySession]).toEqual([
      ["a", 1440_000],
      ["b", 3240_000],
    ]);
  });

  it("counts a look at a finished turn (user:seen) as the response that ended its wait, as core/insight.py", () => {
    const seen = [t(0, "busy", "p"), t(10, "review"), t(25, "idle", "user:seen")];
    const dismissed = [t(0, "busy", "p"), t(10, "review"), t(25, "idle", "user:dismiss")];
    const of = (entries: Transition[]) => insight(new Map([["a", entries]]), T0, T0 + 100 * M);
    expect([of(seen).waitedMs, of(seen).responses, of(seen).medianResponseMs]).toEqual([15 * M, 1, 15 * M]);
    expect([of(dismissed).waitedMs, of(dismissed).responses]).toEqual([15 * M, 0]);
  });

  it("has words for lengths and a local midnight", () => {
    expect([formatLength(45_000), formatLength(12 * M), formatLength(65 * M)]).toEqual(["45s", "12m", "1h 05m"]);
    const midnight = new Date(dayStart(T0));
    expect([midnight.getHours(), midnight.getMinutes()]).toEqual([0, 0]);
  });
});

// ------------------------------------------------------------------ the strips on the rows

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.useRealTimers();
  localStorage.clear();
});

async function mount(fake: FakeModel): Promise<Mounted> {
  cleanups.push(await initModel(fake));
  const v = await renderView(fake);
  cleanups.push(() => v.destroy());
  return v;
}

function stripOf(v: Mounted, id: string): HTMLElement {
  return q(rowEl(v.el, id), ".pmux-strip");
}

describe("strips", () => {
  const now = T0 + 60 * M;
  const history = { since: now - 24 * 60 * M, sessions: { a: A } };
  const row = makeRow({ session_id: "a", state: "needs-input", state_since: T0 + 50 * M, source: "hook:PermissionRequest" });

  function fleet(): FakeModel {
    vi.useFakeTimers({ now, toFake: ["Date"] });
    return new FakeModel({ snapshot: { ...snapshotOf([row], 1), now }, history });
  }

  it("render each row's states over the last hour, and say so to screen readers", async () => {
    const v = await mount(fleet());
    const strip = stripOf(v, "a");
    const fill = strip.style.getPropertyValue("--pmux-strip-fill");
    expect(fill).toContain("var(--sb) 0% 8.33%");
    expect(fill).toContain("var(--sn) 83.33% 100%");
    expect(strip.tabIndex).toBe(0);
    expect(strip.getAttribute("aria-label")).toBe(
      "Timeline, last 1 h: 8 segments, now needs input; arrow keys read them",
    );
    expect(q(v.el, ".pmux-insight").textContent).toBe(
      "Today: waited on you 24m · median response 4m · 2 turns finished",
    );
    expect(q(rowEl(v.el, "a"), ".pmux-strip-waited").textContent).toBe("waited 24m");
  });

  it("show a segment's state, start, length and why on focus and arrow keys", async () => {
    const v = await mount(fleet());
    const strip = stripOf(v, "a");
    strip.focus();
    strip.dispatchEvent(new Event("focus"));
    const tip = q(rowEl(v.el, "a"), ".pmux-strip-tip");
    expect(tip.hidden).toBe(false);
    expect(tip.getAttribute("role")).toBe("tooltip");
    expect(strip.getAttribute("aria-describedby")).toBe(tip.id);
    expect(tip.textContent).toMatch(/^needs input · from \S.* · 10m so far · asked for permission$/);
    strip.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowLeft", bubbles: true }));
    expect(tip.textContent).toMatch(/^busy · from .* · 10m · got a prompt$/);
    strip.dispatchEvent(new KeyboardEvent("keydown", { key: "Home", bubbles: true }));
    expect(tip.textContent).toMatch(/^busy · from .* · 5m · got a prompt$/);
    strip.dispatchEvent(new Event("blur"));
    expect(tip.hidden).toBe(true);
  });

  it("show the segment under the pointer", async () => {
    const v = await mount(fleet());
    const strip = stripOf(v, "a");
    strip.getBoundingClientRect = () => ({ left: 0, width: 600, top: 0, height: 6 }) as DOMRect;
    strip.dispatchEvent(new MouseEvent("pointermove", { clientX: 35 * 10 })); // minute 35: idle
    expect(q(rowEl(v.el, "a"), ".pmux-strip-tip").textContent).toMatch(/^idle · from .* · 10m · marked as seen$/);
  });

  it("grow with a live transition (from the patch's row: no history in the patch)", async () => {
    const fake = fleet();
    const v = await mount(fake);
    const strip = stripOf(v, "a");
    vi.setSystemTime(now + 5 * M);
    fake.emitCustom({
      type: "patch",
      seq: 2,
      now: now + 5 * M,
      upsert: [makeRow({ session_id: "a", state: "busy", state_since: now + 4 * M, source: "hook:PostToolUse" })],
    });
    const fill = strip.style.getPropertyValue("--pmux-strip-fill");
    expect(fill).toMatch(/var\(--sn\) 75% 98\.33%, var\(--sb\) 98\.33% 100%\)$/);
    expect(strip.getAttribute("aria-label")).toBe("Timeline, last 1 h: 8 segments, now busy; arrow keys read them");
  });

  it("switch range, and remember it", async () => {
    const v = await mount(fleet());
    const select = q(v.el, ".pmux-range select") as HTMLSelectElement;
    select.value = "15m";
    select.dispatchEvent(new Event("change"));
    const strip = stripOf(v, "a");
    expect(strip.style.getPropertyValue("--pmux-strip-fill")).toBe(
      "linear-gradient(to right, var(--sb) 0% 33.33%, var(--sn) 33.33% 100%)",
    );
    expect(q(v.el, ".pmux-axis-start").textContent).toBe("−15 min");
    expect(localStorage.getItem("pmux-widget.timeline-range")).toBe("15m");
  });
});

describe("the clock", () => {
  it("redraws a strip once now moved by a step of its range, not on every tick", () => {
    const entries = [t(0, "busy"), t(30, "review")];
    const strip = new StripView("a", {
      entries: () => entries,
      rangeMs: () => 60 * M,
      rangeLabel: () => "1 h",
      clockOffset: () => 0,
    });
    const bar = strip.el.querySelector(".pmux-strip") as HTMLElement;
    const fill = () => bar.style.getPropertyValue("--pmux-strip-fill");
    const now = T0 + 60 * M;
    strip.draw(now);
    const first = fill();
    expect(first).toContain("var(--sr) 50% 100%");
    strip.draw(now + 1000); // a 1 s tick: within a step (6 s, at most 12 s with the spread)
    expect(fill()).toBe(first);
    strip.draw(now + 13_000); // more than two steps: the strip slid left
    expect(fill()).not.toBe(first);
    expect(fill()).toContain("var(--sr) 49.64% 100%");
    entries.push(t(60.2, "idle")); // a new transition redraws at once
    strip.draw(now + 14_000);
    expect(fill()).toMatch(/var\(--si\) [\d.]+% 100%\)$/);
  });
});
