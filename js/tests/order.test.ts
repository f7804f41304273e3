// The list's incremental order (list.ts: a changed row is binary-inserted back, its <li> moved
// only if its neighbour changed) against the full sort a fresh render does, on random patch
// sequences: after every patch, the groups and rows must be in exactly the fresh order.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionList, type Grouping } from "../src/render/list";
import type { RowActions } from "../src/render/row";
import type { Row, State } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, rowIds, type Mounted } from "./helpers";

const STATES: State[] = ["idle", "busy", "needs-input", "review", "unknown"];
const mounted: (Mounted & { uninit(): void })[] = [];

beforeEach(() => {
  vi.useFakeTimers({ now: T0 + 600_000 });
});

afterEach(async () => {
  for (const m of mounted.splice(0)) await m.destroy();
  vi.useRealTimers();
  localStorage.clear();
});

/** A small seeded PRNG (mulberry32): a failing sequence can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What the user sees of the order: each group's name, then its rows' ids. */
function order(root: HTMLElement): string[] {
  const out: string[] = [];
  for (const group of root.querySelectorAll<HTMLElement>(".pmux-groups .pmux-group")) {
    out.push(`[${group.dataset.group}]`, ...rowIds(group, ":scope"));
  }
  return out;
}

/** The same rows listed from scratch: one full sort (a list built by reset()). */
function fresh(rows: Row[], grouping: Grouping): HTMLElement {
  const none = () => null;
  const actions: RowActions = {
    dismiss: () => {},
    isDismissPending: () => false,
    pending: none,
    act: () => {},
    peek: () => {},
    actionState: none,
    peekLines: none,
    terminalOpener: none,
    terminalAttacher: none,
  };
  const list = new SessionList(actions, grouping);
  list.reset(rows, Date.now());
  return list.el;
}

describe("incremental order", () => {
  it.each([1, 2, 3, 4])("matches a full sort after every random patch (seed %i)", async (seed) => {
    const rnd = random(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
    const grouping: Grouping = seed % 2 === 0 ? "state" : "workspace";
    localStorage.setItem("pmux-widget.grouping", grouping);
    // few workspaces, names and times: ties, so the tie-breakers (name, id) are exercised
    const workspaces = ["api", "web", "w2", "w10", "Web"];
    const names = ["alpha", "Beta", "beta", "w2", "w10", "gamma"];
    const rowOf = (id: string): Row =>
      makeRow({
        session_id: id,
        workspace: pick(workspaces),
        name: pick(names),
        state: pick(STATES),
        state_since: T0 + Math.floor(rnd() * 20) * 1000,
      });
    const current = new Map<string, Row>();
    for (let i = 0; i < 30; i++) current.set(`s${String(i).padStart(2, "0")}`, rowOf(`s${String(i).padStart(2, "0")}`));
    const fake = new FakeModel({ snapshot: snapshotOf([...current.values()], 1) });
    const live = await mount(fake);
    mounted.push(live);
    let next = 30;
    for (let seq = 2; seq < 60; seq++) {
      // As the kernel sends them: each session at most once, upserted or removed.
      const touched = new Map<string, Row | null>();
      for (let k = 0, n = 1 + Math.floor(rnd() * 3); k < n; k++) {
        const roll = rnd();
        const id = pick([...current.keys()]);
        const row = current.get(id)!;
        let changed: Row | null = null;
        if (roll < 0.45) changed = { ...row, state: pick(STATES), state_since: T0 + Math.floor(rnd() * 20) * 1000 };
        else if (roll < 0.55) changed = { ...row, state_since: row.state_since + 1000 };
        else if (roll < 0.65) changed = { ...row, name: pick(names) };
        else if (roll < 0.75) changed = { ...row, workspace: pick(workspaces) };
        else if (roll < 0.8) changed = { ...row, ended: true };
        else if (roll < 0.87 && current.size > 3) {
          current.delete(id);
          touched.set(id, null);
        } else {
          const added = rowOf(`s${next++}`);
          current.set(added.session_id, added);
          touched.set(added.session_id, added);
        }
        if (changed) {
          current.set(id, changed);
          touched.set(id, changed);
        }
      }
      const upsert = [...touched.values()].filter((r): r is Row => r !== null);
      const remove = [...touched].filter(([, r]) => r === null).map(([id]) => id);
      fake.emitCustom({ type: "patch", seq, upsert, remove });
      const expected = order(fresh([...current.values()], grouping));
      expect(order(live.el), `seed ${seed}, after patch ${seq}`).toEqual(expected);
    }
  }, 60_000);
});
