// The session list: live rows in groups, plus a collapsed "Ended" section.
//
// Two groupings (remembered per browser, see view.ts): by workspace, under a pinned "Needs you"
// block that holds every needs-input row, longest-waiting first; or by state (Needs you /
// Working / Done / Idle). A workspace's header is shown only when it holds two or more
// sessions: a lone session's row already names it.
//
// Groups and rows are kept in arrays that mirror the DOM exactly. A changed row is updated in
// place; if its sort key changed it is taken out of its array and binary-inserted back, and
// its <li> is moved only if its neighbour changed. While the pointer or the keyboard focus is
// in the list, nothing is moved (the ✓ one aims at stays put): rows are updated in place, new
// ones are appended, and the whole order is applied once both have left.
import { el, insertionIndex, place, reorder, setAttr, setClass, setData, setHidden, text } from "../dom";
import { plural } from "../format";
import { byCode, byName } from "../order";
import { emptyCounts, isAttention, mostUrgent, rank } from "../states";
import type { Row, State } from "../types";
import { RowView, type RowActions, workspaceOf } from "./row";

export type Grouping = "workspace" | "state";

/** The pinned block of the workspace grouping, and the first group of the state grouping. */
export const NEEDS_YOU = "Needs you";
/** The state grouping's groups, in their order. */
export const STATE_GROUPS: readonly string[] = [NEEDS_YOU, "Done", "Working", "Idle"];
const STATE_GROUP: Record<State, string> = {
  "needs-input": NEEDS_YOU,
  review: "Done",
  busy: "Working",
  unknown: "Idle",
  idle: "Idle",
};

/** The group a live row belongs to under `grouping`. */
export function groupOf(row: Row, grouping: Grouping): string {
  if (grouping === "state") return STATE_GROUP[row.state];
  return row.state === "needs-input" ? NEEDS_YOU : workspaceOf(row);
}

/** Priority; attention rows longest-waiting first; then name (natural order), then id. */
function compareRows(a: RowView, b: RowView): number {
  return (
    a.rank - b.rank ||
    (isAttention(a.row.state) ? a.since - b.since : 0) ||
    byName(a.sortName, b.sortName) ||
    byCode(a.row.session_id, b.row.session_id)
  );
}

function compareGroups(a: GroupView, b: GroupView): number {
  return a.order - b.order || a.rank - b.rank || byName(a.name, b.name) || byCode(a.name, b.name);
}

/** Remove `item` from the sorted `items` and insert it back at its place; returns its index. */
function resort<T>(items: T[], item: T, compare: (a: T, b: T) => number): number {
  const at = items.indexOf(item);
  if (at >= 0) items.splice(at, 1);
  const index = insertionIndex(items, item, compare);
  items.splice(index, 0, item);
  return index;
}

export class GroupView {
  readonly el: HTMLElement;
  readonly list: HTMLUListElement;
  readonly rows: RowView[] = [];
  rank = rank("idle");
  /** groups sort by this first: the pinned block and the state groups have a fixed place */
  readonly order: number;
  private readonly tally: Record<State, number> = emptyCounts();
  private readonly head: HTMLDivElement;
  private readonly dot: HTMLSpanElement;
  private readonly summary: Text;
  private dotState: State | null = null;

  constructor(
    readonly name: string,
    private readonly grouping: Grouping,
  ) {
    this.order = grouping === "state" ? STATE_GROUPS.indexOf(name) : name === NEEDS_YOU ? -1 : 0;
    this.el = el("section", "pmux-group");
    this.el.setAttribute("data-group", name);
    if (grouping === "workspace" && name !== NEEDS_YOU) this.el.setAttribute("data-workspace", name);
    this.head = this.el.appendChild(el("div", "pmux-group-head"));
    this.dot = this.head.appendChild(el("span"));
    this.dot.setAttribute("aria-hidden", "true");
    this.head.appendChild(el("span", "pmux-group-name", name));
    this.summary = text(this.head.appendChild(el("span", "pmux-group-summary")));
    this.list = this.el.appendChild(el("ul", "pmux-rows"));
    this.list.setAttribute("aria-label", name === NEEDS_YOU ? "Sessions that need you" : `Sessions: ${name}`);
  }

