import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Row, State } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowEl, rowIds, visible, watch, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;

beforeEach(() => {
  vi.useFakeTimers({ now: T0 + 12_000 });
});

afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  vi.useRealTimers();
});

async function show(rows: Row[], seq = 1) {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, seq) });
  mounted = await mount(fake);
  return { fake, root: mounted.el };
}

function patch(fake: FakeModel, seq: number, upsert: Row[], remove: string[] = []) {
  fake.emitCustom({ type: "patch", seq, upsert, remove });
}

/** A row's detail lines as shown (one block, one line per newline). */
function lines(row: Element): string[] {
  return q(row, ".pmux-lines").textContent!.split("\n");
}

const status = (row: Element) => q(row, ".pmux-status").textContent;

describe("a row per state", () => {
  it.each<[State, string]>([
    ["idle", "idle"],
    ["busy", "busy"],
    ["needs-input", "needs input"],
    ["review", "review"],
    ["unknown", "unknown"],
  ])("%s: dot class and text label", async (state, label) => {
    const { root } = await show([makeRow({ session_id: "a", state, name: "api (main:1.%3)" })]);
    const row = rowEl(root, "a");
    // the dot is the row's ::before, drawn from its state class (widget.css)
    expect(row.className).toBe(`pmux-row pmux-row--${state}`);
    expect(status(row)).toBe(`${label} · 12s`);
    expect(q(row, ".pmux-name").textContent).toBe("api (main:1.%3)");
    // Only review rows can be dismissed.
    expect(visible(row.querySelector(".pmux-dismiss"))).toBe(state === "review");
  });
});

describe("row contents", () => {
  it("shows tool, snippet (full text in title), tokens, context, badges and why", async () => {
    const snippet = "A long answer. ".repeat(12).trim();
    const { root } = await show([
      makeRow({
        session_id: "a",
        state: "busy",
        current_tool: "Bash",
        tool_summary: "$ pytest -q",
        last_assistant: snippet,
        tokens: { input: 300, output: 1200, cache_read: 12_000, cache_creation: 0 },
        context_tokens: 45_000,
        compacting: true,
        subagents: 2,
        source: "hook:PreToolUse",
      }),
    ]);
    const row = rowEl(root, "a");
    expect(lines(row)).toEqual([
      "Bash · $ pytest -q",
      snippet,
      "compacting2 agents12.3k in · 1.2k out · ctx 45k · via PreToolUse hook",
    ]);
    expect(q(row, ".pmux-badge--compacting").textContent).toBe("compacting");
    // tooltips are written when the pointer first reaches the row
    const block = q(row, ".pmux-lines");
    expect(block.hasAttribute("title")).toBe(false);
    q(row, ".pmux-name").dispatchEvent(new Event("pointerover", { bubbles: true }));
    expect(block.title.split("\n")).toContain(snippet);
    expect(block.title).toContain("cache read 12,000");
    expect(q(row, ".pmux-name").title).toContain("session a");
  });

  it("puts the compacting badge first, whichever arrived first", async () => {
    const base = { session_id: "a", state: "busy" as const, source: "hook:PreCompact" };
    const { fake, root } = await show([makeRow({ ...base, subagents: 2 })]);
    patch(fake, 2, [makeRow({ ...base, subagents: 2, compacting: true })]);
    expect(lines(rowEl(root, "a"))).toEqual(["compacting2 agentsvia PreCompact hook"]);
  });

  it("says what needs-input waits for, and shows StopFailure errors as errors", async () => {
    const { root } = await show([
      makeRow({ session_id: "w", state: "needs-input", waiting_for: "approve Bash", source: "pid:waiting" }),
      makeRow({
        session_id: "e",
        state: "review",
        error: "rate_limit",
        error_detail: "429: slow down",
        source: "hook:StopFailure",
      }),
      makeRow({ session_id: "i", state: "idle", source: "transcript:interrupt" }),
    ]);
    expect(lines(rowEl(root, "w"))).toEqual(["waiting for: approve Bash", "PID file says waiting"]);
    const error = q(rowEl(root, "e"), ".pmux-lines .pmux-error");
    expect(error.textContent).toBe("rate_limit: 429: slow down\n");
    expect(visible(error)).toBe(true);
    expect(lines(rowEl(root, "e"))).toEqual(["rate_limit: 429: slow down", "via StopFailure hook"]);
    expect(lines(rowEl(root, "i"))).toEqual(["interrupted (Esc)"]);
    expect(q(rowEl(root, "i"), ".pmux-lines").className).toBe("pmux-lines pmux-lines--meta-only");
  });

  it("drops a line again when its field clears", async () => {
    const row = makeRow({ session_id: "a", state: "busy", current_tool: "Read", tool_summary: "Read x.py", error: "overloaded" });
    const { fake, root } = await show([row]);
    expect(lines(rowEl(root, "a"))).toEqual(["Read x.py", "overloaded", "via SessionStart hook"]);
    patch(fake, 2, [{ ...row, current_tool: null, tool_summary: null, error: null }]);
    expect(lines(rowEl(root, "a"))).toEqual(["via SessionStart hook"]);
    expect(visible(q(rowEl(root, "a"), ".pmux-error"))).toBe(false);
  });

  it("dismiss sends the message once and waits for the kernel", async () => {
    const row = makeRow({ session_id: "r", state: "review" });
    const { fake, root } = await show([row]);
    const button = q<HTMLButtonElement>(rowEl(root, "r"), ".pmux-dismiss");
    expect(button.getAttribute("aria-label")).toContain("Dismiss");
    button.click();
    button.click();
    expect(fake.sent).toEqual([{ type: "dismiss", session_id: "r" }]);
    expect(button.getAttribute("aria-disabled")).toBe("true");
    patch(fake, 2, [{ ...row, state: "idle", source: "user:dismiss" }]);
    expect(visible(rowEl(root, "r").querySelector(".pmux-dismiss"))).toBe(false);
  });
});

