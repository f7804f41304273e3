// Which agent CLI runs a session (issue 36): its name where a session's agent is said, and the
// small mark its rows carry. The words are the contract's (core/wording.py: AGENT_NAMES), so a
// row, a terminal tab, the status bar and `pmux-widget status` name an agent alike. Claude's
// rows carry no mark: most rows are Claude's, and a mark on every row would tell nothing.
import { AGENT_NAMES, DEFAULT_AGENT, type Row } from "./types";

export type Agent = Row["agent"];

/** "Claude", "Codex". */
export function agentName(agent: Agent): string {
  return AGENT_NAMES[agent];
}

/** The mark a row of `agent` carries ("Codex"), null for the default agent's rows. */
export function agentMark(agent: Agent): string | null {
  return agent === DEFAULT_AGENT ? null : AGENT_NAMES[agent];
}

/** The mark's tooltip. */
export function agentMarkTitle(agent: Agent): string {
  return `a ${agentName(agent)} session (the ${agentName(agent)} CLI runs it)`;
}

/** A session's name as a list says it: "api", "api (Codex)" (the row's aria-label, the bell's
 * sheet, the status bar's tooltip). */
export function withAgent(name: string, agent: Agent): string {
  const mark = agentMark(agent);
  return mark === null ? name : `${name} (${mark})`;
}
