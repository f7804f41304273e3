// The switch that shows or hides the rows of sessions nobody sits at (claude -p, SDK runs:
// rows marked pmux-row--unattended). Bound to the `show_non_interactive` trait: true or
// false when Python chose (show(non_interactive=False)), null for this browser's remembered
// choice (shown by default). A click sets the trait and is remembered per browser.
import { el } from "../dom";
import type { Model } from "../link";
import { loadPref, savePref } from "../prefs";

const PREF = "non-interactive";
/** On the session list while such rows are hidden (widget.css hides them, and their groups). */
export const HIDE_UNATTENDED = "pmux-list--hide-unattended";

let nextId = 0;

/** Whether the rows of claude -p / SDK runs are shown: Python's choice, else this browser's. */
export function showUnattended(model: Model): boolean {
  const chosen = model.get("show_non_interactive");
  if (chosen === true || chosen === false) return chosen;
  return loadPref(PREF) !== "hide";
}

export class UnattendedSwitch {
  readonly el: HTMLLabelElement;
  readonly input: HTMLInputElement;
  private readonly onTrait = () => this.sync();

  constructor(
    private readonly model: Model,
    private readonly list: HTMLElement,
  ) {
    this.el = el("label", "pmux-switch pmux-unattended-switch");
    this.el.title = "Show the sessions nobody sits at: claude -p and SDK runs";
    this.input = this.el.appendChild(el("input"));
    this.input.type = "checkbox";
    this.input.id = `pmux-unattended-${++nextId}`;
    this.el.appendChild(document.createTextNode(" claude -p / SDK"));
    this.input.addEventListener("change", () => {
      const on = this.input.checked;
      savePref(PREF, on ? "show" : "hide");
      this.model.set("show_non_interactive", on);
      this.model.save_changes();
      this.sync();
    });
    model.on("change:show_non_interactive", this.onTrait);
    this.sync();
  }

  sync(): void {
    const on = showUnattended(this.model);
    if (this.input.checked !== on) this.input.checked = on;
    if (this.list.classList.contains(HIDE_UNATTENDED) === on) {
      this.list.classList.toggle(HIDE_UNATTENDED, !on);
    }
  }

  destroy(): void {
    this.model.off("change:show_non_interactive", this.onTrait);
  }
}