  /** A workspace's header earns its space with two sessions or more. */
  get headed(): boolean {
    return this.grouping === "state" || this.name === NEEDS_YOU || this.rows.length >= 2;
  }

  count(state: State, delta: number): void {
    this.tally[state] += delta;
  }

  /** Refresh the dot and summary; returns true when the group's sort rank changed. */
  refreshHead(): boolean {
    const state = mostUrgent(this.tally);
    const before = this.rank;
    this.rank = this.order === 0 ? rank(state) : 0;
    const headed = this.headed;
    if (state !== this.dotState) {
      this.dotState = state;
      setClass(this.dot, `pmux-dot pmux-dot--${state} pmux-dot--static`);
    }
    setClass(this.el, `pmux-group pmux-group--${state}${headed ? "" : " pmux-group--solo"}`);
    setHidden(this.head, !headed);
    setData(this.summary, plural(this.rows.length, "session"));
    return this.rank !== before;
  }
}

interface Placed {
  view: RowView;
  group: GroupView;
}

export class SessionList {
  readonly el: HTMLDivElement;
  private readonly groupsEl: HTMLDivElement;
  private readonly groups = new Map<string, GroupView>();
  private readonly groupOrder: GroupView[] = [];
  private readonly live = new Map<string, Placed>();
  readonly ended: EndedSection;
  private grouping: Grouping;
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
    const views = [...this.live.values()].map((p) => p.view);
    for (const group of this.groupOrder) group.el.remove();
    this.groups.clear();
    this.groupOrder.length = 0;
    this.live.clear();
    this.deferred = false;
    setAttr(this.el, "data-order-waits", null);
    this.build(views.map((v) => v.row), now, new Map(views.map((v) => [v.row.session_id, v])));
  }

  rowView(sessionId: string): RowView | undefined {
    return this.live.get(sessionId)?.view ?? this.ended.rowView(sessionId);
  }

  /** Show exactly `rows`. The first call builds everything in a DocumentFragment and appends
   * it once; later calls (a newer snapshot) reconcile row by row, keyed by session id. */
  reset(rows: Iterable<Row>, now: number): void {
    const all = [...rows];
    if (this.live.size === 0 && this.groups.size === 0) {
      this.build(all.filter((r) => !r.ended), now);
    } else {
      const live = new Set(all.filter((r) => !r.ended).map((r) => r.session_id));
      for (const id of [...this.live.keys()]) if (!live.has(id)) this.removeLive(id);
      for (const row of all) if (!row.ended) this.upsertLive(row, now);
    }
    this.ended.reset(all.filter((r) => r.ended), now);
  }

  apply(upserted: readonly Row[], removed: readonly string[], now: number): void {
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
  }

  /** Every row drawn (live, and ended ones once their section was opened). */
  forEachView(fn: (view: RowView) => void): void {
    for (const { view } of this.live.values()) fn(view);
    this.ended.forEachView(fn);
  }

  tick(now: number): void {
    for (const { view } of this.live.values()) view.tick(now);
    this.ended.tick(now);
  }

  private build(rows: Row[], now: number, views?: Map<string, RowView>): void {
    for (const row of rows) {
      const group = this.groupFor(groupOf(row, this.grouping), false);
      const view = views?.get(row.session_id) ?? new RowView(row, now, this.actions);
      group.rows.push(view);
      group.count(row.state, 1);
      this.live.set(row.session_id, { view, group });
    }
    // Groups are still detached here, so filling them costs no document bookkeeping; they
    // reach the (possibly connected) list through one DocumentFragment.
    for (const group of this.groupOrder) {
      group.rows.sort(compareRows);
      group.refreshHead();
      for (const view of group.rows) group.list.appendChild(view.el);
    }
    this.groupOrder.sort(compareGroups);
    const fragment = document.createDocumentFragment();
    for (const group of this.groupOrder) fragment.appendChild(group.el);
    this.groupsEl.appendChild(fragment);
  }

  /** Apply the order held while the pointer or focus was in the list: every row to its group,
   * every group and row to its place (moving only what is out of place). */
  private relayout(): void {
    this.deferred = false;
    setAttr(this.el, "data-order-waits", null);
    for (const placed of [...this.live.values()]) {
      if (placed.group.name !== groupOf(placed.view.row, this.grouping)) this.moveToGroup(placed);
    }
    for (const group of this.groupOrder) {
      group.rows.sort(compareRows);
      reorder(group.list, group.rows.map((v) => v.el));
      group.refreshHead();
    }
    this.groupOrder.sort(compareGroups);
    reorder(this.groupsEl, this.groupOrder.map((g) => g.el));
  }

  private groupFor(name: string, attach: boolean): GroupView {
    let group = this.groups.get(name);
    if (!group) {
      group = new GroupView(name, this.grouping);
      this.groups.set(name, group);
      this.groupOrder.push(group);
      if (attach) this.placeGroup(group);
    }
    return group;
  }

  private placeGroup(group: GroupView): void {
    if (this.held) {
      this.defer();
      if (group.el.parentNode) return; // stays where it is until the pointer leaves
      // A new group while held goes last: nothing above the pointer moves.
      this.groupOrder.splice(this.groupOrder.indexOf(group), 1);
      this.groupOrder.push(group);
      this.groupsEl.appendChild(group.el);
      return;
    }
    const index = resort(this.groupOrder, group, compareGroups);
    place(this.groupsEl, group.el, this.groupOrder[index + 1]?.el ?? null);
  }

  private upsertLive(row: Row, now: number): void {
    const placed = this.live.get(row.session_id);
    const key = groupOf(row, this.grouping);
    if (placed && (placed.group.name === key || this.held)) {
      if (placed.group.name !== key) this.defer();
      const oldState = placed.view.row.state;
      const moved = placed.view.update(row, now);
      if (oldState !== row.state) {
        placed.group.count(oldState, -1);
        placed.group.count(row.state, 1);
      }
      if (moved) this.placeRow(placed.group, placed.view);
      if (placed.group.refreshHead()) this.placeGroup(placed.group);
      return;
    }
    if (placed) {
      // Moved to another group: leave the old one (counted by its old state), keep the same
      // row element.
      this.detach(placed);
      placed.view.update(row, now);
      this.attach(placed.view, key);
      return;
    }
    this.attach(new RowView(row, now, this.actions), key);
  }

  private moveToGroup(placed: Placed): void {
    this.detach(placed);
    this.attach(placed.view, groupOf(placed.view.row, this.grouping));
  }

  private attach(view: RowView, key: string): void {
    const group = this.groupFor(key, true);
    group.count(view.row.state, 1);
    this.live.set(view.row.session_id, { view, group });
    this.placeRow(group, view, true);
    if (group.refreshHead() || !group.el.parentNode) this.placeGroup(group);
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

  /** Take a row out of its group (not out of the DOM); drop the group when it empties. */
  private detach({ view, group }: Placed): void {
    const at = group.rows.indexOf(view);
    if (at >= 0) group.rows.splice(at, 1);
    group.count(view.row.state, -1);
    if (group.rows.length === 0) {
      this.groups.delete(group.name);
      this.groupOrder.splice(this.groupOrder.indexOf(group), 1);
      group.el.remove();
    } else if (group.refreshHead()) {
      this.placeGroup(group);
    }
  }
}

