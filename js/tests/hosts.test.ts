// A fleet's hosts: the host level (only with two hosts or more, or one offline), each host's
// dot, its online line, its order, and the grouping inside it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { hostStatus } from "../src/render/list";
import { SessionStore } from "../src/store";
import type { Host, Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowIds, visible, watch, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;
const NOW = T0 + 12_000;

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
  localStorage.removeItem("pmux-widget.grouping");
});

afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  vi.useRealTimers();
  localStorage.removeItem("pmux-widget.grouping");
});

async function show(rows: Row[], hosts: Record<string, Host> = {}) {
  const fake = new FakeModel({ snapshot: { ...snapshotOf(rows, 1), now: NOW, hosts } });
  mounted = await mount(fake);
  return { fake, root: mounted.el };
}

function patch(fake: FakeModel, seq: number, upsert: Row[], remove: string[] = [], hosts?: Record<string, Host>) {
  fake.emitCustom({ type: "patch", seq, upsert, remove, now: NOW, hosts: hosts ?? null });
}

const on = (last_seen = NOW): Host => ({ online: true, last_seen });
const off = (last_seen: number): Host => ({ online: false, last_seen });

/** The host sections in order. */
const hostNames = (root: ParentNode) =>
  [...root.querySelectorAll<HTMLElement>(".pmux-host")].map((h) => h.dataset.host);
const section = (root: ParentNode, host: string) => q(root, `.pmux-host[data-host="${host}"]`);
const hostDot = (root: ParentNode, host: string) => q(section(root, host), ".pmux-host-head .pmux-dot").className;
/** The groups (data-group) inside one host, in order. */
const groupsIn = (root: ParentNode, host: string) =>
  [...section(root, host).querySelectorAll<HTMLElement>(".pmux-group")].map((g) => g.dataset.group);

const fleet = () => [
  makeRow({ session_id: "a1", host: "alpha", workspace: "api", state: "idle" }),
  makeRow({ session_id: "a2", host: "alpha", workspace: "api", state: "busy" }),
  makeRow({ session_id: "a3", host: "alpha", workspace: "web", state: "idle" }),
  makeRow({ session_id: "b1", host: "bravo", workspace: "api", state: "review" }),
  makeRow({ session_id: "b2", host: "bravo", workspace: "ops", state: "idle" }),
];

