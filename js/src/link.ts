// One Link per widget model: its store, its kernel messages, and the model-wide side effects
// (desktop notifications). initialize() creates it, in the per-model closure of widget.ts's
// factory; views only subscribe to it. Its listeners are registered on initialize()'s model
// proxy, so anywidget drops them with that proxy when the model goes or its ESM is reloaded.
import type { AnyModel } from "@anywidget/types";
import { terminalOpener } from "./lab-panel";
import { notifier } from "./notify";
import { isAttention } from "./states";
import { SessionStore } from "./store";
import type {
  ActionResultMessage,
  AttachResultMessage,
  InstallResult,
  KernelMessage,
  PeekResultMessage,
  WidgetTraits,
} from "./types";

export type Answer = ActionResultMessage | PeekResultMessage | AttachResultMessage;

export type Model = AnyModel<WidgetTraits>;

export class Link {
  readonly store = new SessionStore();
  /** The latest `install_result` message (the env trait mirrors it, possibly later). */
  installResult: InstallResult | null = null;
  private readonly installListeners = new Set<(result: InstallResult) => void>();
  private readonly answerListeners = new Set<(answer: Answer) => void>();
  private readonly cleanups: (() => void)[] = [];

  constructor(readonly model: Model) {
    this.store.applySnapshot(model.get("snapshot"));
    this.store.applyHistory(model.get("history"));

    const onMessage = (msg: unknown) => this.handle(msg as KernelMessage);
    model.on("msg:custom", onMessage);
    this.cleanups.push(() => model.off("msg:custom", onMessage));

    const onHistory = () => this.store.applyHistory(model.get("history"));
    model.on("change:history", onHistory);
    this.cleanups.push(() => model.off("change:history", onHistory));

    const onSnapshot = () => this.store.applySnapshot(model.get("snapshot"));
    model.on("change:snapshot", onSnapshot);
    this.cleanups.push(() => model.off("change:snapshot", onSnapshot));

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

  /** The kernel's answers to actions and peeks (every view hears every answer). */
  onAnswer(listener: (answer: Answer) => void): () => void {
    this.answerListeners.add(listener);
    return () => this.answerListeners.delete(listener);
  }

  private handle(msg: KernelMessage): void {
    if (!msg || typeof msg !== "object") return;
    switch (msg.type) {
      case "patch":
        this.store.applyPatch(msg);
        break;
      case "notify":
        if (msg.notification) {
          const sid = msg.notification.session_id;
          notifier.show(msg.notification, this.model.get("desktop_notifications") === true, this.model, () => {
            const name = this.store.rows.get(sid)?.terminal?.name;
            if (name) terminalOpener()?.(name);
          });
        }
        break;
      case "install_result":
        this.installResult = { ok: msg.ok === true, message: String(msg.message ?? "") };
        for (const listener of [...this.installListeners]) listener(this.installResult);
        break;
      case "action_result":
      case "peek_result":
      case "attach_result":
        if (typeof msg.session_id !== "string") break;
        for (const listener of [...this.answerListeners]) listener(msg);
        break;
    }
  }

  dispose(): void {
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.installListeners.clear();
    this.answerListeners.clear();
  }
}