/** How many ended sessions are listed (the newest); the rest are counted, not shown. */
export const ENDED_SHOWN = 10;

/** Ended sessions, in a <details> closed by default: the last ENDED_SHOWN, newest first, and a
 * "Clear" that forgets the ones shown so far (in this view). Their rows are only built once the
 * user opens it: nobody pays for the history they do not look at. */
export class EndedSection {
  readonly el: HTMLDetailsElement;
  private readonly list: HTMLUListElement;
  private readonly summaryText: Text;
  private readonly more: HTMLParagraphElement;
  private readonly moreText: Text;
  private readonly rows = new Map<string, Row>();
  private readonly cleared = new Set<string>();
  private readonly views = new Map<string, RowView>();
  private built = false;

  constructor(private readonly actions: RowActions) {
    this.el = el("details", "pmux-ended");
    const summary = this.el.appendChild(el("summary", "pmux-ended-summary"));
    this.summaryText = text(summary);
    this.list = this.el.appendChild(el("ul", "pmux-rows"));
    this.list.setAttribute("aria-label", "Ended sessions");
    const foot = this.el.appendChild(el("div", "pmux-ended-foot"));
    this.more = foot.appendChild(el("p", "pmux-ended-more"));
    this.moreText = text(this.more);
    const clear = foot.appendChild(el("button", "pmux-ended-clear", "Clear"));
    clear.type = "button";
    clear.setAttribute("aria-label", "Clear the ended sessions from this list");
    clear.addEventListener("click", () => this.clear());
    this.el.hidden = true;
    this.el.addEventListener("toggle", () => {
      if (this.el.open && !this.built) this.build(Date.now());
    });
  }

