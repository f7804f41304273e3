// A row's timeline strip: its states over the chosen range (15 min … 24 h), in the dots'
// colors, ending at now. ONE element per row draws it (a CSS gradient in a custom property):
// 500 rows × 200 transitions must render within 200 ms and a new transition redraw one strip
// within 3 ms (P14), and an element per segment would cost far more in both.
//
// The segments are read on hover (the pointer's x picks one) or with the keyboard (the strip is
// focusable; ←/→, Home/End move between segments): a tooltip, which is also the strip's
// description for screen readers, says the state in words, its start, its length and why
// (describeSource). Redraws: a new transition (the store appended one) redraws that strip; the
// clock redraws a strip only once now has moved by about a pixel's worth of its range (1 to 2
// times range/600, spread over the strips so they do not all redraw on the same tick).
import { el, setAttr, setData, setHidden, text } from "../dom";
import { describeSource } from "../format";
import { LABEL } from "../states";
import { formatLength, segmentsIn, type Segment, type Transition } from "../timeline";
import type { State } from "../types";

/** What a strip reads: the session's transitions, the range, the clocks. */
export interface TimelineSource {
  entries(sessionId: string): readonly Transition[] | undefined;
  /** the range's length (ms) and its words ("1 h") */
  rangeMs(): number;
  rangeLabel(): string;
  /** browser clock minus kernel clock: the tooltip's start times are the user's clock */
  clockOffset(): number;
}

/** A redraw waits until now moved by this share of the range (about a pixel at 600 px). */
const STEPS = 600;
let nextId = 0;
let nextSpread = 0;

export class StripView {
  readonly el: HTMLDivElement;
  private readonly bar: HTMLDivElement;
  /** "waited 12m" under the strip: created when the session first waited today */
  private waitedEl: HTMLSpanElement | null = null;
  private waitedText: Text | null = null;
  private tip: HTMLDivElement | null = null;
  private tipText: Text | null = null;
  private mark: HTMLDivElement | null = null;
  private segments: Segment[] = [];
  private from = 0;
  private to = 0;
  private drawnRange = 0;
  private drawnCount = -1;
  private drawnLast = 0;
  private drawnEnd: number | null = null;
  private fill = "";
  /** the segment the tooltip shows (index into `segments`), -1 when none */
  private selected = -1;
  private focused = false;
  /** 1 to 2 steps between clock redraws, different per strip: 500 strips drawn together at
   * first would otherwise all redraw on the same tick, every step. */
  private readonly spread = 1 + (nextSpread++ % 16) / 16;

  constructor(
    private readonly sessionId: string,
    private readonly source: TimelineSource,
  ) {
    this.el = el("div", "pmux-timeline");
    this.bar = this.el.appendChild(el("div", "pmux-strip"));
    this.bar.tabIndex = 0;
    this.bar.setAttribute("role", "img");
    this.bar.addEventListener("pointermove", (event) => this.onPointer(event));
    this.bar.addEventListener("pointerleave", () => {
      if (!this.focused) this.select(-1);
    });
    this.bar.addEventListener("focus", () => {
      this.focused = true;
      this.select(this.segments.length - 1);
    });
    this.bar.addEventListener("blur", () => {
      this.focused = false;
      this.select(-1);
    });
    this.bar.addEventListener("keydown", (event) => this.onKey(event));
  }

  /** Draw for `now` (kernel clock). `end`: when the session ended (null while it lives).
   * Cheap when nothing moved: same range, no new transition, now within the same step. */
  draw(now: number, end: number | null = null): void {
    const entries = this.source.entries(this.sessionId) ?? [];
    const range = this.source.rangeMs();
    const last = entries.length ? entries[entries.length - 1]!.at : 0;
    const same =
      range === this.drawnRange &&
      entries.length === this.drawnCount &&
      last === this.drawnLast &&
      end === this.drawnEnd &&
      now - this.to < (range / STEPS) * this.spread &&
      now >= this.to;
    if (same) return;
    this.drawnRange = range;
    this.drawnCount = entries.length;
    this.drawnLast = last;
    this.drawnEnd = end;
    this.from = now - range;
    this.to = now;
    this.segments = segmentsIn(entries, this.from, this.to, end);
    const fill = gradient(this.segments, this.from, range);
    if (fill !== this.fill) {
      this.fill = fill;
      this.bar.style.setProperty("--pmux-strip-fill", fill);
    }
    setAttr(this.bar, "aria-label", this.summary());
    if (this.selected >= 0) this.select(Math.min(this.selected, this.segments.length - 1), true);
  }

