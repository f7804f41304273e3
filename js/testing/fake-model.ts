// A stand-in for an anywidget model, faithful where it matters to the widget:
//  - like Backbone, `set` fires `change:<key>` only when the value changed;
//  - like anywidget, initialize() and each render() get a DIFFERENT proxy object over one
//    backing model, with listeners tagged by that proxy's context;
//  - kernel side: `kernelSet` (a trait synced from Python) and `emitCustom` (msg:custom).
import type { AnyModel } from "@anywidget/types";
import type {
  ActionResultMessage,
  AttachResultMessage,
  Env,
  InstallResultMessage,
  NotifyMessage,
  PatchInput,
  PeekResultMessage,
  Row,
  SnapshotInput,
  WidgetTraits,
} from "../src/types";

/** The traits as tests set them: a snapshot may leave out counts and now, env may be missing
 * (the store and the views cope with both). */
export type FakeTraits = Omit<WidgetTraits, "snapshot" | "env"> & {
  snapshot: SnapshotInput;
  env: Env | null;
};

/** A kernel message as tests send it: a patch may leave out what the store defaults. */
export type FakeMessage =
  | PatchInput
  | NotifyMessage
  | InstallResultMessage
  | ActionResultMessage
  | PeekResultMessage
  | AttachResultMessage;

type Callback = (...args: any[]) => void;

interface Listener {
  name: string;
  callback: Callback;
  context: unknown;
}

export class FakeModel {
  readonly attrs: FakeTraits;
  readonly sent: unknown[] = [];
  saves = 0;
  private listeners: Listener[] = [];

  constructor(traits: Partial<FakeTraits> = {}) {
    this.attrs = {
      snapshot: { seq: 0, sessions: {} },
      history: { since: 0, sessions: {} },
      env: defaultEnv(),
      title_prefix: true,
      desktop_notifications: false,
      sidebar_note: "",
      mode: "full",
      show_non_interactive: null,
      ...traits,
    };
  }

  /** A new proxy, as anywidget makes for initialize() and for every view. */
  proxy(context: unknown = Symbol("view")): AnyModel<WidgetTraits> {
    const model: AnyModel<FakeTraits> = {
      get: (key) => this.attrs[key],
      set: (key, value) => this.set(key, value),
      save_changes: () => {
        this.saves += 1;
      },
      send: (content: unknown) => {
        this.sent.push(content);
      },
      on: (name: string, callback: Callback) => {
        this.listeners.push({ name, callback, context });
      },
      off: (name?: string | null, callback?: Callback | null) => {
        this.listeners = this.listeners.filter(
          (l) =>
            !(l.context === context && (!name || l.name === name) && (!callback || l.callback === callback)),
        );
      },
      widget_manager: {
        get_model: () => Promise.reject(new Error("not in tests")),
      },
    } as AnyModel<FakeTraits>;
    return model as unknown as AnyModel<WidgetTraits>;
  }

  set<K extends keyof FakeTraits>(key: K, value: FakeTraits[K]): void {
    const before = this.attrs[key];
    this.attrs[key] = value;
    if (JSON.stringify(before) !== JSON.stringify(value)) this.emit(`change:${String(key)}`);
  }

  /** A trait change coming from the kernel. */
  kernelSet<K extends keyof FakeTraits>(key: K, value: FakeTraits[K]): void {
    this.set(key, value);
  }

  /** A custom message from the kernel. */
  emitCustom(message: FakeMessage): void {
    this.emit("msg:custom", message, []);
  }

  /** What anywidget does when a view goes: drop every listener of that context. */
  offContext(context: unknown): void {
    this.listeners = this.listeners.filter((l) => l.context !== context);
  }

  listenerCount(context?: unknown): number {
    return this.listeners.filter((l) => context === undefined || l.context === context).length;
  }

  private emit(name: string, ...args: unknown[]): void {
    for (const l of [...this.listeners]) if (l.name === name) l.callback(...args);
  }
}

export function defaultEnv(overrides: Partial<Env> = {}): Env {
  return {
    claude_installed: true,
    hooks_installed: true,
    hooks_problem: null,
    claude_dir: "/home/u/.claude",
    hub: { port: 4321, pid: 42, hub_id: "42-abcd1234" },
    install_result: null,
    ...overrides,
  };
}

export function snapshotOf(rows: Row[], seq = 1): SnapshotInput {
  const sessions: Record<string, Row> = {};
  for (const row of rows) sessions[row.session_id] = row;
  return { seq, sessions };
}
