// Actions on rows (issue 13): Approve / Deny / Stop / a prompt box / Peek, each click naming the
// dialog it saw; "…ing" at once, "sent" until the state moves, the reason when refused, and
// why it waits while the kernel is busy.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLabPanel } from "../src/lab-panel";
import type { Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowEl, visible, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;

beforeEach(() => vi.useFakeTimers({ now: T0 + 5_000 }));
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  vi.useRealTimers();
});

async function show(rows: Row[]) {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, 1) });
  mounted = await mount(fake);
  return { fake, root: mounted.el };
}

const asking = makeRow({
  session_id: "a",
  name: "api",
  state: "needs-input",
  asks: "asks to run: make deploy",
  dialog_token: "needs-input:1:$ make deploy",
});
const status = (row: Element) => q(row, ".pmux-status").textContent;
const button = (row: Element, action: string) => q<HTMLButtonElement>(row, `.pmux-act--${action}`);

describe("needs-input rows", () => {
  it("show Approve and Deny; a click names the dialog it saw and shows at once", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    expect(visible(button(row, "approve"))).toBe(true);
    expect(visible(button(row, "deny"))).toBe(true);
    expect(visible(row.querySelector(".pmux-act--interrupt"))).toBe(false);
    expect(button(row, "approve").getAttribute("aria-label")).toBe("Approve: api");
    button(row, "approve").click();
    button(row, "deny").click(); // disabled while the first travels
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "approve", text: null, token: "needs-input:1:$ make deploy" },
    ]);
    expect(status(row)).toBe("approving… · 5s");
    expect(button(row, "deny").getAttribute("aria-disabled")).toBe("true");
  });

  it("say the kernel is busy while no answer comes, then 'sent' until the state moves", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    button(row, "approve").click();
    vi.advanceTimersByTime(1000);
    expect(q(row, ".pmux-pending").textContent).toContain("Jupyter delivers clicks when the running cell ends");
    fake.emitCustom({ type: "action_result", session_id: "a", action: "approve", ok: true, message: "sent", queued: false });
    expect(status(row)).toBe("sent · 6s");
    expect(visible(q(row, ".pmux-pending"))).toBe(false);
    expect(q(row, ".pmux-act-note").textContent).toBe("sent");
    fake.emitCustom({
      type: "patch",
      seq: 2,
      upsert: [makeRow({ session_id: "a", name: "api", state: "busy", state_since: T0 + 5_500 })],
    });
    expect(status(row)).toBe("busy · 0s");
    expect(visible(q(row, ".pmux-act-note"))).toBe(false);
  });

  it("show the reason of a refusal, and can be clicked again", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    button(row, "deny").click();
    fake.emitCustom({
      type: "action_result",
      session_id: "a",
      action: "deny",
      ok: false,
      message: "api has moved on since it was shown; look again",
      queued: false,
    });
    expect(q(row, ".pmux-act-note").textContent).toBe("refused: api has moved on since it was shown; look again");
    expect(status(row)).toBe("needs input · 5s");
    expect(button(row, "deny").hasAttribute("aria-disabled")).toBe(false);
    button(row, "deny").click();
    expect(fake.sent).toHaveLength(2);
  });

  it("show the refusal of a click that reached the kernel after the dialog changed", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    button(row, "approve").click(); // in flight while the dialog is answered and a new one opens
    const again = { ...asking, state_since: T0 + 4_000, asks: "asks to run: make clean", dialog_token: "needs-input:2:$ make clean" };
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ ...asking, state: "idle", state_since: T0 + 3_000 })] });
    fake.emitCustom({ type: "patch", seq: 3, upsert: [makeRow(again)] });
    expect(status(row)).toBe("approving… · 1s"); // still on its way
    fake.emitCustom({
      type: "action_result",
      session_id: "a",
      action: "approve",
      ok: false,
      message: "api: the dialog changed since it was shown; look again",
      queued: false,
    });
    expect(q(row, ".pmux-act-note").textContent).toBe("refused: api: the dialog changed since it was shown; look again");
    expect(status(row)).toBe("needs input · 1s");
    fake.emitCustom({ type: "patch", seq: 4, upsert: [makeRow({ ...again, state: "busy", state_since: T0 + 4_500 })] });
    expect(visible(q(row, ".pmux-act-note"))).toBe(false); // until the state moves again
  });

  it("drop a click answered 'sent' after its state already moved", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    button(row, "approve").click();
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ ...asking, state: "busy", state_since: T0 + 4_500 })] });
    fake.emitCustom({ type: "action_result", session_id: "a", action: "approve", ok: true, message: "sent", queued: false });
    expect(status(row)).toBe("busy · 0s");
  });
});

