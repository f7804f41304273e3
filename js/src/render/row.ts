// One session's row. It keeps references to its own nodes and, on update, compares the new
// row's display values with the ones it shows, writing only what differs: a change to one
// session mutates only that row (P10: ≤ 3 ms per change).
//
// The row is lean because 500 of them must render within 150 ms (P10, measured in jsdom where
// every element costs far more than a text node):
//   <li class="pmux-row pmux-row--busy" tabindex="0" aria-label="…">   its ::before is the dot
//     <span class="pmux-name">                 name (ellipsis); a Codex row's starts with
//        [<span class="pmux-agent">Codex</span>]   its agent's mark (none for Claude's rows)
//     <span class="pmux-status">               "busy · 12s": ONE text node, the only one the
//                                              once-a-second tick rewrites
//     [<button class="pmux-dismiss">]          review rows only, created when first needed
//     <div class="pmux-lines">                 white-space: pre, one ellipsis per line:
//        <span class="pmux-primary">           what it does now, asks, or answered ⏎
//        [<span class="pmux-error">error ⏎</span>]
//        secondary ⏎                           busy / needs-input: the prompt it works on
//        [badges] pane: topic · ctx 83% · why  a "claude -p" / "SDK" badge first: nobody
//                                              sits at it (pmux-row--unattended; hideable);
//                                              the pane's title when it tells something
// Which words per state (never a previous turn's answer under a new state):
//   busy         the current tool (or "thinking") / the user's prompt
//   needs-input  what it asks, in full words / the user's prompt
//   review       its answer (or the error) — idle, unknown, ended: the answer, if any
// Tooltips (cwd and ids, full lines, token breakdown, the raw source) are written when the
// pointer or focus first reaches the row (wantTitles).
import { agentMark, agentMarkTitle, withAgent } from "../agents";
import { el, setAttr, setClass, setData, setHidden, text } from "../dom";
import {
  contextText,
  contextWarning,
  contextWindow,
  describeSource,
  errorText,
  formatAge,
  inlineCode,
  plural,
  tokensTitle,
  waitingText,
} from "../format";
import { notebookOpener } from "../lab-panel";
import { LABEL, rank } from "../states";
import type { Row } from "../types";
import { ActionsBar, type ActionHandlers } from "./actions";
import { canDismiss, DismissButton, type DismissActions } from "./dismiss";
import { StripView, type TimelineSource } from "./strip";

/** A click not answered yet (Jupyter delivers widget messages only when the running cell
 * ends), or answered and waiting for the state to move. */
export interface Pending {
  /** the row's status meanwhile ("dismissing…", "sent") */
  label: string;
  /** when it was sent (the browser's clock) */
  since: number;
  /** the kernel answered (the click was delivered) */
  answered: boolean;
}

/** What a row (and the sheet) can ask of the view. */
export interface RowActions extends DismissActions, ActionHandlers {
  pending(sessionId: string): Pending | null;
  /** the transitions and range the rows' timeline strips draw (no strips without it) */
  timeline?: TimelineSource;
}

/** After this long without an answer, a row says why its click waits. */
export const KERNEL_BUSY_AFTER_MS = 1000;
export const KERNEL_BUSY_NOTE =
  "waiting for the kernel: Jupyter delivers clicks when the running cell ends";

/** The key rows are grouped by (tmux session, else project directory). A background session
 * (no pane) stays with its folder's rows, not in a group of its own: it is that project's work,
 * and its name already says "background". */
export function workspaceOf(row: Row): string {
  return row.workspace || row.project || "other";
}

/** The row's detail lines, as text. */
export interface RowLines {
  /** what it does now, asks, or answered (may hold `inline code`) */
  primary: string | null;
  error: string | null;
  /** the prompt it works on (busy, needs-input) */
  secondary: string | null;
  meta: string;
}