  /** Time waited on you today (ms), shown next to the strip when there was any. */
  setWaited(ms: number): void {
    const words = ms >= 1000 ? `waited ${formatLength(ms)}` : "";
    if (!this.waitedEl || !this.waitedText) {
      if (!words) return;
      this.waitedEl = el("span", "pmux-strip-waited");
      this.waitedText = text(this.waitedEl);
      this.el.insertBefore(this.waitedEl, this.tip);
    }
    setHidden(this.waitedEl, !words);
    setData(this.waitedText, words);
    setAttr(this.waitedEl, "title", words ? `waited on you ${formatLength(ms)} today` : null);
  }

  /** What the strip says to a screen reader before a segment is picked. */
  private summary(): string {
    const n = this.segments.length;
    const range = this.source.rangeLabel();
    if (!n) return `Timeline, last ${range}: no history`;
    const current = this.segments[n - 1]!;
    return (
      `Timeline, last ${range}: ${n === 1 ? "1 segment" : `${n} segments`}, now ` +
      `${current.open ? LABEL[current.state] : "ended"}; arrow keys read them`
    );
  }

  /** The words of segment `i`: state, start, length, why. */
  describe(i: number): string {
    const seg = this.segments[i];
    if (!seg) return "";
    const start = new Date(seg.start + this.source.clockOffset());
    const clock = start.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    const length = formatLength(seg.end - seg.start);
    const why = describeSource(seg.source);
    return (
      `${LABEL[seg.state]} · from ${clock} · ${seg.open ? `${length} so far` : length}` +
      (why ? ` · ${why}` : "")
    );
  }

  /** The segments drawn (for tests and the tooltip). */
  get shown(): readonly Segment[] {
    return this.segments;
  }

  private select(i: number, force = false): void {
    if (i === this.selected && !force) return;
    this.selected = i;
    if (i < 0) {
      if (this.tip) this.tip.hidden = true;
      if (this.mark) this.mark.hidden = true;
      return;
    }
    if (!this.tip) {
      this.tip = this.el.appendChild(el("div", "pmux-strip-tip"));
      this.tip.id = `pmux-strip-tip-${++nextId}`;
      this.tip.setAttribute("role", "tooltip");
      this.tipText = text(this.tip);
      this.bar.setAttribute("aria-describedby", this.tip.id);
      this.mark = this.bar.appendChild(el("div", "pmux-strip-mark"));
    }
    const seg = this.segments[i]!;
    setData(this.tipText!, this.describe(i));
    this.tip.hidden = false;
    const range = this.to - this.from;
    const left = ((Math.max(seg.start, this.from) - this.from) / range) * 100;
    const width = ((seg.end - Math.max(seg.start, this.from)) / range) * 100;
    this.mark!.style.left = `${left}%`;
    this.mark!.style.width = `${width}%`;
    this.mark!.hidden = false;
  }

  private onPointer(event: PointerEvent): void {
    const box = this.bar.getBoundingClientRect();
    if (box.width <= 0) return;
    const at = this.from + ((event.clientX - box.left) / box.width) * (this.to - this.from);
    this.select(this.indexAt(at));
  }

  /** The segment under time `at` (-1 before the history begins). */
  indexAt(at: number): number {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      if (this.segments[i]!.start <= at) return i;
    }
    return -1;
  }

  private onKey(event: KeyboardEvent): void {
    const n = this.segments.length;
    if (!n) return;
    let i = this.selected;
    if (event.key === "ArrowLeft") i = Math.max(0, i - 1);
    else if (event.key === "ArrowRight") i = Math.min(n - 1, i + 1);
    else if (event.key === "Home") i = 0;
    else if (event.key === "End") i = n - 1;
    else return;
    event.preventDefault();
    event.stopPropagation(); // the list's own arrow keys must not move the focus away
    this.select(i);
  }
}

/** Each state's color in the fill, by a short name (widget.css maps --sb… to --pmux-seg-*):
 * 500 strips × 200 segments are written and parsed at first render, and one strip's whole fill
 * on every transition (P14); the long names made that string ~1.6x longer. */
export const SEG_COLOR: Record<State, string> = {
  busy: "var(--sb)",
  "needs-input": "var(--sn)",
  review: "var(--sr)",
  idle: "var(--si)",
  unknown: "var(--su)",
};

/** The strip's fill: one color stop pair per segment, transparent before the history. */
export function gradient(segments: readonly Segment[], from: number, range: number): string {
  if (!segments.length) return "none";
  const stops: string[] = [];
  let cursor = 0;
  for (const seg of segments) {
    const a = round(((Math.max(seg.start, from) - from) / range) * 100);
    const b = round(((seg.end - from) / range) * 100);
    if (a > cursor) stops.push(`transparent ${cursor}% ${a}%`);
    stops.push(`${SEG_COLOR[seg.state]} ${a}% ${b}%`);
    cursor = b;
  }
  if (cursor < 100) stops.push(`transparent ${cursor}% 100%`);
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
