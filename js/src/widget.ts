// The anywidget entry point: a factory, which anywidget calls once per model (and again when
// the ESM is hot-reloaded). Its closure holds that model's Link (store + kernel messages +
// notifications): initialize() creates it, render() runs once per view and only draws from it.
// The CSS import makes esbuild emit static/widget.css next to widget.js; the Python side
// loads it through `_css`.
import "./widget.css";
import type { Initialize, Render } from "@anywidget/types";
import { labPanel } from "./lab-panel";
import { Link, type Model } from "./link";
import { WidgetView } from "./render/view";
import type { WidgetTraits } from "./types";

export interface Widget {
  initialize: Initialize<WidgetTraits>;
  render: Render<WidgetTraits>;
}

export function createWidget(): Widget {
  let link: Link | null = null;
  return {
    initialize({ model }) {
      const current = (link = new Link(model as Model));
      if (model.get("mode") === "sidebar-stub") dock(model as Model);
      return () => {
        current.dispose();
        if (link === current) link = null;
      };
    },
    render({ model, el, signal }) {
      // anywidget >= 0.9 awaits initialize() before any render().
      if (!link) throw new Error("[pmux-widget] render() before initialize(): needs anywidget >= 0.9");
      const view = new WidgetView(model as Model, link, el);
      signal?.addEventListener("abort", () => view.destroy());
      return () => view.destroy();
    },
  };
}

/** sidebar(): the extension's panel shows the sessions when this page has it; otherwise the
 * kernel docks a sidecar (told by this answer, as only the page knows what it has). */
function dock(model: Model): void {
  const panel = labPanel();
  panel?.open();
  model.send({ type: "sidebar", where: panel ? "panel" : "sidecar" });
}

export default createWidget;
