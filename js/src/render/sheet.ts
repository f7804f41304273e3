// The bell's sheet: the sessions that need the user — needs-input first, then review, each
// longest-waiting first — with what it asks or what it finished with (the rows' words);
// review items can be dismissed one by one or all at once ("Mark all seen").
// Items are keyed by session id like the rows, so an open sheet keeps its nodes (and the
// keyboard focus) while patches arrive.
import { withAgent } from "../agents";
import { el, reorder, setAttr, setClass, setData, setHidden, text } from "../dom";
import { errorText, formatAge, waitingText } from "../format";
import { byCode } from "../order";
import { LABEL, isAttention, NEEDS_YOU, needYouSentence, rank } from "../states";
import type { Row } from "../types";
import { ActionsBar } from "./actions";
import { DismissButton } from "./dismiss";
import type { RowActions } from "./row";

let nextId = 0;

class SheetItem {
  readonly el: HTMLLIElement;
  row: Row;
  private readonly dot: HTMLSpanElement;
  private readonly name: Text;
  private readonly state: Text;
  private readonly age: Text;
  private readonly detail: HTMLDivElement;
  private readonly detailText: Text;
  private readonly dismiss: DismissButton;
  private bar: ActionsBar | null = null;

  constructor(row: Row, now: number, actions: RowActions) {
    this.row = row;
    this.el = el("li", "pmux-sheet-item");
    this.el.dataset.sessionId = row.session_id;
    this.dot = this.el.appendChild(el("span"));
    this.dot.setAttribute("aria-hidden", "true");
    this.name = text(this.el.appendChild(el("span", "pmux-name")));
    this.state = text(this.el.appendChild(el("span", "pmux-state")));
    this.age = text(this.el.appendChild(el("span", "pmux-age")));
    this.dismiss = new DismissButton(row, actions);
    this.el.appendChild(this.dismiss.el);
    this.detail = this.el.appendChild(el("div", "pmux-line pmux-sheet-detail"));
    this.detailText = text(this.detail);
    this.update(row, now, actions);
  }

  update(row: Row, now: number, actions: RowActions): void {
    this.row = row;
    setClass(this.dot, `pmux-dot pmux-dot--${row.state}`);
    setClass(this.el, `pmux-sheet-item pmux-sheet-item--${row.state}`);
    // A fleet's item names its host: two hosts may run sessions of the same name.
    const name = withAgent(row.name, row.agent);
    setData(this.name, row.host ? `${name} · ${row.host}` : name);
    this.tick(now);
    this.dismiss.update(row, actions);
    const pending = actions.pending(row.session_id);
    setData(this.state, pending ? pending.label : LABEL[row.state]);
    const review = row.state === "review";
    const error = errorText(row);
    const detail = review ? (error ?? row.answer ?? "finished its turn") : waitingText(row);
    setData(this.detailText, detail);
    setAttr(this.detail, "title", detail);
    setClass(this.detail, `pmux-line pmux-sheet-detail${review && error !== null ? " pmux-error" : ""}`);
    if (row.state === "needs-input" && !this.bar) {
      this.bar = new ActionsBar(row, actions, false);
      this.el.appendChild(this.bar.el);
    }
    if (this.bar) {
      this.bar.update(row);
      setHidden(this.bar.el, row.state !== "needs-input");
    }
  }

  tick(now: number): void {
    setData(this.age, formatAge(this.row.state_since, now));
  }
}

/** Attention rows: needs-input before review (a blocked session before a finished one), each
 * longest-waiting first, then by name. */
export function attentionRows(rows: Iterable<Row>): Row[] {
  const items: Row[] = [];
  for (const row of rows) if (!row.ended && isAttention(row.state)) items.push(row);
  return items.sort(
    (a, b) =>
      rank(a.state) - rank(b.state) ||
      a.state_since - b.state_since ||
      byCode(a.name, b.name) ||
      byCode(a.session_id, b.session_id),
  );
}

