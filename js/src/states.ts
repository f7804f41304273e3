// State vocabulary shared by every renderer: priority order, text labels, and what "need you"
// means and how it is said (the status bar, Notebook 7's top bar, the bell, the tab title, the
// panel's section): NEED_YOU_STATES and NEED_YOU_WORDS come from the Python contract
// (core/wording.py), so the page and `pmux-widget status` say it in the same words.
import { COUNT_KEYS, type Counts, NEED_YOU_STATES, NEED_YOU_WORDS, type State } from "./types";

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

/** A state the attention count counts and the "Needs you" section lists. */
export function isAttention(state: State): boolean {
  return NEED_YOU_STATES.includes(state);
}

/** The title of every list of what needs you: the panel's section, the bell's sheet. */
export const NEEDS_YOU: string = NEED_YOU_WORDS.section;

const words = (template: string, n: number): string => template.replace("{n}", String(n));

/** The count: "2 need you" ("1 need you" too: the contract's text, which scripts match). */
export function needYou(n: number): string {
  return words(NEED_YOU_WORDS.count, n);
}

/** "Nothing needs you", "1 session needs you", "3 sessions need you". */
export function needYouSentence(n: number): string {
  return words(n <= 0 ? NEED_YOU_WORDS.none : n === 1 ? NEED_YOU_WORDS.one : NEED_YOU_WORDS.many, n);
}

/** The tab title's prefix: "(2) ", "" when nothing needs you. */
export function titlePrefix(n: number): string {
  return n > 0 ? words(NEED_YOU_WORDS.title, n) : "";
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
