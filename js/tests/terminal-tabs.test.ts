// Issue 21: which JupyterLab terminal tab shows which session's dot (tab-dots.ts, pure), and a
// row's "Open terminal" (shown only where the page can open terminals: an injected capability).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decorFor, seenInTerminal, sessionsByTerminal, withClasses } from "../lab/src/tab-dots";
import { setLabPanel } from "../src/lab-panel";
import type { Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowEl, visible, type Mounted } from "./helpers";

const inTerm = (id: string, name: string | null, over: Partial<Row> = {}): Row =>
  makeRow({ session_id: id, name: `s-${id}`, terminal: name === null ? null : { name }, ...over });

describe("seenInTerminal (issue 34)", () => {
  const rows = [
    inTerm("r", "1", { state: "review", state_since: T0 + 5 }),
    inTerm("b", "2", { state: "busy" }),
    inTerm("n", "3", { state: "needs-input" }),
  ];
  it("a focused terminal tab in a visible page ends its session's review, told once per review", () => {
    const seen = seenInTerminal(rows, "1", true, null);
    expect(seen?.row.session_id).toBe("r");
    expect(seenInTerminal(rows, "1", true, seen!.key)).toBeNull();
    // a later review of the same session is a new look
    const again = [inTerm("r", "1", { state: "review", state_since: T0 + 9 })];
    expect(seenInTerminal(again, "1", true, seen!.key)?.row.session_id).toBe("r");
  });

  it("nothing for a hidden page, no focused terminal, or a session not in review", () => {
    expect(seenInTerminal(rows, "1", false, null)).toBeNull();
    expect(seenInTerminal(rows, null, true, null)).toBeNull();
    expect(seenInTerminal(rows, "2", true, null)).toBeNull();
    expect(seenInTerminal(rows, "3", true, null)).toBeNull();
    expect(seenInTerminal(rows, "9", true, null)).toBeNull();
  });
});

describe("sessionsByTerminal", () => {
  it("maps each terminal to its session; rows outside terminals and ended rows map nowhere", () => {
    const map = sessionsByTerminal([
      inTerm("a", "1", { state: "busy" }),
      inTerm("b", null),
      inTerm("c", "2", { state: "review" }),
      inTerm("d", "3", { ended: true }),
    ]);
    expect([...map.keys()].sort()).toEqual(["1", "2"]);
    expect(map.get("1")?.session_id).toBe("a");
    expect(map.get("2")?.session_id).toBe("c");
  });

  it("two sessions in one terminal, one after the other: the live one shows", () => {
    const old = inTerm("old", "1", { state: "idle", running: false, state_since: T0 + 10 });
    const now = inTerm("new", "1", { state: "busy", running: true, state_since: T0 });
    expect(sessionsByTerminal([old, now]).get("1")?.session_id).toBe("new");
    expect(sessionsByTerminal([now, old]).get("1")?.session_id).toBe("new");
    const gone = { ...old, ended: true, running: true, state_since: T0 + 99 };
    expect(sessionsByTerminal([gone, now]).get("1")?.session_id).toBe("new");
    // both running (the first has not ended yet): the later state change wins
    const later = inTerm("later", "1", { state: "needs-input", running: true, state_since: T0 + 50 });
    expect(sessionsByTerminal([now, later]).get("1")?.session_id).toBe("later");
  });
});

describe("decorFor / withClasses", () => {
  it.each(["idle", "busy", "needs-input", "review", "unknown"] as const)("%s: class, tooltip, name", (state) => {
    const decor = decorFor(inTerm("a", "4", { state, name: "api", asks: "asks to run: ls", activity: null }));
    expect(decor.classes).toBe(`pmux-tab pmux-state-${state}`);
    const label = state === "needs-input" ? "needs input" : state;
    const first = decor.caption.split("\n")[0];
    expect(first).toBe(`Claude: ${label} — asks to run: ls`);
    expect(decor.caption.split("\n")[1]).toBe("session api");
    expect(decor.label).toBe(`Claude: ${label}, session api`);
  });

  it("says what the session does when it asks nothing", () => {
    const decor = decorFor(inTerm("a", "4", { state: "busy", name: "api", asks: null, activity: "running make test" }));
    expect(decor.caption.split("\n")[0]).toBe("Claude: busy — running make test");
    const quiet = decorFor(inTerm("a", "4", { state: "idle", name: "api", asks: null, activity: null }));
    expect(quiet.caption.split("\n")[0]).toBe("Claude: idle");
  });

  it("replaces only its own classes, and removes them when the session goes", () => {
    const busy = decorFor(inTerm("a", "1", { state: "busy" }));
    const review = decorFor(inTerm("a", "1", { state: "review" }));
    const first = withClasses("jp-Terminal-tab other", busy);
    expect(first).toBe("jp-Terminal-tab other pmux-tab pmux-state-busy");
    expect(withClasses(first, review)).toBe("jp-Terminal-tab other pmux-tab pmux-state-review");
    expect(withClasses(first, null)).toBe("jp-Terminal-tab other");
    expect(withClasses("", null)).toBe("");
  });
});

describe("Open terminal on a row", () => {
  let mounted: (Mounted & { uninit(): void }) | null = null;
  beforeEach(() => vi.useFakeTimers({ now: T0 + 5_000 }));
  afterEach(async () => {
    await mounted?.destroy();
    mounted = null;
    setLabPanel(undefined);
    vi.useRealTimers();
  });
  const asking = (terminal: string | null) =>
    inTerm("a", terminal, { state: "needs-input", asks: "asks to run: ls", dialog_token: "t" });

  it("is offered when the row runs in a terminal and the page can open terminals; a click opens it", async () => {
    const opened: string[] = [];
    setLabPanel({ open: () => {}, openTerminal: (name) => opened.push(name) });
    mounted = await mount(new FakeModel({ snapshot: snapshotOf([asking("7")], 1) }));
    const button = q<HTMLButtonElement>(rowEl(mounted.el, "a"), ".pmux-act--terminal");
    expect(visible(button)).toBe(true);
    expect(button.getAttribute("aria-label")).toBe("Open terminal 7: s-a");
    button.click();
    expect(opened).toEqual(["7"]);
  });

  it("is not offered where the page cannot open terminals, nor for a row outside a terminal", async () => {
    setLabPanel({ open: () => {} });
    mounted = await mount(new FakeModel({ snapshot: snapshotOf([asking("7")], 1) }));
    expect(rowEl(mounted.el, "a").querySelector(".pmux-act--terminal")).toBeNull();
    await mounted.destroy();
    setLabPanel({ open: () => {}, openTerminal: () => {} });
    mounted = await mount(new FakeModel({ snapshot: snapshotOf([asking(null)], 1) }));
    expect(rowEl(mounted.el, "a").querySelector(".pmux-act--terminal")).toBeNull();
  });
});
