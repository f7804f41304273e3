// Minimal render until the full front-end lands: shows the attention count.
import type { RenderProps } from "@anywidget/types";

function render({ model, el }: RenderProps): void {
  el.textContent = "pmux-widget";
  void model;
}

export default { render };
