import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setLabPanel } from "../src/lab-panel";
import type { NotificationPayload } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow } from "../testing/fixtures";
import { mount, q, type Mounted } from "./helpers";

class MockNotification {
  static permission: NotificationPermission = "default";
  /** what the user answers to requestPermission */
  static answer: NotificationPermission = "granted";
  static requestPermission = vi.fn(async () => {
    MockNotification.permission = MockNotification.answer;
    return MockNotification.answer;
  });
  static instances: MockNotification[] = [];
  closed = false;
  onclick: (() => void) | null = null;
  onclose: (() => void) | null = null;
  constructor(
    readonly title: string,
    readonly options: NotificationOptions,
  ) {
    MockNotification.instances.push(this);
  }
  close() {
    this.closed = true;
    this.onclose?.();
  }
}

let visibility: DocumentVisibilityState = "hidden";
let focused = false;
const views: (Mounted & { uninit(): void })[] = [];

beforeEach(() => {
  localStorage.clear();
  MockNotification.permission = "default";
  MockNotification.answer = "granted";
  MockNotification.instances = [];
  MockNotification.requestPermission.mockClear();
  vi.stubGlobal("Notification", MockNotification);
  visibility = "hidden";
  focused = false;
  vi.spyOn(document, "visibilityState", "get").mockImplementation(() => visibility);
  vi.spyOn(document, "hasFocus").mockImplementation(() => focused);
});

