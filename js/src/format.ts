// Pure text formatting: time in state, token counts, the "why" of a state. No DOM here, so every
// rule is unit-tested directly.
import {
  AUTO_COMPACT_AT,
  CONTEXT_WARN_AT,
  CONTEXT_WINDOWS,
  DEFAULT_CONTEXT_WINDOW,
  SOURCE_LABELS,
  SOURCE_PREFIXES,
  type Row,
  type Tokens,
} from "./types";

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

/** The token totals and the cache split, for the tooltip: the row itself shows only the
 * context's share (cache reads are most of "input" and are not what a turn spends). */
export function tokensTitle(t: Tokens, contextTokens: number, contextWindow = 0): string {
  const n = (v: number) => v.toLocaleString("en-US");
  const share = contextWindow > 0 ? ` of ${n(contextWindow)} (${contextPercent(contextTokens, contextWindow)}%)` : "";
  return (
    `context ${n(contextTokens)}${share}\n` +
    `tokens: ${n(t.output)} out · ${n(t.input)} fresh in · ` +
    `${n(t.cache_read)} cache read · ${n(t.cache_creation)} cache write`
  );
}

/** The model's context window in tokens (contract.context_window, from the same table). */
export function contextWindow(model: string | null): number {
  const name = (model ?? "").toLowerCase();
  for (const [marker, size] of CONTEXT_WINDOWS) if (name.includes(marker)) return size;
  return DEFAULT_CONTEXT_WINDOW;
}

/** The share of the context window in use, in whole percent (at most 100). */
export function contextPercent(contextTokens: number, contextWindow: number): number {
  if (contextTokens <= 0 || contextWindow <= 0) return 0;
  return Math.min(100, Math.round((100 * contextTokens) / contextWindow));
}

/** "ctx 83%", or "" before the first response. */
export function contextText(contextTokens: number, contextWindow = 200_000): string {
  return contextTokens > 0 ? `ctx ${contextPercent(contextTokens, contextWindow)}%` : "";
}

/** Near Claude Code's auto-compaction (contract.CONTEXT_WARN_AT of the window): warn. */
export function contextWarning(contextTokens: number, contextWindow: number): string | null {
  if (contextWindow <= 0 || contextTokens < CONTEXT_WARN_AT * contextWindow) return null;
  return contextTokens >= AUTO_COMPACT_AT * contextWindow ? "compacts now" : "compacts soon";
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
    if (prefix === "action:") {
      const at = source.indexOf("@");
      if (at < 0) continue;
      return template.replace("{}", describeSource(source.slice(0, at))).replace("{}", source.slice(at + 1));
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

/** What a needs-input session asks, in the kernel's words (contract.asks: the tool with its
 * command or file relative to the session's folder); the same words as its notification. */
export function waitingText(row: Row): string {
  return row.asks ?? row.waiting_for ?? toolText(row.current_tool, row.tool_summary) ?? "waits for your answer";
}

/** Markdown's inline code in one line of text: the parts between backticks are code. */
export function inlineCode(text: string): { code: boolean; text: string }[] {
  const parts: { code: boolean; text: string }[] = [];
  const pattern = /`([^`]+)`/g;
  let at = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > at) parts.push({ code: false, text: text.slice(at, m.index) });
    parts.push({ code: true, text: m[1]! });
    at = m.index + m[0].length;
  }
  if (at < text.length || parts.length === 0) parts.push({ code: false, text: text.slice(at) });
  return parts;
}

export function errorText(row: Row): string | null {
  if (!row.error) return null;
  return row.error_detail ? `${row.error}: ${row.error_detail}` : row.error;
}

export function plural(n: number, one: string, many: string = one + "s"): string {
  return `${n} ${n === 1 ? one : many}`;
}
