// The session list: live rows grouped by workspace, plus a collapsed "Ended" section.
//
// Groups and rows are kept in sorted arrays that mirror the DOM exactly. A changed row is
// updated in place; if its sort key changed it is taken out of its array and binary-inserted
// back, and its <li> is moved only if its neighbour changed. The workspace dot is kept from
// per-state tallies, so a change costs O(log n) comparisons plus one array splice — never a
// pass over the fleet.
import { el, insertionIndex, place, setClass, setData, text } from "../dom";
import { byCode, byName } from "../order";
import { LABEL, emptyCounts, mostUrgent, rank } from "../states";
import type { Row, State } from "../types";
import { RowView, type RowActions, workspaceOf } from "./row";

/** Priority, then name (natural order: "w2" before "w10"), then id. */
function compareRows(a: RowView, b: RowView): number {
  return (
    a.rank - b.rank ||
    byName(a.sortName, b.sortName) ||
    byCode(a.row.session_id, b.row.session_id)
  );
}

function compareGroups(a: GroupView, b: GroupView): number {
  return a.rank - b.rank || byName(a.name, b.name) || byCode(a.name, b.name);
}

/** Ended sessions: most recently ended first. */
function compareEnded(a: RowView, b: RowView): number {
  return b.row.state_since - a.row.state_since || compareRows(a, b);
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
  private readonly tally: Record<State, number> = emptyCounts();
  private readonly dot: HTMLSpanElement;
  private readonly summary: Text;
  private dotState: State | null = null;

  constructor(readonly name: string) {
    this.el = el("section", "pmux-group");
    this.el.setAttribute("data-workspace", name);
    const head = this.el.appendChild(el("div", "pmux-group-head"));
    this.dot = head.appendChild(el("span"));
    this.dot.setAttribute("aria-hidden", "true");
    head.appendChild(el("span", "pmux-group-name", name));
    this.summary = text(head.appendChild(el("span", "pmux-group-summary")));
    this.list = this.el.appendChild(el("ul", "pmux-rows"));
    this.list.setAttribute("aria-label", `Sessions in ${name}`);
  }

  count(state: State, delta: number): void {
    this.tally[state] += delta;
  }

  /** Refresh the workspace dot and summary; returns true when the group's sort rank changed. */
  refreshHead(): boolean {
    const state = mostUrgent(this.tally);
    const before = this.rank;
    this.rank = rank(state);
    if (state !== this.dotState) {
      this.dotState = state;
      setClass(this.dot, `pmux-dot pmux-dot--${state}`);
      setClass(this.el, `pmux-group pmux-group--${state}`);
    }
    setData(this.summary, `${LABEL[state]} · ${this.rows.length}`);
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

  constructor(private readonly actions: RowActions) {
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
    this.el.addEventListener("focusin", wantTitles);
  }

  get liveCount(): number {
    return this.live.size;
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

  tick(now: number): void {
    for (const { view } of this.live.values()) view.tick(now);
    this.ended.tick(now);
  }

  private build(rows: Row[], now: number): void {
    for (const row of rows) {
      const group = this.groupFor(workspaceOf(row), false);
      const view = new RowView(row, now, this.actions);
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

  private groupFor(name: string, attach: boolean): GroupView {
    let group = this.groups.get(name);
    if (!group) {
      group = new GroupView(name);
      this.groups.set(name, group);
      this.groupOrder.push(group);
      if (attach) this.placeGroup(group);
    }
    return group;
  }

  private placeGroup(group: GroupView): void {
    const index = resort(this.groupOrder, group, compareGroups);
    place(this.groupsEl, group.el, this.groupOrder[index + 1]?.el ?? null);
  }

  private upsertLive(row: Row, now: number): void {
    const placed = this.live.get(row.session_id);
    const workspace = workspaceOf(row);
    if (placed && placed.group.name === workspace) {
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
    let view: RowView;
    if (placed) {
      // Moved to another workspace: leave the old group, keep the same row element.
      this.detach(placed);
      view = placed.view;
      view.update(row, now);
    } else {
      view = new RowView(row, now, this.actions);
    }
    const group = this.groupFor(workspace, true);
    group.count(row.state, 1);
    this.live.set(row.session_id, { view, group });
    this.placeRow(group, view);
    if (group.refreshHead() || !group.el.parentNode) this.placeGroup(group);
  }

  private placeRow(group: GroupView, view: RowView): void {
    const index = resort(group.rows, view, compareRows);
    place(group.list, view.el, group.rows[index + 1]?.el ?? null);
  }

  private removeLive(id: string): void {
    const placed = this.live.get(id);
    if (!placed) return;
    this.live.delete(id);
    this.detach(placed);
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

/** Ended sessions, in a <details> closed by default. Their rows are only built once the user
 * opens it: nobody pays for the history they do not look at. */
export class EndedSection {
  readonly el: HTMLDetailsElement;
  private readonly list: HTMLUListElement;
  private readonly summaryText: Text;
  private readonly rows = new Map<string, Row>();
  private readonly views = new Map<string, RowView>();
  private readonly order: RowView[] = [];
  private built = false;

  constructor(private readonly actions: RowActions) {
    this.el = el("details", "pmux-ended");
    const summary = this.el.appendChild(el("summary", "pmux-ended-summary"));
    this.summaryText = text(summary);
    this.list = this.el.appendChild(el("ul", "pmux-rows"));
    this.list.setAttribute("aria-label", "Ended sessions");
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
    const keep = new Set(rows.map((r) => r.session_id));
    for (const id of [...this.rows.keys()]) if (!keep.has(id)) this.remove(id);
    for (const row of rows) this.upsert(row, now);
    this.refresh();
  }

  upsert(row: Row, now: number): void {
    this.rows.set(row.session_id, row);
    if (this.built) {
      let view = this.views.get(row.session_id);
      let moved = true;
      if (view) {
        const since = view.row.state_since;
        moved = view.update(row, now) || since !== row.state_since;
      } else {
        view = new RowView(row, now, this.actions);
        this.views.set(row.session_id, view);
      }
      if (moved || !view.el.parentNode) {
        const index = resort(this.order, view, compareEnded);
        place(this.list, view.el, this.order[index + 1]?.el ?? null);
      }
    }
    this.refresh();
  }

  remove(id: string): void {
    if (!this.rows.delete(id)) return;
    const view = this.views.get(id);
    if (view) {
      this.views.delete(id);
      this.order.splice(this.order.indexOf(view), 1);
      view.el.remove();
    }
    this.refresh();
  }

  tick(now: number): void {
    if (this.el.open) for (const view of this.order) view.tick(now);
  }

  /** Build the rows now (the section was opened). */
  build(now: number): void {
    this.built = true;
    for (const row of this.rows.values()) {
      const view = new RowView(row, now, this.actions);
      this.views.set(row.session_id, view);
      this.order.push(view);
    }
    this.order.sort(compareEnded);
    const fragment = document.createDocumentFragment();
    for (const view of this.order) fragment.appendChild(view.el);
    this.list.appendChild(fragment);
  }

  private refresh(): void {
    setData(this.summaryText, `Ended (${this.rows.size})`);
    const hidden = this.rows.size === 0;
    if (this.el.hidden !== hidden) this.el.hidden = hidden;
  }
}

