// String orders shared by the lists and the sheet.

/** Natural, case-insensitive order for names ("w2" before "w10", "api" next to "API"). */
const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });

export function byName(a: string, b: string): number {
  return collator.compare(a, b);
}

/** Plain code-unit order: the tie-breaker that makes every order total (a stable DOM). */
export function byCode(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
