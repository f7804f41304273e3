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
  it("busy: the current tool and the prompt it works on, never the previous answer", async () => {
    const { root } = await show([
      makeRow({
        session_id: "a",
        state: "busy",
        activity: "Bash $ uv run pytest -q",
        last_prompt: "fix the flaky payment test",
        last_assistant: "All 142 tests pass.",
        answer: null,
        tokens: { input: 300, output: 1200, cache_read: 7_600_000, cache_creation: 0 },
        context_tokens: 166_000,
        subagents: 2,
        source: "pid:busy",
      }),
    ]);
    const row = rowEl(root, "a");
    expect(lines(row)).toEqual([
      "Bash $ uv run pytest -q",
      "“fix the flaky payment test”",
      "2 agentscompacts soonctx 83% · working",
    ]);
    expect(row.textContent).not.toContain("142");
    expect(row.textContent).not.toContain("7.6M");
    expect(q(row, ".pmux-badge--warn").textContent).toBe("compacts soon");
    // tooltips are written when the pointer first reaches the row: totals, cache split, signal
    const block = q(row, ".pmux-lines");
    expect(block.hasAttribute("title")).toBe(false);
    q(row, ".pmux-name").dispatchEvent(new Event("pointerover", { bubbles: true }));
    expect(block.title).toContain("7,600,000 cache read");
    expect(block.title).toContain("signal pid:busy");
    expect(q(row, ".pmux-name").title).toContain("session a");
  });

  it("a background session says so where a pane would be, and in its name's tooltip", async () => {
    const { root } = await show([
      makeRow({
        session_id: "bg",
        state: "needs-input",
        project: "acme",
        workspace: "acme",
        name: "acme (background: late-a)",
        background: { job: "84ed038b", name: "late-a" },
      }),
      makeRow({ session_id: "pane", state: "busy", project: "acme", workspace: "acme" }),
    ]);
    const row = rowEl(root, "bg");
    expect(q(row, ".pmux-name").textContent).toContain("(background: late-a)");
    q(row, ".pmux-name").dispatchEvent(new Event("pointerover", { bubbles: true }));
    const title = q(row, ".pmux-name").title;
    expect(title).toContain("background session “late-a” (job 84ed038b)");
    expect(title).toContain("claude attach 84ed038b");
    expect(q(rowEl(root, "pane"), ".pmux-name").title).not.toContain("background session");
  });

  it("busy without a tool says it is thinking", async () => {
    const { root } = await show([makeRow({ session_id: "a", state: "busy", activity: null, last_prompt: null, source: "" })]);
    expect(lines(rowEl(root, "a"))).toEqual(["thinking", ""]);
  });

  it("puts the compacting badge first, whichever arrived first", async () => {
    const base = { session_id: "a", state: "busy" as const, source: "", activity: null };
    const { fake, root } = await show([makeRow({ ...base, subagents: 2 })]);
    patch(fake, 2, [makeRow({ ...base, subagents: 2, compacting: true })]);
    expect(lines(rowEl(root, "a"))).toEqual(["compacting its context", "compacting2 agents"]);
  });

  it("says what a turn left running and the permission mode (2.1.332)", async () => {
    const tasks = [
      { type: "subagent", description: "Slow research", status: "running" },
      { type: "shell", description: "Dev server", status: "running" },
    ];
    const base = { session_id: "a", state: "busy" as const, source: "wait:background-agent", activity: null };
    const { fake, root } = await show([
      makeRow({ ...base, subagents: 1, background_tasks: tasks, permission_mode: "auto" }),
    ]);
    const text = lines(rowEl(root, "a")).join("|");
    expect(text).toContain("1 background agent · 1 background shell");
    expect(text).toContain("auto mode");
    expect(text).not.toContain("1 agent|"); // the background agent is not counted twice
    const badge = [...rowEl(root, "a").querySelectorAll(".pmux-badge")].find((b) =>
      b.textContent!.includes("background"),
    )!;
    expect(badge.getAttribute("title")).toBe("subagent: Slow research\nshell: Dev server");
    patch(fake, 2, [
      makeRow({ ...base, state: "review", source: "hook:Stop", background_tasks: [], permission_mode: "default" }),
    ]);
    const after = lines(rowEl(root, "a")).join("|");
    expect(after).not.toContain("background");
    expect(after).not.toContain("auto mode");
  });

  it("needs-input: what it asks in full words; review: its answer with `code`; errors as errors", async () => {
    const { root } = await show([
      makeRow({
        session_id: "w",
        state: "needs-input",
        asks: "asks to edit src/…/processors/stripe_webhooks.py (+3, -1)",
        last_prompt: "handle refunds",
        source: "hook:PermissionRequest",
      }),
      makeRow({ session_id: "r", state: "review", answer: "Run `make test` to check.", source: "hook:Stop" }),
      makeRow({
        session_id: "e",
        state: "review",
        error: "rate_limit",
        error_detail: "429: slow down",
        answer: null,
        source: "hook:StopFailure",
      }),
      makeRow({ session_id: "i", state: "idle", answer: null, source: "transcript:interrupt" }),
    ]);
    expect(lines(rowEl(root, "w"))).toEqual([
      "asks to edit src/…/processors/stripe_webhooks.py (+3, -1)",
      "“handle refunds”",
      "asked for permission",
    ]);
    expect(rowEl(root, "w").getAttribute("aria-label")).toBe(
      "w, needs input: asks to edit src/…/processors/stripe_webhooks.py (+3, -1)",
    );
    expect(lines(rowEl(root, "r"))).toEqual(["Run make test to check.", "finished its turn"]);
    expect(q(rowEl(root, "r"), ".pmux-primary code").textContent).toBe("make test");
    const error = q(rowEl(root, "e"), ".pmux-lines .pmux-error");
    expect(error.textContent).toBe("rate_limit: 429: slow down\n");
    expect(visible(error)).toBe(true);
    expect(lines(rowEl(root, "e"))).toEqual(["rate_limit: 429: slow down", "stopped on an error"]);
    expect(lines(rowEl(root, "i"))).toEqual(["interrupted"]);
    expect(q(rowEl(root, "i"), ".pmux-lines").className).toBe("pmux-lines pmux-lines--meta-only");
  });

  it("a new state never keeps the previous turn's words", async () => {
    const done = makeRow({ session_id: "a", state: "review", answer: "All 142 tests pass.", last_prompt: "run tests" });
    const { fake, root } = await show([done]);
    expect(lines(rowEl(root, "a"))[0]).toBe("All 142 tests pass.");
    patch(fake, 2, [
      makeRow({ session_id: "a", state: "busy", answer: null, activity: null, last_prompt: "now fix lint", source: "hook:UserPromptSubmit" }),
    ]);
    expect(lines(rowEl(root, "a"))).toEqual(["thinking", "“now fix lint”", "got a prompt"]);
  });

  it("drops a line again when its field clears", async () => {
    const base = { session_id: "a", state: "busy" as const, source: "pid:busy", last_prompt: null };
    const { fake, root } = await show([makeRow({ ...base, activity: "Read x.py", error: "overloaded" })]);
    expect(lines(rowEl(root, "a"))).toEqual(["overloaded", "Read x.py", "working"]);
    patch(fake, 2, [makeRow({ ...base, activity: null, error: null })]);
    expect(lines(rowEl(root, "a"))).toEqual(["thinking", "working"]);
    expect(visible(q(rowEl(root, "a"), ".pmux-error"))).toBe(false);
  });

  it("rows are focusable, and a screen reader hears state, name and what it waits for", async () => {
    const { root } = await show([makeRow({ session_id: "a", state: "review", name: "api", answer: "Done." })]);
    const row = rowEl(root, "a");
    expect(row.tabIndex).toBe(0);
    expect(row.getAttribute("aria-label")).toBe("api, review: Done.");
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
    // the row says so at once; after a second without an answer, why it waits
    expect(status(rowEl(root, "r"))).toBe("dismissing… · 12s");
    expect(rowEl(root, "r").querySelector(".pmux-pending")).toBeNull();
    vi.advanceTimersByTime(1000);
    expect(q(rowEl(root, "r"), ".pmux-pending").textContent).toContain("Jupyter delivers clicks when the running cell ends");
    patch(fake, 2, [makeRow({ ...row, state: "idle", source: "user:dismiss" })]);
    expect(status(rowEl(root, "r"))).toBe("idle · 13s");
    expect(visible(q(rowEl(root, "r"), ".pmux-pending"))).toBe(false);
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

  it("shows a workspace's header only when it holds two sessions or more", async () => {
    const { root } = await show(fleet());
    const head = (ws: string) => q(root, `.pmux-group[data-workspace="${ws}"] .pmux-group-head`);
    expect(visible(head("alpha"))).toBe(true);
    expect(visible(head("bravo"))).toBe(false);
    expect(q(root, '.pmux-group[data-workspace="alpha"] .pmux-group-summary').textContent).toBe("3 sessions");
  });

  it("pins needs-input rows in a Needs you block on top, longest-waiting first", async () => {
    const { root } = await show([
      ...fleet(),
      makeRow({ session_id: "n1", workspace: "alpha", name: "new", state: "needs-input", state_since: T0 - 1000 }),
      makeRow({ session_id: "n2", workspace: "delta", name: "old", state: "needs-input", state_since: T0 - 9000 }),
    ]);
    const first = root.querySelector<HTMLElement>(".pmux-group")!;
    expect(first.dataset.group).toBe("Needs you");
    expect(visible(q(first, ".pmux-group-head"))).toBe(true);
    expect(rowIds(root).slice(0, 2)).toEqual(["n2", "n1"]);
  });

  it("groups by state when switched, and remembers the choice", async () => {
    localStorage.removeItem("pmux-widget.grouping");
    const { root } = await show(fleet());
    const select = q<HTMLSelectElement>(root, ".pmux-grouping select");
    expect(select.value).toBe("workspace");
    select.value = "state";
    select.dispatchEvent(new Event("change"));
    const groups = [...root.querySelectorAll<HTMLElement>(".pmux-group")].map((g) => g.dataset.group);
    expect(groups).toEqual(["Done", "Working", "Idle"]);
    expect(rowIds(root)).toEqual(["b1", "a2", "c1", "a3", "d2", "d1", "a1"]);
    expect(localStorage.getItem("pmux-widget.grouping")).toBe("state");
    await mounted!.destroy();
    mounted = null;
    const again = await show(fleet());
    expect(q<HTMLSelectElement>(again.root, ".pmux-grouping select").value).toBe("state");
    localStorage.removeItem("pmux-widget.grouping");
  });

  it("workspace dot is the most urgent state: needs-input > review > busy > unknown > idle", async () => {
    const { fake, root } = await show(fleet());
    const dot = () => q(q(root, '.pmux-group[data-workspace="alpha"]'), ".pmux-group-head .pmux-dot").className;
    const summary = () => q(root, '.pmux-group[data-workspace="alpha"] .pmux-group-summary').textContent;
    expect(dot()).toBe("pmux-dot pmux-dot--busy pmux-dot--static");
    expect(summary()).toBe("3 sessions");
    patch(fake, 2, [makeRow({ session_id: "a1", workspace: "alpha", name: "zeta", state: "review" })]);
    expect(dot()).toBe("pmux-dot pmux-dot--review pmux-dot--static");
    // alpha (review, then name) now comes before bravo (review)
    expect(root.querySelector<HTMLElement>(".pmux-group")!.dataset.workspace).toBe("alpha");
    patch(fake, 4, [
      makeRow({ session_id: "a1", workspace: "alpha", name: "zeta", state: "idle" }),
      makeRow({ session_id: "a2", workspace: "alpha", name: "beta", state: "idle" }),
      makeRow({ session_id: "a3", workspace: "alpha", name: "alpha", state: "idle" }),
    ]);
    expect(dot()).toBe("pmux-dot pmux-dot--idle pmux-dot--static");
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
    // alpha lost its busy row: its dot drops to idle, below charlie (unknown); n1 is pinned
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
        activity: "Edit a.py (+1, -0)",
        last_prompt: "edit it",
        tokens: { input: 5, output: 7, cache_read: 0, cache_creation: 0 },
        context_tokens: 20_000,
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

describe("a list that holds still", () => {
  const rows = () =>
    Array.from({ length: 6 }, (_, i) =>
      makeRow({ session_id: `s${i}`, workspace: "w", name: `n${i}`, state: "busy", state_since: T0 - i }),
    );

  it("moves nothing while the pointer is in the list, and applies the order when it leaves", async () => {
    const { fake, root } = await show(rows());
    const groups = q(root, ".pmux-groups");
    expect(rowIds(root)).toEqual(["s0", "s1", "s2", "s3", "s4", "s5"]);
    groups.dispatchEvent(new Event("pointerenter"));
    const observer = watch(root);
    patch(fake, 2, [
      makeRow({ session_id: "s4", workspace: "w", name: "n4", state: "review" }),
      makeRow({ session_id: "s5", workspace: "w", name: "n5", state: "needs-input" }),
      makeRow({ session_id: "n9", workspace: "w", name: "a-new-one", state: "review" }),
    ]);
    const moved = observer
      .take()
      .filter((r) => r.type === "childList")
      .flatMap((r) => [...r.removedNodes]);
    observer.stop();
    expect(moved).toEqual([]); // no row left its place: new ones were only appended
    expect(rowIds(root)).toEqual(["s0", "s1", "s2", "s3", "s4", "s5", "n9"]);
    expect(status(rowEl(root, "s5"))).toMatch(/^needs input/); // but each row is up to date
    expect(q(root, ".pmux-list").hasAttribute("data-order-waits")).toBe(true); // the header says so
    groups.dispatchEvent(new Event("pointerleave"));
    expect(q(root, ".pmux-list").hasAttribute("data-order-waits")).toBe(false);
    expect(rowIds(root)).toEqual(["s5", "n9", "s4", "s0", "s1", "s2", "s3"]);
    expect(q(root, ".pmux-group").dataset.group).toBe("Needs you");
  });

  it("keyboard focus in the list holds the order too", async () => {
    const { fake, root } = await show(rows());
    rowEl(root, "s2").focus();
    patch(fake, 2, [makeRow({ session_id: "s3", workspace: "w", name: "n3", state: "review" })]);
    expect(rowIds(root)).toEqual(["s0", "s1", "s2", "s3", "s4", "s5"]);
    expect(document.activeElement).toBe(rowEl(root, "s2"));
    rowEl(root, "s2").blur();
    expect(rowIds(root)).toEqual(["s3", "s0", "s1", "s2", "s4", "s5"]);
  });
});

describe("ended sessions", () => {
  it("lists the last 10, counts the rest, and clears", async () => {
    const gone = Array.from({ length: 23 }, (_, i) =>
      makeRow({ session_id: `g${String(i).padStart(2, "0")}`, ended: true, running: false, state_since: T0 - i * 1000 }),
    );
    const { fake, root } = await show([makeRow({ session_id: "live", state: "busy" }), ...gone]);
    const ended = q<HTMLDetailsElement>(root, ".pmux-ended");
    expect(q(ended, "summary").textContent).toBe("Ended (23)");
    ended.open = true;
    ended.dispatchEvent(new Event("toggle"));
    expect(rowIds(root, ".pmux-ended")).toEqual(gone.slice(0, 10).map((r) => r.session_id));
    expect(q(ended, ".pmux-ended-more").textContent).toBe("13 older not shown");
    q<HTMLButtonElement>(ended, ".pmux-ended-clear").click();
    expect(ended.hidden).toBe(true);
    // a cleared session stays cleared; a newly ended one shows
    patch(fake, 2, [{ ...gone[0]!, name: "again" }, makeRow({ session_id: "live", ended: true, running: false })]);
    expect(q(ended, "summary").textContent).toBe("Ended (1)");
    expect(rowIds(root, ".pmux-ended")).toEqual(["live"]);
  });

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
