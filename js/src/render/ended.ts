// The "Ended" section under the live list: ended sessions in a <details> closed by default, the
// newest ENDED_SHOWN of them, grouped as the live list is: by host when the list has a host
// level (or the ended rows come from two hosts or more), then by workspace (a header only over
// two sessions or more: a lone row already names its workspace). Hosts, workspaces and rows go
// newest first. Rows are built only once the section is opened: nobody pays for the history
// they do not look at; and at most ENDED_SHOWN rows are ever drawn, so a refresh rebuilds the
// grouping from them and moves only what is out of place.
import { el, reorder, setData, setHidden, text } from "../dom";
import { plural } from "../format";
import { byCode } from "../order";
import type { Row } from "../types";
import { RowView, type RowActions, workspaceOf } from "./row";

/** How many ended sessions are listed (the newest); the rest are counted, not shown. */
export const ENDED_SHOWN = 10;

function newestFirst(a: Row, b: Row): number {
  return b.state_since - a.state_since || byCode(a.session_id, b.session_id);
}

/** One workspace's ended rows (within one host). */
class EndedGroup {
  readonly el: HTMLElement;
  readonly list: HTMLUListElement;
  private readonly head: HTMLDivElement;
  private readonly summary: Text;

  constructor(workspace: string, hostLabel: string | null) {
    this.el = el("section", "pmux-ended-group");
    this.el.setAttribute("data-workspace", workspace);
    this.head = this.el.appendChild(el("div", "pmux-group-head"));
    this.head.appendChild(el("span", "pmux-group-name", workspace));
    this.summary = text(this.head.appendChild(el("span", "pmux-group-summary")));
    this.list = this.el.appendChild(el("ul", "pmux-rows"));
    const label = `Ended sessions: ${workspace}`;
    this.list.setAttribute("aria-label", hostLabel === null ? label : `${hostLabel}: ${label}`);
  }

  show(rows: readonly HTMLElement[]): void {
    reorder(this.list, rows);
    setHidden(this.head, rows.length < 2);
    setData(this.summary, plural(rows.length, "session"));
  }
}

/** One machine's ended rows: a header (its name, how many) over its workspaces. Without a host
 * level the section has one headless host whose groups go straight into the section. */
class EndedHost {
  readonly el: HTMLElement;
  readonly groupsEl: HTMLElement;
  readonly groups = new Map<string, EndedGroup>();
  private readonly summary: Text | null = null;

  constructor(
    readonly name: string,
    container: HTMLElement | null,
  ) {
    if (container) {
      this.el = this.groupsEl = container;
      return;
    }
    this.el = el("section", "pmux-ended-host");
    this.el.setAttribute("data-host", name);
    const head = this.el.appendChild(el("div", "pmux-host-head"));
    head.appendChild(el("span", "pmux-host-name", this.label));
    this.summary = text(head.appendChild(el("span", "pmux-host-summary")));
    this.groupsEl = this.el.appendChild(el("div", "pmux-host-groups"));
  }

  get headed(): boolean {
    return this.summary !== null;
  }

  get label(): string {
    return this.name || "this machine";
  }

  /** Show `byWorkspace` (in order): its groups made, kept or dropped, moved only when out of place. */
  show(byWorkspace: Map<string, HTMLElement[]>): void {
    for (const [workspace, group] of this.groups) {
      if (byWorkspace.has(workspace)) continue;
      group.el.remove();
      this.groups.delete(workspace);
    }
    const nodes: HTMLElement[] = [];
    let count = 0;
    for (const [workspace, rows] of byWorkspace) {
      let group = this.groups.get(workspace);
      if (!group) this.groups.set(workspace, (group = new EndedGroup(workspace, this.headed ? this.label : null)));
      group.show(rows);
      nodes.push(group.el);
      count += rows.length;
    }
    reorder(this.groupsEl, nodes);
    if (this.summary) setData(this.summary, plural(count, "session"));
  }

