// The widget's model, fed by the Jupyter server extension's websocket instead of a kernel comm
// (docs/widget-protocol.md's traits and messages, framed as in the JupyterLab extension's
// transport: {"type": "traits" | "msg", ...}). It implements anywidget's AnyModel, so the
// labextension's panel runs the very Link and WidgetView the anywidget runs: one front-end,
// two transports. Nothing here knows JupyterLab: the socket comes from a factory (the
// labextension's opens an authenticated websocket; tests pass a fake).
//
// A closed socket is reopened with backoff (a server restart, a laptop waking up). Every
// connection starts with a full traits frame; `connection` listeners hear it, so the owner
// can start a fresh Link (a new server counts its seq from zero: an old store would ignore it).
import type { AnyModel } from "@anywidget/types";
import type { WidgetTraits } from "./types";

/** What the model needs of a WebSocket (the browser's satisfies it). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

export type Status = "connecting" | "open" | "offline";

export interface StreamOptions {
  /** first retry delay (ms), doubled per failed attempt up to maxDelayMs */
  initialDelayMs?: number;
  maxDelayMs?: number;
  setTimer?: (callback: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

const OPEN = 1;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- anywidget's own handler type
type Handler = (...args: any[]) => void;

export class StreamModel implements AnyModel<WidgetTraits> {
  readonly widget_manager = {
    get_model(): Promise<never> {
      return Promise.reject(new Error("[pmux-widget] the panel's model has no widget manager"));
    },
  };
  /** connections that delivered their first frame (1 after the first, 2 after a reconnect) */
  connections = 0;
  private traits: Partial<WidgetTraits> = {};
  private readonly dirty = new Set<keyof WidgetTraits>();
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly statusListeners = new Set<(status: Status) => void>();
  private readonly connectionListeners = new Set<() => void>();
  private socket: SocketLike | null = null;
  private timer: unknown = null;
  private attempt = 0;
  private fresh = false;
  private disposed = false;
  status: Status = "connecting";
  private readonly initialDelay: number;
  private readonly maxDelay: number;
  private readonly setTimer: (callback: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(
    private readonly connect: () => SocketLike,
    options: StreamOptions = {},
  ) {
    this.initialDelay = options.initialDelayMs ?? 500;
    this.maxDelay = options.maxDelayMs ?? 10_000;
    this.setTimer = options.setTimer ?? ((callback, ms) => setTimeout(callback, ms));
    this.clearTimer = options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
    this.open();
  }

  // ------------------------------------------------------------------ AnyModel

  get<K extends keyof WidgetTraits>(key: K): WidgetTraits[K] {
    return this.traits[key] as WidgetTraits[K];
  }

  set<K extends keyof WidgetTraits>(key: K, value: WidgetTraits[K]): void {
    if (this.traits[key] === value) return;
    this.traits[key] = value;
    this.dirty.add(key);
    this.emit(`change:${String(key)}`);
  }

  save_changes(): void {
    if (this.dirty.size === 0) return;
    const traits: Record<string, unknown> = {};
    for (const key of this.dirty) traits[key] = this.traits[key];
    // Kept dirty while offline: the next connection's first frame is the server's truth, and
    // the user's change is sent after it.
    if (this.write({ type: "traits", traits })) this.dirty.clear();
  }

  send(content: unknown): void {
    // An action clicked while offline is dropped, not queued: acting minutes later on a dialog
    // the user saw before the outage would be wrong. The fresh view after reconnecting shows
    // the current state.
    this.write({ type: "msg", content });
  }

  on(eventName: string, callback: Handler): void {
    let set = this.handlers.get(eventName);
    if (!set) this.handlers.set(eventName, (set = new Set()));
    set.add(callback);
  }

  off(eventName?: string | null, callback?: Handler | null): void {
    if (!eventName) {
      if (!callback) this.handlers.clear();
      else for (const set of this.handlers.values()) set.delete(callback);
      return;
    }
    if (!callback) this.handlers.delete(eventName);
    else this.handlers.get(eventName)?.delete(callback);
  }

  // ------------------------------------------------------------------ connection

  onStatus(listener: (status: Status) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Called after each connection's first traits frame (the model then holds all traits). */
  onConnection(listener: () => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  /** Reconnect now (a user's "retry"; also after the page comes back online). */
  retry(): void {
    if (this.disposed || this.socket) return;
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    this.open();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = socket.onmessage = socket.onerror = socket.onopen = null;
      socket.close();
    }
    this.handlers.clear();
    this.statusListeners.clear();
    this.connectionListeners.clear();
  }

  private open(): void {
    this.setStatus(this.connections === 0 ? "connecting" : "offline");
    let socket: SocketLike;
    try {
      socket = this.connect();
    } catch {
      this.schedule();
      return;
    }
    this.socket = socket;
    this.fresh = true;
    socket.onmessage = (event) => {
      if (this.socket === socket) this.receive(event.data);
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.schedule();
    };
    // An error is followed by close; close alone decides.
    socket.onerror = () => undefined;
  }

  private schedule(): void {
    if (this.disposed) return;
    this.setStatus(this.connections === 0 && this.attempt === 0 ? "connecting" : "offline");
    const delay = Math.min(this.maxDelay, this.initialDelay * 2 ** this.attempt);
    this.attempt += 1;
    this.timer = this.setTimer(() => {
      this.timer = null;
      this.open();
    }, delay);
  }

  private receive(data: unknown): void {
    let frame: unknown;
    try {
      frame = JSON.parse(String(data));
    } catch {
      return; // not ours: ignored, as the comm ignores what it cannot read
    }
    if (!frame || typeof frame !== "object") return;
    const { type } = frame as { type?: unknown };
    if (type === "traits") {
      const traits = (frame as { traits?: unknown }).traits;
      if (!traits || typeof traits !== "object") return;
      const changed: string[] = [];
      for (const [key, value] of Object.entries(traits)) {
        const name = key as keyof WidgetTraits;
        // A value the user set while offline and not yet sent stays: it is sent below.
        if (this.dirty.has(name)) continue;
        if ((this.traits as Record<string, unknown>)[key] === value) continue;
        (this.traits as Record<string, unknown>)[key] = value;
        changed.push(key);
      }
      if (this.fresh) {
        this.fresh = false;
        this.attempt = 0;
        this.connections += 1;
        this.setStatus("open");
        this.save_changes();
        for (const listener of [...this.connectionListeners]) listener();
      }
      for (const key of changed) this.emit(`change:${key}`);
    } else if (type === "msg") {
      if (this.fresh) return; // a message before the snapshot has nothing to apply to
      const content = (frame as { content?: unknown }).content;
      for (const handler of [...(this.handlers.get("msg:custom") ?? [])]) handler(content, []);
    }
  }

  private write(frame: unknown): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== OPEN || this.fresh) return false;
    try {
      socket.send(JSON.stringify(frame));
      return true;
    } catch {
      return false;
    }
  }

  private emit(eventName: string): void {
    for (const handler of [...(this.handlers.get(eventName) ?? [])]) handler();
  }

  private setStatus(status: Status): void {
    if (status === this.status) return;
    this.status = status;
    for (const listener of [...this.statusListeners]) listener(status);
  }
}
