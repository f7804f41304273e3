// What the panel's "New session" form posts (pmux/api/sessions/new, DESIGN.md), from its
// fields: pure, so vitest checks it (new-session.ts holds the form). Codex (issue 36) takes
// no permission mode (its config holds its own) and has no background sessions: the server
// refuses both for it (system/launch.py: check_request, from the same facts), so the form
// never sends them.
import type { Agent } from "../../src/agents";
import { AGENT_CAN } from "../../src/types";

export interface NewSessionFields {
  agent: Agent;
  cwd: string;
  prompt: string;
  /** Claude Code's `--permission-mode` ("default": none sent) */
  mode: string;
  where: "terminal" | "tmux" | "background";
}

/** Whether `agent` can run in the background, and take a permission mode (the kernel's
 * facts, core/agents.py, through the contract). */
export function agentCan(agent: Agent): { background: boolean; mode: boolean } {
  return AGENT_CAN[agent];
}

/** The request's body: `agent` only for another agent than Claude (a server from before
 * Codex refuses nothing it does not know, and starts Claude by default). */
export function newSessionBody(fields: NewSessionFields): Record<string, string> {
  const can = agentCan(fields.agent);
  const where = fields.where === "background" && !can.background ? "terminal" : fields.where;
  const body: Record<string, string> = { cwd: fields.cwd.trim(), where };
  const prompt = fields.prompt.trim();
  if (prompt) body.prompt = prompt;
  if (can.mode && fields.mode !== "default") body.permission_mode = fields.mode;
  if (fields.agent !== "claude") body.agent = fields.agent;
  return body;
}
