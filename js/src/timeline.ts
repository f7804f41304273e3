// Timeline and insight in the browser: a session's transitions as segments (maximal stretches of
// one state) clipped to the strip's range, and the header's numbers for today. Pure: no DOM, no
// clock. The rules are core/timeline.py's (session_segments) and core/insight.py's
// (session_stats, insight), ported so the strips and the header follow every patch without a
// byte more from the kernel (P9); a vitest pins the two on the same transitions
// (tests/timeline.test.ts).
import { isAttention } from "./states";
import type { State, TransitionJSON } from "./types";

export type Transition = TransitionJSON;

/** One stretch of one state: [start, end); `open` while it is the session's current one. */
export interface Segment {
  state: State;
  start: number;
  end: number;
  source: string;
  open: boolean;
}

/** The strip's ranges, shortest first; the default is one hour. */
export const RANGES = [
  { key: "15m", label: "15 min", ms: 15 * 60_000 },
  { key: "1h", label: "1 h", ms: 3_600_000 },
  { key: "8h", label: "8 h", ms: 8 * 3_600_000 },
  { key: "24h", label: "24 h", ms: 24 * 3_600_000 },
] as const;
export type RangeKey = (typeof RANGES)[number]["key"];
export const DEFAULT_RANGE: RangeKey = "1h";

export function rangeMs(key: RangeKey): number {
  return RANGES.find((r) => r.key === key)?.ms ?? 3_600_000;
}

/** Append `t` to a session's transitions (oldest first). A transition not newer than the last
 * one is ignored (a patch seen twice, or a snapshot row the history already holds); returns
 * whether it was appended. */
export function appendTransition(entries: Transition[], t: Transition): boolean {
  const last = entries[entries.length - 1];
  if (last && t.at <= last.at) return false;
  entries.push(t);
  return true;
}

/** The index of the first transition whose segment may reach past `from`: the last one at or
 * before `from` (binary search: a strip over 24 h of history reads only what it shows). */
function firstIndex(entries: readonly Transition[], from: number): number {
  let lo = 0;
  let hi = entries.length - 1;
  let found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid]!.at <= from) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/** The segments of one session within [from, to], oldest first, clipped to the range; they
 * tile the part of the range the history covers (no gap, no overlap). A repeated entry into
 * the same state continues the segment (as core/timeline.py). `end`: when the session ended
 * (its last segment stops there), or null while it lives (the last one is open, up to `to`). */
export function segmentsIn(
  entries: readonly Transition[],
  from: number,
  to: number,
  end: number | null = null,
): Segment[] {
  const out: Segment[] = [];
  if (!entries.length || to <= from) return out;
  let i = firstIndex(entries, from);
  // Walk back over repeats of the same state, so the segment's true start (and source) shows.
  while (i > 0 && entries[i - 1]!.state === entries[i]!.state) i -= 1;
  let current = entries[i]!;
  for (let j = i + 1; j <= entries.length; j++) {
    const next = entries[j];
    if (next && next.state === current.state) continue;
    const stop = next ? next.at : end === null ? to : Math.max(end, current.at);
    const start = Math.max(current.at, from);
    const clipped = Math.min(stop, to);
    if (clipped > start) {
      out.push({ state: current.state, start: current.at, end: clipped, source: current.source, open: !next && end === null });
    }
    if (!next || next.at >= to) break;
    current = next;
  }
  return out;
}

/** Today's numbers (core/insight.py's Insight): time waited on you (needs-input + review), the
 * median response (a wait's start → the busy that answered it, or the look that saw it), turns finished (entries into
 * review), and the time each session waited. */
export interface Insight {
  waitedMs: number;
  medianResponseMs: number | null;
  responses: number;
  turns: number;
  waitedBySession: Map<string, number>;
}

export interface SessionInsight {
  waitedMs: number;
  responses: number[];
  turns: number;
}

/** One session over [since, now]: waits and responses followed on the whole history, so a wait
 * that began before `since` and was answered after it counts with its full length. */
export function sessionInsight(
  entries: readonly Transition[],
  since: number,
  now: number,
  end: number | null = null,
): SessionInsight {
  let waitedMs = 0;
  let turns = 0;
  const responses: number[] = [];
  let waitStart: number | null = null;
  const n = entries.length;
  let i = 0;
  while (i < n) {
    const first = entries[i]!;
    let j = i + 1;
    while (j < n && entries[j]!.state === first.state) j += 1;
    const next = entries[j];
    const start = first.at;
    const stop = next ? next.at : end === null ? now : Math.max(end, start);
    const inside = start >= since;
    if (isAttention(first.state)) {
      if (stop > since) waitedMs += Math.max(0, stop - Math.max(start, since));
      if (waitStart === null) waitStart = start;
      if (first.state === "review" && inside) turns += 1;
    } else {
      // going back to work answers a wait, and so does looking at a finished turn (user:seen)
      const answers = first.state === "busy" || first.source === "user:seen";
      if (waitStart !== null && answers && inside) responses.push(start - waitStart);
      waitStart = null;
    }
    i = j;
  }
  return { waitedMs, responses, turns };
}

export function insight(
  history: ReadonlyMap<string, readonly Transition[]>,
  since: number,
  now: number,
  ends: ReadonlyMap<string, number> = new Map(),
): Insight {
  let waitedMs = 0;
  let turns = 0;
  const every: number[] = [];
  const waitedBySession = new Map<string, number>();
  for (const [id, entries] of history) {
    const s = sessionInsight(entries, since, now, ends.get(id) ?? null);
    waitedMs += s.waitedMs;
    turns += s.turns;
    for (const r of s.responses) every.push(r);
    waitedBySession.set(id, s.waitedMs);
  }
  return { waitedMs, medianResponseMs: median(every), responses: every.length, turns, waitedBySession };
}

export function median(values: number[]): number | null {
  if (!values.length) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A length in words: "45s", "12m", "1h 05m". */
export function formatLength(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return `${h}h ${String(m % 60).padStart(2, "0")}m`;
}

/** The local midnight before `ms` (the browser's day is the user's). */
export function dayStart(ms: number): number {
  const d = new Date(ms);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}
