// The timeline's range switch (15 min, 1 h, 8 h, 24 h), remembered per browser, and the shared
// time axis drawn once above the rows (every strip spans the same range, ending at now).
import { el, setData, text } from "../dom";
import { loadPref, savePref } from "../prefs";
import { DEFAULT_RANGE, RANGES, type RangeKey } from "../timeline";

const PREF = "timeline-range";
let nextId = 0;

export function storedRange(): RangeKey {
  const saved = loadPref(PREF);
  return RANGES.some((r) => r.key === saved) ? (saved as RangeKey) : DEFAULT_RANGE;
}

export function rangeLabel(key: RangeKey): string {
  return RANGES.find((r) => r.key === key)?.label ?? "1 h";
}

export class RangeSwitch {
  readonly el: HTMLLabelElement;
  readonly select: HTMLSelectElement;

  constructor(initial: RangeKey, onChange: (range: RangeKey) => void) {
    this.el = el("label", "pmux-range");
    this.select = el("select");
    this.select.id = `pmux-range-${++nextId}`;
    this.el.append("Timeline ", this.select);
    for (const range of RANGES) {
      const option = this.select.appendChild(el("option", undefined, range.label));
      option.value = range.key;
    }
    this.select.value = initial;
    this.select.addEventListener("change", () => {
      const range = storedOr(this.select.value);
      savePref(PREF, range);
      onChange(range);
    });
  }
}

function storedOr(value: string): RangeKey {
  return RANGES.some((r) => r.key === value) ? (value as RangeKey) : DEFAULT_RANGE;
}

/** The axis: where the strips start (−range), their middle, and now. Decorative for screen
 * readers (each strip says its range in its label). */
export class TimeAxis {
  readonly el: HTMLDivElement;
  private readonly startText: Text;
  private readonly midText: Text;

  constructor(range: RangeKey) {
    this.el = el("div", "pmux-axis");
    this.el.setAttribute("aria-hidden", "true");
    this.startText = text(this.el.appendChild(el("span", "pmux-axis-start")));
    this.midText = text(this.el.appendChild(el("span", "pmux-axis-mid")));
    this.el.appendChild(el("span", "pmux-axis-now", "now"));
    this.set(range);
  }

  set(range: RangeKey): void {
    const label = rangeLabel(range);
    setData(this.startText, `−${label}`);
    const half = { "15m": "7½ min", "1h": "30 min", "8h": "4 h", "24h": "12 h" }[range];
    setData(this.midText, `−${half}`);
  }
}
