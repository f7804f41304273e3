import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow } from "../testing/fixtures";
import { TitleManager, titleManager } from "../src/title";
import { mount, type Mounted } from "./helpers";

const views: (Mounted & { uninit(): void })[] = [];

beforeEach(() => {
  document.title = "Untitled.ipynb - JupyterLab";
});
afterEach(async () => {
  for (const v of views.splice(0)) await v.destroy();
});

function fleet(attention: number, seq = 1) {
  const rows = Array.from({ length: attention }, (_, i) => makeRow({ session_id: `r${i}`, state: "review" }));
  rows.push(makeRow({ session_id: "busy", state: "busy" }));
  return snapshotOf(rows, seq);
}

async function show(fake: FakeModel) {
  const view = await mount(fake);
  views.push(view);
  return view;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("tab title prefix", () => {
  it("prefixes (N) and restores the title when N drops to 0", async () => {
    const fake = new FakeModel({ snapshot: fleet(2) });
    await show(fake);
    expect(document.title).toBe("(2) Untitled.ipynb - JupyterLab");
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "r0", state: "idle" })] });
    expect(document.title).toBe("(1) Untitled.ipynb - JupyterLab");
    fake.emitCustom({ type: "patch", seq: 3, upsert: [makeRow({ session_id: "r1", state: "idle" })] });
    expect(document.title).toBe("Untitled.ipynb - JupyterLab");
  });

  it("follows the option and restores on removal", async () => {
    const fake = new FakeModel({ snapshot: fleet(1) });
    const view = await show(fake);
    expect(document.title).toBe("(1) Untitled.ipynb - JupyterLab");
    fake.kernelSet("title_prefix", false);
    expect(document.title).toBe("Untitled.ipynb - JupyterLab");
    fake.kernelSet("title_prefix", true);
    expect(document.title).toBe("(1) Untitled.ipynb - JupyterLab");
    await view.destroy();
    views.length = 0;
    expect(document.title).toBe("Untitled.ipynb - JupyterLab");
  });

  it("does not stack prefixes with two widgets (one manager, the larger count)", async () => {
    const a = new FakeModel({ snapshot: fleet(2) });
    const b = new FakeModel({ snapshot: fleet(3) });
    const viewA = await show(a);
    await show(b);
    await show(b); // a second view of b
    expect(document.title).toBe("(3) Untitled.ipynb - JupyterLab");
    b.kernelSet("title_prefix", false);
    expect(document.title).toBe("(2) Untitled.ipynb - JupyterLab");
    await viewA.destroy();
    expect(document.title).toBe("Untitled.ipynb - JupyterLab");
  });

  it("re-applies the prefix when JupyterLab rewrites the title", async () => {
    const fake = new FakeModel({ snapshot: fleet(1) });
    const view = await show(fake);
    document.title = "other.ipynb - JupyterLab";
    await tick();
    expect(document.title).toBe("(1) other.ipynb - JupyterLab");
    await view.destroy();
    views.length = 0;
    expect(document.title).toBe("other.ipynb - JupyterLab");
  });
});

describe("one title manager per page, whatever the number of widget models", () => {
  it("is kept on the document, where every copy of the module finds it", () => {
    // anywidget loads a copy of the module per model: a copy finds the manager by its key.
    const key = Symbol.for("pmux-widget/title-manager@1");
    expect((document as unknown as Record<symbol, unknown>)[key]).toBe(titleManager());
    expect(titleManager(document)).toBe(titleManager());
  });

  it("two managers on one page never rewrite the title for ever", async () => {
    // What two module copies with their own managers did: 2 vs 3, each observer undoing the
    // other's write in a microtask loop that hung the page.
    const a = new TitleManager(document);
    const b = new TitleManager(document);
    const ownerA = {};
    const ownerB = {};
    a.set(ownerA, 2);
    b.set(ownerB, 3);
    await tick();
    await tick();
    expect(document.title).toMatch(/^\([23]\) Untitled\.ipynb - JupyterLab$/);
    a.remove(ownerA);
    b.remove(ownerB);
    await tick();
  });
});

describe("a page owner of the prefix (the JupyterLab panel)", () => {
  it("counts only the owner's views while claimed, every view's again once released", () => {
    const doc = document.implementation.createHTMLDocument("Lab");
    const manager = new TitleManager(doc);
    const panelModel = {};
    const cellModel = {};
    const panelView = {};
    const cellView = {};
    manager.set(cellView, 3, cellModel);
    manager.set(panelView, 1, panelModel);
    expect(doc.title).toBe("(3) Lab");
    manager.claim(panelModel);
    expect(doc.title).toBe("(1) Lab");
    manager.set(panelView, 0, panelModel);
    expect(doc.title).toBe("Lab");
    manager.release(panelModel);
    expect(doc.title).toBe("(3) Lab");
    manager.remove(cellView);
    expect(doc.title).toBe("Lab");
  });
});