describe("groups and sorting", () => {
  const fleet = () => [
    makeRow({ session_id: "a1", workspace: "alpha", name: "zeta", state: "idle" }),
    makeRow({ session_id: "a2", workspace: "alpha", name: "beta", state: "busy" }),
    makeRow({ session_id: "a3", workspace: "alpha", name: "alpha", state: "idle" }),
    makeRow({ session_id: "b1", workspace: "bravo", name: "one", state: "review" }),
    makeRow({ session_id: "c1", workspace: "charlie", name: "two", state: "unknown" }),
    makeRow({ session_id: "d1", workspace: "delta", name: "w10", state: "idle" }),
    makeRow({ session_id: "d2", workspace: "delta", name: "w2", state: "idle" }),
  ];

  it("orders groups by their dot, then name; rows by priority, then name", async () => {
    const { root } = await show(fleet());
    const groups = [...root.querySelectorAll<HTMLElement>(".pmux-group")].map((g) => g.dataset.workspace);
    expect(groups).toEqual(["bravo", "alpha", "charlie", "delta"]);
    expect(rowIds(root)).toEqual(["b1", "a2", "a3", "a1", "c1", "d2", "d1"]);
  });

  it("workspace dot is the most urgent state: needs-input > review > busy > unknown > idle", async () => {
    const { fake, root } = await show(fleet());
    const dot = () => q(q(root, '.pmux-group[data-workspace="alpha"]'), ".pmux-group-head .pmux-dot").className;
    const summary = () => q(root, '.pmux-group[data-workspace="alpha"] .pmux-group-summary').textContent;
    expect(dot()).toBe("pmux-dot pmux-dot--busy");
    expect(summary()).toBe("busy · 3");
    patch(fake, 2, [makeRow({ session_id: "a1", workspace: "alpha", name: "zeta", state: "review" })]);
    expect(dot()).toBe("pmux-dot pmux-dot--review");
    patch(fake, 3, [makeRow({ session_id: "a3", workspace: "alpha", name: "alpha", state: "needs-input" })]);
    expect(dot()).toBe("pmux-dot pmux-dot--needs-input");
    expect(summary()).toBe("needs input · 3");
    // alpha now outranks bravo (review) and moves to the top.
    expect(root.querySelector<HTMLElement>(".pmux-group")!.dataset.workspace).toBe("alpha");
    patch(fake, 4, [
      makeRow({ session_id: "a1", workspace: "alpha", name: "zeta", state: "idle" }),
      makeRow({ session_id: "a2", workspace: "alpha", name: "beta", state: "idle" }),
      makeRow({ session_id: "a3", workspace: "alpha", name: "alpha", state: "idle" }),
    ]);
    expect(dot()).toBe("pmux-dot pmux-dot--idle");
    expect([...root.querySelectorAll<HTMLElement>(".pmux-group")].map((g) => g.dataset.workspace)).toEqual([
      "bravo",
      "charlie",
      "alpha",
      "delta",
    ]);
  });

  it("moves a row to another workspace and drops an emptied group", async () => {
    const { fake, root } = await show(fleet());
    const node = rowEl(root, "c1");
    patch(fake, 2, [makeRow({ session_id: "c1", workspace: "delta", name: "two", state: "unknown" })]);
    expect(root.querySelector('.pmux-group[data-workspace="charlie"]')).toBeNull();
    expect(rowEl(root, "c1")).toBe(node); // same element, moved
    expect(rowIds(root)).toEqual(["b1", "a2", "a3", "a1", "c1", "d2", "d1"]);
    expect(node.closest<HTMLElement>(".pmux-group")!.dataset.workspace).toBe("delta");
  });

  it("adds and removes sessions by patch", async () => {
    const { fake, root } = await show(fleet());
    patch(fake, 2, [makeRow({ session_id: "n1", workspace: "echo", name: "new", state: "needs-input" })], ["a2"]);
    // alpha lost its busy row: its dot drops to idle, below charlie (unknown)
    expect(rowIds(root)).toEqual(["n1", "b1", "c1", "a3", "a1", "d2", "d1"]);
    expect(root.querySelector('[data-session-id="a2"]')).toBeNull();
  });
});

