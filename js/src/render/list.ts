// The session list: live rows in groups (groups.ts), plus a collapsed "Ended" section (ended.ts).
//
// Two groupings (remembered per browser, see view.ts): by workspace, under a pinned "Needs you"
// block that holds every row the count counts (needs-input, then review, each longest-waiting
// first); or by state (Needs you / Working / Idle). A workspace's header is shown only when it holds two or more
// sessions: a lone session's row already names it. A fleet whose rows come from two hosts or
// more (or from one that stopped beating) is grouped by host first: a header per host (its
// dot, its name, "offline" and when it was last seen), and the grouping above inside each.
//
// Groups and rows are kept in arrays that mirror the DOM exactly. A changed row is updated in
// place; if its sort key changed it is taken out of its array and binary-inserted back, and
// its <li> is moved only if its neighbour changed. While the pointer or the keyboard focus is
// in the list, nothing is moved (the ✓ one aims at stays put): rows are updated in place, new
// ones are appended, and the whole order is applied once both have left.
import { el, insertionIndex, place, reorder, setAttr } from "../dom";
import type { Host, Row, State } from "../types";
import { EndedSection } from "./ended";
import {
  compareGroups,
  compareHosts,
  compareRows,
  GroupView,
  type Grouping,
  groupOf,
  HostView,
  hostOf,
} from "./groups";
import { RowView, type RowActions } from "./row";

export { type Grouping, hostStatus } from "./groups";

/** Remove `item` from the sorted `items` and insert it back at its place; returns its index. */
function resort<T>(items: T[], item: T, compare: (a: T, b: T) => number): number {
  const at = items.indexOf(item);
  if (at >= 0) items.splice(at, 1);
  const index = insertionIndex(items, item, compare);
  items.splice(index, 0, item);
  return index;
}

interface Placed {
  view: RowView;
  group: GroupView;
  /** the row's host (its group's HostView is the headless one when there is no host level) */
  host: string;
}

export class SessionList {
  readonly el: HTMLDivElement;
  private readonly groupsEl: HTMLDivElement;
  /** the host level: on when live rows come from two hosts or more, or from an offline one */
  private multi = false;
  /** the headless host of a list without a host level */
  private single: HostView;
  private readonly hosts = new Map<string, HostView>();
  private readonly hostOrder: HostView[] = [];
  /** live rows per host (whatever the level), to know when the host level is wanted */
  private readonly rowHosts = new Map<string, number>();
  private hostInfo: Record<string, Host> = {};
  private readonly live = new Map<string, Placed>();
  readonly ended: EndedSection;
  private grouping: Grouping;
  /** the latest clock a caller gave (for the hosts' "last seen" between ticks) */
  private now = 0;
  /** the pointer / the keyboard focus is in the list: nothing moves */
  private pointerIn = false;
  private focusIn = false;
  /** an order change waits for the pointer and focus to leave */
  private deferred = false;

  constructor(
    private readonly actions: RowActions,
    grouping: Grouping = "workspace",
  ) {
    this.grouping = grouping;
    this.el = el("div", "pmux-list");
    this.groupsEl = this.el.appendChild(el("div", "pmux-groups"));
    this.single = new HostView("", this.groupsEl);
    this.ended = new EndedSection(actions);
    this.el.appendChild(this.ended.el);
    // Tooltips are written when first wanted (see RowView.wantTitles): one delegated listener.
    const wantTitles = (event: Event) => {
      const id = (event.target as Element | null)?.closest?.(".pmux-row")?.getAttribute("data-session-id");
      if (id) this.rowView(id)?.wantTitles();
    };
    this.el.addEventListener("pointerover", wantTitles);
    this.el.addEventListener("focusin", (event) => {
      wantTitles(event);
      const id = (event.target as Element | null)?.closest?.(".pmux-row")?.getAttribute("data-session-id");
      if (id) this.live.get(id)?.view.wantActions();
    });
    this.groupsEl.addEventListener("pointerenter", () => this.hold("pointer", true));
    this.groupsEl.addEventListener("pointerleave", () => this.hold("pointer", false));
    this.groupsEl.addEventListener("focusin", () => this.hold("focus", true));
    this.groupsEl.addEventListener("focusout", (event) => {
      const to = (event as FocusEvent).relatedTarget as Node | null;
      if (!to || !this.groupsEl.contains(to)) this.hold("focus", false);
    });
  }

