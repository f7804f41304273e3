// One session's row. It keeps references to its own nodes and, on update, compares the new
// row's display values with the ones it shows, writing only what differs: a change to one
// session mutates only that row (P10: ≤ 3 ms per change).
//
// The row is lean because 500 of them must render within 150 ms (P10, measured in jsdom where
// every element costs far more than a text node):
//   <li class="pmux-row pmux-row--busy">      its ::before is the dot
//     <span class="pmux-name">                 name (ellipsis)
//     <span class="pmux-status">               "busy · 12s": ONE text node, the only one the
//                                              once-a-second tick rewrites
//     [<button class="pmux-dismiss">]          review rows only, created when first needed
//     <div class="pmux-lines">                 white-space: pre, one ellipsis per line:
//        tool or what needs-input waits for ⏎  [<span class="pmux-error">error ⏎</span>]
//        snippet ⏎  [badges] tokens · ctx · why
// The first line is emphasised by CSS (::first-line): it is what the session does now.
// Tooltips (cwd and ids, full lines, token breakdown) are written when the pointer or focus
// first reaches the row (wantTitles).
import { el, setAttr, setClass, setData, setHidden, text } from "../dom";
import {
  contextText,
  describeSource,
  errorText,
  formatAge,
  plural,
  tokensText,
  tokensTitle,
  toolText,
  waitingText,
} from "../format";
import { LABEL, rank } from "../states";
import type { Row } from "../types";
import { canDismiss, DismissButton, type DismissActions } from "./dismiss";

/** What a row (and the sheet) can ask of the view. */
export type RowActions = DismissActions;

/** The key rows are grouped by (tmux session, else project directory). */
export function workspaceOf(row: Row): string {
  return row.workspace || row.project || "other";
}

/** The row's detail lines, as text. */
export interface RowLines {
  tool: string | null;
  error: string | null;
  snippet: string | null;
  meta: string;
}

export function rowLines(row: Row): RowLines {
  const tool = row.ended
    ? null
    : row.state === "needs-input"
      ? waitingText(row)
      : toolText(row.current_tool, row.tool_summary);
  let meta = tokensText(row.tokens);
  const ctx = contextText(row.context_tokens);
  if (ctx) meta = meta ? `${meta} · ${ctx}` : ctx;
  if (!row.running && !row.ended) meta = meta ? `${meta} · not running` : "not running";
  const why = describeSource(row.source);
  if (why) meta = meta ? `${meta} · ${why}` : why;
  return { tool, error: errorText(row), snippet: row.last_assistant, meta };
}

export class RowView {
  readonly el: HTMLLIElement;
  row: Row;
  /** sort keys, read by the lists (priority, then name) */
  rank = 0;
  sortName = "";

  private readonly nameEl: HTMLSpanElement;
  private readonly nameText: Text;
  private readonly statusText: Text;
  private readonly lines: HTMLDivElement;
  private readonly toolText: Text;
  private readonly snippetText: Text;
  private readonly metaText: Text;
  private errorEl: HTMLSpanElement | null = null;
  private compactBadge: HTMLSpanElement | null = null;
  private agentsBadge: HTMLSpanElement | null = null;
  private dismissBtn: DismissButton | null = null;
  private rowClass = "";
  private linesClass = "";
  private label = "";
  private age = "";
  /** tooltips are written once wanted (pointer or focus reached the row), then kept current */
  private titled = false;

  constructor(
    row: Row,
    now: number,
    private readonly actions: RowActions,
  ) {
    this.row = row;
    const li = (this.el = document.createElement("li"));
    li.setAttribute("data-session-id", row.session_id); // (not dataset: slow in jsdom)
    this.nameEl = li.appendChild(el("span", "pmux-name"));
    this.nameText = text(this.nameEl);
    this.statusText = text(li.appendChild(el("span", "pmux-status")));
    this.lines = li.appendChild(el("div"));
    this.toolText = text(this.lines);
    this.snippetText = text(this.lines);
    this.metaText = text(this.lines);
    this.render(row, now);
  }

  /** Show `row`. Returns true when its sort key (state or name) changed. */
  update(row: Row, now: number): boolean {
    const before = this.rank;
    const name = this.sortName;
    this.row = row;
    this.render(row, now);
    return this.rank !== before || this.sortName !== name;
  }

