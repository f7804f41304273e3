// The grouping switch: by workspace (under a pinned "Needs you" block) or by state. Remembered
// per browser.
import { el } from "../dom";
import { loadPref, savePref } from "../prefs";
import type { Grouping } from "./list";

const PREF = "grouping";
let nextId = 0;

export function storedGrouping(): Grouping {
  return loadPref(PREF) === "state" ? "state" : "workspace";
}

export class GroupingSwitch {
  readonly el: HTMLLabelElement;
  readonly select: HTMLSelectElement;

  constructor(initial: Grouping, onChange: (grouping: Grouping) => void) {
    this.el = el("label", "pmux-grouping");
    this.select = el("select");
    this.select.id = `pmux-grouping-${++nextId}`;
    this.el.append("Group ", this.select);
    for (const [value, label] of [
      ["workspace", "by folder"],
      ["state", "by state"],
    ] as const) {
      const option = this.select.appendChild(el("option", undefined, label));
      option.value = value;
    }
    this.select.value = initial;
    this.select.addEventListener("change", () => {
      const grouping: Grouping = this.select.value === "state" ? "state" : "workspace";
      savePref(PREF, grouping);
      onChange(grouping);
    });
  }
}
