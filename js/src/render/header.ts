// The header: title, the bell with the attention count, small per-state counts (each with
// its state's shape, so they read without color), and the tools: the grouping switch and the
// desktop-notifications switch.
import { bellIcon, el, setAttr, setClass, setData, setHidden, text } from "../dom";
import { LABEL, needYouSentence, PRIORITY } from "../states";
import type { Counts, State } from "../types";

export class Header {
  readonly el: HTMLDivElement;
  readonly bell: HTMLButtonElement;
  private readonly bellCount: Text;
  private readonly live: Text;
  private readonly chips = new Map<State, { el: HTMLSpanElement; text: Text }>();
  /** today's insight: waited on you, median response, turns (hidden until there is any) */
  readonly insight: HTMLDivElement;
  private readonly insightText: Text;
  private attention = -1;

  constructor(sheetId: string, onBell: () => void, tools: HTMLElement[] = []) {
    this.el = el("div", "pmux-header");
    const top = this.el.appendChild(el("div", "pmux-header-top"));
    top.appendChild(el("span", "pmux-title", "Claude sessions"));
    this.bell = top.appendChild(el("button", "pmux-bell"));
    this.bell.type = "button";
    this.bell.setAttribute("aria-haspopup", "dialog");
    this.bell.setAttribute("aria-expanded", "false");
    this.bell.setAttribute("aria-controls", sheetId);
    this.bell.appendChild(bellIcon());
    const count = this.bell.appendChild(el("span", "pmux-bell-count"));
    count.setAttribute("aria-hidden", "true"); // the button's label and the live region say it
    this.bellCount = text(count);
    this.bell.addEventListener("click", onBell);

    // Screen readers hear the attention count when it changes, politely.
    const live = this.el.appendChild(el("span", "pmux-sr"));
    live.setAttribute("aria-live", "polite");
    live.setAttribute("role", "status");
    this.live = text(live);

    const chips = this.el.appendChild(el("div", "pmux-counts"));
    for (const state of PRIORITY) {
      const chip = chips.appendChild(el("span", `pmux-count pmux-count--${state}`));
      chip.hidden = true;
      const dot = chip.appendChild(el("span", `pmux-dot pmux-dot--${state} pmux-dot--static`));
      dot.setAttribute("aria-hidden", "true");
      this.chips.set(state, { el: chip, text: text(chip) });
    }
    this.insight = this.el.appendChild(el("div", "pmux-insight"));
    this.insightText = text(this.insight);
    this.insight.hidden = true;
    if (tools.length) {
      const row = this.el.appendChild(el("div", "pmux-tools"));
      for (const tool of tools) row.appendChild(tool);
      // Shown (CSS) while the list holds a new order back for the pointer or focus in it.
      row.appendChild(el("span", "pmux-order-waits", "order updates when you leave the list"));
    }
  }

  /** Today's insight line ("" hides it). */
  setInsight(words: string): void {
    setHidden(this.insight, !words);
    setData(this.insightText, words);
  }

  setCounts(counts: Counts): void {
    for (const [state, chip] of this.chips) {
      const n = counts[state];
      setHidden(chip.el, n === 0);
      setData(chip.text, `${n} ${LABEL[state]}`);
    }
    const n = counts.attention;
    if (n === this.attention) return;
    this.attention = n;
    setData(this.bellCount, String(n));
    setClass(this.bell, n > 0 ? "pmux-bell pmux-bell--active" : "pmux-bell");
    const sentence = needYouSentence(n);
    setAttr(this.bell, "aria-label", `${sentence}: open the list`);
    setData(this.live, sentence);
  }

  setExpanded(open: boolean): void {
    setAttr(this.bell, "aria-expanded", open ? "true" : "false");
  }
}
