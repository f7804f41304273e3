// The page-wide handle of the JupyterLab extension's side panel. The labextension installs it
// when it loads; sidebar()'s stand-in in a cell looks it up to open that panel instead of
// docking a sidecar. Kept on globalThis under a registry symbol, like the title manager and
// the notifier: anywidget runs a copy of this module per widget model, and the labextension
// bundles its own.
const KEY = Symbol.for("pmux-widget/lab-panel@1");

export interface LabPanel {
  /** Show the panel (expanding its side area) and give it focus. */
  open(): void;
  /** Activate the JupyterLab terminal of that name (reopening its tab if it was closed while
   * the terminal runs). Absent where the page cannot open terminals: rows then offer no
   * "Open terminal". */
  openTerminal?(name: string): void;
  /** "Attach in a terminal" for a Claude Code background session: a JupyterLab terminal
   * running `claude attach <job>` (the one open already, brought to the front). */
  attachTerminal?(sessionId: string): void;
  /** Open a notebook (server-relative path): the one whose kernel runs an Agent SDK run. */
  openNotebook?(path: string): void;
}

/** The page's way to open a notebook, if it has one (the labextension's hook). */
export function notebookOpener(): ((path: string) => void) | null {
  const panel = labPanel();
  return panel?.openNotebook ? (path) => panel.openNotebook?.(path) : null;
}

/** The page's way to open a JupyterLab terminal, if it has one (the labextension's hook). */
export function terminalOpener(): ((name: string) => void) | null {
  const panel = labPanel();
  return panel?.openTerminal ? (name) => panel.openTerminal?.(name) : null;
}

/** The page's "Attach in a terminal", if it has one (the labextension's hook). */
export function terminalAttacher(): ((sessionId: string) => void) | null {
  const panel = labPanel();
  return panel?.attachTerminal ? (id) => panel.attachTerminal?.(id) : null;
}

export function labPanel(): LabPanel | undefined {
  return (globalThis as unknown as Record<symbol, LabPanel | undefined>)[KEY];
}

export function setLabPanel(panel: LabPanel | undefined): void {
  (globalThis as unknown as Record<symbol, LabPanel | undefined>)[KEY] = panel;
}
