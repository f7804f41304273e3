// The side panel: the widget's own WidgetView (same render modules, same CSS) over the page's
// stream, rebuilt for each connection's fresh Link, with a line saying so while offline.
import { Widget } from "@lumino/widgets";
import type { Link } from "../../src/link";
import { WidgetView } from "../../src/render/view";
import type { RangeKey } from "../../src/timeline";
import type { Row } from "../../src/types";
import type { Live } from "./live";

export const PANEL_ID = "pmux-widget-panel";

export class SessionsPanel extends Widget {
  view: WidgetView | null = null;
  private shownLink: Link | null = null;
  private readonly banner: HTMLDivElement;
  private readonly host: HTMLDivElement;
  private range: RangeKey | null = null;
  private readonly stop: () => void;

  constructor(private readonly live: Live) {
    super();
    this.id = PANEL_ID;
    this.addClass("pmux-lab-panel");
    this.title.caption = "Claude sessions";
    this.banner = document.createElement("div");
    this.banner.className = "pmux-lab-offline";
    this.banner.setAttribute("role", "status");
    this.host = document.createElement("div");
    this.host.className = "pmux-lab-host";
    this.node.append(this.banner, this.host);
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
      this.shownLink = link;
      if (link) {
        this.view = new WidgetView(this.live.model, link, this.host);
        if (this.range) this.setRange(this.range);
      }
    }
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

  dispose(): void {
    if (this.isDisposed) return;
    this.stop();
    this.view?.destroy();
    this.view = null;
    super.dispose();
  }
}
