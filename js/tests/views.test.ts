import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { setLabPanel } from "../src/lab-panel";
import { initModel, q, renderView, rowEl, rowIds, type Mounted } from "./helpers";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  vi.useRealTimers();
});

async function init(fake: FakeModel) {
  const uninit = await initModel(fake);
  cleanups.push(uninit);
}

async function view(fake: FakeModel): Promise<Mounted> {
  const v = await renderView(fake);
  cleanups.push(() => v.destroy());
  return v;
}

describe("one store per model, shared by its views", () => {
  it("a second view shows the current state after patches (the snapshot trait is stale)", async () => {
    const fake = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "a", state: "busy" })], 1) });
    await init(fake);
    const first = await view(fake);
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "a", state: "review" })] });
    fake.emitCustom({ type: "patch", seq: 3, upsert: [makeRow({ session_id: "b", state: "needs-input" })] });
    const second = await view(fake);
    for (const v of [first, second]) {
      expect(rowIds(v.el)).toEqual(["b", "a"]);
      expect(q(rowEl(v.el, "a"), ".pmux-status").textContent).toMatch(/^review · /);
    }
    // both keep following
    fake.emitCustom({ type: "patch", seq: 4, remove: ["b"] });
    expect(rowIds(first.el)).toEqual(["a"]);
    expect(rowIds(second.el)).toEqual(["a"]);
  });

  it("each model has its own store (the factory runs once per model)", async () => {
    const one = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "a" })], 1) });
    const two = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "b" })], 1) });
    await init(one);
    await init(two);
    one.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "z" })] });
    expect(rowIds((await view(one)).el).sort()).toEqual(["a", "z"]);
    expect(rowIds((await view(two)).el)).toEqual(["b"]);
  });

  it("applies each patch once, whatever the number of views", async () => {
    const fake = new FakeModel({ snapshot: snapshotOf([], 1) });
    await init(fake);
    await view(fake);
    await view(fake);
    expect(fake.listenerCount()).toBeGreaterThan(0);
    // msg:custom is listened to once per model (by initialize), not per view
    const msgListeners = (fake as unknown as { listeners: { name: string }[] }).listeners.filter(
      (l) => l.name === "msg:custom",
    );
    expect(msgListeners).toHaveLength(1);
  });

  it("ignores a patch with an old seq", async () => {
    const fake = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "a", state: "busy" })], 10) });
    await init(fake);
    const v = await view(fake);
    fake.emitCustom({ type: "patch", seq: 9, upsert: [makeRow({ session_id: "a", state: "review" })] });
    fake.emitCustom({ type: "patch", seq: 10, upsert: [makeRow({ session_id: "a", state: "review" })] });
    expect(q(rowEl(v.el, "a"), ".pmux-status").textContent).toMatch(/^busy · /);
  });

  it("a newer snapshot (change:snapshot) replaces the store; an older one does not", async () => {
    const fake = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "a", state: "busy" })], 5) });
    await init(fake);
    const v = await view(fake);
    const rowA = rowEl(v.el, "a");
    fake.kernelSet("snapshot", snapshotOf([makeRow({ session_id: "old" })], 4));
    expect(rowIds(v.el)).toEqual(["a"]);
    fake.kernelSet(
      "snapshot",
      snapshotOf([makeRow({ session_id: "a", state: "review" }), makeRow({ session_id: "c", state: "idle" })], 8),
    );
    expect(rowIds(v.el)).toEqual(["a", "c"]);
    expect(rowEl(v.el, "a")).toBe(rowA); // reconciled, not re-rendered
    expect(q(rowA, ".pmux-status").textContent).toMatch(/^review · /);
    // and a view created afterwards still finds the same store
    fake.emitCustom({ type: "patch", seq: 9, remove: ["c"] });
    const later = await view(fake);
    expect(rowIds(later.el)).toEqual(["a"]);
  });

  it("a newer snapshot that ends a live session moves it to the Ended section", async () => {
    const fake = new FakeModel({
      snapshot: snapshotOf([makeRow({ session_id: "a", state: "busy" }), makeRow({ session_id: "b" })], 1),
    });
    await init(fake);
    const v = await view(fake);
    fake.kernelSet(
      "snapshot",
      snapshotOf([makeRow({ session_id: "a", ended: true, running: false }), makeRow({ session_id: "b" })], 2),
    );
    expect(rowIds(v.el)).toEqual(["b"]);
    expect(q(v.el, ".pmux-ended summary").textContent).toBe("Ended (1)");
    expect(q(v.el, ".pmux-count--busy").hidden).toBe(true);
  });
});

describe("view lifecycle", () => {
  it("destroying a view removes its DOM, listeners and timer", async () => {
    vi.useFakeTimers({ now: T0 });
    const fake = new FakeModel({ snapshot: snapshotOf([makeRow({ session_id: "a" })], 1) });
    await init(fake);
    const before = fake.listenerCount();
    const v = await renderView(fake);
    expect(vi.getTimerCount()).toBe(1);
    expect(fake.listenerCount(v.context)).toBeGreaterThan(0);
    await v.destroy();
    expect(v.el.querySelector(".pmux-root")).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
    expect(fake.listenerCount()).toBe(before);
  });
});

describe("sidebar()'s stand-in (mode sidebar-stub)", () => {
  const note = "Docked in the right sidebar.";
  const stubModel = () =>
    new FakeModel({
      snapshot: snapshotOf([makeRow({ session_id: "a", state: "busy" })], 1),
      sidebar_note: note,
      mode: "sidebar-stub",
    });

  it("shows only its note in JupyterLab, where the sidecar docks", async () => {
    const shell = document.body.appendChild(document.createElement("div"));
    shell.className = "jp-LabShell";
    cleanups.push(() => shell.remove());
    const fake = stubModel();
    await init(fake);
    const v = await view(fake);
    const root = q(v.el, ".pmux-root");
    expect(root.classList.contains("pmux-root--stub")).toBe(true);
    expect(q(root, ".pmux-note").textContent).toBe(note);
    expect(q(root, ".pmux-note").hidden).toBe(false);
  });

  it("shows the whole widget under its note elsewhere (Notebook 7 cannot dock it)", async () => {
    const fake = stubModel();
    await init(fake);
    const v = await view(fake);
    const root = q(v.el, ".pmux-root");
    expect(root.classList.contains("pmux-root--stub")).toBe(false);
    expect(rowIds(v.el)).toEqual(["a"]);
    // no extension's panel on this page: the kernel is asked to dock a sidecar
    expect(fake.sent).toEqual([{ type: "sidebar", where: "sidecar" }]);
  });

  it("opens the extension's panel where the page has it, and shows only a note", async () => {
    const opened: string[] = [];
    setLabPanel({ open: () => opened.push("panel") });
    cleanups.push(() => setLabPanel(undefined));
    const fake = stubModel();
    await init(fake);
    const v = await view(fake);
    expect(opened).toEqual(["panel"]);
    expect(fake.sent).toEqual([{ type: "sidebar", where: "panel" }]);
    const root = q(v.el, ".pmux-root");
    expect(root.classList.contains("pmux-root--stub")).toBe(true);
    expect(q(root, ".pmux-note").textContent).toMatch(/side panel/);
  });
});