  get count(): number {
    return this.rows.size;
  }

  rowView(id: string): RowView | undefined {
    return this.views.get(id);
  }

  reset(rows: Row[], now: number): void {
    this.rows.clear();
    for (const row of rows) if (!this.cleared.has(row.session_id)) this.rows.set(row.session_id, row);
    this.refresh(now);
  }

  upsert(row: Row, now: number): void {
    if (this.cleared.has(row.session_id)) return;
    this.rows.set(row.session_id, row);
    this.refresh(now);
  }

  remove(id: string): void {
    if (!this.rows.delete(id)) return;
    this.refresh(Date.now());
  }

  /** Forget every ended session listed now (they stay in the kernel's fleet and history). */
  clear(): void {
    for (const id of this.rows.keys()) this.cleared.add(id);
    this.rows.clear();
    this.refresh(Date.now());
  }

  tick(now: number): void {
    if (this.el.open) for (const view of this.views.values()) view.tick(now);
  }

  forEachView(fn: (view: RowView) => void): void {
    for (const view of this.views.values()) fn(view);
  }

  /** Build the rows now (the section was opened). */
  build(now: number): void {
    this.built = true;
    this.refresh(now);
  }

  /** The newest ENDED_SHOWN rows, keyed by id (rows kept, moved only when out of place). */
  private refresh(now: number): void {
    const total = this.rows.size;
    if (this.built) {
      const shown = [...this.rows.values()]
        .sort((a, b) => b.state_since - a.state_since || byCode(a.session_id, b.session_id))
        .slice(0, ENDED_SHOWN);
      const keep = new Set(shown.map((r) => r.session_id));
      for (const [id, view] of this.views) {
        if (keep.has(id)) continue;
        view.el.remove();
        this.views.delete(id);
      }
      const nodes = shown.map((row) => {
        let view = this.views.get(row.session_id);
        if (!view) this.views.set(row.session_id, (view = new RowView(row, now, this.actions)));
        else if (view.row !== row) view.update(row, now);
        return view.el;
      });
      reorder(this.list, nodes);
    }
    setData(this.summaryText, `Ended (${total})`);
    const older = total - Math.min(total, ENDED_SHOWN);
    setData(this.moreText, older > 0 ? `${older} older not shown` : "");
    setHidden(this.more, older === 0);
    const hidden = total === 0;
    if (this.el.hidden !== hidden) this.el.hidden = hidden;
  }
}