  get liveCount(): number {
    return this.live.size;
  }

  /** Whether the order is held (pointer or focus in the list). */
  get held(): boolean {
    return this.pointerIn || this.focusIn;
  }

  /** An order change waits: the header says so (CSS, from data-order-waits). */
  private defer(): void {
    if (this.deferred) return;
    this.deferred = true;
    setAttr(this.el, "data-order-waits", "true");
  }

  /** The pointer or focus entered or left the list; on leaving, the held order is applied. */
  hold(what: "pointer" | "focus", inside: boolean): void {
    if (what === "pointer") this.pointerIn = inside;
    else this.focusIn = inside;
    setAttr(this.el, "data-held", this.held ? "true" : null);
    if (!this.held && this.deferred) this.relayout();
  }

  get currentGrouping(): Grouping {
    return this.grouping;
  }

  /** Regroup every live row (the user switched the grouping). */
  setGrouping(grouping: Grouping, now: number): void {
    if (grouping === this.grouping) return;
    this.grouping = grouping;
    this.regroup(now);
  }

  /** The fleet's hosts (online or not, last beat): headers and the host level follow. */
  setHosts(hosts: Record<string, Host>, now: number): void {
    this.now = now;
    this.hostInfo = hosts;
    for (const host of this.hostOrder) {
      host.setInfo(hosts[host.name]);
      this.refreshHost(host);
    }
    this.followHostLevel();
  }

  rowView(sessionId: string): RowView | undefined {
    return this.live.get(sessionId)?.view ?? this.ended.rowView(sessionId);
  }

  /** Show exactly `rows`. The first call builds everything in a DocumentFragment and appends
   * it once; later calls (a newer snapshot) reconcile row by row, keyed by session id. */
  reset(rows: Iterable<Row>, now: number): void {
    this.now = now;
    const all = [...rows];
    if (this.live.size === 0 && this.single.groups.size === 0 && this.hosts.size === 0) {
      this.build(all.filter((r) => !r.ended), now);
    } else {
      const live = new Set(all.filter((r) => !r.ended).map((r) => r.session_id));
      for (const id of [...this.live.keys()]) if (!live.has(id)) this.removeLive(id);
      for (const row of all) if (!row.ended) this.upsertLive(row, now);
      this.followHostLevel();
    }
    this.ended.reset(all.filter((r) => r.ended), now);
  }

  apply(upserted: readonly Row[], removed: readonly string[], now: number): void {
    this.now = now;
    for (const id of removed) {
      this.removeLive(id);
      this.ended.remove(id);
    }
    for (const row of upserted) {
      if (row.ended) {
        this.removeLive(row.session_id);
        this.ended.upsert(row, now);
      } else {
        this.ended.remove(row.session_id);
        this.upsertLive(row, now);
      }
    }
    this.followHostLevel();
  }

  /** Every row drawn (live, and ended ones once their section was opened). */
  forEachView(fn: (view: RowView) => void): void {
    for (const { view } of this.live.values()) fn(view);
    this.ended.forEachView(fn);
  }

  tick(now: number): void {
    this.now = now;
    for (const { view } of this.live.values()) view.tick(now);
    for (const host of this.hostOrder) host.tick(now);
    this.ended.tick(now);
  }

  /** The host level is wanted when live rows come from two hosts or more, or from a host that
   * stopped beating (a fleet of one must still say it is offline). */
  private wantsHosts(): boolean {
    if (this.rowHosts.size >= 2) return true;
    for (const host of this.rowHosts.keys()) if (this.hostInfo[host]?.online === false) return true;
    return false;
  }

  /** Turn the host level on or off when the rows or hosts call for it (once nothing is held). */
  private followHostLevel(): void {
    if (this.wantsHosts() === this.multi) return;
    if (this.held) this.defer();
    else this.regroup(this.now);
  }