export function rowLines(row: Row): RowLines {
  const error = errorText(row);
  let primary: string | null;
  let secondary: string | null = null;
  const prompt = row.last_prompt ? `“${row.last_prompt}”` : null;
  if (row.ended) {
    primary = row.answer;
  } else if (row.state === "needs-input") {
    primary = waitingText(row);
    secondary = prompt;
  } else if (row.state === "busy") {
    primary = row.activity ?? (row.compacting ? "compacting its context" : "thinking");
    secondary = prompt;
  } else if (row.state === "review") {
    primary = error === null ? (row.answer ?? "finished its turn") : row.answer;
  } else {
    primary = row.answer;
  }
  const parts: string[] = [];
  // The pane's title names the session (its topic, or the user's name for the pane): first.
  if (row.pane_title) parts.push(`pane: ${row.pane_title}`);
  const ctx = contextText(row.context_tokens, contextWindow(row.model));
  if (ctx) parts.push(ctx);
  if (!row.running && !row.ended) parts.push("not running");
  const why = describeSource(row.source);
  if (why) parts.push(why);
  return { primary, error, secondary, meta: parts.join(" · ") };
}

/** What a screen reader says for the row: state, name (and its agent, when a row carries
 * the mark), and what it waits for or does. */
export function rowLabel(row: Row, lines: RowLines = rowLines(row)): string {
  const state = row.ended ? "ended" : LABEL[row.state];
  const what = lines.error ?? lines.primary;
  const name = withAgent(row.name, row.agent);
  return what ? `${name}, ${state}: ${what}` : `${name}, ${state}`;
}

/** Fill `node` with `value`, its `backtick` parts as <code>. */
export function setInline(node: HTMLElement, value: string): void {
  const parts = inlineCode(value);
  if (parts.length === 1 && !parts[0]!.code) {
    const only = node.firstChild;
    if (only && only.nodeType === 3 && !only.nextSibling) setData(only as Text, value);
    else node.replaceChildren(value);
    return;
  }
  node.replaceChildren(...parts.map((p) => (p.code ? el("code", undefined, p.text) : p.text)));
}

export class RowView {
  readonly el: HTMLLIElement;
  row: Row;
  /** sort keys, read by the lists (priority, then time in state for attention, then name) */
  rank = 0;
  sortName = "";
  since = 0;

