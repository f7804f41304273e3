// Web Push in the panel: "Notify this device" (the service worker at {base}pmux/sw.js, a push
// subscription kept by the server extension), the browsers subscribed with Remove, the
// channels and browsers whose last send failed, the page's presence reports (a session that
// the panel, or a notebook's widget on the page, shows to someone at the keyboard is not
// pushed), and the way back from a notification (`?pmux-session=<id>` in the URL, or the
// worker's postMessage when a page is open: the panel opens with that row selected). Routes
// and payload: docs/notifications.md.
import { URLExt } from "@jupyterlab/coreutils";
import { ServerConnection } from "@jupyterlab/services";
import type { SessionsPanel } from "./panel";

const API = "pmux/api/";
/** the id of this browser's subscription (from the server's answer), to mark "this device" */
const MINE = "pmux-widget:push-id";
/** How often the page says it is still there (and a session it shows is being looked at). */
export const PRESENCE_MS = 30_000;

/** Why this page cannot subscribe to Web Push, or "" when it can. */
export function pushUnsupported(w: Window & typeof globalThis = window): string {
  if (!w.isSecureContext) {
    return (
      `Web Push needs a secure page: open JupyterLab over https, or at localhost ` +
      `(this page is ${w.location.protocol}//${w.location.host}).`
    );
  }
  if (!("serviceWorker" in w.navigator) || !("PushManager" in w) || !("Notification" in w)) {
    return "This browser has no Web Push (on iOS: add JupyterLab to the home screen first, Safari 16.4+).";
  }
  if (w.Notification.permission === "denied") {
    return "Notifications are blocked for this site: allow them in the browser's site settings.";
  }
  return "";
}

function b64ToBytes(text: string): Uint8Array<ArrayBuffer> {
  const pad = "=".repeat((4 - (text.length % 4)) % 4);
  const raw = atob((text + pad).replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

interface Listed {
  id: string;
  device: string;
  service: string;
  added_at: number;
  status?: string;
}

interface Overview {
  channels: { n: number; url: string; status: string }[];
  browsers: Listed[];
  answers?: { at: number; action: string; device: string; outcome: string }[];
  error?: string;
}

async function call(
  settings: ServerConnection.ISettings,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  // ServerConnection adds the token or the XSRF header, as for JupyterLab's own requests
  return ServerConnection.makeRequest(URLExt.join(settings.baseUrl, API, path), init, settings);
}

async function json<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => ({}))) as T & { error?: string };
  if (!response.ok) throw new Error(body.error || `${response.status} ${response.statusText}`);
  return body;
}

/** A name for this device in the list ("Chrome on Android"), as the server would make one. */
function deviceName(): string {
  const ua = navigator.userAgent;
  const browser = /Edg\//.test(ua)
    ? "Edge"
    : /Firefox\//.test(ua)
      ? "Firefox"
      : /Chrome\//.test(ua)
        ? "Chrome"
        : /Safari\//.test(ua)
          ? "Safari"
          : "Browser";
  const system = /Android/.test(ua)
    ? "Android"
    : /iPhone|iPad/.test(ua)
      ? "iOS"
      : /Mac OS X/.test(ua)
        ? "macOS"
        : /Windows/.test(ua)
          ? "Windows"
          : /Linux/.test(ua)
            ? "Linux"
            : "";
  return system ? `${browser} on ${system}` : browser;
}

/** The worker's registration, registered if need be, once it is active. Its scope is
 * {base}pmux/ (the page is outside it: `serviceWorker.ready` would never resolve here). */
async function registration(settings: ServerConnection.ISettings): Promise<ServiceWorkerRegistration> {
  const url = URLExt.join(settings.baseUrl, "pmux/sw.js");
  const reg = await navigator.serviceWorker.register(url);
  const worker = reg.installing || reg.waiting || reg.active;
  if (worker && worker.state !== "activated") {
    await new Promise<void>((done) => {
      const check = (): void => {
        if (worker.state === "activated" || worker.state === "redundant") done();
      };
      worker.addEventListener("statechange", check);
      check();
    });
  }
  return reg;
}

