// State vocabulary shared by every renderer: priority order, text labels, attention.
import { COUNT_KEYS, type Counts, type State } from "./types";

/** Most urgent first (DESIGN.md): workspace dots and sorting follow this order. */
export const PRIORITY: readonly State[] = ["needs-input", "review", "busy", "unknown", "idle"];

const RANK: Record<State, number> = { "needs-input": 0, review: 1, busy: 2, unknown: 3, idle: 4 };

/** The text shown next to every dot: a state is never told by color alone. */
export const LABEL: Record<State, string> = {
  "needs-input": "needs input",
  review: "review",
  busy: "busy",
  unknown: "unknown",
  idle: "idle",
};

export function rank(state: State): number {
  return RANK[state];
}

export function isState(value: unknown): value is State {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(RANK, value);
}

export function isAttention(state: State): boolean {
  return state === "needs-input" || state === "review";
}

/** Every count of the contract at zero. */
export function emptyCounts(): Counts {
  return Object.fromEntries(COUNT_KEYS.map((key) => [key, 0])) as unknown as Counts;
}

/** The highest-priority state among per-state tallies (idle when all are zero). */
export function mostUrgent(tally: Record<State, number>): State {
  for (const state of PRIORITY) if (tally[state] > 0) return state;
  return "idle";
}
