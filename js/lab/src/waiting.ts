// The status item's tooltip (pure: no Lumino, so the unit tests import it).
import { agentName, withAgent, type Agent } from "../../src/agents";
import { attentionRows } from "../../src/render/sheet";
import { LABEL, needYouSentence } from "../../src/states";
import type { Row } from "../../src/types";

/** "2 sessions need you:" then one line per session, in the order of the panel's "Needs you"
 * section and the bell's sheet (needs-input first, each longest-waiting first); a session of
 * another agent than Claude is named with its mark, as its row is ("api (Codex)"). */
export function waitingList(rows: Iterable<Row>): string {
  const waiting = attentionRows(rows);
  const lines = waiting.slice(0, 12).map((row) => {
    const what = row.state === "needs-input" && row.asks ? `: ${row.asks}` : "";
    return `• ${withAgent(row.name, row.agent)} — ${LABEL[row.state]}${what}`;
  });
  if (waiting.length > 12) lines.push(`… and ${waiting.length - 12} more`);
  return [`${needYouSentence(waiting.length)}:`, ...lines].join("\n");
}

/** The tooltip's first words when nothing waits: "Claude sessions: 4 running", and each other
 * agent's own count once one of its sessions runs ("Claude sessions: 3 running, Codex
 * sessions: 1 running"). */
export function runningList(rows: Iterable<Row>): string {
  const live = new Map<Agent, number>([["claude", 0]]);
  for (const row of rows) if (!row.ended) live.set(row.agent, (live.get(row.agent) ?? 0) + 1);
  return [...live].map(([agent, n]) => `${agentName(agent)} sessions: ${n} running`).join(", ");
}