/** Subscribe this browser and hand the subscription to the server (201: its listing). */
export async function notifyThisDevice(settings: ServerConnection.ISettings): Promise<Listed> {
  const why = pushUnsupported();
  if (why) throw new Error(why);
  const permission = await Notification.requestPermission();
  if (permission !== "granted") throw new Error("Notifications were not allowed for this site.");
  const { public_key } = await json<{ public_key: string }>(await call(settings, "push/key"));
  const reg = await registration(settings);
  let sub = await reg.pushManager.getSubscription();
  if (sub && sub.options.applicationServerKey) {
    const key = new Uint8Array(sub.options.applicationServerKey);
    const want = b64ToBytes(public_key);
    if (key.length !== want.length || key.some((b, i) => b !== want[i])) {
      await sub.unsubscribe(); // made for another server's key
      sub = null;
    }
  }
  sub ??= await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64ToBytes(public_key) });
  const listed = await json<Listed>(
    await call(settings, "push/subscriptions", {
      method: "POST",
      body: JSON.stringify({ ...sub.toJSON(), device: deviceName() }),
    }),
  );
  localStorage.setItem(MINE, listed.id);
  return listed;
}

/** "Notifications" at the foot of the panel: the button, the devices, what is failing. */
export class PushSection {
  readonly node: HTMLElement;
  private readonly note: HTMLParagraphElement;
  private readonly button: HTMLButtonElement;
  private readonly list: HTMLUListElement;
  private readonly failing: HTMLUListElement;
  private readonly answers: HTMLUListElement;
  private timer = 0;
  private readonly seen: IntersectionObserver;