  /** Rebuild every group (and host) from the live rows, keeping their row elements. */
  private regroup(now: number): void {
    const views = [...this.live.values()].map((p) => p.view);
    for (const host of this.allHosts()) for (const group of host.groupOrder) group.el.remove();
    for (const host of this.hostOrder) host.el.remove();
    this.single = new HostView("", this.groupsEl);
    this.hosts.clear();
    this.hostOrder.length = 0;
    this.live.clear();
    this.rowHosts.clear();
    this.deferred = false;
    setAttr(this.el, "data-order-waits", null);
    this.build(views.map((v) => v.row), now, new Map(views.map((v) => [v.row.session_id, v])));
  }

  private allHosts(): readonly HostView[] {
    return this.multi ? this.hostOrder : [this.single];
  }

  private build(rows: Row[], now: number, views?: Map<string, RowView>): void {
    for (const row of rows) this.noteHost(hostOf(row), 1);
    this.multi = this.wantsHosts();
    for (const row of rows) {
      const host = hostOf(row);
      const group = this.groupFor(host, groupOf(row, this.grouping), false);
      const view = views?.get(row.session_id) ?? new RowView(row, now, this.actions);
      group.rows.push(view);
      this.countRow(group, row.state, 1);
      this.live.set(row.session_id, { view, group, host });
    }
    // Groups are still detached here, so filling them costs no document bookkeeping; they
    // reach the (possibly connected) list through one DocumentFragment.
    for (const host of this.allHosts()) {
      for (const group of host.groupOrder) {
        group.rows.sort(compareRows);
        group.refreshHead();
        for (const view of group.rows) group.list.appendChild(view.el);
      }
      host.groupOrder.sort(compareGroups);
      const fragment = document.createDocumentFragment();
      for (const group of host.groupOrder) fragment.appendChild(group.el);
      host.groupsEl.appendChild(fragment);
      host.refreshHead(now);
    }
    if (this.multi) {
      this.hostOrder.sort(compareHosts);
      const fragment = document.createDocumentFragment();
      for (const host of this.hostOrder) fragment.appendChild(host.el);
      this.groupsEl.appendChild(fragment);
    }
    this.ended.setHostLevel(this.multi, now);
  }

  /** Apply the order held while the pointer or focus was in the list: every row to its group,
   * every group and row to its place (moving only what is out of place). */
  private relayout(): void {
    if (this.wantsHosts() !== this.multi) {
      this.regroup(this.now);
      return;
    }
    this.deferred = false;
    setAttr(this.el, "data-order-waits", null);
    for (const placed of [...this.live.values()]) {
      const row = placed.view.row;
      if (placed.group.name !== groupOf(row, this.grouping) || placed.host !== hostOf(row)) {
        this.moveToGroup(placed);
      }
    }
    for (const host of this.allHosts()) {
      for (const group of host.groupOrder) {
        group.rows.sort(compareRows);
        reorder(group.list, group.rows.map((v) => v.el));
        group.refreshHead();
      }
      host.groupOrder.sort(compareGroups);
      reorder(host.groupsEl, host.groupOrder.map((g) => g.el));
      host.refreshHead(this.now);
    }
    if (this.multi) {
      this.hostOrder.sort(compareHosts);
      reorder(this.groupsEl, this.hostOrder.map((h) => h.el));
    }
  }

  private hostFor(name: string, attach: boolean): HostView {
    if (!this.multi) return this.single;
    let host = this.hosts.get(name);
    if (!host) {
      host = new HostView(name, null);
      host.setInfo(this.hostInfo[name]);
      this.hosts.set(name, host);
      this.hostOrder.push(host);
      if (attach) this.placeHost(host);
    }
    return host;
  }

  private groupFor(hostName: string, name: string, attach: boolean): GroupView {
    const host = this.hostFor(hostName, attach);
    let group = host.groups.get(name);
    if (!group) {
      group = new GroupView(name, this.grouping, host);
      host.groups.set(name, group);
      host.groupOrder.push(group);
      if (attach) this.placeGroup(group);
    }
    return group;
  }

  /** Place `item` among its sorted siblings in `parent` (or, while held, leave it be). */
  private place<T extends { el: HTMLElement }>(
    item: T,
    order: T[],
    parent: HTMLElement,
    compare: (a: T, b: T) => number,
  ): void {
    if (this.held) {
      this.defer();
      if (item.el.parentNode) return; // stays where it is until the pointer leaves
      // New while held: it goes last, so nothing above the pointer moves.
      order.splice(order.indexOf(item), 1);
      order.push(item);
      parent.appendChild(item.el);
      return;
    }
    const index = resort(order, item, compare);
    place(parent, item.el, order[index + 1]?.el ?? null);
  }

