// The panel's model over the server extension's websocket: frames in, frames out, reconnect
// with backoff, and the very Link and WidgetView of the anywidget running over it.
import { afterEach, describe, expect, it } from "vitest";
import { Link } from "../src/link";
import { Notifier } from "../src/notify";
import { WidgetView } from "../src/render/view";
import { StreamModel, type SocketLike } from "../src/stream-model";
import { makeRow } from "../testing/fixtures";

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: unknown[] = [];
  closed = false;
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: unknown) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  send(data: string): void {
    if (this.readyState !== 1) throw new Error("not open");
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.closed = true;
    this.readyState = 3;
  }
  /** server side */
  open(): void {
    this.readyState = 1;
    this.onopen?.({});
  }
  frame(value: unknown): void {
    this.onmessage?.({ data: typeof value === "string" ? value : JSON.stringify(value) });
  }
  drop(): void {
    this.readyState = 3;
    this.onerror?.({});
    this.onclose?.({});
  }
}

/** A scheduler the test advances by hand: the delays asked for are recorded. */
class Timers {
  delays: number[] = [];
  private pending: (() => void)[] = [];
  set = (callback: () => void, ms: number): unknown => {
    this.delays.push(ms);
    this.pending.push(callback);
    return callback;
  };
  clear = (handle: unknown): void => {
    this.pending = this.pending.filter((cb) => cb !== handle);
  };
  fire(): void {
    const due = this.pending.splice(0);
    for (const callback of due) callback();
  }
}

const T0 = 1_700_000_000_000;

function traits(seq: number, rows = [makeRow({ session_id: "a", state: "needs-input", state_since: T0 })]) {
  return {
    type: "traits",
    traits: {
      snapshot: {
        seq,
        now: T0,
        sessions: rows,
        counts: { idle: 0, busy: 0, "needs-input": 1, review: 0, unknown: 0, attention: 1 },
      },
      history: {},
      env: null,
      title_prefix: true,
      desktop_notifications: false,
      sidebar_note: "",
      mode: "full",
      show_non_interactive: null,
    },
  };
}

let models: StreamModel[] = [];

function setup() {
  const sockets: FakeSocket[] = [];
  const timers = new Timers();
  const model = new StreamModel(
    () => {
      const socket = new FakeSocket();
      sockets.push(socket);
      return socket;
    },
    { initialDelayMs: 100, maxDelayMs: 800, setTimer: timers.set, clearTimer: timers.clear },
  );
  models.push(model);
  return { model, sockets, timers };
}

afterEach(() => {
  for (const model of models) model.dispose();
  models = [];
  document.body.innerHTML = "";
});