describe("other rows", () => {
  it("get their actions when focused: Stop on busy, a prompt box on idle and review", async () => {
    const { fake, root } = await show([
      makeRow({ session_id: "b", name: "busy", state: "busy", dialog_token: "busy:1:" }),
      makeRow({ session_id: "r", name: "done", state: "review", dialog_token: "review:1:" }),
    ]);
    const busy = rowEl(root, "b");
    expect(busy.querySelector(".pmux-actions")).toBeNull(); // lean until wanted
    busy.focus();
    expect(visible(button(busy, "interrupt"))).toBe(true);
    button(busy, "interrupt").click();
    expect(fake.sent[fake.sent.length - 1]).toEqual({ type: "action", session_id: "b", action: "interrupt", text: null, token: "busy:1:" });

    const review = rowEl(root, "r");
    review.focus();
    const input = q<HTMLInputElement>(review, ".pmux-prompt");
    expect(visible(input)).toBe(true);
    button(review, "send").click(); // empty: nothing sent
    expect(fake.sent).toHaveLength(1);
    input.value = "now add a changelog entry";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(fake.sent[fake.sent.length - 1]).toEqual({
      type: "action",
      session_id: "r",
      action: "send",
      text: "now add a changelog entry",
      token: "review:1:",
    });
    expect(input.value).toBe("");
    expect(status(review)).toBe("sending… · 5s");
  });

  it("peek shows the pane's last lines, re-read while open, or why it cannot", async () => {
    const { fake, root } = await show([asking]);
    const row = rowEl(root, "a");
    const peek = button(row, "peek");
    peek.click();
    expect(peek.getAttribute("aria-expanded")).toBe("true");
    expect(fake.sent).toEqual([{ type: "peek", session_id: "a" }]);
    expect(q(row, ".pmux-peek").textContent).toBe("reading the pane…");
    vi.advanceTimersByTime(3000); // no second ask while the first is unanswered
    expect(fake.sent).toHaveLength(1);
    fake.emitCustom({ type: "peek_result", session_id: "a", ok: true, lines: ["$ make deploy", "Do you want to proceed?"], dialog: "Bash command", message: "" });
    expect(q(row, ".pmux-peek").textContent).toBe("$ make deploy\nDo you want to proceed?");
    vi.advanceTimersByTime(2000);
    expect(fake.sent).toHaveLength(2);
    fake.emitCustom({ type: "peek_result", session_id: "a", ok: false, lines: [], dialog: null, message: "api: its Claude process is not running" });
    expect(q(row, ".pmux-peek").textContent).toBe("api: its Claude process is not running");
    peek.click();
    expect(visible(q(row, ".pmux-peek"))).toBe(false);
    vi.advanceTimersByTime(4000);
    expect(fake.sent).toHaveLength(2);
  });
});

