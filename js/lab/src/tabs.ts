// Tab dots (issue 21): each JupyterLab terminal tab whose terminal runs a Claude session
// carries that session's dot — the widget's shapes and colours (told apart without colour:
// a diamond asks, a ring turns, a hollow dashed ring is unknown) — and its state in the tab's
// tooltip and accessible name. A terminal's session is the live row whose `terminal.name` is
// the terminal's (the server extension sets it from the process tree); of two sessions one
// after the other in a terminal, the live one. The tab element gets `pmux-tab
// pmux-state-<state>` (DESIGN.md) through the widget's `title.className`, which JupyterLab
// puts on the tab. No dependency on @jupyterlab/terminal: a terminal's main-area widget is
// found by its content's `session.name`, what `terminal:open` matches too.
import type { JupyterFrontEnd } from "@jupyterlab/application";
import { MessageLoop } from "@lumino/messaging";
import type { Widget } from "@lumino/widgets";
import type { Link } from "../../src/link";
import { LABEL } from "../../src/states";
import type { Row } from "../../src/types";
import type { Live } from "./live";

const PREFIX = "Claude: ";

/** The name of the JupyterLab terminal a main-area widget shows, or null. */
export function terminalName(widget: Widget): string | null {
  const content = (widget as unknown as { content?: Widget & { session?: { name?: unknown } } }).content;
  if (!content || typeof content.hasClass !== "function" || !content.hasClass("jp-Terminal")) return null;
  const name = content.session?.name;
  return typeof name === "string" ? name : null;
}

/** Each terminal's live session (the newest state wins when two claim one terminal). */
export function sessionsByTerminal(rows: Iterable<Row>): Map<string, Row> {
  const found = new Map<string, Row>();
  for (const row of rows) {
    if (row.ended || !row.running || !row.terminal) continue;
    const seen = found.get(row.terminal.name);
    if (!seen || row.state_since > seen.state_since) found.set(row.terminal.name, row);
  }
  return found;
}

/** What the tab says of its session: "Claude: needs input — asks to run: make deploy". */
export function tabText(row: Row): string {
  const what = row.asks ?? row.activity ?? null;
  return `${PREFIX}${LABEL[row.state]}${what ? ` — ${what}` : ""}`;
}

export class TabDots {
  private link: Link | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly stop: () => void;
  private frame = 0;

  constructor(
    private readonly app: JupyterFrontEnd,
    private readonly live: Live,
  ) {
    this.stop = live.onChange(() => this.follow());
    const shell = app.shell as JupyterFrontEnd.IShell & {
      layoutModified?: { connect: (fn: () => void) => void };
    };
    // a terminal tab opened, moved or restored: paint it too
    shell.layoutModified?.connect(() => this.paint());
    this.follow();
  }

  private follow(): void {
    const link = this.live.link;
    if (link !== this.link) {
      this.unsubscribe?.();
      this.link = link;
      this.unsubscribe = link ? link.store.subscribe(() => this.paint()) : null;
    }
    this.paint();
  }

  /** Paint every terminal tab (a few string compares each: writes only what changed). */
  paint(): void {
    const rows = this.link && this.live.status === "open" ? this.link.store.rows.values() : [];
    const byTerminal = sessionsByTerminal(rows);
    let changed = false;
    for (const widget of this.app.shell.widgets("main")) {
      const name = terminalName(widget);
      if (name === null) continue;
      const row = byTerminal.get(name) ?? null;
      const title = widget.title;
      const kept = title.className.split(/\s+/).filter((c) => c && c !== "pmux-tab" && !c.startsWith("pmux-state-"));
      const className = (row ? [...kept, "pmux-tab", `pmux-state-${row.state}`] : kept).join(" ");
      if (title.className !== className) {
        title.className = className;
        changed = true;
      }
      const rest = title.caption.split("\n").filter((line) => line && !line.startsWith(PREFIX));
      const caption = (row ? [tabText(row), ...rest] : rest).join("\n");
      if (title.caption !== caption) {
        title.caption = caption;
        changed = true;
      }
    }
    // The tab bar re-renders on its next update, a frame later: do it now, so the dot is in
    // the page's next paint (P16), as the status item's is.
    if (changed) MessageLoop.flush();
    // The tab's accessible name: its label, then the state (Lumino renders the label only;
    // the tooltip is a description). Set on the rendered tab, after Lumino's own update.
    cancelAnimationFrame(this.frame);
    this.frame = requestAnimationFrame(() => this.label());
  }

  private label(): void {
    for (const tab of Array.from(document.querySelectorAll<HTMLElement>("li.lm-TabBar-tab"))) {
      const ours = tab.classList.contains("pmux-tab");
      if (!ours) {
        if (tab.dataset.pmuxAria) {
          tab.removeAttribute("aria-label");
          delete tab.dataset.pmuxAria;
        }
        continue;
      }
      const label = tab.querySelector(".lm-TabBar-tabLabel")?.textContent ?? "";
      const first = (tab.getAttribute("title") ?? "").split("\n")[0];
      const name = `${label}, ${first}`;
      if (tab.getAttribute("aria-label") !== name) {
        tab.setAttribute("aria-label", name);
        tab.dataset.pmuxAria = "1";
      }
    }
  }

  dispose(): void {
    this.stop();
    this.unsubscribe?.();
    cancelAnimationFrame(this.frame);
  }
}

export const OPEN_TERMINAL = "pmux-widget:open-terminal";

/** "Open terminal": activate the tab of the terminal a session runs in (``terminal:open``
 * reopens a closed tab while the terminal runs). Args: ``{session_id}``. */
export function addOpenTerminal(app: JupyterFrontEnd, live: Live): void {
  const terminalOf = (args: { session_id?: unknown }): string | null => {
    const id = typeof args.session_id === "string" ? args.session_id : "";
    const row = live.link?.store.rows.get(id);
    return row && !row.ended && row.terminal ? row.terminal.name : null;
  };
  app.commands.addCommand(OPEN_TERMINAL, {
    label: "Open the Claude Session's Terminal",
    caption: "Show the JupyterLab terminal the session runs in (reopens its tab if closed)",
    isEnabled: (args) => terminalOf(args) !== null,
    execute: async (args) => {
      const name = terminalOf(args);
      if (name !== null) await app.commands.execute("terminal:open", { name });
    },
  });
}