export class Sheet {
  readonly el: HTMLDivElement;
  readonly id = `pmux-sheet-${++nextId}`;
  private readonly list: HTMLUListElement;
  private readonly empty: HTMLParagraphElement;
  readonly markAll: HTMLButtonElement;
  private readonly items = new Map<string, SheetItem>();
  isOpen = false;

  constructor(
    private readonly actions: RowActions,
    onClose: () => void,
  ) {
    this.el = el("div", "pmux-sheet");
    this.el.id = this.id;
    this.el.hidden = true;
    this.el.tabIndex = -1;
    this.el.setAttribute("role", "dialog");
    this.el.setAttribute("aria-label", "Sessions that need you");
    const head = this.el.appendChild(el("div", "pmux-sheet-head"));
    head.appendChild(el("span", "pmux-sheet-title", NEEDS_YOU));
    this.markAll = head.appendChild(el("button", "pmux-mark-all", "Mark all seen"));
    this.markAll.type = "button";
    this.markAll.title = "Mark every finished session as seen (review → idle)";
    this.markAll.addEventListener("click", () => {
      for (const item of this.items.values()) {
        const id = item.row.session_id;
        if (item.row.state === "review" && !actions.isDismissPending(id)) actions.dismiss(id);
      }
    });
    const close = head.appendChild(el("button", "pmux-sheet-close", "×"));
    close.type = "button";
    close.setAttribute("aria-label", "Close");
    close.addEventListener("click", onClose);
    this.empty = this.el.appendChild(el("p", "pmux-sheet-empty", `${needYouSentence(0)} right now.`));
    this.list = this.el.appendChild(el("ul", "pmux-sheet-items"));
    this.list.setAttribute("aria-label", "Sessions that need you, the longest waiting first");
  }

  show(rows: Iterable<Row>, now: number): void {
    this.isOpen = true;
    this.el.hidden = false;
    this.sync(rows, now);
  }

  hide(): void {
    this.isOpen = false;
    this.el.hidden = true;
  }

  /** Reconcile the items with the fleet (only while open: a closed sheet costs nothing). */
  sync(rows: Iterable<Row>, now: number): void {
    if (!this.isOpen) return;
    const wanted = attentionRows(rows);
    const keep = new Set(wanted.map((r) => r.session_id));
    let focusLostAt = -1;
    for (const [id, item] of this.items) {
      if (keep.has(id)) continue;
      this.items.delete(id);
      const active = document.activeElement;
      if (active && item.el.contains(active)) focusLostAt = indexIn(this.list, item.el);
      item.el.remove();
    }
    const nodes: HTMLLIElement[] = [];
    for (const row of wanted) {
      let item = this.items.get(row.session_id);
      if (item) {
        item.update(row, now, this.actions);
      } else {
        item = new SheetItem(row, now, this.actions);
        this.items.set(row.session_id, item);
      }
      nodes.push(item.el);
    }
    reorder(this.list, nodes);
    setHidden(this.empty, wanted.length > 0);
    setHidden(this.markAll, !wanted.some((r) => r.state === "review"));
    if (focusLostAt >= 0) this.refocus(nodes, focusLostAt);
  }

  /** The focused item went away (dismissed, answered): focus the button of the item that took
   * its place, else the sheet itself, so the keyboard user is not dropped to <body>. */
  private refocus(nodes: HTMLLIElement[], index: number): void {
    for (const node of [...nodes.slice(index), ...nodes.slice(0, index).reverse()]) {
      const button = node.querySelector<HTMLButtonElement>("button.pmux-dismiss:not([hidden])");
      if (button) {
        button.focus();
        return;
      }
    }
    this.el.focus();
  }

  tick(now: number): void {
    if (this.isOpen) for (const item of this.items.values()) item.tick(now);
  }
}

function indexIn(parent: Element, child: Element): number {
  return Array.prototype.indexOf.call(parent.children, child);
}