describe("background session rows (issue 26)", () => {
  const bg = makeRow({
    session_id: "b",
    name: "bgA",
    state: "needs-input",
    dialog_token: "needs-input:1:$ touch x",
    background: { job: "8d0a4b9d", name: "bgA" },
  });

  it("offer Stop session and Remove, each only on a second click", async () => {
    const { fake, root } = await show([bg]);
    const row = rowEl(root, "b");
    expect(visible(button(row, "approve"))).toBe(true);
    expect(visible(button(row, "stop"))).toBe(true);
    expect(visible(button(row, "remove"))).toBe(true);
    button(row, "stop").click();
    expect(fake.sent).toEqual([]);
    expect(button(row, "stop").textContent).toBe("Confirm stop");
    expect(button(row, "stop").getAttribute("aria-label")).toContain("Click again to stop the background session");
    button(row, "stop").click();
    expect(fake.sent).toEqual([{ type: "action", session_id: "b", action: "stop", text: null, token: "needs-input:1:$ touch x" }]);
  });

  it("forget an unconfirmed click after a while", async () => {
    const { fake, root } = await show([bg]);
    const row = rowEl(root, "b");
    button(row, "remove").click();
    vi.advanceTimersByTime(6000);
    expect(button(row, "remove").textContent).toBe("Remove");
    button(row, "remove").click();
    expect(fake.sent).toEqual([]);
  });

  it("a stopped one offers Remove only; other rows neither", async () => {
    const stopped = { ...bg, session_id: "c", running: false, state: "idle" as const };
    const plain = makeRow({ session_id: "d", name: "api", state: "busy" });
    const { root } = await show([stopped, plain]);
    const row = rowEl(root, "c");
    expect(row.querySelector(".pmux-act--stop")).toBeNull();
    expect(row.querySelector(".pmux-act--approve")).toBeNull();
    row.focus();
    expect(visible(button(row, "remove"))).toBe(true);
    expect(row.querySelector(".pmux-act--stop")).toBeNull();
    const other = rowEl(root, "d");
    other.focus();
    expect(other.querySelector(".pmux-act--stop")).toBeNull();
    expect(other.querySelector(".pmux-act--remove")).toBeNull();
  });

  describe("Attach in a terminal", () => {
    const attach = (row: Element) => q<HTMLButtonElement>(row, ".pmux-act--attach");
    afterEach(() => setLabPanel(undefined));

    it("without the labextension asks the kernel for a tmux window, and says where it opened", async () => {
      const { fake, root } = await show([bg]);
      const row = rowEl(root, "b");
      expect(visible(attach(row))).toBe(true);
      expect(attach(row).getAttribute("aria-label")).toBe("Attach in a terminal (claude attach 8d0a4b9d): bgA");
      attach(row).click();
      expect(fake.sent).toEqual([{ type: "attach", session_id: "b" }]);
      expect(status(row)).toBe("needs input · 5s"); // the row's state line stays
      expect(button(row, "approve").getAttribute("aria-disabled")).toBeNull(); // it answers nothing
      fake.emitCustom({
        type: "attach_result",
        session_id: "b",
        ok: true,
        target: "pmux-attach:0",
        command: "tmux attach -t pmux-attach:0",
        opened: true,
        message: "attached in tmux window pmux-attach:0: tmux attach -t pmux-attach:0",
      });
      expect(q(row, ".pmux-act-note").textContent).toBe(
        "attached in tmux window pmux-attach:0: tmux attach -t pmux-attach:0",
      );
      expect(status(row)).toBe("needs input · 5s");
    });

    it("shows the kernel's refusal", async () => {
      const { fake, root } = await show([bg]);
      const row = rowEl(root, "b");
      attach(row).click();
      fake.emitCustom({
        type: "attach_result",
        session_id: "b",
        ok: false,
        target: null,
        command: null,
        opened: false,
        message: "tmux is not installed: no window to attach in",
      });
      expect(q(row, ".pmux-act-note").textContent).toBe("attach refused: tmux is not installed: no window to attach in");
    });

    it("with the labextension opens a JupyterLab terminal instead, sending nothing to the kernel", async () => {
      const asked: string[] = [];
      setLabPanel({ open: () => {}, attachTerminal: (id) => asked.push(id) });
      const { fake, root } = await show([bg]);
      attach(rowEl(root, "b")).click();
      expect(asked).toEqual(["b"]);
      expect(fake.sent).toEqual([]);
    });

    it("is offered on background rows only", async () => {
      const plain = makeRow({ session_id: "d", name: "api", state: "needs-input" });
      const { root } = await show([plain]);
      expect(rowEl(root, "d").querySelector(".pmux-act--attach")).toBeNull();
    });
  });
});
