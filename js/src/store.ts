// The fleet as the front-end knows it: one store per model, shared by all views of that model.
// Filled from the `snapshot` trait, advanced by `patch` messages; both carry a `seq`, and
// anything not newer than what the store holds is ignored (a snapshot read late may already
// contain a patch, and a patch may arrive after the snapshot that includes it).
import { toolText } from "./format";
import { emptyCounts, isState } from "./states";
import { appendTransition, type Transition } from "./timeline";
import type {
  Ask,
  Background,
  BackgroundTask,
  Counts,
  Host,
  Origin,
  PatchInput,
  Question,
  QuestionOption,
  Row,
  SnapshotInput,
  Tokens,
  TerminalLocation,
  TmuxLocation,
} from "./types";

export type StoreEvent =
  /** the whole fleet was replaced (a newer snapshot): views reconcile every row */
  | { kind: "reset" }
  /** these rows were inserted or replaced, these ids removed */
  | { kind: "patch"; upserted: readonly Row[]; removed: readonly string[] };

export type StoreListener = (event: StoreEvent, store: SessionStore) => void;

export class SessionStore {
  /** -Infinity until the first snapshot, so that any snapshot (even seq 0) is taken. */
  seq = Number.NEGATIVE_INFINITY;
  readonly rows = new Map<string, Row>();
  counts: Counts = emptyCounts();
  /** A fleet's hosts by name (online or not, last beat); empty over this machine's hub. */
  hosts: Record<string, Host> = {};
  /** browser clock minus kernel clock (ms), from the `now` the kernel stamps on its messages:
   * ages stay right when the kernel runs on another machine (JupyterHub). */
  clockOffset = 0;
  /** Each session's transitions, oldest first (the timeline strips and the header's insight):
   * the `history` trait read once, then one appended per row whose `state_since` moved. */
  readonly history = new Map<string, Transition[]>();
  private readonly listeners = new Set<StoreListener>();

  /** The kernel's current time, in its own clock (ms epoch). */
  kernelNow(browserNow: number = Date.now()): number {
    return browserNow - this.clockOffset;
  }

  private syncClock(kernelNow: unknown): void {
    if (typeof kernelNow === "number" && Number.isFinite(kernelNow) && kernelNow > 0) {
      this.clockOffset = Date.now() - kernelNow;
    }
  }

  /** Replace the fleet when `snapshot` is newer than the store. Returns whether it applied. */
  applySnapshot(snapshot: SnapshotInput | null | undefined): boolean {
    // No seq: not a snapshot yet (ipywidgets' empty default `{}`, before the kernel set the
    // trait). Taking it as seq 0 would make the kernel's real seq-0 snapshot "not newer".
    if (!snapshot || typeof snapshot !== "object" || typeof snapshot.seq !== "number") return false;
    const seq = snapshot.seq;
    if (seq <= this.seq) return false;
    this.seq = seq;
    this.syncClock(snapshot.now);
    this.rows.clear();
    for (const [id, raw] of Object.entries(snapshot.sessions ?? {})) {
      const row = normalizeRow(raw, id);
      this.rows.set(row.session_id, row);
    }
    for (const row of this.rows.values()) this.noteTransition(row);
    this.counts = normalizeCounts(snapshot.counts) ?? countRows(this.rows.values());
    this.hosts = normalizeHosts(snapshot.hosts) ?? {};
    this.emit({ kind: "reset" });
    return true;
  }

  /** Apply a patch newer than the store. Returns whether it applied. */
  applyPatch(patch: PatchInput): boolean {
    if (typeof patch.seq !== "number" || patch.seq <= this.seq) return false;
    this.seq = patch.seq;
    this.syncClock(patch.now);
    const upserted: Row[] = [];
    for (const raw of patch.upsert ?? []) {
      const row = normalizeRow(raw);
      if (!row.session_id) continue;
      this.rows.set(row.session_id, row);
      this.noteTransition(row);
      upserted.push(row);
    }
    const removed: string[] = [];
    for (const id of patch.remove ?? []) if (this.rows.delete(id)) removed.push(id);
    this.counts = normalizeCounts(patch.counts) ?? countRows(this.rows.values());
    // Hosts come only when one went online or offline (or came, or went): null keeps them.
    this.hosts = normalizeHosts(patch.hosts) ?? this.hosts;
    this.emit({ kind: "patch", upserted, removed });
    return true;
  }