describe("the host level", () => {
  it("is absent over this machine's hub: rows without a host, groups as before", async () => {
    const { root } = await show([
      makeRow({ session_id: "a1", workspace: "api" }),
      makeRow({ session_id: "a2", workspace: "api" }),
    ]);
    expect(root.querySelector(".pmux-host")).toBeNull();
    expect(q(root, ".pmux-groups > .pmux-group").dataset.workspace).toBe("api");
  });

  it("is absent for a fleet of one host that beats", async () => {
    const { root } = await show(
      [makeRow({ session_id: "a1", host: "alpha" }), makeRow({ session_id: "a2", host: "alpha" })],
      { alpha: on() },
    );
    expect(root.querySelector(".pmux-host")).toBeNull();
  });

  it("groups by host first, then by workspace inside each host (headers for 2+ only)", async () => {
    const rows = [...fleet().slice(0, 4), makeRow({ session_id: "b2", host: "bravo", workspace: "api", state: "idle" })];
    const { root } = await show(rows, { alpha: on(), bravo: on() });
    // bravo holds a review (more urgent than alpha's busy): first, its review pinned in its
    // own Needs you block
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
    expect(groupsIn(root, "alpha")).toEqual(["api", "web"]);
    expect(groupsIn(root, "bravo")).toEqual(["Needs you", "api"]);
    expect(rowIds(root)).toEqual(["b1", "b2", "a2", "a1", "a3"]);
    // the same workspace name on two hosts is two groups
    expect(root.querySelectorAll('.pmux-group[data-workspace="api"]').length).toBe(2);
    const head = (host: string, ws: string) =>
      q(section(root, host), `.pmux-group[data-workspace="${ws}"] .pmux-group-head`);
    expect(visible(head("alpha", "api"))).toBe(true);
    expect(visible(head("alpha", "web"))).toBe(false);
    expect(visible(head("bravo", "api"))).toBe(false);
    expect(q(section(root, "alpha"), ".pmux-host-name").textContent).toBe("alpha");
    expect(q(section(root, "alpha"), ".pmux-host-summary").textContent).toBe("3 sessions");
    expect(visible(q(section(root, "alpha"), ".pmux-host-status"))).toBe(false);
    expect(q(section(root, "bravo"), ".pmux-rows").getAttribute("aria-label")).toBe("bravo: Sessions that need you");
  });

  it("gives each host the dot of its most urgent live session, and re-sorts hosts by it", async () => {
    const { fake, root } = await show(fleet(), { alpha: on(), bravo: on() });
    expect(hostDot(root, "alpha")).toBe("pmux-dot pmux-dot--busy pmux-dot--static");
    expect(hostDot(root, "bravo")).toBe("pmux-dot pmux-dot--review pmux-dot--static");
    patch(fake, 2, [makeRow({ session_id: "a3", host: "alpha", workspace: "web", state: "needs-input" })]);
    expect(hostDot(root, "alpha")).toBe("pmux-dot pmux-dot--needs-input pmux-dot--static");
    expect(hostNames(root)).toEqual(["alpha", "bravo"]);
    // needs-input is pinned in a Needs you block, inside its host
    expect(groupsIn(root, "alpha")).toEqual(["Needs you", "api"]);
    // an ended session does not count
    patch(fake, 3, [makeRow({ session_id: "a3", host: "alpha", workspace: "web", state: "needs-input", ended: true })]);
    expect(hostDot(root, "alpha")).toBe("pmux-dot pmux-dot--busy pmux-dot--static");
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
    // equal dots: by name
    patch(fake, 4, [makeRow({ session_id: "b1", host: "bravo", workspace: "api", state: "busy" })]);
    expect(hostNames(root)).toEqual(["alpha", "bravo"]);
  });

  it("groups by state inside each host when switched", async () => {
    const { root } = await show(fleet(), { alpha: on(), bravo: on() });
    const select = q<HTMLSelectElement>(root, ".pmux-grouping select");
    select.value = "state";
    select.dispatchEvent(new Event("change"));
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
    expect(groupsIn(root, "alpha")).toEqual(["Working", "Idle"]);
    expect(groupsIn(root, "bravo")).toEqual(["Needs you", "Idle"]);
    expect(rowIds(root)).toEqual(["b1", "b2", "a2", "a1", "a3"]);
  });

  it("comes when a second host's row arrives, and goes when it leaves", async () => {
    const { fake, root } = await show(fleet().slice(0, 3), { alpha: on(), bravo: on() });
    expect(root.querySelector(".pmux-host")).toBeNull();
    const kept = q(root, '.pmux-row[data-session-id="a1"]');
    patch(fake, 2, [makeRow({ session_id: "b1", host: "bravo", workspace: "api", state: "review" })]);
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
    expect(q(root, '.pmux-row[data-session-id="a1"]')).toBe(kept); // rows are kept, moved
    patch(fake, 3, [], ["b1"]);
    expect(root.querySelector(".pmux-host")).toBeNull();
    expect(rowIds(root)).toEqual(["a2", "a1", "a3"]);
  });

  it("waits for the pointer to leave before the host level comes", async () => {
    const { fake, root } = await show(fleet().slice(0, 3), { alpha: on(), bravo: on() });
    const groups = q(root, ".pmux-groups");
    groups.dispatchEvent(new Event("pointerenter"));
    patch(fake, 2, [makeRow({ session_id: "b1", host: "bravo", workspace: "api", state: "review" })]);
    expect(root.querySelector(".pmux-host")).toBeNull();
    expect(rowIds(root)).toContain("b1");
    groups.dispatchEvent(new Event("pointerleave"));
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
  });
});

describe("an offline host", () => {
  it("says offline and when it was last seen, dims its rows, keeps them, and comes last", async () => {
    const { root } = await show(fleet(), { alpha: on(), bravo: off(NOW - 5 * 60_000) });
    expect(hostNames(root)).toEqual(["alpha", "bravo"]);
    const bravo = section(root, "bravo");
    expect(bravo.classList.contains("pmux-host--offline")).toBe(true);
    expect(section(root, "alpha").classList.contains("pmux-host--offline")).toBe(false);
    expect(visible(q(bravo, ".pmux-host-status"))).toBe(true);
    expect(q(bravo, ".pmux-host-status").textContent).toBe("offline · last seen 5m ago");
    // its dot is still its most urgent session's (the last known one)
    expect(hostDot(root, "bravo")).toBe("pmux-dot pmux-dot--review pmux-dot--static");
    expect(rowIds(root)).toEqual(["a2", "a1", "a3", "b1", "b2"]);
  });

  it("follows the hosts a patch brings; a patch without hosts keeps them", async () => {
    const { fake, root } = await show(fleet(), { alpha: on(), bravo: on() });
    patch(fake, 2, [], [], { alpha: on(), bravo: off(NOW - 20_000) });
    expect(section(root, "bravo").classList.contains("pmux-host--offline")).toBe(true);
    expect(hostNames(root)).toEqual(["alpha", "bravo"]);
    patch(fake, 3, [makeRow({ session_id: "a1", host: "alpha", workspace: "api", state: "busy" })]);
    expect(section(root, "bravo").classList.contains("pmux-host--offline")).toBe(true);
    // the age grows with the clock
    vi.advanceTimersByTime(60_000);
    expect(q(section(root, "bravo"), ".pmux-host-status").textContent).toBe("offline · last seen 1m ago");
    patch(fake, 4, [], [], { alpha: on(), bravo: on() });
    expect(section(root, "bravo").classList.contains("pmux-host--offline")).toBe(false);
    expect(visible(q(section(root, "bravo"), ".pmux-host-status"))).toBe(false);
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
  });

  it("shows the host level even alone: a fleet of one must say it went offline", async () => {
    const rows = fleet().slice(0, 3);
    const { fake, root } = await show(rows, { alpha: on() });
    expect(root.querySelector(".pmux-host")).toBeNull();
    patch(fake, 2, [], [], { alpha: off(NOW - 1000) });
    expect(hostNames(root)).toEqual(["alpha"]);
    expect(q(section(root, "alpha"), ".pmux-host-status").textContent).toBe("offline · last seen 1s ago");
    patch(fake, 3, [], [], { alpha: on() });
    expect(root.querySelector(".pmux-host")).toBeNull();
  });
});

