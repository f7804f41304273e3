// The live list's groups: a workspace's (or a state's) sessions under a header, and a fleet's
// hosts over their groups; which group and host a row goes to, and the orders they keep. The
// list (list.ts) places them; the headers here only redraw what changed.
import { el, setClass, setData, setHidden, text } from "../dom";
import { formatAge, plural } from "../format";
import { byCode, byName } from "../order";
import { emptyCounts, isAttention, mostUrgent, NEEDS_YOU, rank } from "../states";
import type { Host, Row, State } from "../types";
import { type RowView, workspaceOf } from "./row";

export type Grouping = "workspace" | "state";

/** The state grouping's groups, in their order. NEEDS_YOU, the workspace grouping's pinned
 * block and the state grouping's first group, holds what the count counts (needs-input, then
 * review): the section says what the status bar and the bell say. */
export const STATE_GROUPS: readonly string[] = [NEEDS_YOU, "Working", "Idle"];
const STATE_GROUP: Record<State, string> = {
  "needs-input": NEEDS_YOU,
  review: NEEDS_YOU,
  busy: "Working",
  unknown: "Idle",
  idle: "Idle",
};

/** The group a live row belongs to under `grouping`. */
export function groupOf(row: Row, grouping: Grouping): string {
  if (grouping === "state") return STATE_GROUP[row.state];
  return isAttention(row.state) ? NEEDS_YOU : workspaceOf(row);
}

/** Priority; attention rows longest-waiting first; then name (natural order), then id. */
export function compareRows(a: RowView, b: RowView): number {
  return (
    a.rank - b.rank ||
    (isAttention(a.row.state) ? a.since - b.since : 0) ||
    byName(a.sortName, b.sortName) ||
    byCode(a.row.session_id, b.row.session_id)
  );
}

export function compareGroups(a: GroupView, b: GroupView): number {
  return a.order - b.order || a.rank - b.rank || byName(a.name, b.name) || byCode(a.name, b.name);
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
    /** the host it is in (the list's only, headless one when there is no host level) */
    readonly host: HostView,
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
    const label = name === NEEDS_YOU ? "Sessions that need you" : `Sessions: ${name}`;
    this.list.setAttribute("aria-label", host.headed ? `${host.label}: ${label}` : label);
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

/** The host a row is grouped under: its machine ("" for this one, unnamed). */
export function hostOf(row: Row): string {
  return row.host ?? "";
}

/** One machine of a fleet: a header (its dot, name, online or not) over its own groups. With a
 * single host there is no host level: the list's one HostView is headless and its groups go
 * straight into the list (the look of a widget over this machine's hub). */
export class HostView {
  readonly el: HTMLElement;
  /** where its groups go */
  readonly groupsEl: HTMLElement;
  readonly groups = new Map<string, GroupView>();
  readonly groupOrder: GroupView[] = [];
  rank = rank("idle");
  rows = 0;
  online = true;
  lastSeen = 0;
  private readonly tally: Record<State, number> = emptyCounts();
  private readonly dot: HTMLSpanElement | null = null;
  private readonly status: Text | null = null;
  private readonly statusEl: HTMLSpanElement | null = null;
  private readonly summary: Text | null = null;
  private dotState: State | null = null;
  /** `online` as last drawn: a flip moves the host too */
  private drawnOnline = true;

  /** `container`: the list's element, for the headless host; a headed one makes its own. */
  constructor(
    readonly name: string,
    container: HTMLElement | null,
  ) {
    if (container) {
      this.el = this.groupsEl = container;
      return;
    }
    this.el = el("section", "pmux-host");
    this.el.setAttribute("data-host", name);
    const head = this.el.appendChild(el("div", "pmux-host-head"));
    this.dot = head.appendChild(el("span"));
    this.dot.setAttribute("aria-hidden", "true");
    head.appendChild(el("span", "pmux-host-name", this.label));
    this.statusEl = head.appendChild(el("span", "pmux-host-status"));
    this.status = text(this.statusEl);
    this.summary = text(head.appendChild(el("span", "pmux-host-summary")));
    this.groupsEl = this.el.appendChild(el("div", "pmux-host-groups"));
  }

  get headed(): boolean {
    return this.dot !== null;
  }

  /** The name shown (a row without a host is this machine's). */
  get label(): string {
    return this.name || "this machine";
  }

  count(state: State, delta: number): void {
    this.tally[state] += delta;
    this.rows += delta;
  }

  setInfo(info: Host | undefined): void {
    this.online = info?.online !== false;
    this.lastSeen = info?.last_seen ?? 0;
  }

  /** Refresh the dot, the online line and the summary; true when its sort place changed. */
  refreshHead(now: number): boolean {
    if (!this.headed) return false;
    const state = mostUrgent(this.tally);
    const before = this.rank;
    this.rank = rank(state);
    if (state !== this.dotState) {
      this.dotState = state;
      setClass(this.dot!, `pmux-dot pmux-dot--${state} pmux-dot--static`);
    }
    setClass(this.el, `pmux-host pmux-host--${state}${this.online ? "" : " pmux-host--offline"}`);
    this.tick(now);
    setData(this.summary!, plural(this.rows, "session"));
    const flipped = this.online !== this.drawnOnline;
    this.drawnOnline = this.online;
    return this.rank !== before || flipped;
  }

  /** The "last seen" age of an offline host. */
  tick(now: number): void {
    if (!this.headed) return;
    setData(this.status!, hostStatus(this.online, this.lastSeen, now));
    setHidden(this.statusEl!, this.online);
  }
}

/** What a host header says of a host that stopped beating ("" while it beats). */
export function hostStatus(online: boolean, lastSeen: number, now: number): string {
  if (online) return "";
  return lastSeen > 0 ? `offline · last seen ${formatAge(lastSeen, now)} ago` : "offline";
}

/** Beating hosts first (an offline host's states are its last known ones), then by their dot,
 * then name. */
export function compareHosts(a: HostView, b: HostView): number {
  return (
    Number(!a.online) - Number(!b.online) || a.rank - b.rank || byName(a.name, b.name) || byCode(a.name, b.name)
  );
}