describe("StreamModel", () => {
  it("takes every trait from the first frame, then only what changed", () => {
    const { model, sockets } = setup();
    const changes: string[] = [];
    model.on("change:sidebar_note", () => changes.push("sidebar_note"));
    model.on("change:title_prefix", () => changes.push("title_prefix"));
    let connected = 0;
    model.onConnection(() => (connected += 1));
    expect(model.status).toBe("connecting");
    sockets[0].open();
    sockets[0].frame(traits(5));
    expect(connected).toBe(1);
    expect(model.status).toBe("open");
    expect(model.get("snapshot").seq).toBe(5);
    expect(changes).toEqual(["title_prefix", "sidebar_note"]);
    changes.length = 0;
    sockets[0].frame({ type: "traits", traits: { title_prefix: false } });
    expect(model.get("title_prefix")).toBe(false);
    expect(changes).toEqual(["title_prefix"]);
  });

  it("hands msg frames to msg:custom listeners, and sends the view's messages and settings", () => {
    const { model, sockets } = setup();
    const heard: unknown[] = [];
    model.on("msg:custom", (msg: unknown) => heard.push(msg));
    sockets[0].open();
    // a message before the first traits frame has nothing to apply to
    sockets[0].frame({ type: "msg", content: { type: "patch", seq: 1 } });
    sockets[0].frame(traits(1));
    sockets[0].frame({ type: "msg", content: { type: "patch", seq: 2 } });
    sockets[0].frame("not json");
    expect(heard).toEqual([{ type: "patch", seq: 2 }]);

    model.send({ type: "action", session_id: "a", action: "approve" });
    model.set("desktop_notifications", true);
    model.save_changes();
    expect(sockets[0].sent).toEqual([
      { type: "msg", content: { type: "action", session_id: "a", action: "approve" } },
      { type: "traits", traits: { desktop_notifications: true } },
    ]);
  });

  it("reconnects with a growing backoff, says it is offline, and keeps a switch set offline", () => {
    const { model, sockets, timers } = setup();
    const statuses: string[] = [];
    model.onStatus((status) => statuses.push(status));
    let connected = 0;
    model.onConnection(() => (connected += 1));
    sockets[0].open();
    sockets[0].frame(traits(1));
    sockets[0].drop();
    expect(model.status).toBe("offline");
    // an action clicked while offline is dropped, a switch is kept for the next connection
    model.send({ type: "action", session_id: "a", action: "approve" });
    model.set("title_prefix", false);
    model.save_changes();
    timers.fire(); // socket 1: refused
    sockets[1].drop();
    timers.fire(); // socket 2: refused
    sockets[2].drop();
    expect(timers.delays).toEqual([100, 200, 400]);
    timers.fire();
    sockets[3].open();
    sockets[3].frame(traits(1)); // a restarted server may count from anywhere
    expect(connected).toBe(2);
    expect(model.status).toBe("open");
    expect(model.get("title_prefix")).toBe(false);
    expect(sockets[3].sent).toEqual([{ type: "traits", traits: { title_prefix: false } }]);
    expect(statuses).toEqual(["open", "offline", "open"]);
    // the backoff starts again after a good connection
    sockets[3].drop();
    expect(timers.delays[timers.delays.length - 1]).toBe(100);
  });

  it("caps the backoff and stops for good when disposed", () => {
    const { model, sockets, timers } = setup();
    for (let i = 0; i < 6; i++) {
      sockets[i].drop();
      timers.fire();
    }
    expect(timers.delays).toEqual([100, 200, 400, 800, 800, 800]);
    model.dispose();
    expect(sockets[sockets.length - 1].closed).toBe(true);
    timers.fire();
    expect(sockets).toHaveLength(7);
  });

  it("runs the anywidget's Link and WidgetView unchanged (one front-end, two transports)", () => {
    const { model, sockets } = setup();
    sockets[0].open();
    sockets[0].frame(traits(1));
    const link = new Link(model);
    const host = document.body.appendChild(document.createElement("div"));
    const view = new WidgetView(model, link, host);
    expect(host.querySelectorAll(".pmux-row--needs-input")).toHaveLength(1);
    sockets[0].frame({
      type: "msg",
      content: {
        type: "patch",
        seq: 2,
        now: T0,
        upsert: [makeRow({ session_id: "a", state: "busy", state_since: T0 + 1 })],
        remove: [],
        counts: { idle: 0, busy: 1, "needs-input": 0, review: 0, unknown: 0, attention: 0 },
      },
    });
    expect(host.querySelectorAll(".pmux-row--busy")).toHaveLength(1);
    expect(link.store.counts.attention).toBe(0);
    view.destroy();
    link.dispose();
  });
});

describe("the page's notifier with the panel present", () => {
  it("shows only what the panel's model heard, and nothing when the setting says no", () => {
    const shown: string[] = [];
    class N {
      static permission = "granted";
      onclick: unknown = null;
      onclose: unknown = null;
      constructor(title: string) {
        shown.push(title);
      }
      close(): void {}
    }
    const saved = (globalThis as { Notification?: unknown }).Notification;
    (globalThis as { Notification?: unknown }).Notification = N;
    try {
      const notifier = new Notifier();
      const panel = {};
      const cell = {};
      const note = (at: number) => ({ session_id: "a", state: "needs-input" as const, at, title: `t${at}`, body: "" });
      notifier.claim(panel, true);
      expect(notifier.show(note(1), true, cell)).toBeNull();
      expect(notifier.show(note(2), true, panel)).not.toBeNull();
      notifier.claim(panel, false);
      expect(notifier.show(note(3), true, panel)).toBeNull();
      notifier.release(panel);
      expect(notifier.show(note(4), true, cell)).not.toBeNull();
      expect(shown).toEqual(["t2", "t4"]);
    } finally {
      (globalThis as { Notification?: unknown }).Notification = saved;
    }
  });
});
