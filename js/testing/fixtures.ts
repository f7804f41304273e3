// Rows for tests and the benchmark.
import { normalizeRow } from "../src/store";
import type { Row, State } from "../src/types";

export const T0 = 1_700_000_000_000;

/** A row as the kernel would send it; the derived words (activity, asks, answer, why) are
 * filled from the raw fields as for an older kernel unless the overrides give them. */
export function makeRow(overrides: Partial<Row> & { session_id: string }): Row {
  const project = overrides.project ?? "proj";
  return normalizeRow({
    state: "idle",
    running: true,
    state_since: T0,
    cwd: `/home/u/${project}`,
    project,
    workspace: overrides.workspace ?? project,
    pid: 1000,
    tmux: null,
    transcript_path: null,
    model: "claude-sonnet-4-5",
    current_tool: null,
    tool_summary: null,
    last_assistant: null,
    last_prompt: null,
    tokens: { input: 0, output: 0, cache_read: 0, cache_creation: 0 },
    context_tokens: 0,
    compacting: false,
    subagents: 0,
    error: null,
    ports: [],
    source: "hook:SessionStart",
    ended: false,
    waiting_for: null,
    error_detail: null,
    name: overrides.name ?? overrides.session_id,
    dialog_token: "",
    ...overrides,
  });
}

const STATES: State[] = ["idle", "busy", "needs-input", "review", "unknown"];

/** A realistic fleet: `n` sessions over `n / 10` workspaces, every state, tools on busy ones,
 * snippets and tokens everywhere. Deterministic. */
export function makeFleet(n: number, now = T0): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < n; i++) {
    const state = STATES[i % STATES.length]!;
    const ws = `ws-${Math.floor(i / 10)}`;
    rows.push(
      makeRow({
        session_id: `s${String(i).padStart(4, "0")}`,
        name: `proj-${i} (${ws}:${i % 10}.%${i})`,
        project: `proj-${i}`,
        workspace: ws,
        state,
        state_since: now - (i % 120) * 1000,
        current_tool: state === "busy" ? "Bash" : state === "needs-input" ? "Bash" : null,
        tool_summary: state === "busy" || state === "needs-input" ? `$ pytest -q tests/test_${i}.py` : null,
        last_assistant: `I looked at the failing test number ${i} and changed the fixture so that it no longer depends on the clock.`,
        tokens: { input: 1200 + i, output: 800 + i, cache_read: 20000 + i * 10, cache_creation: 3000 },
        context_tokens: 45000 + i,
        source: state === "review" ? "hook:Stop" : "hook:UserPromptSubmit",
      }),
    );
  }
  return rows;
}
