// The attention count on the sidebar tab, for sidebar()'s docked widget: a collapsed sidebar
// shows only its tab, so the tab says "2 · Claude sessions" while two sessions need the user.
//
// The tab belongs to JupyterLab (a Lumino TabBar): it is found from the widget's DOM (the
// ancestor panel whose id a tab's data-id names, else the side bar's tab with our title), and
// Lumino re-renders tabs from their Title on any change, so a MutationObserver re-applies the
// count when Lumino wrote the plain title back. Outside a side bar nothing happens.

const COUNTED = /^\d+ · /;
/** JupyterLab's side areas (where sidecars dock). */
const SIDE_AREAS = "#jp-right-stack, #jp-left-stack, .jp-SidePanel";

export class SidebarTab {
  private label: HTMLElement | null = null;
  private observer: MutationObserver | null = null;
  private count = 0;
  private writing = false;

  constructor(private readonly root: HTMLElement) {}

  set(count: number): void {
    if (count === this.count && (this.label?.isConnected ?? false)) return;
    this.count = count;
    // Only a widget docked in a side area has a tab: elsewhere, no document-wide search on
    // every change (it costs a full tree walk after each DOM move).
    if (!this.label && !this.root.closest(SIDE_AREAS)) return;
    const label = this.find();
    if (label) this.apply(label);
  }

  dispose(): void {
    this.observer?.disconnect();
    this.observer = null;
    if (this.label) {
      this.count = 0;
      this.apply(this.label);
    }
    this.label = null;
  }

  private apply(label: HTMLElement): void {
    const base = (label.textContent ?? "").replace(COUNTED, "");
    const wanted = this.count > 0 ? `${this.count} · ${base}` : base;
    if (label.textContent === wanted) return;
    this.writing = true;
    label.textContent = wanted;
    this.writing = false;
  }

  private find(): HTMLElement | null {
    if (this.label?.isConnected) return this.label;
    this.observer?.disconnect();
    this.label = null;
    const tabs = new Map<string, Element>();
    for (const tab of this.root.ownerDocument.querySelectorAll(".lm-TabBar-tab[data-id]")) {
      tabs.set(tab.getAttribute("data-id")!, tab);
    }
    if (tabs.size === 0) return null;
    let tab: Element | null = null;
    for (let node = this.root.parentElement; node && !tab; node = node.parentElement) {
      if (node.id) tab = tabs.get(node.id) ?? null;
    }
    if (!tab) return null;
    const label = tab.querySelector<HTMLElement>(".lm-TabBar-tabLabel");
    if (!label) return null;
    this.label = label;
    const bar = tab.parentElement;
    if (bar) {
      this.observer = new MutationObserver(() => {
        if (this.writing) return;
        const current = this.find();
        if (current) this.apply(current);
      });
      this.observer.observe(bar, { subtree: true, childList: true, characterData: true });
    }
    return label;
  }
}