  /** Take the `history` trait (read once, when the model is created): it replaces what the
   * store holds, then the rows' own transitions are added (the snapshot may be newer). */
  applyHistory(raw: unknown): void {
    if (!raw || typeof raw !== "object") return;
    const sessions = (raw as { sessions?: unknown }).sessions;
    if (!sessions || typeof sessions !== "object") return;
    this.history.clear();
    for (const [id, list] of Object.entries(sessions as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      const entries: Transition[] = [];
      for (const t of list) {
        if (!t || typeof t !== "object") continue;
        const { at, state, source } = t as Record<string, unknown>;
        if (typeof at !== "number" || !isState(state)) continue;
        appendTransition(entries, { at, state, source: typeof source === "string" ? source : "" });
      }
      this.history.set(id, entries);
    }
    for (const row of this.rows.values()) this.noteTransition(row);
    this.emit({ kind: "reset" });
  }

  /** A row whose state_since is newer than its session's last transition brings one: patches
   * need no history of their own (P9). Bursts the kernel coalesced into one patch show as their
   * last transition only; a reload reads the whole history again. */
  private noteTransition(row: Row): void {
    if (!row.state_since) return;
    let entries = this.history.get(row.session_id);
    if (!entries) this.history.set(row.session_id, (entries = []));
    appendTransition(entries, { at: row.state_since, state: row.state, source: row.source });
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: StoreEvent): void {
    // A throwing view must not keep the other views (or the notifier) from updating.
    for (const listener of [...this.listeners]) {
      try {
        listener(event, this);
      } catch (error) {
        console.error("[pmux-widget] view update failed", error);
      }
    }
  }
}

/** Counts over the rows that are not ended (the protocol's definition), for a kernel that sent
 * none. The kernel's own come from core.model.count_states; a vitest over the contract's sample
 * (contract-sample.gen.ts) pins the two to the same numbers. */
export function countRows(rows: Iterable<Row>): Counts {
  const counts = emptyCounts();
  for (const row of rows) if (!row.ended) counts[row.state] += 1;
  counts.attention = counts["needs-input"] + counts.review;
  return counts;
}

function normalizeCounts(raw: unknown): Counts | null {
  if (!raw || typeof raw !== "object") return null;
  const source = raw as Record<string, unknown>;
  const counts = emptyCounts();
  for (const key of Object.keys(counts) as (keyof Counts)[]) counts[key] = num(source[key]);
  if (source.attention === undefined) counts.attention = counts["needs-input"] + counts.review;
  return counts;
}

function normalizeHosts(raw: unknown): Record<string, Host> | null {
  if (!raw || typeof raw !== "object") return null;
  const hosts: Record<string, Host> = {};
  for (const [name, h] of Object.entries(raw as Record<string, unknown>)) {
    const info = (h && typeof h === "object" ? h : {}) as Record<string, unknown>;
    hosts[name] = { online: info.online !== false, last_seen: num(info.last_seen) };
  }
  return hosts;
}

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** A row as the renderers expect it, whatever an older or newer kernel left out: rendering
 * must never throw on a missing field. */
export function normalizeRow(raw: unknown, fallbackId = ""): Row {
  const r = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
  const id = str(r.session_id) ?? fallbackId;
  const t = (r.tokens && typeof r.tokens === "object" ? r.tokens : {}) as Record<string, unknown>;
  const tokens: Tokens = {
    input: num(t.input),
    output: num(t.output),
    cache_read: num(t.cache_read),
    cache_creation: num(t.cache_creation),
  };
  const project = str(r.project);
  const state = isState(r.state) ? r.state : "unknown";
  const currentTool = str(r.current_tool);
  const toolSummary = str(r.tool_summary);
  const lastAssistant = str(r.last_assistant);
  const source = str(r.source) ?? "";
  const waitingFor = str(r.waiting_for);
  // The kernel words what a row does (contract.row); a kernel too old to send it gets the
  // nearest the raw fields say.
  const has = (key: string) => Object.prototype.hasOwnProperty.call(r, key);
  const activity = has("activity") ? str(r.activity) : toolText(currentTool, toolSummary);
  const asks = has("asks")
    ? str(r.asks)
    : state === "needs-input"
      ? (waitingFor ?? toolText(currentTool, toolSummary) ?? "waits for your answer")
      : null;
  const answer = has("answer")
    ? str(r.answer)
    : state === "busy" || state === "needs-input"
      ? null
      : lastAssistant;
  return {
    session_id: id,
    state,
    running: r.running === true,
    state_since: num(r.state_since),
    cwd: str(r.cwd),
    project,
    workspace: str(r.workspace),
    pid: typeof r.pid === "number" ? r.pid : null,
    tmux: r.tmux && typeof r.tmux === "object" ? (r.tmux as TmuxLocation) : null,
    terminal:
      r.terminal && typeof r.terminal === "object" && typeof (r.terminal as TerminalLocation).name === "string"
        ? { name: (r.terminal as TerminalLocation).name }
        : null,
    transcript_path: str(r.transcript_path),
    model: str(r.model),
    current_tool: currentTool,
    tool_summary: toolSummary,
    last_assistant: lastAssistant,
    last_prompt: str(r.last_prompt),
    tokens,
    context_tokens: num(r.context_tokens),
    compacting: r.compacting === true,
    subagents: Math.max(0, num(r.subagents)),
    error: str(r.error),
    ports: Array.isArray(r.ports) ? r.ports.filter((p): p is number => typeof p === "number") : [],
    source,
    host: str(r.host),
    // a kernel from before Codex (issue 36) sends no agent: its rows were Claude's
    agent: r.agent === "codex" ? "codex" : "claude",
    permission_mode: str(r.permission_mode),
    background_tasks: Array.isArray(r.background_tasks)
      ? r.background_tasks.filter(
          (b): b is BackgroundTask =>
            !!b && typeof b === "object" && typeof (b as BackgroundTask).type === "string",
        )
      : [],
    background:
      r.background && typeof r.background === "object" && typeof (r.background as Background).job === "string"
        ? { job: (r.background as Background).job, name: str((r.background as Background).name) ?? "" }
        : null,
    ended: r.ended === true,
    waiting_for: waitingFor,
    error_detail: str(r.error_detail),
    name: str(r.name) ?? project ?? (id ? id.slice(0, 8) : "session"),
    activity,
    asks,
    answer,
    dialog_token: typeof r.dialog_token === "string" ? r.dialog_token : "",
    non_interactive: str(r.non_interactive),
    pane_title: str(r.pane_title),
    question: normalizeQuestion(r.question),
    origin: normalizeOrigin(r.origin),
  };
}

/** An SDK run's ``origin`` (its program; a notebook's kernel's notebook), when well formed. */
function normalizeOrigin(raw: unknown): Origin | null {
  if (!raw || typeof raw !== "object") return null;
  const o = raw as Record<string, unknown>;
  const program = str(o.program);
  return program === null ? null : { program, kernel_id: str(o.kernel_id), notebook: str(o.notebook) };
}

/** The contract's ``question``, kept only when well formed (a kernel too old sends none). */
function normalizeQuestion(raw: unknown): Question | null {
  if (!raw || typeof raw !== "object") return null;
  const q = raw as Record<string, unknown>;
  if (q.kind !== "permission" && q.kind !== "question" && q.kind !== "plan") return null;
  const questions: Ask[] = [];
  for (const item of Array.isArray(q.questions) ? q.questions : []) {
    if (!item || typeof item !== "object") continue;
    const a = item as Record<string, unknown>;
    if (typeof a.question !== "string") continue;
    const options: QuestionOption[] = [];
    for (const o of Array.isArray(a.options) ? a.options : []) {
      const opt = o as Record<string, unknown> | null;
      if (opt && typeof opt.label === "string") {
        options.push({ label: opt.label, description: typeof opt.description === "string" ? opt.description : "" });
      }
    }
    questions.push({
      question: a.question,
      header: typeof a.header === "string" ? a.header : "",
      multi_select: a.multi_select === true,
      options,
    });
  }
  return { kind: q.kind, questions, plan: typeof q.plan === "string" ? q.plan : null };
}
