// Generated from pmux_widget/core/contract.py (npm run contract): do not edit.
// tests/test_contract.py fails when this file and the Python contract differ.

export type State = "idle" | "busy" | "needs-input" | "review" | "unknown";

export type Mode = "full" | "sidebar-stub";

export const STATES: readonly State[] = ["idle", "busy", "needs-input", "review", "unknown"];

export const COUNT_KEYS: readonly (keyof Counts)[] = ["idle", "busy", "needs-input", "review", "unknown", "attention"];

export interface Counts {
  idle: number;
  busy: number;
  "needs-input": number;
  review: number;
  unknown: number;
  attention: number;
}

export interface Tokens {
  input: number;
  output: number;
  cache_read: number;
  cache_creation: number;
}

export interface TmuxLocation {
  session: string;
  window: string;
  pane: string;
  title: string;
}

/** DESIGN.md "Session JSON": `Session.to_json()`, exactly its keys. */
export interface SessionJSON {
  session_id: string;
  state: State;
  running: boolean;
  state_since: number;
  cwd: string | null;
  project: string | null;
  workspace: string | null;
  pid: number | null;
  tmux: TmuxLocation | null;
  transcript_path: string | null;
  model: string | null;
  current_tool: string | null;
  tool_summary: string | null;
  last_assistant: string | null;
  last_prompt: string | null;
  tokens: Tokens;
  context_tokens: number;
  compacting: boolean;
  subagents: number;
  error: string | null;
  ports: number[];
  source: string;
}

/** A widget row: the session JSON plus what the view needs to explain it. */
export interface Row {
  session_id: string;
  state: State;
  running: boolean;
  state_since: number;
  cwd: string | null;
  project: string | null;
  workspace: string | null;
  pid: number | null;
  tmux: TmuxLocation | null;
  transcript_path: string | null;
  model: string | null;
  current_tool: string | null;
  tool_summary: string | null;
  last_assistant: string | null;
  last_prompt: string | null;
  tokens: Tokens;
  context_tokens: number;
  compacting: boolean;
  subagents: number;
  error: string | null;
  ports: number[];
  source: string;
  ended: boolean;
  waiting_for: string | null;
  error_detail: string | null;
  name: string;
}

/** The `snapshot` trait: the whole fleet at `seq`; `now` is the kernel's clock (ms). */
export interface Snapshot {
  seq: number;
  sessions: Record<string, Row>;
  counts: Counts;
  now: number;
}

/** One coalesced change: the touched rows, the removed ids, the new counts. */
export interface PatchMessage {
  type: "patch";
  seq: number;
  upsert: Row[];
  remove: string[];
  counts: Counts;
  now: number;
}

export interface NotificationPayload {
  session_id: string;
  state: State;
  title: string;
  body: string;
  at: number;
}

export interface NotifyMessage {
  type: "notify";
  notification: NotificationPayload;
}

export interface InstallResult {
  ok: boolean;
  message: string;
}

export interface InstallResultMessage {
  type: "install_result";
  ok: boolean;
  message: string;
}

/** The hub the widget listens to: its port, its process id, and its own id string. */
export interface HubInfo {
  port: number;
  pid: number;
  hub_id: string;
}

/** The `env` trait: which screen to show (no Claude, hooks missing, the list). */
export interface Env {
  claude_installed: boolean;
  claude_dir: string;
  hooks_installed: boolean;
  hooks_problem: string | null;
  hub: HubInfo | null;
  install_result: InstallResult | null;
}

/** The synced traits of `StatusWidget` (besides anywidget's and ipywidgets' own). */
export interface WidgetTraits {
  snapshot: Snapshot;
  env: Env;
  title_prefix: boolean;
  desktop_notifications: boolean;
  sidebar_note: string;
  mode: Mode;
}

export interface DismissMessage {
  type: "dismiss";
  session_id: string;
}

export interface InstallHooksMessage {
  type: "install_hooks";
}

export type KernelMessage = PatchMessage | NotifyMessage | InstallResultMessage;

export type FrontendMessage = DismissMessage | InstallHooksMessage;

/** The plain-language why of a state, per exact `source`. */
export const SOURCE_LABELS: Readonly<Record<string, string>> = {
  "transcript:interrupt": "interrupted (Esc)",
  "pid:busy": "PID file says busy",
  "pid:waiting": "PID file says waiting",
  "pid:idle": "PID file says idle",
  "pid:shell": "PID file says shell",
  "pid:found": "found by its PID file",
  "process:gone": "process exited",
  "poll:stale-busy": "busy > 10 min, no process",
  "poll:unknown-timeout": "unresolved for 10 min",
  "user:dismiss": "dismissed",
  "restart": "hub restarted, re-checking",
  "retired": "replaced (/clear or resume)",
  "recovery:process-gone": "process gone at restart",
  "recovery:transcript": "transcript ended cleanly",
  "recovery:interrupt": "interrupted before restart"
};

/** Sources not listed above, by prefix: `{}` is the rest; recovery: wraps a label. */
export const SOURCE_PREFIXES: Readonly<Record<string, string>> = {
  "hook:": "via {} hook",
  "recovery:": "{} (at restart)"
};
