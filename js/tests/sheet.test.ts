import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, visible, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;

beforeEach(() => vi.useFakeTimers({ now: T0 + 60_000 }));
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  vi.useRealTimers();
});

const fleet = (): Row[] => [
  makeRow({ session_id: "old-review", name: "old", state: "review", state_since: T0 - 50_000, last_assistant: "All tests pass." }),
  makeRow({ session_id: "asks", name: "asks", state: "needs-input", state_since: T0, waiting_for: "Bash: rm -rf build" }),
  makeRow({ session_id: "failed", name: "failed", state: "review", state_since: T0 - 10_000, error: "overloaded", error_detail: "529" }),
  makeRow({ session_id: "busy", name: "busy", state: "busy" }),
  makeRow({ session_id: "ended", name: "ended", state: "review", ended: true }),
];

async function setup(rows = fleet()) {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, 1) });
  mounted = await mount(fake);
  const root = mounted.el;
  const bell = q<HTMLButtonElement>(root, ".pmux-bell");
  const sheet = q(root, ".pmux-sheet");
  const ids = () => [...sheet.querySelectorAll<HTMLElement>(".pmux-sheet-item")].map((n) => n.dataset.sessionId);
  return { fake, root, bell, sheet, ids };
}

describe("the bell", () => {
  it("shows the attention count (needs-input + review), announced politely", async () => {
    const { fake, root, bell } = await setup();
    expect(bell.tagName).toBe("BUTTON");
    expect(q(bell, ".pmux-bell-count").textContent).toBe("3");
    expect(bell.getAttribute("aria-label")).toBe("3 sessions need you: open the list");
    const live = q(root, '[aria-live="polite"]');
    expect(live.textContent).toBe("3 sessions need you");
    expect(q(root, ".pmux-count--busy").textContent).toBe("1 busy");
    expect(visible(q(root, ".pmux-count--idle"))).toBe(false);
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "asks", state: "busy" })] });
    expect(live.textContent).toBe("2 sessions need you");
    expect(q(root, ".pmux-count--busy").textContent).toBe("2 busy");
  });
});

describe("the sheet", () => {
  it("opens from the bell: needs-input first, then review, each longest-waiting first", async () => {
    const { bell, sheet, ids } = await setup();
    expect(sheet.hidden).toBe(true);
    expect(bell.getAttribute("aria-controls")).toBe(sheet.id);
    bell.click();
    expect(sheet.hidden).toBe(false);
    expect(bell.getAttribute("aria-expanded")).toBe("true");
    expect(sheet.getAttribute("role")).toBe("dialog");
    expect(document.activeElement).toBe(sheet);
    expect(ids()).toEqual(["asks", "old-review", "failed"]);
  });

  it("shows what needs-input waits for (no dismiss) and what review finished with", async () => {
    const { bell, sheet } = await setup();
    bell.click();
    const asks = q(sheet, '[data-session-id="asks"]');
    expect(q(asks, ".pmux-sheet-detail").textContent).toBe("Bash: rm -rf build");
    expect(visible(asks.querySelector(".pmux-dismiss"))).toBe(false);
    const failed = q(sheet, '[data-session-id="failed"]');
    expect(q(failed, ".pmux-sheet-detail").textContent).toBe("overloaded: 529");
    expect(q(failed, ".pmux-sheet-detail").classList.contains("pmux-error")).toBe(true);
    expect(q(sheet, '[data-session-id="old-review"] .pmux-sheet-detail').textContent).toBe("All tests pass.");
    expect(q(failed, ".pmux-age").textContent).toBe("1m");
  });

  it("dismiss sends {type: dismiss}; the item leaves when the kernel answers, focus stays in the sheet", async () => {
    const { fake, bell, sheet, ids } = await setup();
    bell.click();
    const button = q<HTMLButtonElement>(sheet, '[data-session-id="failed"] .pmux-dismiss');
    button.focus();
    button.click();
    expect(fake.sent).toEqual([{ type: "dismiss", session_id: "failed" }]);
    expect(q(sheet, '[data-session-id="failed"] .pmux-state').textContent).toBe("dismissing…");
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "failed", name: "failed", state: "idle" })] });
    expect(ids()).toEqual(["asks", "old-review"]);
    expect(document.activeElement).toBe(q(sheet, '[data-session-id="old-review"] .pmux-dismiss'));
  });

  it("answers a needs-input item in place: Approve and Deny name the dialog shown", async () => {
    const rows = fleet().map((r) => (r.session_id === "asks" ? { ...r, dialog_token: "t-1" } : r));
    const { fake, bell, sheet } = await setup(rows);
    bell.click();
    const asks = q(sheet, '[data-session-id="asks"]');
    expect(visible(asks.querySelector(".pmux-act--peek"))).toBe(false);
    q<HTMLButtonElement>(asks, ".pmux-act--deny").click();
    expect(fake.sent).toEqual([{ type: "action", session_id: "asks", action: "deny", text: null, token: "t-1" }]);
    expect(q(asks, ".pmux-state").textContent).toBe("denying…");
    expect(sheet.querySelector('[data-session-id="failed"] .pmux-actions')).toBeNull();
  });

  it("marks all finished sessions seen at once", async () => {
    const { fake, bell, sheet } = await setup();
    const markAll = q<HTMLButtonElement>(sheet, ".pmux-mark-all");
    bell.click();
    expect(visible(markAll)).toBe(true);
    markAll.click();
    markAll.click(); // pending ones are not sent twice
    expect(fake.sent).toEqual([
      { type: "dismiss", session_id: "old-review" },
      { type: "dismiss", session_id: "failed" },
    ]);
    fake.emitCustom({
      type: "patch",
      seq: 2,
      upsert: [
        makeRow({ session_id: "failed", name: "failed", state: "idle" }),
        makeRow({ session_id: "old-review", name: "old", state: "idle" }),
      ],
    });
    expect(visible(markAll)).toBe(false);
  });

  it("updates while open: keyed items, new ones in order", async () => {
    const { fake, bell, sheet, ids } = await setup();
    bell.click();
    const kept = q(sheet, '[data-session-id="asks"]');
    fake.emitCustom({
      type: "patch",
      seq: 2,
      upsert: [makeRow({ session_id: "busy", name: "busy", state: "review", state_since: T0 + 1000 })],
    });
    expect(ids()).toEqual(["asks", "old-review", "failed", "busy"]);
    expect(q(sheet, '[data-session-id="asks"]')).toBe(kept);
  });

  it("closes on Escape and returns focus to the bell; the close button too", async () => {
    const { root, bell, sheet } = await setup();
    bell.click();
    q(sheet, ".pmux-dismiss").focus();
    document.activeElement!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(sheet.hidden).toBe(true);
    expect(bell.getAttribute("aria-expanded")).toBe("false");
    expect(document.activeElement).toBe(bell);
    bell.click();
    q<HTMLButtonElement>(sheet, ".pmux-sheet-close").click();
    expect(sheet.hidden).toBe(true);
    bell.click();
    bell.click(); // the bell toggles
    expect(sheet.hidden).toBe(true);
    bell.click();
    q(root, ".pmux-list").dispatchEvent(new Event("pointerdown", { bubbles: true }));
    expect(sheet.hidden).toBe(true);
  });

  it("says so when nothing needs the user", async () => {
    const { bell, sheet } = await setup([makeRow({ session_id: "a", state: "idle" })]);
    expect(q(bell, ".pmux-bell-count").textContent).toBe("0");
    bell.click();
    expect(visible(q(sheet, ".pmux-sheet-empty"))).toBe(true);
  });
});
