// The status item in the top bar, for pages with no status bar: Notebook 7's file browser,
// notebook, editor and terminal pages have none, and its side panels start collapsed, so a page
// with a session waiting looked exactly like one without the extension (issue 30). The top bar
// is where jupyter-resource-usage puts its indicator: an item of the "TopBar" toolbar
// (IToolbarWidgetRegistry, declared in schema/plugin.json under "jupyter.lab.toolbars"), which
// JupyterLab and Notebook 7 both draw, on every page. A click opens the panel.
//
// JupyterLab has a status bar: its item stays there, and the top bar gets an empty placeholder
// that CSS keeps out of the layout (the toolbar builds an item for every declared name, else a
// command button; and Lumino's hide() does not last there), leaving Lab as it was.
import type { IToolbarWidgetRegistry } from "@jupyterlab/apputils";
import { Widget } from "@lumino/widgets";
import type { Live } from "./live";
import { StatusItem } from "./status";

/** The item's DOM id (the status bar's is STATUS_ID). */
export const TOPBAR_ID = "pmux-widget-topbar";
/** Its name in the TopBar toolbar's settings (schema/plugin.json): users can move or disable it. */
export const TOPBAR_ITEM = "pmux-widget-status";

export function addTopBarItem(
  registry: IToolbarWidgetRegistry,
  live: Live,
  open: () => void,
  hasStatusBar: boolean,
): void {
  registry.addFactory("TopBar", TOPBAR_ITEM, (): Widget => {
    if (!hasStatusBar) return new StatusItem(live, open, TOPBAR_ID, "pmux-lab-topbar");
    const none = new Widget();
    none.addClass("pmux-lab-topbar-none");
    return none;
  });
}
