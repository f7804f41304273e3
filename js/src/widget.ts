// The anywidget entry point. initialize() runs once per model and creates its Link (store +
// kernel messages + notifications); render() runs once per view and only draws from it.
// The CSS import makes esbuild emit static/widget.css next to widget.js; the Python side
// loads it through `_css`.
import "./widget.css";
import type { Initialize, Render } from "@anywidget/types";
import { createLink, linkModel, unlinkModel, type Model } from "./link";
import { WidgetView } from "./render/view";
import type { WidgetTraits } from "./types";

const initialize: Initialize<WidgetTraits> = ({ model }) => {
  const link = createLink(model as Model);
  return () => unlinkModel(model as Model, link);
};

const render: Render<WidgetTraits> = ({ model, el, signal }) => {
  const view = new WidgetView(model as Model, linkModel(model as Model), el);
  signal?.addEventListener("abort", () => view.destroy());
  return () => view.destroy();
};

export default { initialize, render };