  /** Take its groups out (the headless host shares the section's element). */
  clear(): void {
    for (const group of this.groups.values()) group.el.remove();
    this.groups.clear();
    if (this.headed) this.el.remove();
  }
}

/** Ended sessions: the last ENDED_SHOWN, grouped (see above), and a "Clear" that forgets the
 * ones shown so far (in this view). */
export class EndedSection {
  readonly el: HTMLDetailsElement;
  private readonly groupsEl: HTMLDivElement;
  private readonly summaryText: Text;
  private readonly more: HTMLParagraphElement;
  private readonly moreText: Text;
  private readonly rows = new Map<string, Row>();
  private readonly cleared = new Set<string>();
  private readonly views = new Map<string, RowView>();
  private readonly hosts = new Map<string, EndedHost>();
  /** the headless host, while there is no host level */
  private single: EndedHost;
  /** the live list's host level: the section has one too, to say where its rows ran */
  private listHosts = false;
  /** the host level as drawn */
  private multi = false;
  private built = false;

  constructor(private readonly actions: RowActions) {
    this.el = el("details", "pmux-ended");
    const summary = this.el.appendChild(el("summary", "pmux-ended-summary"));
    this.summaryText = text(summary);
    this.groupsEl = this.el.appendChild(el("div", "pmux-ended-groups"));
    this.single = new EndedHost("", this.groupsEl);
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

  /** Follow the live list's host level (a fleet's ended rows say their host then too). */
  setHostLevel(on: boolean, now: number): void {
    if (on === this.listHosts) return;
    this.listHosts = on;
    this.refresh(now);
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
    if (this.built) this.draw([...this.rows.values()].sort(newestFirst).slice(0, ENDED_SHOWN), now);
    setData(this.summaryText, `Ended (${total})`);
    const older = total - Math.min(total, ENDED_SHOWN);
    setData(this.moreText, older > 0 ? `${older} older not shown` : "");
    setHidden(this.more, older === 0);
    const hidden = total === 0;
    if (this.el.hidden !== hidden) this.el.hidden = hidden;
  }

  private draw(shown: Row[], now: number): void {
    const keep = new Set(shown.map((r) => r.session_id));
    for (const [id, view] of this.views) {
      if (keep.has(id)) continue;
      view.el.remove();
      view.dispose();
      this.views.delete(id);
    }
    const multi = this.listHosts || new Set(shown.map((r) => r.host ?? "")).size >= 2;
    if (multi !== this.multi) {
      for (const host of this.hosts.values()) host.clear();
      this.hosts.clear();
      this.single.clear();
      this.multi = multi;
    }
    // host → workspace → rows, each in the order of its newest row (rows come newest first)
    const tree = new Map<string, Map<string, HTMLElement[]>>();
    for (const row of shown) {
      let view = this.views.get(row.session_id);
      if (!view) this.views.set(row.session_id, (view = new RowView(row, now, this.actions)));
      else if (view.row !== row) view.update(row, now);
      const host = multi ? (row.host ?? "") : "";
      let workspaces = tree.get(host);
      if (!workspaces) tree.set(host, (workspaces = new Map()));
      const workspace = workspaceOf(row);
      let rows = workspaces.get(workspace);
      if (!rows) workspaces.set(workspace, (rows = []));
      rows.push(view.el);
    }
    if (!multi) {
      this.single.show(tree.get("") ?? new Map());
      return;
    }
    for (const [name, host] of this.hosts) {
      if (tree.has(name)) continue;
      host.clear();
      this.hosts.delete(name);
    }
    const nodes: HTMLElement[] = [];
    for (const [name, workspaces] of tree) {
      let host = this.hosts.get(name);
      if (!host) this.hosts.set(name, (host = new EndedHost(name, null)));
      host.show(workspaces);
      nodes.push(host.el);
    }
    reorder(this.groupsEl, nodes);
  }
}