describe("counts, title and bell cover every host", () => {
  it("counts the attention of every host, offline ones included", async () => {
    document.title = "Untitled.ipynb - JupyterLab";
    const rows = [
      makeRow({ session_id: "a1", host: "alpha", state: "needs-input" }),
      makeRow({ session_id: "b1", host: "bravo", state: "review" }),
    ];
    const { root } = await show(rows, { alpha: on(), bravo: off(NOW - 1000) });
    expect(document.title).toBe("(2) Untitled.ipynb - JupyterLab");
    expect(q(root, ".pmux-bell-count").textContent).toBe("2");
    // the bell's sheet lists both, each naming its host
    q<HTMLButtonElement>(root, ".pmux-bell").click();
    const names = [...root.querySelectorAll(".pmux-sheet-item .pmux-name")].map((n) => n.textContent);
    expect(names).toEqual(["a1 · alpha", "b1 · bravo"]);
  });
});

describe("the Ended section of a fleet", () => {
  /** `n` seconds before NOW */
  const ago = (n: number) => NOW - n * 1000;
  const gone = (id: string, host: string | undefined, workspace: string, secondsAgo: number): Row =>
    makeRow({ session_id: id, host, workspace, ended: true, running: false, state_since: ago(secondsAgo) });
  const open = (root: HTMLElement) => {
    const ended = q<HTMLDetailsElement>(root, ".pmux-ended");
    ended.open = true;
    ended.dispatchEvent(new Event("toggle"));
    return ended;
  };
  const endedHosts = (root: ParentNode) =>
    [...root.querySelectorAll<HTMLElement>(".pmux-ended .pmux-ended-host")].map((h) => h.dataset.host);
  const endedHost = (root: ParentNode, host: string) => q(root, `.pmux-ended-host[data-host="${host}"]`);
  const workspacesIn = (node: ParentNode) =>
    [...node.querySelectorAll<HTMLElement>(".pmux-ended-group")].map((g) => g.dataset.workspace);
  const head = (node: ParentNode, ws: string) => q(node, `.pmux-ended-group[data-workspace="${ws}"] .pmux-group-head`);

  it("groups by host, then workspace, newest first at every level (headers for 2+ only)", async () => {
    const { root } = await show(
      [
        ...fleet(),
        gone("a9", "alpha", "api", 50),
        gone("b9", "bravo", "ops", 10),
        gone("a8", "alpha", "web", 20),
        gone("a7", "alpha", "api", 30),
      ],
      { alpha: on(), bravo: on() },
    );
    const ended = open(root);
    expect(endedHosts(root)).toEqual(["bravo", "alpha"]); // bravo's ended last
    expect(workspacesIn(endedHost(root, "alpha"))).toEqual(["web", "api"]);
    expect(rowIds(root, ".pmux-ended")).toEqual(["b9", "a8", "a7", "a9"]);
    expect(visible(head(endedHost(root, "alpha"), "api"))).toBe(true);
    expect(q(endedHost(root, "alpha"), '[data-workspace="api"] .pmux-group-summary').textContent).toBe("2 sessions");
    expect(visible(head(endedHost(root, "alpha"), "web"))).toBe(false);
    expect(q(endedHost(root, "alpha"), ".pmux-host-name").textContent).toBe("alpha");
    expect(q(endedHost(root, "alpha"), ".pmux-host-summary").textContent).toBe("3 sessions");
    expect(q(endedHost(root, "bravo"), ".pmux-rows").getAttribute("aria-label")).toBe("bravo: Ended sessions: ops");
    // the live list's hosts are not the Ended section's
    expect(hostNames(root)).toEqual(["bravo", "alpha"]);
    expect(rowIds(root)).toEqual(["b1", "b2", "a2", "a1", "a3"]);
    expect(q(ended, "summary").textContent).toBe("Ended (4)");
  });

  it("follows the live list's host level, keeping its row elements", async () => {
    const { fake, root } = await show(
      [
        makeRow({ session_id: "a1", host: "alpha", workspace: "api" }),
        makeRow({ session_id: "b1", host: "bravo", workspace: "api" }),
        gone("a9", "alpha", "api", 20),
        gone("a8", "alpha", "api", 30),
      ],
      { alpha: on(), bravo: on() },
    );
    open(root);
    // every ended row is alpha's, but the fleet has two hosts: the section says whose they are
    expect(endedHosts(root)).toEqual(["alpha"]);
    const a9 = q(root, '.pmux-ended [data-session-id="a9"]');
    // bravo's last live session ends: one host left, no host level anywhere
    patch(fake, 2, [gone("b1", "bravo", "api", 1)], [], { alpha: on(), bravo: on() });
    expect(root.querySelector(".pmux-host")).toBeNull();
    // ...but the ended rows now come from two hosts: grouped by host still
    expect(endedHosts(root)).toEqual(["bravo", "alpha"]);
    patch(fake, 3, [], ["b1"]);
    expect(endedHosts(root)).toEqual([]);
    expect(workspacesIn(q(root, ".pmux-ended"))).toEqual(["api"]);
    expect(rowIds(root, ".pmux-ended")).toEqual(["a9", "a8"]);
    expect(q(root, '.pmux-ended [data-session-id="a9"]')).toBe(a9);
  });

  it("has no host level over this machine's hub: workspaces only", async () => {
    const { root } = await show([
      makeRow({ session_id: "live", workspace: "api" }),
      gone("g1", undefined, "api", 10),
      gone("g2", undefined, "web", 20),
      gone("g3", undefined, "api", 30),
    ]);
    open(root);
    expect(root.querySelector(".pmux-ended-host")).toBeNull();
    expect(workspacesIn(q(root, ".pmux-ended"))).toEqual(["api", "web"]);
    expect(rowIds(root, ".pmux-ended")).toEqual(["g1", "g3", "g2"]);
    expect(q(root, '.pmux-ended [data-workspace="web"] .pmux-rows').getAttribute("aria-label")).toBe(
      "Ended sessions: web",
    );
  });

  it("touches nothing for a patch that changes nothing, and moves only what moved", async () => {
    const rows = [...fleet(), gone("a9", "alpha", "api", 50), gone("a8", "alpha", "web", 20), gone("b9", "bravo", "ops", 10)];
    const { fake, root } = await show(rows, { alpha: on(), bravo: on() });
    const ended = open(root);
    const seen = watch(ended);
    patch(fake, 2, rows.slice(5).map((r) => ({ ...r })));
    expect(seen.take()).toEqual([]);
    // a9 ends again later (a resumed session's new end): its host and workspace come first
    patch(fake, 3, [gone("a9", "alpha", "api", 1)]);
    expect(endedHosts(root)).toEqual(["alpha", "bravo"]);
    expect(rowIds(root, ".pmux-ended")).toEqual(["a9", "a8", "b9"]);
    const moved = seen.take().filter((m) => m.type === "childList" && m.addedNodes.length > 0);
    expect(moved.length).toBeLessThanOrEqual(2); // alpha's section and its api group
    seen.stop();
  });
});

describe("hostStatus and the store's hosts", () => {
  it("words an offline host", () => {
    expect(hostStatus(true, NOW - 1000, NOW)).toBe("");
    expect(hostStatus(false, NOW - 3 * 3600_000, NOW)).toBe("offline · last seen 3h ago");
    expect(hostStatus(false, 0, NOW)).toBe("offline");
  });

  it("takes hosts from the snapshot, replaces them from a patch that has them, keeps them otherwise", () => {
    const store = new SessionStore();
    store.applySnapshot({ seq: 1, sessions: {}, hosts: { a: { online: true, last_seen: 5 } } });
    expect(store.hosts).toEqual({ a: { online: true, last_seen: 5 } });
    store.applyPatch({ type: "patch", seq: 2, upsert: [], remove: [], hosts: null });
    expect(store.hosts).toEqual({ a: { online: true, last_seen: 5 } });
    store.applyPatch({ type: "patch", seq: 3, upsert: [], remove: [], hosts: { a: { online: false, last_seen: 9 } } });
    expect(store.hosts).toEqual({ a: { online: false, last_seen: 9 } });
    store.applySnapshot({ seq: 4, sessions: {} });
    expect(store.hosts).toEqual({});
  });
});
