// Desktop notifications through the browser's Notification API. One notifier per page (not per
// widget): two widgets over the same fleet receive the same `notify` message, and the user must
// see it once. The API is read from `globalThis` at each call so that it can be absent
// (insecure origins, some embedded browsers) or replaced in tests.
import type { NotificationPayload } from "./types";

export type Permission = NotificationPermission | "unsupported";

type NotificationApi = typeof Notification;

function api(): NotificationApi | undefined {
  const candidate = (globalThis as { Notification?: NotificationApi }).Notification;
  return typeof candidate === "function" ? candidate : undefined;
}

export function permission(): Permission {
  return api()?.permission ?? "unsupported";
}

/** Ask the browser; must run inside the user's click handler (browsers ignore it otherwise). */
export async function requestPermission(): Promise<Permission> {
  const N = api();
  if (!N) return "unsupported";
  if (N.permission !== "default") return N.permission;
  try {
    return await N.requestPermission();
  } catch {
    return N.permission;
  }
}

/** The user is looking at this page: a desktop notification would only duplicate the widget. */
export function pageIsWatched(): boolean {
  return document.visibilityState === "visible" && document.hasFocus();
}

export class Notifier {
  /** The notification on screen for each session: a newer one replaces it. */
  private readonly open = new Map<string, Notification>();
  /** `state:at` of the last one shown per session, so a second widget's copy is not re-shown. */
  private readonly lastShown = new Map<string, string>();

  /** The page's owner of notifications (the JupyterLab panel, when its extension is loaded):
   * while one is set, only what its own model hears is shown, and only if it allows. The
   * cells' widgets over a kernel's hub then stay quiet: their hub stamps the same transition
   * on its own clock, so de-duplication by `state:at` alone would show it twice. */
  private owner: object | null = null;
  private ownerAllows = true;

  claim(owner: object, allows: boolean): void {
    this.owner = owner;
    this.ownerAllows = allows;
  }

  release(owner: object): void {
    if (this.owner === owner) this.owner = null;
  }

  /** Show `n` if the user opted in (`enabled`), granted permission, and is not watching.
   * `source` is the model that heard it (see claim). */
  show(n: NotificationPayload, enabled: boolean, source?: object, onClick?: () => void): Notification | null {
    if (!enabled) return null;
    if (this.owner && (source !== this.owner || !this.ownerAllows)) return null;
    const N = api();
    if (!N || N.permission !== "granted" || pageIsWatched()) return null;
    const sid = n.session_id;
    const key = `${n.state}:${n.at}`;
    if (this.lastShown.get(sid) === key) return null;
    this.close(sid);
    let note: Notification;
    try {
      note = new N(n.title, { body: n.body, tag: sid });
    } catch {
      return null; // e.g. Chrome on Android only allows notifications from a service worker
    }
    this.lastShown.set(sid, key);
    this.open.set(sid, note);
    note.onclick = () => {
      window.focus();
      note.close();
      // a session in a JupyterLab terminal: its tab comes forward (the page's hook, if any)
      onClick?.();
    };
    note.onclose = () => {
      if (this.open.get(sid) === note) this.open.delete(sid);
    };
    return note;
  }

  /** Close the session's notification: it was replaced, answered, or dismissed. */
  close(sid: string): void {
    const note = this.open.get(sid);
    if (!note) return;
    this.open.delete(sid);
    note.close();
  }

  closeAll(): void {
    for (const sid of [...this.open.keys()]) this.close(sid);
  }

  isOpen(sid: string): boolean {
    return this.open.has(sid);
  }
}

// One per page, shared by the copies of this module that anywidget loads for each widget model
// (each model imports its ESM from its own blob: URL; see title.ts).
const KEY = Symbol.for("pmux-widget/notifier@1");
const registry = globalThis as unknown as Record<symbol, Notifier | undefined>;
export const notifier: Notifier = registry[KEY] ?? (registry[KEY] = new Notifier());
