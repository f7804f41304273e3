// The status-bar item: the most urgent dot and "2 need you" (nothing waits: "Claude: 4"), a
// tooltip listing what waits; a click opens the panel. It reads the Link's store directly,
// like a view, and writes only when its text changed. The same item sits in the top bar where
// the page has no status bar (Notebook 7, see topbar.ts). Its words are the contract's
// (needYou, needYouSentence: core/wording.py), the ones the bell and the panel use.
import { Widget } from "@lumino/widgets";
import { mostUrgent, needYou, needYouSentence, PRIORITY } from "../../src/states";
import type { State } from "../../src/types";
import type { Live } from "./live";
import { runningList, waitingList } from "./waiting";

export const STATUS_ID = "pmux-widget-status";

export class StatusItem extends Widget {
  private readonly dot: HTMLSpanElement;
  private readonly label: HTMLSpanElement;
  private readonly stop: () => void;

  constructor(
    private readonly live: Live,
    onClick: () => void,
    id: string = STATUS_ID,
    extraClass = "",
  ) {
    super({ node: document.createElement("button") });
    this.id = id;
    const node = this.node as HTMLButtonElement;
    node.type = "button";
    node.className = `pmux-root pmux-lab-status${extraClass ? ` ${extraClass}` : ""}`;
    this.dot = document.createElement("span");
    this.dot.className = "pmux-dot pmux-dot--idle";
    this.dot.setAttribute("aria-hidden", "true");
    this.label = document.createElement("span");
    this.label.className = "pmux-lab-status-text";
    node.append(this.dot, this.label);
    node.addEventListener("click", onClick);
    this.stop = live.follow(() => this.paint());
  }

  paint(): void {
    const store = this.live.link?.store;
    const offline = this.live.status !== "open";
    let text: string;
    let state: State = "idle";
    let tip: string;
    if (!store) {
      text = "Claude: …";
      tip = "Claude sessions: connecting to the Jupyter server";
    } else {
      const counts = store.counts;
      const waiting = counts.attention;
      const live = PRIORITY.reduce((sum, s) => sum + counts[s], 0);
      state = mostUrgent(counts);
      // "N need you" for every N, "1 need you" too: the contract's text (DESIGN.md), which
      // scripts and tests match; the `status` table's header says the same.
      text = waiting > 0 ? needYou(waiting) : `Claude: ${live}`;
      tip =
        waiting > 0
          ? waitingList(store.rows.values())
          : `${runningList(store.rows.values())}. ${needYouSentence(0)}.`;
      if (offline) tip += "\n(offline: reconnecting to the Jupyter server)";
    }
    const dotClass = `pmux-dot pmux-dot--${state}${offline ? " pmux-dot--static pmux-lab-dot--offline" : ""}`;
    if (this.dot.className !== dotClass) this.dot.className = dotClass;
    if (this.label.textContent !== text) this.label.textContent = text;
    if (this.node.title !== tip) this.node.title = tip;
    const aria = `${text}. ${tip.replace(/\n/g, "; ")}. Opens the Claude sessions panel.`;
    if (this.node.getAttribute("aria-label") !== aria) this.node.setAttribute("aria-label", aria);
  }

  dispose(): void {
    if (this.isDisposed) return;
    this.stop();
    super.dispose();
  }
}
