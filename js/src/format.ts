// Pure text formatting: time in state, token counts, the "why" of a state. No DOM here, so every
// rule is unit-tested directly.
import { SOURCE_LABELS, SOURCE_PREFIXES, type Row, type Tokens } from "./types";

/** Time in state, one unit, coarse on purpose ("12s", "4m", "2h", "3d"): it is re-rendered
 * every second and a stable width keeps rows from jittering. Negative spans (a kernel clock a
 * little ahead of the browser's) read as "0s". */
export function formatAge(sinceMs: number, nowMs: number): string {
  if (!sinceMs) return "";
  const s = Math.max(0, Math.floor((nowMs - sinceMs) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

/** Compact counts: 950, 1.2k, 12.3k, 123k, 1.2M. A trailing ".0" is dropped ("45k"). */
export function formatCount(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return "0";
  if (n < 1000) return String(Math.round(n));
  if (n < 1e6) return trimmed(n / 1000, n < 100_000 ? 1 : 0) + "k";
  if (n < 1e9) return trimmed(n / 1e6, n < 100e6 ? 1 : 0) + "M";
  return trimmed(n / 1e9, 1) + "G";
}

function trimmed(value: number, digits: number): string {
  const text = value.toFixed(digits);
  return text.endsWith(".0") ? text.slice(0, -2) : text;
}

/** Everything Claude read as input: fresh input plus cache reads and writes. The breakdown is
 * in the title attribute (see tokensTitle). */
export function inputTotal(t: Tokens): number {
  return t.input + t.cache_read + t.cache_creation;
}

/** "12.3k in · 1.2k out", or "" before the first response. */
export function tokensText(t: Tokens): string {
  const input = inputTotal(t);
  if (input <= 0 && t.output <= 0) return "";
  return `${formatCount(input)} in · ${formatCount(t.output)} out`;
}

export function tokensTitle(t: Tokens, contextTokens: number): string {
  const n = (v: number) => v.toLocaleString("en-US");
  return (
    `input ${n(t.input)} · cache read ${n(t.cache_read)} · cache write ${n(t.cache_creation)}` +
    ` · output ${n(t.output)} · context ${n(contextTokens)}`
  );
}

export function contextText(contextTokens: number): string {
  return contextTokens > 0 ? `ctx ${formatCount(contextTokens)}` : "";
}

/** The "why" of the current state, from the row's `source` ("hook:Stop" → "via Stop hook").
 * The labels come from the Python contract (core/contract.py `describe_source`, which reads
 * them the same way; the contract's sample pins the two). */
export function describeSource(source: string): string {
  if (!source) return "";
  const known = SOURCE_LABELS[source];
  if (known !== undefined) return known;
  for (const [prefix, template] of Object.entries(SOURCE_PREFIXES)) {
    if (!source.startsWith(prefix)) continue;
    const rest = source.slice(prefix.length);
    if (prefix === "recovery:") {
      const inner = describeSource(rest);
      return inner ? template.replace("{}", inner) : "at restart";
    }
    return template.replace("{}", rest);
  }
  return source;
}

/** Current tool + summary. Summaries usually start with the tool's own word ("Read src/x.py"),
 * so the tool name is only prefixed when it would otherwise be missing ("Bash · $ pytest"). */
export function toolText(tool: string | null, summary: string | null): string | null {
  if (!tool && !summary) return null;
  if (!summary) return tool;
  if (!tool || summary.toLowerCase().startsWith(tool.toLowerCase())) return summary;
  return `${tool} · ${summary}`;
}

/** What a needs-input session waits for: the PID file's word, else the asked tool. */
export function waitingText(row: Row): string {
  const what = row.waiting_for || toolText(row.current_tool, row.tool_summary);
  return what ? `waiting for: ${what}` : "waiting for your answer";
}

export function errorText(row: Row): string | null {
  if (!row.error) return null;
  return row.error_detail ? `${row.error}: ${row.error_detail}` : row.error;
}

export function plural(n: number, one: string, many: string = one + "s"): string {
  return `${n} ${n === 1 ? one : many}`;
}