  private readonly nameEl: HTMLSpanElement;
  private readonly nameText: Text;
  /** the agent's mark, created when first needed (Codex rows), then kept */
  private agentEl: HTMLSpanElement | null = null;
  private readonly statusText: Text;
  private readonly lines: HTMLDivElement;
  private readonly primaryEl: HTMLSpanElement;
  private primaryValue = "";
  private readonly secondaryText: Text;
  private readonly metaText: Text;
  private errorEl: HTMLSpanElement | null = null;
  private compactBadge: HTMLSpanElement | null = null;
  private agentsBadge: HTMLSpanElement | null = null;
  private ctxBadge: HTMLSpanElement | null = null;
  private backgroundBadge: HTMLSpanElement | null = null;
  private modeBadge: HTMLSpanElement | null = null;
  private unattendedBadge: HTMLSpanElement | null = null;
  /** the notebook whose kernel runs this SDK run, which a click on its badge opens */
  private originNotebook: string | null = null;
  private pendingEl: HTMLSpanElement | null = null;
  private dismissBtn: DismissButton | null = null;
  private bar: ActionsBar | null = null;
  /** the timeline strip, always the row's last child (the actions bar goes before it) */
  readonly strip: StripView | null = null;
  /** the row had the focus once: its actions bar is kept (shown while it has the focus) */
  private wantsBar = false;
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
    li.tabIndex = 0;
    this.nameEl = li.appendChild(el("span", "pmux-name"));
    this.nameText = text(this.nameEl);
    this.statusText = text(li.appendChild(el("span", "pmux-status")));
    this.lines = li.appendChild(el("div"));
    this.primaryEl = this.lines.appendChild(el("span", "pmux-primary"));
    this.secondaryText = text(this.lines);
    this.metaText = text(this.lines);
    if (actions.timeline) {
      this.strip = new StripView(row.session_id, actions.timeline);
      li.appendChild(this.strip.el);
    }
    this.render(row, now);
  }

  /** Show `row`. Returns true when its sort key (state, time in state or name) changed. */
  update(row: Row, now: number): boolean {
    const before = this.rank;
    const name = this.sortName;
    const since = this.since;
    this.row = row;
    this.render(row, now);
    return this.rank !== before || this.sortName !== name || this.since !== since;
  }

  /** Redraw the same row (a click is now pending, or was answered). */
  refresh(now: number): void {
    this.render(this.row, now);
  }

  /** The once-a-second refresh: rewrites the status text node only, and only if the age
   * changed ("12s" → "13s"; "4m" stays for a minute). */
  tick(now: number): void {
    const pending = this.actions.pending(this.row.session_id);
    this.setStatus(pending ? pending.label : this.stateLabel(), formatAge(this.row.state_since, now));
    if (pending) this.showPending(pending);
    this.strip?.draw(now, this.endedAt());
  }

  /** When an ended session's strip stops: its last state change (the row has no end time). */
  private endedAt(): number | null {
    return this.row.ended ? this.row.state_since : null;
  }

  /** The row got the focus: build its actions bar (needs-input rows have it from the start). */
  wantActions(): void {
    if (this.wantsBar) return;
    this.wantsBar = true;
    this.refresh(Date.now());
  }

  /** The row leaves the list for good: stop its peek. */
  dispose(): void {
    this.bar?.close();
  }

  /** The pointer or focus reached the row: from now on its tooltips are kept. */
  wantTitles(): void {
    if (this.titled) return;
    this.titled = true;
    this.fillTitles();
  }

  private stateLabel(): string {
    return this.row.ended ? "ended" : LABEL[this.row.state];
  }

  private fillTitles(): void {
    const row = this.row;
    setAttr(this.nameEl, "title", nameTitle(row));
    const { primary, error, secondary, meta } = rowLines(row);
    const full = [primary, error, secondary, meta, tokensTitle(row.tokens, row.context_tokens, contextWindow(row.model))];
    if (row.source) full.push(`signal ${row.source}`);
    setAttr(this.lines, "title", full.filter(Boolean).join("\n"));
  }

  private setStatus(label: string, age: string): void {
    if (label === this.label && age === this.age) return;
    this.label = label;
    this.age = age;
    this.statusText.data = age ? `${label} · ${age}` : label;
  }

  private showPending(pending: Pending | null): void {
    const waiting = pending !== null && !pending.answered && Date.now() - pending.since >= KERNEL_BUSY_AFTER_MS;
    if (waiting && !this.pendingEl) {
      this.pendingEl = el("span", "pmux-pending", `${KERNEL_BUSY_NOTE}\n`);
      this.pendingEl.setAttribute("role", "status");
      this.lines.insertBefore(this.pendingEl, this.primaryEl);
    }
    if (this.pendingEl) setHidden(this.pendingEl, !waiting);
  }

  private render(row: Row, now: number): void {
    const state = row.state;
    this.rank = rank(state);
    this.sortName = row.name;
    this.since = row.state_since;

    const rowClass =
      `pmux-row pmux-row--${state}${row.ended ? " pmux-row--ended" : ""}` +
      (row.non_interactive ? " pmux-row--unattended" : "");
    if (rowClass !== this.rowClass) {
      this.rowClass = rowClass;
      setClass(this.el, rowClass);
    }
    setData(this.nameText, row.name);
    this.showAgent(row);
    const pending = this.actions.pending(row.session_id);
    this.setStatus(pending ? pending.label : this.stateLabel(), formatAge(row.state_since, now));
    this.showPending(pending);

    // The dismiss button: created when the row first needs it, then kept (hidden or shown).
    if (canDismiss(row) && !this.dismissBtn) {
      this.dismissBtn = new DismissButton(row, this.actions);
      this.el.insertBefore(this.dismissBtn.el, this.lines);
    }
    this.dismissBtn?.update(row, this.actions);

    // The lines. Every line but the last ends with its own newline, so an absent line leaves
    // no gap; the meta line (context, why) is always last.
    const lines = rowLines(row);
    const { primary, error, secondary, meta } = lines;
    const primaryValue = primary === null ? "" : `${primary}\n`;
    if (primaryValue !== this.primaryValue) {
      this.primaryValue = primaryValue;
      setInline(this.primaryEl, primaryValue);
    }
    if (error !== null && !this.errorEl) {
      this.errorEl = el("span", "pmux-error");
      this.errorEl.appendChild(document.createTextNode(""));
      this.lines.insertBefore(this.errorEl, this.primaryEl);
    }
    if (this.errorEl) {
      setHidden(this.errorEl, error === null);
      setData(this.errorEl.firstChild as Text, error === null ? "" : `${error}\n`);
    }
    setData(this.secondaryText, secondary === null ? "" : `${secondary}\n`);
    setData(this.metaText, meta);

    // Nobody sits at it (claude -p, an SDK run): said first, so its idle end reads as done,
    // not as a session waiting for you.
    const unattended = row.non_interactive;
    if (unattended && !this.unattendedBadge) {
      const first = this.lines.querySelector(".pmux-badge"); // (rarely: the run is known late)
      this.unattendedBadge = this.badge("pmux-badge pmux-badge--unattended", "", first);
      this.unattendedBadge.addEventListener("click", (event) => {
        const open = notebookOpener();
        if (this.originNotebook && open) {
          event.stopPropagation();
          open(this.originNotebook);
        }
      });
    }
    if (this.unattendedBadge) {
      // An SDK run names where it comes from: its notebook (a click opens it), else its program.
      const origin = row.origin;
      const from = origin ? (origin.notebook ?? origin.program) : null;
      const text = unattended && from ? `${unattended} · ${from.split("/").pop() ?? from}` : unattended;
      setHidden(this.unattendedBadge, !unattended);
      setData(this.unattendedBadge.firstChild as Text, text ?? "");
      const title = unattended ? unattendedTitle(unattended) : null;
      setAttr(this.unattendedBadge, "title", title && from ? `${title} (from ${from})` : title);
      this.originNotebook = origin?.notebook ?? null;
    }
    const compacting = row.compacting && !row.ended;
    if (compacting && !this.compactBadge) {
      // Always before the agents badge, whichever came first: rows read alike.
      this.compactBadge = this.badge("pmux-badge pmux-badge--compacting", "compacting", this.agentsBadge);
    }
    if (this.compactBadge) setHidden(this.compactBadge, !compacting);
    const background = row.ended ? "" : backgroundText(row);
    if (background && !this.backgroundBadge) this.backgroundBadge = this.badge("pmux-badge", "");
    if (this.backgroundBadge) {
      setHidden(this.backgroundBadge, !background);
      setData(this.backgroundBadge.firstChild as Text, background);
      setAttr(this.backgroundBadge, "title", background ? backgroundTitle(row) : null);
    }
    const mode = row.ended ? null : modeText(row.permission_mode);
    if (mode !== null && !this.modeBadge) this.modeBadge = this.badge("pmux-badge", "");
    if (this.modeBadge) {
      setHidden(this.modeBadge, mode === null);
      setData(this.modeBadge.firstChild as Text, mode ?? "");
    }
    // Background agents are sub-agents too: counted once, by the background badge.
    const inBackground = row.background_tasks.filter((t) => t.type !== "shell").length;
    const agents = row.ended ? 0 : Math.max(0, row.subagents - inBackground);
    if (agents > 0 && !this.agentsBadge) this.agentsBadge = this.badge("pmux-badge", "");
    if (this.agentsBadge) {
      setHidden(this.agentsBadge, agents === 0);
      if (agents > 0) setData(this.agentsBadge.firstChild as Text, plural(agents, "agent"));
    }
    const warning = row.ended || compacting ? null : contextWarning(row.context_tokens, contextWindow(row.model));
    if (warning !== null && !this.ctxBadge) this.ctxBadge = this.badge("pmux-badge pmux-badge--warn", "");
    if (this.ctxBadge) {
      setHidden(this.ctxBadge, warning === null);
      if (warning !== null) setData(this.ctxBadge.firstChild as Text, warning);
    }

    // With only the meta line left, it must not get the first line's emphasis.
    const onlyMeta = primary === null && error === null && secondary === null;
    const linesClass = onlyMeta ? "pmux-lines pmux-lines--meta-only" : "pmux-lines";
    if (linesClass !== this.linesClass) {
      this.linesClass = linesClass;
      setClass(this.lines, linesClass);
    }
    setAttr(this.el, "aria-label", rowLabel(row, lines));

    if (!this.bar && !row.ended && (this.wantsBar || state === "needs-input")) {
      this.bar = new ActionsBar(row, this.actions);
      this.el.insertBefore(this.bar.el, this.strip?.el ?? null);
    }
    if (this.bar) {
      this.bar.update(row);
      const open = state === "needs-input" || this.bar.peeking;
      setClass(this.bar.el, open ? "pmux-actions pmux-actions--open" : "pmux-actions");
      setHidden(this.bar.el, row.ended);
    }

    if (this.titled) this.fillTitles();
    this.strip?.draw(now, this.endedAt());
  }

  /** The agent's mark before the name (the name's ellipsis never hides it); the row's
   * aria-label says it too, so the mark itself is not read twice. */
  private showAgent(row: Row): void {
    const mark = agentMark(row.agent);
    if (mark !== null && !this.agentEl) {
      this.agentEl = el("span", "pmux-agent");
      this.agentEl.setAttribute("aria-hidden", "true");
      this.agentEl.appendChild(document.createTextNode(""));
      this.nameEl.insertBefore(this.agentEl, this.nameText);
    }
    if (this.agentEl) {
      setHidden(this.agentEl, mark === null);
      setData(this.agentEl.firstChild as Text, mark ?? "");
      setAttr(this.agentEl, "title", mark === null ? null : agentMarkTitle(row.agent));
      setClass(this.agentEl, `pmux-agent pmux-agent--${row.agent}`);
    }
  }

  private badge(className: string, label: string, before: Node | null = null): HTMLSpanElement {
    const badge = el("span", className);
    badge.appendChild(document.createTextNode(label));
    this.lines.insertBefore(badge, before ?? this.metaText);
    return badge;
  }
}