afterEach(async () => {
  for (const v of views.splice(0)) await v.destroy();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

async function show(traits: Partial<ConstructorParameters<typeof FakeModel>[0]> = {}) {
  const fake = new FakeModel({
    snapshot: snapshotOf([makeRow({ session_id: "s1", state: "review" }), makeRow({ session_id: "s2", state: "busy" })]),
    ...traits,
  });
  const view = await mount(fake);
  views.push(view);
  return { fake, root: view.el };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

function notification(session_id = "s1", at = 1, state: "review" | "needs-input" = "review"): NotificationPayload {
  return { session_id, state, title: `${session_id} finished`, body: "All green", at };
}

/** The switch lives in the header: reachable without opening the sheet. */
async function openToggle(root: HTMLElement) {
  return q<HTMLInputElement>(root, '.pmux-header .pmux-notify input[type="checkbox"]');
}

describe("the desktop notifications toggle", () => {
  it("turning it on saves the trait and asks permission; granted keeps it on", async () => {
    const { fake, root } = await show();
    const box = await openToggle(root);
    expect(box.checked).toBe(false);
    expect(box.getAttribute("role")).toBe("switch");
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    expect(fake.attrs.desktop_notifications).toBe(true);
    expect(fake.saves).toBe(1);
    expect(MockNotification.requestPermission).toHaveBeenCalledTimes(1);
    await flush();
    expect(fake.attrs.desktop_notifications).toBe(true);
    expect(q(root, ".pmux-notify-note").textContent).toBe("shown when this page is not in front");
  });

  it("a refusal turns the option back off and says why", async () => {
    MockNotification.answer = "denied";
    const { fake, root } = await show();
    const box = await openToggle(root);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(fake.attrs.desktop_notifications).toBe(false);
    expect(box.checked).toBe(false);
    expect(fake.saves).toBe(2);
    expect(q(root, ".pmux-notify-note").textContent).toContain("blocked");
  });

  it("does not ask again once permission was denied", async () => {
    MockNotification.permission = "denied";
    const { fake, root } = await show();
    const box = await openToggle(root);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    expect(MockNotification.requestPermission).not.toHaveBeenCalled();
    expect(fake.attrs.desktop_notifications).toBe(false);
  });

  it("turned on from Python, it offers an Allow button that asks the browser", async () => {
    const { fake, root } = await show();
    await openToggle(root);
    const allow = q<HTMLButtonElement>(root, ".pmux-allow");
    expect(allow.hidden).toBe(true);
    fake.kernelSet("desktop_notifications", true);
    expect(allow.hidden).toBe(false);
    allow.click();
    expect(MockNotification.requestPermission).toHaveBeenCalledTimes(1);
    await flush();
    expect(allow.hidden).toBe(true);
    expect(fake.attrs.desktop_notifications).toBe(true);
  });

  it("is remembered per browser: a new kernel's widget starts with the user's choice", async () => {
    MockNotification.permission = "granted";
    const first = await show();
    const box = await openToggle(first.root);
    box.checked = true;
    box.dispatchEvent(new Event("change"));
    await flush();
    const later = await show({ desktop_notifications: false });
    expect(later.fake.attrs.desktop_notifications).toBe(true);
    expect((await openToggle(later.root)).checked).toBe(true);
  });

  it("its note follows the browser's permission", async () => {
    MockNotification.permission = "granted";
    const { root } = await show({ desktop_notifications: true });
    expect(q(root, ".pmux-notify-note").textContent).toBe("shown when this page is not in front");
    MockNotification.permission = "denied"; // changed in the browser's site settings
    document.dispatchEvent(new Event("visibilitychange"));
    expect(q(root, ".pmux-notify-note").textContent).toContain("blocked");
  });

  it("follows the trait set from Python, and is disabled without the API", async () => {
    const { fake, root } = await show();
    const box = await openToggle(root);
    fake.kernelSet("desktop_notifications", true);
    expect(box.checked).toBe(true);
    vi.unstubAllGlobals();
    vi.stubGlobal("Notification", undefined);
    const other = await show();
    const otherBox = await openToggle(other.root);
    expect(otherBox.disabled).toBe(true);
    expect(q(other.root, ".pmux-notify-note").textContent).toBe("not available in this browser");
  });
});

describe("notify messages", () => {
  it("a click on a session's notification opens its JupyterLab terminal, where the page can", async () => {
    MockNotification.permission = "granted";
    const opened: string[] = [];
    setLabPanel({ open: () => {}, openTerminal: (name) => opened.push(name) });
    try {
      const fake = new FakeModel({
        desktop_notifications: true,
        snapshot: snapshotOf([
          makeRow({ session_id: "t", state: "review", terminal: { name: "3" } }),
          makeRow({ session_id: "p", state: "review", terminal: null }),
        ]),
      });
      const view = await mount(fake);
      views.push(view);
      fake.emitCustom({ type: "notify", notification: notification("t", 1) });
      fake.emitCustom({ type: "notify", notification: notification("p", 1) });
      const [inTerminal, plain] = MockNotification.instances;
      inTerminal!.onclick?.();
      plain!.onclick?.();
      expect(opened).toEqual(["3"]);
      setLabPanel({ open: () => {} }); // a page that cannot open terminals: nothing to open
      fake.emitCustom({ type: "notify", notification: notification("t", 2) });
      MockNotification.instances[MockNotification.instances.length - 1]!.onclick?.();
      expect(opened).toEqual(["3"]);
    } finally {
      setLabPanel(undefined);
    }
  });

  it("show a notification only when enabled, granted, and the page is not watched", async () => {
    MockNotification.permission = "granted";
    const { fake } = await show({ desktop_notifications: false });
    fake.emitCustom({ type: "notify", notification: notification("s1", 1) });
    expect(MockNotification.instances).toHaveLength(0); // option off

    fake.kernelSet("desktop_notifications", true);
    visibility = "visible";
    focused = true;
    fake.emitCustom({ type: "notify", notification: notification("s1", 2) });
    expect(MockNotification.instances).toHaveLength(0); // user is looking at the page

    focused = false; // visible but another window has focus
    fake.emitCustom({ type: "notify", notification: notification("s1", 3) });
    expect(MockNotification.instances).toHaveLength(1);
    const [note] = MockNotification.instances;
    expect(note!.title).toBe("s1 finished");
    expect(note!.options).toEqual({ body: "All green", tag: "s1" });

    MockNotification.permission = "default";
    visibility = "hidden";
    fake.emitCustom({ type: "notify", notification: notification("s2", 4) });
    expect(MockNotification.instances).toHaveLength(1); // no permission
  });

  it("a click on a session in a JupyterLab terminal opens that terminal (issue 21)", async () => {
    MockNotification.permission = "granted";
    const opened: string[] = [];
    setLabPanel({ open: () => undefined, openTerminal: (name) => opened.push(name) });
    try {
      const fake = new FakeModel({
        snapshot: snapshotOf([
          makeRow({ session_id: "s1", state: "review", terminal: { name: "3" } }),
          makeRow({ session_id: "s2", state: "review" }),
        ]),
        desktop_notifications: true,
      });
      views.push(await mount(fake));
      // (times of their own: the page's one notifier remembers what it showed)
      fake.emitCustom({ type: "notify", notification: notification("s1", 101) });
      fake.emitCustom({ type: "notify", notification: notification("s2", 102) });
      const [inTerminal, elsewhere] = MockNotification.instances;
      elsewhere!.onclick?.();
      expect(opened).toEqual([]);
      inTerminal!.onclick?.();
      expect(opened).toEqual(["3"]);
    } finally {
      setLabPanel(undefined);
    }
  });

  it("keeps one per session: a newer one closes the older", async () => {
    MockNotification.permission = "granted";
    const { fake } = await show({ desktop_notifications: true });
    fake.emitCustom({ type: "notify", notification: notification("s1", 1, "needs-input") });
    fake.emitCustom({ type: "notify", notification: notification("s2", 2) });
    fake.emitCustom({ type: "notify", notification: notification("s1", 3) });
    const [first, second, third] = MockNotification.instances;
    expect(first!.closed).toBe(true);
    expect(second!.closed).toBe(false);
    expect(third!.closed).toBe(false);
    expect(third!.options.tag).toBe("s1");
  });

  it("closes a session's notification once it no longer needs the user", async () => {
    MockNotification.permission = "granted";
    const { fake } = await show({ desktop_notifications: true });
    fake.emitCustom({ type: "notify", notification: notification("s1", 1) });
    fake.emitCustom({ type: "patch", seq: 5, upsert: [makeRow({ session_id: "s1", state: "idle" })] });
    expect(MockNotification.instances[0]!.closed).toBe(true);
  });

  it("shows one notification when two widgets receive the same message", async () => {
    MockNotification.permission = "granted";
    const a = await show({ desktop_notifications: true });
    const b = await show({ desktop_notifications: true });
    a.fake.emitCustom({ type: "notify", notification: notification("s1", 7) });
    b.fake.emitCustom({ type: "notify", notification: notification("s1", 7) });
    expect(MockNotification.instances).toHaveLength(1);
  });
});
