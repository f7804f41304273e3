import { describe, expect, it } from "vitest";
import { SessionStore, normalizeRow, type StoreEvent } from "../src/store";
import { makeRow } from "../testing/fixtures";
import { snapshotOf } from "../testing/fake-model";

function recording(store: SessionStore): StoreEvent[] {
  const events: StoreEvent[] = [];
  store.subscribe((e) => events.push(e));
  return events;
}

describe("SessionStore", () => {
  it("loads a snapshot and computes counts over rows that are not ended", () => {
    const store = new SessionStore();
    store.applySnapshot(
      snapshotOf(
        [
          makeRow({ session_id: "a", state: "review" }),
          makeRow({ session_id: "b", state: "needs-input" }),
          makeRow({ session_id: "c", state: "busy" }),
          makeRow({ session_id: "d", state: "review", ended: true }),
        ],
        0,
      ),
    );
    expect(store.rows.size).toBe(4);
    expect(store.counts).toMatchObject({ review: 1, "needs-input": 1, busy: 1, attention: 2 });
  });

  it("applies patches in seq order and ignores a patch with an old seq", () => {
    const store = new SessionStore();
    store.applySnapshot(snapshotOf([makeRow({ session_id: "a", state: "busy" })], 5));
    const events = recording(store);
    expect(store.applyPatch({ type: "patch", seq: 5, upsert: [makeRow({ session_id: "a", state: "idle" })] })).toBe(false);
    expect(store.applyPatch({ type: "patch", seq: 3, upsert: [makeRow({ session_id: "a", state: "idle" })] })).toBe(false);
    expect(store.rows.get("a")!.state).toBe("busy");
    expect(events).toHaveLength(0);
    expect(store.applyPatch({ type: "patch", seq: 6, upsert: [makeRow({ session_id: "a", state: "review" })], remove: [] })).toBe(true);
    expect(store.rows.get("a")!.state).toBe("review");
    expect(store.applyPatch({ type: "patch", seq: 7, remove: ["a", "zz"] })).toBe(true);
    expect(store.rows.size).toBe(0);
    expect(events.map((e) => e.kind)).toEqual(["patch", "patch"]);
    expect(events[1]).toMatchObject({ removed: ["a"] });
  });

  it("takes the kernel's counts when sent", () => {
    const store = new SessionStore();
    store.applySnapshot(snapshotOf([], 1));
    const counts = { idle: 3, busy: 2, "needs-input": 1, review: 0, unknown: 0, attention: 1 };
    store.applyPatch({ type: "patch", seq: 2, upsert: [], remove: [], counts });
    expect(store.counts).toEqual(counts);
  });

  it("replaces the fleet only with a newer snapshot", () => {
    const store = new SessionStore();
    store.applySnapshot(snapshotOf([makeRow({ session_id: "a" })], 2));
    store.applyPatch({ type: "patch", seq: 4, upsert: [makeRow({ session_id: "b" })] });
    expect(store.applySnapshot(snapshotOf([makeRow({ session_id: "old" })], 3))).toBe(false);
    expect([...store.rows.keys()].sort()).toEqual(["a", "b"]);
    const events = recording(store);
    expect(store.applySnapshot(snapshotOf([makeRow({ session_id: "c" })], 9))).toBe(true);
    expect([...store.rows.keys()]).toEqual(["c"]);
    expect(events).toEqual([{ kind: "reset" }]);
  });

  it("ignores an empty default snapshot (no seq), so the kernel's seq-0 snapshot still applies", () => {
    const store = new SessionStore();
    expect(store.applySnapshot({} as never)).toBe(false);
    expect(store.applySnapshot(snapshotOf([makeRow({ session_id: "a", state: "review" })], 0))).toBe(true);
    expect(store.rows.get("a")!.state).toBe("review");
    expect(store.counts.attention).toBe(1);
  });

  it("normalizes rows an older kernel sent incompletely", () => {
    const row = normalizeRow({ session_id: "abcdef123456", state: "weird", project: "p" });
    expect(row).toMatchObject({
      state: "unknown",
      tokens: { input: 0, output: 0, cache_read: 0, cache_creation: 0 },
      ports: [],
      name: "p",
      ended: false,
    });
    expect(normalizeRow({ session_id: "abcdef123456" }).name).toBe("abcdef12");
  });

  it("keeps notifying the other listeners when one throws", () => {
    const store = new SessionStore();
    const seen: string[] = [];
    const error = console.error;
    console.error = () => {};
    store.subscribe(() => {
      throw new Error("boom");
    });
    store.subscribe((e) => seen.push(e.kind));
    store.applySnapshot(snapshotOf([], 1));
    console.error = error;
    expect(seen).toEqual(["reset"]);
  });
});

describe("clock offset", () => {
  it("ages follow the kernel's clock, not the browser's", () => {
    const store = new SessionStore();
    const skewedKernelNow = Date.now() - 60_000; // the kernel's clock is a minute behind
    store.applySnapshot({ seq: 1, sessions: {}, now: skewedKernelNow });
    expect(Math.abs(store.kernelNow() - skewedKernelNow)).toBeLessThan(1000);
    store.applyPatch({ type: "patch", seq: 2, upsert: [], remove: [], now: Date.now() });
    expect(Math.abs(store.kernelNow() - Date.now())).toBeLessThan(1000);
  });
});
