// Issue 11, the rows' corners (named after the items): a session nobody sits at (claude -p,
// an SDK run) is labelled as such and can be hidden; a tmux pane's title shows on its row.
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HIDE_UNATTENDED } from "../src/render/row-filter";
import type { Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow } from "../testing/fixtures";
import { mount, q, rowEl, type Mounted } from "./helpers";

let mounted: Mounted | null = null;

beforeEach(() => localStorage.clear());
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
});

async function show(rows: Row[], traits: Partial<ConstructorParameters<typeof FakeModel>[0]> = {}) {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, 1), ...traits });
  mounted = await mount(fake);
  return { fake, root: mounted.el };
}

const badges = (row: Element) => [...row.querySelectorAll(".pmux-badge")].filter((b) => !(b as HTMLElement).hidden);
const list = (root: Element) => q(root, ".pmux-list");
const toggle = (root: Element) => q<HTMLInputElement>(root, ".pmux-unattended-switch input");

describe("item 5: claude -p and SDK runs", () => {
  const rows = () => [
    makeRow({ session_id: "p", state: "idle", non_interactive: "claude -p", answer: "Hi!" }),
    makeRow({ session_id: "k", state: "idle", non_interactive: "SDK" }),
    makeRow({ session_id: "i", state: "review", answer: "Done." }),
  ];

  it("test_item5: a row nobody sits at says how it was started, in plain words, with why", async () => {
    const { root } = await show(rows());
    const [p] = badges(rowEl(root, "p"));
    expect(p!.textContent).toBe("claude -p");
    expect(p!.getAttribute("title")).toContain("waits for no one");
    expect(badges(rowEl(root, "k"))[0]!.textContent).toBe("SDK");
    expect(rowEl(root, "p").className).toContain("pmux-row--unattended");
    expect(badges(rowEl(root, "i"))).toHaveLength(0); // an interactive session: no badge
    expect(rowEl(root, "i").className).not.toContain("pmux-row--unattended");
    expect(q(rowEl(root, "p"), ".pmux-status").textContent).toMatch(/^idle/); // never "review"
  });

  it("test_item5: the header's switch hides them, remembered in this browser", async () => {
    const { fake, root } = await show(rows());
    expect(toggle(root).checked).toBe(true); // shown by default
    expect(list(root).classList.contains(HIDE_UNATTENDED)).toBe(false);
    toggle(root).checked = false;
    toggle(root).dispatchEvent(new Event("change"));
    expect(list(root).classList.contains(HIDE_UNATTENDED)).toBe(true);
    expect(fake.attrs.show_non_interactive).toBe(false);
    expect(localStorage.getItem("pmux-widget.non-interactive")).toBe("hide");
    await mounted!.destroy();
    // a new kernel (trait null): the browser's choice holds
    const again = await show(rows());
    expect(toggle(again.root).checked).toBe(false);
    expect(list(again.root).classList.contains(HIDE_UNATTENDED)).toBe(true);
  });

  it("test_item5: show(non_interactive=False) from Python hides them, and wins", async () => {
    localStorage.setItem("pmux-widget.non-interactive", "show");
    const { fake, root } = await show(rows(), { show_non_interactive: false });
    expect(list(root).classList.contains(HIDE_UNATTENDED)).toBe(true);
    fake.kernelSet("show_non_interactive", true);
    expect(toggle(root).checked).toBe(true);
    expect(list(root).classList.contains(HIDE_UNATTENDED)).toBe(false);
  });

  it("test_item5: the stylesheet hides their rows, and a group left with none", () => {
    const file = decodeURIComponent(import.meta.url.replace(/^file:\/\//, "")).replace(/tests\/[^/]+$/, "src/widget.css");
    const css = readFileSync(file, "utf8");
    expect(css).toContain(`.${HIDE_UNATTENDED} .pmux-row--unattended`);
    expect(css).toContain(`.${HIDE_UNATTENDED} .pmux-group:not(:has(.pmux-row:not(.pmux-row--unattended)))`);
  });
});

describe("item 6: the pane's title", () => {
  it("test_item6: a row shows its pane's title on its last line when the kernel sends one", async () => {
    const tmux = { session: "work", window: "2", pane: "%7", title: "✳ Fix the login redirect" };
    const { fake, root } = await show([
      makeRow({ session_id: "t", state: "idle", tmux, pane_title: "Fix the login redirect", context_tokens: 20_000 }),
      makeRow({ session_id: "d", state: "idle", tmux: { ...tmux, title: "devbox" }, pane_title: null }),
    ]);
    const meta = (sid: string) => q(rowEl(root, sid), ".pmux-lines").textContent!.split("\n").slice(-1)[0]!;
    expect(meta("t")).toMatch(/^pane: Fix the login redirect · ctx \d+%/);
    expect(meta("d")).not.toContain("pane");
    fake.emitCustom({
      type: "patch",
      seq: 2,
      upsert: [makeRow({ session_id: "t", state: "idle", tmux, pane_title: "api server" })],
      remove: [],
    });
    expect(meta("t")).toContain("pane: api server");
  });
});
