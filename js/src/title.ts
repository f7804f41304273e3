// The browser tab title prefix "(N) ". One manager per document, whatever the number of widgets
// and models (see titleManager):
// each view registers its attention count, the manager shows the largest (the widgets watch
// the same fleet, so adding them would double-count) and restores the original title when it
// drops to zero, when the last view goes, or when every view turned the option off.
//
// JupyterLab rewrites document.title whenever the current tab changes. A MutationObserver on
// <head> notices a title we did not write, takes it as the new base, and re-applies the prefix.

import { titlePrefix } from "./states";
import { NEED_YOU_WORDS } from "./types";

/** The prefix as titlePrefix writes it ("(N) ", the contract's words), to strip it again. */
const PREFIX = new RegExp(
  "^" + NEED_YOU_WORDS.title.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace("\\{n\\}", "\\d+"),
);
/** Re-applies of the prefix after someone else rewrote the title, per task at most. */
const MAX_REAPPLY = 3;

export class TitleManager {
  private readonly counts = new Map<object, number>();
  /** each view's model (what feeds it): while an owner model is claimed, only its views count */
  private readonly sources = new Map<object, object | undefined>();
  private owner: object | null = null;
  /** The title without our prefix; null while we have not touched the title. */
  private base: string | null = null;
  /** What we last wrote, to tell our writes from the page's. */
  private written: string | null = null;
  private observer: MutationObserver | null = null;
  private reapplied = 0;

  constructor(private readonly doc: Document) {}

  /** Set a view's count (0 when its option is off or nothing needs attention); `source` is
   * the model the view shows. */
  set(owner: object, count: number, source?: object): void {
    if (this.counts.get(owner) === count && this.sources.get(owner) === source) return;
    this.counts.set(owner, count);
    this.sources.set(owner, source);
    this.apply();
  }

  remove(owner: object): void {
    this.sources.delete(owner);
    if (this.counts.delete(owner)) this.apply();
  }

  /** The page's owner of the prefix (the JupyterLab panel's model, while its stream is open):
   * its views alone count, so the title agrees with the status bar even when a notebook's
   * widget watches another hub. */
  claim(source: object): void {
    this.owner = source;
    this.apply();
  }

  release(source: object): void {
    if (this.owner !== source) return;
    this.owner = null;
    this.apply();
  }

  /** The prefix number shown now (0: none). */
  get shown(): number {
    let max = 0;
    for (const [view, n] of this.counts) {
      if (this.owner === null || this.sources.get(view) === this.owner) max = Math.max(max, n);
    }
    return max;
  }

  private apply(): void {
    const n = this.shown;
    const current = this.doc.title;
    if (n > 0) {
      if (this.written === null || current !== this.written) {
        // First prefix, or the page changed the title since our last write: that is the base.
        this.base = current.replace(PREFIX, "");
      }
      const desired = titlePrefix(n) + (this.base ?? "");
      this.written = desired;
      if (current !== desired) this.doc.title = desired;
      this.observe();
      return;
    }
    if (this.written !== null) {
      // Restore only our own doing: a title the page set meanwhile stays, minus our prefix.
      const restored = current === this.written ? (this.base ?? "") : current.replace(PREFIX, "");
      if (restored !== current) this.doc.title = restored;
    }
    this.written = null;
    this.base = null;
    this.disconnect();
  }

  private observe(): void {
    if (this.observer || typeof MutationObserver === "undefined") return;
    const head = this.doc.head ?? this.doc.documentElement;
    if (!head) return;
    this.observer = new MutationObserver(() => {
      if (this.written === null || this.doc.title === this.written) return;
      // A new title from the page (JupyterLab on a tab change) gets the prefix again. But never
      // fight another writer of prefixes: each rewrite would wake the other's observer, a
      // microtask loop that starves the page (it hung JupyterLab before managers were shared).
      if (++this.reapplied > MAX_REAPPLY) return;
      if (this.reapplied === 1) setTimeout(() => (this.reapplied = 0), 0);
      this.apply();
    });
    this.observer.observe(head, { childList: true, subtree: true, characterData: true });
  }

  private disconnect(): void {
    this.observer?.disconnect();
    this.observer = null;
  }
}

// anywidget imports each model's ESM from its own blob: URL, so every widget MODEL runs its own
// copy of this module (sidebar() alone makes two models: the docked widget and the cell's
// stand-in). A module-level registry would give each model a manager of its own; the manager
// is kept on the document instead, under a registry symbol all copies share.
const KEY = Symbol.for("pmux-widget/title-manager@1");

export function titleManager(doc: Document = document): TitleManager {
  const holder = doc as unknown as Record<symbol, TitleManager | undefined>;
  let manager = holder[KEY];
  if (!manager) {
    manager = new TitleManager(doc);
    holder[KEY] = manager;
  }
  return manager;
}
