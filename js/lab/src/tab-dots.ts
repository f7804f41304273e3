// Which JupyterLab terminal tab shows which session's dot: pure (no JupyterLab, no DOM), so
// vitest checks it and terminals.ts only applies it. A terminal's name is the key (the tab's
// label is whatever Claude Code sets through OSC: never keyed on).
import { agentMark, agentName } from "../../src/agents";
import { LABEL } from "../../src/states";
import type { Row } from "../../src/types";

/** The classes this module owns on a title's className (the rest is JupyterLab's or others'). */
const OURS = /^pmux-(tab|state-.+|agent-.+)$/;

/** What a terminal's tab shows for its session. */
export interface TabDecor {
  /** "pmux-tab pmux-state-<state>", and "pmux-agent-<agent>" for a row with an agent's mark
   * (the tab shows the mark after its label, widget.css) */
  classes: string;
  /** the tooltip (title.caption) */
  caption: string;
  /** the tab's accessible name, after its label */
  label: string;
}

/** Each terminal name → the session live in it. Two sessions in one terminal (one after the
 * other) show the live one: an ended row never wins; then a running process beats one whose
 * process is gone (its row ends within a beat); then the latest to change state. */
export function sessionsByTerminal(rows: Iterable<Row>): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const row of rows) {
    const name = row.terminal?.name;
    if (!name || row.ended) continue;
    const seen = out.get(name);
    if (!seen || later(row, seen)) out.set(name, row);
  }
  return out;
}

function later(a: Row, b: Row): boolean {
  if (a.running !== b.running) return a.running;
  if (a.state_since !== b.state_since) return a.state_since > b.state_since;
  return a.session_id > b.session_id;
}

/** The dot, tooltip and accessible name of a terminal's tab that runs `row`: the agent and
 * state first ("Claude: needs input — asks to run: make deploy", "Codex: busy"), then whose
 * session it is (a row's name names its terminal already). */
export function decorFor(row: Row): TabDecor {
  const state = LABEL[row.state];
  const what = row.asks ?? row.activity ?? null;
  const agent = agentName(row.agent);
  const mark = agentMark(row.agent) === null ? "" : ` pmux-agent-${row.agent}`;
  return {
    classes: `pmux-tab pmux-state-${row.state}${mark}`,
    caption: `${agent}: ${state}${what ? ` — ${what}` : ""}\nsession ${row.name}`,
    label: `${agent}: ${state}, session ${row.name}`,
  };
}

/** `className` with our classes replaced by `decor`'s (or removed when null). */
export function withClasses(className: string, decor: TabDecor | null): string {
  const kept = className.split(/\s+/).filter((c) => c && !OURS.test(c));
  if (decor) kept.push(decor.classes);
  return kept.join(" ");
}

/** Seen (issue 34): the session whose review ends because the user looks at it — its terminal
 * is the shell's current widget in a visible page. `shown` is what the last call returned, as
 * `session_id:state_since`, so that one look is told once. */
export function seenInTerminal(
  rows: Iterable<Row>,
  current: string | null,
  visible: boolean,
  shown: string | null,
): { row: Row; key: string } | null {
  if (!visible || current === null) return null;
  const row = sessionsByTerminal(rows).get(current);
  if (!row || row.state !== "review") return null;
  const key = `${row.session_id}:${row.state_since}`;
  return key === shown ? null : { row, key };
}
