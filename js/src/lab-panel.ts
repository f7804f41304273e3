// The page-wide handle of the JupyterLab extension's side panel. The labextension installs it
// when it loads; sidebar()'s stand-in in a cell looks it up to open that panel instead of
// docking a sidecar. Kept on globalThis under a registry symbol, like the title manager and
// the notifier: anywidget runs a copy of this module per widget model, and the labextension
// bundles its own.
const KEY = Symbol.for("pmux-widget/lab-panel@1");

export interface LabPanel {
  /** Show the panel (expanding its side area) and give it focus. */
  open(): void;
  /** Bring the JupyterLab terminal ``name`` to the front (reopening its tab): a row of a
   * session in a terminal offers it ("Open terminal"). */
  openTerminal?(name: string): void;
}

export function labPanel(): LabPanel | undefined {
  return (globalThis as unknown as Record<symbol, LabPanel | undefined>)[KEY];
}

export function setLabPanel(panel: LabPanel | undefined): void {
  (globalThis as unknown as Record<symbol, LabPanel | undefined>)[KEY] = panel;
}
