// Generated from pmux_widget/core/contract.py (npm run contract): do not edit.
// tests/test_contract.py fails when this file and the Python contract differ.

export type State = "idle" | "busy" | "needs-input" | "review" | "unknown";

export type Mode = "full" | "sidebar-stub";

export type ActionName = "approve" | "deny" | "interrupt" | "send" | "answer" | "stop" | "remove";

export const STATES: readonly State[] = ["idle", "busy", "needs-input", "review", "unknown"];

export const COUNT_KEYS: readonly (keyof Counts)[] = ["idle", "busy", "needs-input", "review", "unknown", "attention"];

/** "Need you", one meaning everywhere: the states counted (`attention`), most urgent
 * first, and the words of the count, the sentence, the section and the tab title
 * (`{n}`: the count; core/wording.py). */
export const NEED_YOU_STATES: readonly State[] = ["needs-input", "review"];
export const NEED_YOU_WORDS = {
  "section": "Needs you",
  "count": "{n} need you",
  "none": "Nothing needs you",
  "one": "1 session needs you",
  "many": "{n} sessions need you",
  "title": "({n}) "
} as const;

/** What each agent is called where a session's agent is said (core/wording.py); a row
 * of another agent than 'claude' carries a mark with its name. */
export const DEFAULT_AGENT = "claude";
export const AGENT_NAMES = {
  "claude": "Claude",
  "codex": "Codex"
} as const;

/** What a new session of each agent can be started with (core/agents.py FACTS): the
 * background (``claude --bg``), a permission mode on its command line. */
export const AGENT_CAN = {
  "claude": {
    "background": true,
    "mode": true
  },
  "codex": {
    "background": false,
    "mode": false
  }
} as const;

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

/** The JupyterLab terminal a session runs in (issue 21): its name. */
export interface TerminalLocation {
  name: string;
}

/** A task a turn left running (2.1.332+): a background agent, a shell. */
export interface BackgroundTask {
  type: string;
  description: string;
  status: string;
}

/** A background session of Claude Code's own (issue 26): its job id and name. */
export interface Background {
  job: string;
  name: string;
}

/** One option of a question: its label (what an answer names) and what it means. */
export interface QuestionOption {
  label: string;
  description: string;
}

/** One question of Claude's `AskUserQuestion` dialog (1–4 a dialog). */
export interface Ask {
  question: string;
  header: string;
  multi_select: boolean;
  options: QuestionOption[];
}

/** DESIGN.md `question`: what exactly waits on the user while a session is needs-input: a permission, questions with their options (kind question), or a plan's text (kind plan; null when the CLI keeps it off the dialog). */
export interface Question {
  kind: "permission" | "question" | "plan";
  questions: Ask[];
  plan: string | null;
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
  terminal: TerminalLocation | null;
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
  host: string | null;
  agent: "claude" | "codex";
  permission_mode: string | null;
  background_tasks: BackgroundTask[];
  background: Background | null;
  question: Question | null;
}

/** Where an Agent SDK run comes from: `program` (`ipykernel`, `my_script.py`), `kernel_id` and `notebook` when a Jupyter kernel runs it and its server said which. */
export interface Origin {
  program: string;
  kernel_id: string | null;
  notebook: string | null;
}

/** A widget row: the session JSON plus what the view needs to explain it, in the words the notifications and `status` use too (paths relative to the session's folder). Two long texts the view never shows are null in a row: `transcript_path`, and `last_assistant` except when it is the `answer` (P9). */
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
  terminal: TerminalLocation | null;
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
  host: string | null;
  agent: "claude" | "codex";
  permission_mode: string | null;
  background_tasks: BackgroundTask[];
  background: Background | null;
  question: Question | null;
  ended: boolean;
  waiting_for: string | null;
  error_detail: string | null;
  name: string;
  activity: string | null;
  asks: string | null;
  answer: string | null;
  dialog_token: string;
  non_interactive: string | null;
  origin: Origin | null;
  pane_title: string | null;
}

/** A fleet host (DESIGN.md "Fleet"): beating or not, and its last beat (ms epoch, 0: never). `last_seen` is sent when `online` changes, not on every beat: it dates an offline host. */
export interface Host {
  online: boolean;
  last_seen: number;
}

/** The `snapshot` trait: the whole fleet at `seq`; `now` is the kernel's clock (ms). `hosts`: the fleet's hosts by name; empty for a widget over this machine's hub. */
export interface Snapshot {
  seq: number;
  sessions: Record<string, Row>;
  counts: Counts;
  now: number;
  hosts: Record<string, Host>;
}

/** A session entered `state` at `at` (ms epoch) because of `source`. */
export interface TransitionJSON {
  at: number;
  state: State;
  source: string;
}

/** The `history` trait: each session's transitions from `since` (ms epoch; 24 h before the widget was made, the longest range a strip shows) on, oldest first, with the one before `since` that says the state the session was in then. Sent once with the model; after that the browser appends a transition from each patched row whose `state_since` moved, so patches carry no history (P9). */
export interface History {
  since: number;
  sessions: Record<string, TransitionJSON[]>;
}

/** One coalesced change: the touched rows, the removed ids, the new counts; `hosts`: all the fleet's hosts when one went online or offline (or came, or went), else null. */
export interface PatchMessage {
  type: "patch";
  seq: number;
  upsert: Row[];
  remove: string[];
  counts: Counts;
  now: number;
  hosts: Record<string, Host> | null;
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
  history: History;
  env: Env;
  title_prefix: boolean;
  desktop_notifications: boolean;
  sidebar_note: string;
  mode: Mode;
  show_non_interactive: boolean | null;
}

