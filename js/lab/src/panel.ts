// The side panel: the widget's own WidgetView (same render modules, same CSS) over the page's
// stream, rebuilt for each connection's fresh Link, with a line saying so while offline.
import type { Message } from "@lumino/messaging";
import { Widget } from "@lumino/widgets";
import type { Link } from "../../src/link";
import { WidgetView } from "../../src/render/view";
import type { RangeKey } from "../../src/timeline";
import { needYouSentence } from "../../src/states";
import type { Row } from "../../src/types";
import type { Live } from "./live";
import { NewSessionForm, type NewSessionHost } from "./new-session";

/** What the panel can do in its page beyond showing rows (JupyterLab's terminals). */
export interface PanelHost {
  /** JupyterLab's `terminal:open {name}`; absent where the page cannot open terminals */
  openTerminal?: (name: string) => void;
  /** "Attach in a terminal" for a background session (POST pmux/api/sessions/attach, then
   * `terminal:open`); absent where the page cannot open terminals */
  attachTerminal?: (sessionId: string) => void;
  /** the "New session" form's server and folder; absent: no form */
  newSession?: NewSessionHost;
}

export const PANEL_ID = "pmux-widget-panel";
/** The width at which a row's name, state and time read on one line (px). */
export const PANEL_WIDTH = 320;

export class SessionsPanel extends Widget {
  view: WidgetView | null = null;
  private shownLink: Link | null = null;
  private readonly banner: HTMLDivElement;
  private readonly hostEl: HTMLDivElement;
  private range: RangeKey | null = null;
  private readonly stop: () => void;
  private unsubscribe: (() => void) | null = null;
  private shownCount = -1;

  readonly form: NewSessionForm | null;

  constructor(
    private readonly live: Live,
    private readonly host: PanelHost = {},
  ) {
    super();
    this.id = PANEL_ID;
    this.addClass("pmux-lab-panel");
    this.title.caption = "Claude sessions";
    this.banner = document.createElement("div");
    this.banner.className = "pmux-lab-offline";
    this.banner.setAttribute("role", "status");
    this.hostEl = document.createElement("div");
    this.hostEl.className = "pmux-lab-host";
    this.form = host.newSession ? new NewSessionForm(host.newSession) : null;
    this.node.append(this.banner, ...(this.form ? [this.form.el] : []), this.hostEl);
    this.stop = live.onChange(() => this.sync());
    this.sync();
  }

  /** The timeline range from the settings (the view's own switch still changes it). */
  setRange(range: RangeKey): void {
    this.range = range;
    if (this.view) {
      this.view.range.select.value = range;
      this.view.setRange(range);
    }
  }

  /** JupyterLab opens a side area at 250 px, and neither CSS nor a minimum size changes that
   * (the shell's split panel keeps its own sizes): the first time the panel shows, a narrower
   * area is widened through the split panel's sizes, taken from the main area. Once per page:
   * a width the user chose later stays. */
  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    if (this.widened) return;
    requestAnimationFrame(() => {
      if (this.widened || !this.isVisible) return;
      this.widened = true;
      widen(this, PANEL_WIDTH);
    });
  }

  private widened = false;

  /** The sessions that have not ended, as the page knows them now. */
  liveRows(): Row[] {
    const store = this.live.link?.store;
    return store ? [...store.rows.values()].filter((row) => !row.ended) : [];
  }

  private sync(): void {
    const link = this.live.link;
    if (link !== this.shownLink) {
      this.view?.destroy();
      this.view = null;
      this.unsubscribe?.();
      this.unsubscribe = null;
      this.shownLink = link;
      if (this.form) this.node.insertBefore(this.form.el, this.hostEl); // until a header shows
      if (link) {
        const { openTerminal, attachTerminal } = this.host;
        this.view = new WidgetView(this.live.model, link, this.hostEl, {
          ...(openTerminal ? { terminalOpener: openTerminal } : {}),
          ...(attachTerminal ? { terminalAttacher: attachTerminal } : {}),
        });
        // the form sits below the panel's header (its title, counts and switches), not above
        if (this.form) this.view.header.el.after(this.form.el);
        if (this.range) this.setRange(this.range);
        this.unsubscribe = link.store.subscribe(() => this.badge());
      }
    }
    this.badge();
    const status = this.live.status;
    const text =
      status === "open"
        ? ""
        : status === "connecting"
          ? "Connecting to the Jupyter server…"
          : "Offline: the Jupyter server does not answer; reconnecting…";
    if (this.banner.textContent !== text) this.banner.textContent = text;
    this.banner.hidden = text === "";
    this.node.classList.toggle("pmux-lab-panel--offline", status === "offline");
  }

  /** The panel's tab carries the attention count (a collapsed side area shows only its tab):
   * a data attribute Lumino renders on the tab, drawn by CSS as a badge. */
  private badge(): void {
    const count = this.live.link?.store.counts.attention ?? 0;
    if (count === this.shownCount) return;
    this.shownCount = count;
    // (merged: the shell keeps its own keys there, data-id among them)
    const { ["pmux-count"]: _old, ...rest } = this.title.dataset;
    this.title.dataset = count > 0 ? { ...rest, "pmux-count": String(count) } : rest;
    this.title.caption = count > 0 ? `Claude sessions: ${needYouSentence(count)}` : "Claude sessions";
  }

  dispose(): void {
    if (this.isDisposed) return;
    this.stop();
    this.unsubscribe?.();
    this.view?.destroy();
    this.view = null;
    super.dispose();
  }
}

interface Split {
  widgets: readonly Widget[];
  node: HTMLElement;
  relativeSizes(): number[];
  setRelativeSizes(sizes: number[]): void;
}

/** Widen the side area that holds `panel` to `want` px, taking it from the widest neighbour
 * in the shell's split panel (Lumino's public sizes; a shell without one is left alone). */
function widen(panel: Widget, want: number): void {
  // the side area is the ancestor that is a child of the shell's split panel
  let area: Widget | null = panel;
  let split = area.parent as unknown as Split | null;
  while (area && split && typeof split.relativeSizes !== "function") {
    area = area.parent;
    split = (area?.parent ?? null) as unknown as Split | null;
  }
  if (!area || !split || typeof split.relativeSizes !== "function") return;
  const width = area.node.getBoundingClientRect().width;
  const total = split.node.getBoundingClientRect().width;
  if (width === 0 || width >= want || total <= want * 2) return;
  const sizes = split.relativeSizes();
  const i = split.widgets.indexOf(area);
  if (i < 0 || sizes.length !== split.widgets.length) return;
  let j = -1;
  for (let k = 0; k < sizes.length; k++) if (k !== i && (j < 0 || sizes[k] > sizes[j])) j = k;
  const delta = (want - width) / total;
  if (j < 0 || sizes[j] <= delta) return;
  sizes[i] += delta;
  sizes[j] -= delta;
  split.setRelativeSizes(sizes);
}
