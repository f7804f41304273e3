// One Link per widget model: its store, its kernel messages, and the model-wide side effects
// (desktop notifications). Views find the Link of their model and only subscribe.
//
// Finding "the same model" is the subtle part: anywidget hands initialize() and every render()
// a DIFFERENT proxy object for one Backbone model, so a WeakMap keyed by the proxy alone cannot
// share anything between views. Proxies do return the model's attribute objects by reference,
// so the Link is also registered under objects that belong to exactly one model: the ipywidgets
// `layout` model (set once when the widget is created) and every `snapshot` object this model
// has held. A view looks those up before creating a Link of its own.
import type { AnyModel } from "@anywidget/types";
import { notifier } from "./notify";
import { isAttention } from "./states";
import { SessionStore } from "./store";
import type { InstallResult, KernelMessage, WidgetTraits } from "./types";

export type Model = AnyModel<WidgetTraits>;

export class Link {
  readonly store = new SessionStore();
  /** The latest `install_result` message (the env trait mirrors it, possibly later). */
  installResult: InstallResult | null = null;
  private readonly installListeners = new Set<(result: InstallResult) => void>();
  private readonly cleanups: (() => void)[] = [];

  constructor(readonly model: Model) {
    this.store.applySnapshot(model.get("snapshot"));

    const onMessage = (msg: unknown) => this.handle(msg as KernelMessage);
    model.on("msg:custom", onMessage);
    this.cleanups.push(() => model.off("msg:custom", onMessage));

    const onSnapshot = () => {
      const snapshot = model.get("snapshot");
      register(snapshot, this);
      this.store.applySnapshot(snapshot);
    };
    model.on("change:snapshot", onSnapshot);
    this.cleanups.push(() => model.off("change:snapshot", onSnapshot));
    // A new layout object (set from Python) must still lead later views here.
    const onLayout = () => register(model.get("layout"), this);
    model.on("change:layout", onLayout);
    this.cleanups.push(() => model.off("change:layout", onLayout));

    // A notification stays on screen only while its session still waits for the user.
    this.cleanups.push(
      this.store.subscribe((event) => {
        if (event.kind !== "patch") return;
        for (const row of event.upserted) {
          if (row.ended || !isAttention(row.state)) notifier.close(row.session_id);
        }
        for (const id of event.removed) notifier.close(id);
      }),
    );
  }

  onInstallResult(listener: (result: InstallResult) => void): () => void {
    this.installListeners.add(listener);
    return () => this.installListeners.delete(listener);
  }

  private handle(msg: KernelMessage): void {
    if (!msg || typeof msg !== "object") return;
    switch (msg.type) {
      case "patch":
        this.store.applyPatch(msg);
        break;
      case "notify":
        if (msg.notification) {
          notifier.show(msg.notification, this.model.get("desktop_notifications") === true);
        }
        break;
      case "install_result":
        this.installResult = { ok: msg.ok === true, message: String(msg.message ?? "") };
        for (const listener of [...this.installListeners]) listener(this.installResult);
        break;
    }
  }

  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.installListeners.clear();
  }
}

const links = new WeakMap<object, Link>();

function register(key: unknown, link: Link): void {
  if (key && typeof key === "object") links.set(key, link);
}

function identities(model: Model): unknown[] {
  return [model, model.get("layout"), model.get("snapshot")];
}

/** The Link of this model, if initialize() (or an earlier view) created one. */
export function findLink(model: Model): Link | undefined {
  for (const key of identities(model)) {
    if (key && typeof key === "object") {
      const link = links.get(key);
      if (link) return link;
    }
  }
  return undefined;
}

/** A new Link for this model (initialize): anywidget removed the listeners of any earlier one
 * for this model before calling initialize again, so an earlier Link is never reused here. */
export function createLink(model: Model): Link {
  const link = new Link(model);
  for (const key of identities(model)) register(key, link);
  return link;
}

/** The Link of this model, created when missing (anywidget < 0.9 never calls initialize). */
export function linkModel(model: Model): Link {
  const link = findLink(model);
  if (!link) return createLink(model);
  register(model, link);
  return link;
}

/** Forget a model's Link (initialize's cleanup: the model is being destroyed). */
export function unlinkModel(model: Model, link: Link): void {
  link.dispose();
  for (const key of identities(model)) if (key && typeof key === "object") links.delete(key);
}
