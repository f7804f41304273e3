// The shapes of docs/widget-protocol.md, as the front-end reads them. Every field the kernel
// sends is typed here; the store normalizes incoming rows to these shapes (see store.ts), so the
// renderers never guard against a missing field.

export type State = "idle" | "busy" | "needs-input" | "review" | "unknown";

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

/** A `<row>`: the contract's session JSON plus `ended`, `waiting_for`, `error_detail`, `name`. */
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

export type Counts = Record<State | "attention", number>;

export interface Snapshot {
  seq: number;
  sessions: Record<string, Row>;
  counts?: Counts;
  /** the kernel's clock when the snapshot was taken (ms epoch) */
  now?: number;
}

export interface InstallResult {
  ok: boolean;
  message: string;
}

export interface Env {
  claude_installed: boolean;
  hooks_installed: boolean;
  hooks_problem: string | null;
  hub: { port: number; pid: number } | null;
  install_result: InstallResult | null;
}

export interface PatchMessage {
  type: "patch";
  seq: number;
  upsert?: Row[];
  remove?: string[];
  counts?: Counts;
  /** the kernel's clock when the patch was sent (ms epoch) */
  now?: number;
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

export interface InstallResultMessage extends InstallResult {
  type: "install_result";
}

export type KernelMessage = PatchMessage | NotifyMessage | InstallResultMessage;

export type FrontendMessage = { type: "dismiss"; session_id: string } | { type: "install_hooks" };

/** The synced traits of StatusWidget. */
export interface WidgetTraits {
  snapshot: Snapshot;
  env: Env | null;
  title_prefix: boolean;
  desktop_notifications: boolean;
  sidebar_note: string;
  /** "full", or "sidebar-stub": the cell's stand-in for a widget docked with sidebar() */
  mode?: string;
  // Inherited from ipywidgets' DOMWidget: a per-model object, used only to recognise the model
  // behind anywidget's per-view proxies (see link.ts).
  layout?: unknown;
}