/** Why a row has the "claude -p" / "SDK" badge. */
export function unattendedTitle(label: string): string {
  const how =
    label === "claude -p"
      ? "started with claude -p"
      : label === "SDK"
        ? "run by a program through the Agent SDK"
        : "a background run";
  return `${how}: nobody sits at it, so a finished turn waits for no one (no review, no notification)`;
}

/** What the name's tooltip says of Claude Code's own background session (no pane: its
 * daemon runs it; `claude attach <job>` opens it in a terminal). */
export function backgroundSessionText(bg: { job: string; name: string }): string {
  return `background session “${bg.name || bg.job}” (job ${bg.job}): run by Claude Code's daemon, in no pane · claude attach ${bg.job}`;
}

/** "2 background agents · 1 background shell" (tasks its last turn left running). */
export function backgroundText(row: Row): string {
  const running = row.background_tasks.filter((t) => t.status === "running");
  const shells = running.filter((t) => t.type === "shell").length;
  const agents = running.length - shells;
  const parts = [];
  if (agents > 0) parts.push(plural(agents, "background agent"));
  if (shells > 0) parts.push(plural(shells, "background shell"));
  return parts.join(" · ");
}

function backgroundTitle(row: Row): string {
  return row.background_tasks
    .filter((t) => t.status === "running")
    .map((t) => `${t.type}: ${t.description || "(no description)"}`)
    .join("\n");
}

const MODES: Record<string, string> = {
  auto: "auto mode",
  plan: "plan mode",
  acceptEdits: "accepts edits",
  bypassPermissions: "bypasses permissions",
  dontAsk: "asks nothing",
};

/** The permission mode worth a badge (the default one is not). */
export function modeText(mode: string | null): string | null {
  if (!mode || mode === "default" || mode === "manual") return null;
  return MODES[mode] ?? `${mode} mode`;
}

function nameTitle(row: Row): string {
  const lines = [row.cwd ?? row.name, `session ${row.session_id}`];
  if (row.model) lines.push(`model ${row.model}`);
  if (row.pid !== null) {
    lines.push(`pid ${row.pid}` + (row.ports.length ? ` · ports ${row.ports.join(", ")}` : ""));
  }
  if (row.tmux?.title) lines.push(`pane title ${row.tmux.title}`);
  if (row.background) lines.push(backgroundSessionText(row.background));
  return lines.join("\n");
}