  constructor(private readonly settings: ServerConnection.ISettings) {
    const node = (this.node = document.createElement("section"));
    node.className = "pmux-lab-push";
    node.setAttribute("aria-label", "Phone and browser notifications");
    node.style.cssText =
      "padding:8px 12px;border-top:var(--jp-border-width,1px) solid var(--jp-border-color2,#ddd);" +
      "font-size:var(--jp-ui-font-size1,13px)";
    const head = document.createElement("h3");
    head.textContent = "Notifications when you are away";
    head.style.cssText = "font-size:inherit;margin:0 0 6px";
    this.button = document.createElement("button");
    this.button.className = "jp-mod-styled jp-mod-accept pmux-lab-push-subscribe";
    this.button.textContent = "Notify this device";
    this.button.addEventListener("click", () => void this.subscribe());
    this.note = document.createElement("p");
    this.note.className = "pmux-lab-push-note";
    this.note.setAttribute("role", "status");
    this.note.style.margin = "6px 0";
    this.list = document.createElement("ul");
    this.list.className = "pmux-lab-push-devices";
    this.failing = document.createElement("ul");
    this.failing.className = "pmux-lab-push-failing";
    this.answers = document.createElement("ul");
    this.answers.className = "pmux-lab-push-answers";
    this.answers.setAttribute("aria-label", "Answers from notifications");
    for (const ul of [this.list, this.failing, this.answers]) ul.style.cssText = "margin:4px 0;padding-left:16px";
    node.append(head, this.button, this.note, this.list, this.failing, this.answers);
    const why = pushUnsupported();
    if (why) {
      this.button.disabled = true;
      this.note.textContent = why;
    }
    void this.refresh();
    this.timer = window.setInterval(() => void this.refresh(), 60_000);
    // and whenever the section comes into view (the panel opened, scrolled to)
    this.seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) void this.refresh();
    });
    this.seen.observe(node);
  }

  async subscribe(): Promise<void> {
    this.button.disabled = true;
    this.note.textContent = "Subscribing…";
    try {
      const listed = await notifyThisDevice(this.settings);
      this.note.textContent = `This device (${listed.device}) is notified.`;
    } catch (err) {
      this.note.textContent = `Not subscribed: ${(err as Error).message || err}`;
    } finally {
      this.button.disabled = pushUnsupported() !== "";
      await this.refresh();
    }
  }

  async remove(id: string): Promise<void> {
    const response = await call(this.settings, "push/subscriptions", {
      method: "DELETE",
      body: JSON.stringify({ id }),
    });
    if (!response.ok && response.status !== 404) {
      this.note.textContent = `Not removed: ${response.status} ${response.statusText}`;
    }
    if (id === localStorage.getItem(MINE)) localStorage.removeItem(MINE);
    await this.refresh();
  }

  async refresh(): Promise<void> {
    let data: Overview;
    try {
      data = await json<Overview>(await call(this.settings, "notify"));
    } catch (err) {
      this.list.replaceChildren();
      this.failing.replaceChildren(item(`Notifications unavailable: ${(err as Error).message}`));
      return;
    }
    const mine = localStorage.getItem(MINE);
    this.list.replaceChildren(
      ...data.browsers.map((b) => {
        const li = item(`${b.device || "a browser"}${b.id === mine ? " (this device)" : ""} · ${b.service}`);
        li.dataset.id = b.id;
        const remove = document.createElement("button");
        remove.className = "jp-mod-styled pmux-lab-push-remove";
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", `Stop notifying ${b.device || b.id}`);
        remove.style.marginLeft = "6px";
        remove.addEventListener("click", () => void this.remove(b.id));
        li.append(remove);
        return li;
      }),
    );
    const bad = [
      ...data.channels.filter((c) => c.status !== "ok").map((c) => `Channel ${c.n} (${c.url}): ${c.status}`),
      ...data.browsers.filter((b) => b.status && b.status !== "ok").map((b) => `${b.device}: ${b.status}`),
      ...(data.error ? [data.error] : []),
    ];
    this.failing.replaceChildren(...bad.map((text) => item(text, "pmux-lab-push-bad")));
    this.failing.style.color = "var(--jp-error-color1, #d32f2f)";
    // every answer given from a notification, with its device (the last five)
    const answered = (data.answers ?? []).slice(-5).reverse();
    this.answers.replaceChildren(
      ...answered.map((a) =>
        item(
          `${a.action === "approve" ? "Allow once" : "Deny"} from ${a.device || "a browser"} at ` +
            `${new Date(a.at).toLocaleTimeString()}: ${a.outcome.replace(/^\d+ /, "")}`,
          "pmux-lab-push-answer",
        ),
      ),
    );
    const subscribed = mine !== null && data.browsers.some((b) => b.id === mine);
    if (!pushUnsupported()) this.button.textContent = subscribed ? "Subscribe again" : "Notify this device";
  }

  dispose(): void {
    window.clearInterval(this.timer);
    this.seen.disconnect();
    this.node.remove();
  }
}

function item(text: string, className = ""): HTMLLIElement {
  const li = document.createElement("li");
  if (className) li.className = className;
  li.append(document.createTextNode(text));
  return li;
}

/** This page's presence: what the panel shows, and whether someone uses the page. Every 30 s,
 * and at once when the panel shows other sessions, on focus, blur and visibility changes;
 * stops on a server without the route. */