/** The answer to an `action`: delivered (`ok`), or refused with the reason. */
export interface ActionResultMessage {
  type: "action_result";
  session_id: string;
  action: string;
  ok: boolean;
  message: string;
  queued: boolean;
}

/** The answer to a `peek`: the pane's last lines (read-only), or why they cannot be read. */
export interface PeekResultMessage {
  type: "peek_result";
  session_id: string;
  ok: boolean;
  lines: string[];
  dialog: string | null;
  message: string;
}

/** The answer to an `attach`: the tmux window running `claude attach <job>` (`target` is `session:window`, `command` what shows it: `tmux attach -t …`; `opened` false when it was open already), or why not (`ok` false, `message`). */
export interface AttachResultMessage {
  type: "attach_result";
  session_id: string;
  ok: boolean;
  target: string | null;
  command: string | null;
  opened: boolean;
  message: string;
}

export interface DismissMessage {
  type: "dismiss";
  session_id: string;
}

export interface InstallHooksMessage {
  type: "install_hooks";
}

/** Approve, deny, interrupt, send (`text`) or answer (`options`: labels; `text`: the free-text "Other") to a session; a plan's approve may name `mode`, its deny gives `text` as feedback. `token` is the row's `dialog_token` as shown when clicked (a changed state refuses the action). */
export interface ActionMessage {
  options?: string[];
  mode?: string;
  type: "action";
  session_id: string;
  action: ActionName;
  text: string | null;
  token: string | null;
}

export interface PeekMessage {
  type: "peek";
  session_id: string;
}

/** "Attach in a terminal" where the page has no JupyterLab terminal to open: the kernel opens a tmux window running `claude attach <job>` (a background session only). */
export interface AttachMessage {
  type: "attach";
  session_id: string;
}

/** The user looks at a session (its JupyterLab terminal tab is focused in a visible page, its row's peek or attach was opened): a review ends, silently (`user:seen`). */
export interface SeenMessage {
  type: "seen";
  session_id: string;
}

export type KernelMessage = PatchMessage | NotifyMessage | InstallResultMessage | ActionResultMessage | PeekResultMessage | AttachResultMessage;

export type FrontendMessage = DismissMessage | InstallHooksMessage | ActionMessage | PeekMessage | AttachMessage | SeenMessage;

/** The plain-language why of a state, per exact `source`. */
export const SOURCE_LABELS: Readonly<Record<string, string>> = {
  "hook:SessionStart": "started",
  "hook:UserPromptSubmit": "got a prompt",
  "hook:PreToolUse": "working",
  "hook:PermissionRequest": "asked for permission",
  "hook:Notification": "asked for your input",
  "hook:PostToolUse": "permission answered",
  "hook:PostToolUseFailure": "a tool failed",
  "hook:Stop": "finished its turn",
  "hook:StopFailure": "stopped on an error",
  "hook:SessionEnd": "ended",
  "transcript:interrupt": "interrupted",
  "transcript:answer": "finished its turn",
  "transcript:tool-result": "its tool was refused or ran: nothing waits",
  "sdk:waiting": "waits for your answer (its program asks pmux-widget)",
  "pid:busy": "working",
  "pid:waiting": "waiting for you",
  "pid:idle": "at its prompt",
  "pid:shell": "running a shell command",
  "pid:found": "found running",
  "process:gone": "its process exited",
  "poll:stale-busy": "no sign of work for 10 min",
  "poll:unknown-timeout": "state unknown for 10 min",
  "user:dismiss": "marked as seen",
  "user:seen": "seen",
  "action:approve": "approved",
  "action:deny": "denied",
  "action:interrupt": "interrupted (Esc)",
  "action:send": "got a prompt typed in",
  "action:stop": "stopped (claude stop)",
  "action:remove": "removed (claude rm)",
  "restart": "re-checking after a restart",
  "retired": "replaced (/clear, /new or resume)",
  "recovery:process-gone": "exited while the hub was down",
  "recovery:transcript": "finished while the hub was down",
  "recovery:interrupt": "interrupted while the hub was down",
  "background:stopped": "stopped",
  "background:removed": "removed (claude rm)",
  "pid:spare": "a spare worker, not a session",
  "rollout:running": "working",
  "rollout:waiting": "waiting for you",
  "rollout:complete": "finished its turn",
  "rollout:aborted": "interrupted",
  "wait:background-agent": "waiting for a background agent"
};

/** Sources not listed above, by prefix: `{}` is the rest; recovery: wraps a label. */
export const SOURCE_PREFIXES: Readonly<Record<string, string>> = {
  "hook:": "signal: {}",
  "recovery:": "{} (at restart)",
  "action:": "{} from {}"
};

/** The context window by model id: [marker, tokens], first match wins. */
export const CONTEXT_WINDOWS: readonly (readonly [string, number])[] = [["[1m]", 1000000], ["1m context", 1000000], ["-1m", 1000000]];
export const DEFAULT_CONTEXT_WINDOW = 200000;

/** Claude Code compacts on its own near this share of the context window. */
export const AUTO_COMPACT_AT = 0.92;
/** From this share of the window on, a row warns that compaction is near. */
export const CONTEXT_WARN_AT = 0.8;