  private placeGroup(group: GroupView): void {
    this.place(group, group.host.groupOrder, group.host.groupsEl, compareGroups);
  }

  private placeHost(host: HostView): void {
    if (this.multi && host.headed) this.place(host, this.hostOrder, this.groupsEl, compareHosts);
  }

  /** Refresh a host's header, and move it if its place changed. */
  private refreshHost(host: HostView): void {
    if (host.refreshHead(this.now)) this.placeHost(host);
  }

  private countRow(group: GroupView, state: State, delta: number): void {
    group.count(state, delta);
    group.host.count(state, delta);
  }

  private noteHost(host: string, delta: number): void {
    const n = (this.rowHosts.get(host) ?? 0) + delta;
    if (n > 0) this.rowHosts.set(host, n);
    else this.rowHosts.delete(host);
  }

  private upsertLive(row: Row, now: number): void {
    const placed = this.live.get(row.session_id);
    const host = hostOf(row);
    const key = groupOf(row, this.grouping);
    const same = placed !== undefined && placed.group.name === key && placed.host === host;
    if (placed && (same || this.held)) {
      if (!same) this.defer();
      const oldState = placed.view.row.state;
      const moved = placed.view.update(row, now);
      if (oldState !== row.state) {
        this.countRow(placed.group, oldState, -1);
        this.countRow(placed.group, row.state, 1);
      }
      if (moved) this.placeRow(placed.group, placed.view);
      if (placed.group.refreshHead()) this.placeGroup(placed.group);
      this.refreshHost(placed.group.host);
      return;
    }
    if (placed) {
      // Moved to another group: leave the old one (counted by its old state), keep the same
      // row element.
      this.detach(placed);
      placed.view.update(row, now);
      this.attach(placed.view, host, key);
      return;
    }
    this.attach(new RowView(row, now, this.actions), host, key);
  }

  private moveToGroup(placed: Placed): void {
    this.detach(placed);
    const row = placed.view.row;
    this.attach(placed.view, hostOf(row), groupOf(row, this.grouping));
  }

  private attach(view: RowView, host: string, key: string): void {
    const group = this.groupFor(host, key, true);
    this.countRow(group, view.row.state, 1);
    this.noteHost(host, 1);
    this.live.set(view.row.session_id, { view, group, host });
    this.placeRow(group, view, true);
    if (group.refreshHead() || !group.el.parentNode) this.placeGroup(group);
    this.refreshHost(group.host);
  }

  private placeRow(group: GroupView, view: RowView, isNew = false): void {
    if (this.held) {
      this.defer();
      if (!isNew && view.el.parentNode === group.list) return;
      // New while held: appended, below everything the pointer may be on.
      const at = group.rows.indexOf(view);
      if (at >= 0) group.rows.splice(at, 1);
      group.rows.push(view);
      group.list.appendChild(view.el);
      return;
    }
    const index = resort(group.rows, view, compareRows);
    place(group.list, view.el, group.rows[index + 1]?.el ?? null);
  }

  private removeLive(id: string): void {
    const placed = this.live.get(id);
    if (!placed) return;
    this.live.delete(id);
    this.detach(placed);
    placed.view.dispose();
    placed.view.el.remove();
  }

  /** Take a row out of its group (not out of the DOM); drop the group when it empties, and
   * its host when that empties too. */
  private detach({ view, group, host: hostName }: Placed): void {
    const at = group.rows.indexOf(view);
    if (at >= 0) group.rows.splice(at, 1);
    this.countRow(group, view.row.state, -1);
    this.noteHost(hostName, -1);
    const host = group.host;
    if (group.rows.length === 0) {
      host.groups.delete(group.name);
      host.groupOrder.splice(host.groupOrder.indexOf(group), 1);
      group.el.remove();
    } else if (group.refreshHead()) {
      this.placeGroup(group);
    }
    if (host.headed && host.groups.size === 0) {
      this.hosts.delete(host.name);
      this.hostOrder.splice(this.hostOrder.indexOf(host), 1);
      host.el.remove();
    } else {
      this.refreshHost(host);
    }
  }
}