describe("keyed updates", () => {
  it("a change to one session mutates only that row's nodes", async () => {
    const rows = Array.from({ length: 30 }, (_, i) =>
      makeRow({ session_id: `s${i}`, workspace: `w${i % 3}`, name: `n${String(i).padStart(2, "0")}`, state: "busy" }),
    );
    const { fake, root } = await show(rows);
    const others = rows.filter((r) => r.session_id !== "s7").map((r) => rowEl(root, r.session_id));
    const target = rowEl(root, "s7");
    const observer = watch(root);
    // same state (no move): tool, snippet and tokens change
    patch(fake, 2, [
      {
        ...rows[7]!,
        current_tool: "Edit",
        tool_summary: "Edit a.py (+1, -0)",
        last_assistant: "done",
        tokens: { input: 5, output: 7, cache_read: 0, cache_creation: 0 },
      },
    ]);
    const records = observer.take();
    observer.stop();
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) expect(target.contains(r.target)).toBe(true);
    rows
      .filter((r) => r.session_id !== "s7")
      .forEach((r, i) => expect(rowEl(root, r.session_id)).toBe(others[i]));
  });

  it("a state change that re-sorts moves only that row", async () => {
    const rows = Array.from({ length: 10 }, (_, i) =>
      makeRow({ session_id: `s${i}`, workspace: "w", name: `n${i}`, state: "busy" }),
    );
    const { fake, root } = await show(rows);
    const target = rowEl(root, "s6");
    const others = rows.filter((r) => r.session_id !== "s6").map((r) => rowEl(root, r.session_id));
    const observer = watch(root);
    patch(fake, 2, [{ ...rows[6]!, state: "needs-input" }]);
    const records = observer.take();
    observer.stop();
    for (const r of records) {
      // no other row is touched...
      expect(others.some((o) => o.contains(r.target))).toBe(false);
      // ...and the lists only moved this one (the group head and header counts may change)
      if (r.type === "childList" && !target.contains(r.target) && r.target.nodeName === "UL") {
        expect([...r.addedNodes, ...r.removedNodes].every((n) => n === target)).toBe(true);
      }
    }
    expect(rowIds(root)).toEqual(["s6", "s0", "s1", "s2", "s3", "s4", "s5", "s7", "s8", "s9"]);
  });

  it("an identical patch mutates nothing", async () => {
    const rows = [makeRow({ session_id: "a", state: "busy", current_tool: "Bash", subagents: 1, compacting: true })];
    const { fake, root } = await show(rows);
    const observer = watch(root);
    patch(fake, 2, [{ ...rows[0]! }]);
    expect(observer.take()).toEqual([]);
    observer.stop();
  });
});

describe("ended sessions", () => {
  it("go to a collapsed Ended section, built when opened", async () => {
    const { fake, root } = await show([
      makeRow({ session_id: "live", state: "busy" }),
      makeRow({ session_id: "gone1", ended: true, running: false, state_since: T0 - 5000 }),
      makeRow({ session_id: "gone2", ended: true, running: false, state_since: T0 - 1000 }),
    ]);
    const ended = q<HTMLDetailsElement>(root, ".pmux-ended");
    expect(ended.open).toBe(false);
    expect(q(ended, "summary").textContent).toBe("Ended (2)");
    expect(ended.querySelectorAll(".pmux-row")).toHaveLength(0);
    ended.open = true;
    ended.dispatchEvent(new Event("toggle"));
    expect(rowIds(root, ".pmux-ended")).toEqual(["gone2", "gone1"]); // most recent first
    expect(rowEl(ended, "gone1").classList.contains("pmux-row--ended")).toBe(true);
    expect(status(rowEl(ended, "gone1"))).toMatch(/^ended · /);
    // a live session ends: it leaves the groups and joins the section
    patch(fake, 2, [makeRow({ session_id: "live", state: "idle", ended: true, running: false, state_since: T0 })]);
    expect(rowIds(root)).toEqual([]);
    expect(rowIds(root, ".pmux-ended")).toEqual(["live", "gone2", "gone1"]);
    expect(q(ended, "summary").textContent).toBe("Ended (3)");
    expect(visible(q(root, ".pmux-empty"))).toBe(true);
    expect(q(root, ".pmux-empty-title").textContent).toBe("No running Claude Code sessions.");
  });
});

describe("time in state", () => {
  it("one timer refreshes only the age text nodes", async () => {
    const { root } = await show([
      makeRow({ session_id: "a", state: "busy", state_since: T0 }),
      makeRow({ session_id: "b", state: "idle", state_since: T0 - 3_600_000 }),
    ]);
    expect(status(rowEl(root, "a"))).toBe("busy · 12s");
    const observer = watch(root);
    vi.advanceTimersByTime(1000);
    const records = observer.take();
    observer.stop();
    expect(status(rowEl(root, "a"))).toBe("busy · 13s");
    expect(records).toHaveLength(1); // "b" still reads 1h: untouched
    expect(records[0]!.type).toBe("characterData");
    expect(records[0]!.target.parentElement!.className).toBe("pmux-status");
    vi.advanceTimersByTime(48_000);
    expect(status(rowEl(root, "a"))).toBe("busy · 1m");
    expect(vi.getTimerCount()).toBe(1);
  });
});