export function reportPresence(
  settings: ServerConnection.ISettings,
  shown: () => string[],
): () => void {
  const device = `page-${Math.random().toString(36).slice(2, 12)}`;
  let inputAt = Date.now();
  let stopped = false;
  const onInput = (): void => {
    inputAt = Date.now();
  };
  let sent = ""; // the sessions the server last heard, joined
  let since = 0;
  const send = async (): Promise<void> => {
    if (stopped) return;
    const sessions = shown();
    const body = {
      device,
      sessions,
      visible: document.visibilityState === "visible",
      focused: document.hasFocus(),
      input_at: inputAt,
    };
    try {
      const response = await call(settings, "push/presence", { method: "POST", body: JSON.stringify(body) });
      if (response.status === 404) stop(); // a server extension without Web Push
      else if (response.ok) sent = sessions.join(",");
    } catch {
      // offline: the next report says it again
    }
  };
  // one report at a time, in order (the server keeps the last one it stored per page)
  let inFlight: Promise<void> | null = null;
  let again = false;
  const now = (): void => {
    if (inFlight) {
      again = true;
      return;
    }
    since = 0;
    inFlight = send().finally(() => {
      inFlight = null;
      if (again) {
        again = false;
        now();
      }
    });
  };
  // every 30 s; sooner when what the panel shows changed (a local look every 2 s)
  const timer = window.setInterval(() => {
    since += 2000;
    if (shown().join(",") !== sent || since >= PRESENCE_MS) now();
  }, 2000);
  const events = ["pointerdown", "keydown", "wheel", "touchstart"];
  for (const name of events) window.addEventListener(name, onInput, { passive: true, capture: true });
  window.addEventListener("focus", now);
  window.addEventListener("blur", now);
  document.addEventListener("visibilitychange", now);
  now();
  function stop(): void {
    stopped = true;
    window.clearInterval(timer);
    for (const name of events) window.removeEventListener(name, onInput, { capture: true });
    window.removeEventListener("focus", now);
    window.removeEventListener("blur", now);
    document.removeEventListener("visibilitychange", now);
  }
  return stop;
}

/** The sessions this page shows: rows drawn on screen, in the panel or in a notebook's widget
 * (a hidden panel, a collapsed list or a closed tab draws none). */
export function shownSessions(): string[] {
  const ids = new Set<string>();
  for (const el of document.querySelectorAll<HTMLElement>(".pmux-row[data-session-id]")) {
    const id = el.getAttribute("data-session-id");
    if (id && el.getClientRects().length > 0) ids.add(id);
  }
  return [...ids].sort();
}

/** Open the panel on `sessionId`'s row (it may not be there yet: the stream is connecting). */
export function showSession(panel: SessionsPanel, open: () => void, sessionId: string): void {
  open();
  const deadline = Date.now() + 20_000;
  const tick = (): void => {
    const el = panel.view?.list.rowView(sessionId)?.el;
    if (el) {
      el.scrollIntoView({ block: "nearest" });
      el.focus();
      return;
    }
    if (Date.now() < deadline) window.setTimeout(tick, 200);
  };
  tick();
}

/** `?pmux-session=<id>` in the page's URL (a notification opened it), and the worker's
 * message when a notification is clicked while this page is open. */
export function followNotifications(panel: SessionsPanel, open: () => void, restored: Promise<unknown>): void {
  const url = new URL(window.location.href);
  const wanted = url.searchParams.get("pmux-session");
  if (wanted) {
    url.searchParams.delete("pmux-session");
    window.history.replaceState(window.history.state, "", url.toString());
    // after the layout is restored: restoring it activates (and focuses) other widgets
    void restored.then(() => showSession(panel, open, wanted));
  }
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.addEventListener("message", (event: MessageEvent) => {
    const data = event.data as { type?: string; session_id?: string } | null;
    if (data?.type === "pmux-session" && typeof data.session_id === "string" && data.session_id) {
      window.focus();
      showSession(panel, open, data.session_id);
    }
  });
  navigator.serviceWorker.startMessages(); // an uncontrolled page's messages wait for this
}

/** Everything above, wired to the panel (the plugin calls it once). */
export function installPush(
  settings: ServerConnection.ISettings,
  panel: SessionsPanel,
  open: () => void,
  restored: Promise<unknown>,
): void {
  const section = new PushSection(settings);
  panel.node.append(section.node);
  panel.disposed.connect(() => section.dispose());
  reportPresence(settings, shownSessions);
  followNotifications(panel, open, restored);
}