  /** The once-a-second refresh: rewrites the status text node only, and only if the age
   * changed ("12s" → "13s"; "4m" stays for a minute). */
  tick(now: number): void {
    this.setStatus(this.label, formatAge(this.row.state_since, now));
  }

  /** The pointer or focus reached the row: from now on its tooltips are kept. */
  wantTitles(): void {
    if (this.titled) return;
    this.titled = true;
    this.fillTitles();
  }

  private fillTitles(): void {
    const row = this.row;
    setAttr(this.nameEl, "title", nameTitle(row));
    const { tool, error, snippet, meta } = rowLines(row);
    const full = [tool, error, snippet, meta, tokensTitle(row.tokens, row.context_tokens)];
    if (row.source) full.push(`source ${row.source}`);
    setAttr(this.lines, "title", full.filter(Boolean).join("\n"));
  }

  private setStatus(label: string, age: string): void {
    if (label === this.label && age === this.age) return;
    this.label = label;
    this.age = age;
    this.statusText.data = age ? `${label} · ${age}` : label;
  }

  private render(row: Row, now: number): void {
    const state = row.state;
    this.rank = rank(state);
    this.sortName = row.name;

    const rowClass = `pmux-row pmux-row--${state}${row.ended ? " pmux-row--ended" : ""}`;
    if (rowClass !== this.rowClass) {
      this.rowClass = rowClass;
      setClass(this.el, rowClass);
    }
    setData(this.nameText, row.name);
    this.setStatus(row.ended ? "ended" : LABEL[state], formatAge(row.state_since, now));

    // The dismiss button: created when the row first needs it, then kept (hidden or shown).
    if (canDismiss(row) && !this.dismissBtn) {
      this.dismissBtn = new DismissButton(row, this.actions);
      this.el.insertBefore(this.dismissBtn.el, this.lines);
    }
    this.dismissBtn?.update(row, this.actions);

    // The lines. Every line but the last ends with its own newline, so an absent line leaves
    // no gap; the meta line (tokens, context, why) is always last.
    const { tool, error, snippet, meta } = rowLines(row);
    setData(this.toolText, tool === null ? "" : `${tool}\n`);
    if (error !== null && !this.errorEl) {
      this.errorEl = el("span", "pmux-error");
      this.errorEl.appendChild(document.createTextNode(""));
      this.lines.insertBefore(this.errorEl, this.snippetText);
    }
    if (this.errorEl) {
      setHidden(this.errorEl, error === null);
      setData(this.errorEl.firstChild as Text, error === null ? "" : `${error}\n`);
    }
    setData(this.snippetText, snippet === null ? "" : `${snippet}\n`);
    setData(this.metaText, meta);

    const compacting = row.compacting && !row.ended;
    if (compacting && !this.compactBadge) {
      // Always before the agents badge, whichever came first: rows read alike.
      this.compactBadge = this.badge("pmux-badge pmux-badge--compacting", "compacting", this.agentsBadge);
    }
    if (this.compactBadge) setHidden(this.compactBadge, !compacting);
    const agents = row.ended ? 0 : row.subagents;
    if (agents > 0 && !this.agentsBadge) this.agentsBadge = this.badge("pmux-badge", "");
    if (this.agentsBadge) {
      setHidden(this.agentsBadge, agents === 0);
      if (agents > 0) setData(this.agentsBadge.firstChild as Text, plural(agents, "agent"));
    }

    // With only the meta line left, it must not get the first line's emphasis.
    const onlyMeta = tool === null && error === null && snippet === null;
    const linesClass = onlyMeta ? "pmux-lines pmux-lines--meta-only" : "pmux-lines";
    if (linesClass !== this.linesClass) {
      this.linesClass = linesClass;
      setClass(this.lines, linesClass);
    }

    if (this.titled) this.fillTitles();
  }

  private badge(className: string, label: string, before: Node | null = null): HTMLSpanElement {
    const badge = el("span", className);
    badge.appendChild(document.createTextNode(label));
    this.lines.insertBefore(badge, before ?? this.metaText);
    return badge;
  }
}

function nameTitle(row: Row): string {
  const lines = [row.cwd ?? row.name, `session ${row.session_id}`];
  if (row.model) lines.push(`model ${row.model}`);
  if (row.pid !== null) {
    lines.push(`pid ${row.pid}` + (row.ports.length ? ` · ports ${row.ports.join(", ")}` : ""));
  }
  if (row.tmux?.title) lines.push(`pane title ${row.tmux.title}`);
  return lines.join("\n");
}
