// The page's one connection to the server extension: a StreamModel over the authenticated
// websocket, and the Link (store, messages, notifications) the anywidget front-end runs over
// any model. Each connection gets a fresh Link (a restarted server counts its seq from zero;
// an old store would ignore everything). The panel and the status item follow `onChange`.
// While the stream is open the page's tab-title prefix and desktop notifications are this
// model's (title.ts, notify.ts): one source for the page, however many widgets it shows.
import { URLExt } from "@jupyterlab/coreutils";
import type { ServerConnection } from "@jupyterlab/services";
import { Link } from "../../src/link";
import { notifier } from "../../src/notify";
import { titleManager } from "../../src/title";
import { StreamModel, type SocketLike, type Status } from "../../src/stream-model";

export const STREAM_PATH = "pmux/api/stream";

/** An authenticated websocket to the server extension's stream: the cookie rides along; the
 * token goes in the URL only where JupyterLab's own sockets put it (appendToken). */
export function streamSocket(settings: ServerConnection.ISettings): SocketLike {
  let url = URLExt.join(settings.wsUrl, STREAM_PATH);
  if (settings.token && settings.appendToken) url += `?token=${encodeURIComponent(settings.token)}`;
  return new settings.WebSocket(url) as unknown as SocketLike;
}

export class Live {
  readonly model: StreamModel;
  /** null until the first connection delivered its traits */
  link: Link | null = null;
  private readonly listeners = new Set<() => void>();
  private notifications = true;

  constructor(connect: () => SocketLike) {
    this.model = new StreamModel(connect);
    this.model.onConnection(() => {
      const old = this.link;
      this.link = new Link(this.model);
      old?.dispose();
      this.emit();
    });
    this.model.onStatus(() => {
      this.claim();
      this.emit();
    });
  }

  /** The page's notifications are the panel's while its stream is open; while it is not
   * (no server extension, a restart), the cells' widgets still notify. */
  private claim(): void {
    if (this.model.status === "open") {
      notifier.claim(this.model, this.notifications);
      titleManager().claim(this.model);
    } else {
      notifier.release(this.model);
      titleManager().release(this.model);
    }
  }

  get status(): Status {
    return this.model.status;
  }

  /** The setting: desktop notifications from this page (still behind the panel's switch). */
  setNotifications(on: boolean): void {
    this.notifications = on;
    this.claim();
  }

  /** A new Link, or the connection's status moved. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** ``paint`` on every change of the fleet, of the connection's status and of the Link (a
   * reconnection makes a new one, whose store it then follows). Returns the unsubscribe. */
  follow(paint: () => void): () => void {
    let link: Link | null = null;
    let unsubscribe: (() => void) | null = null;
    const relink = (): void => {
      if (this.link !== link) {
        unsubscribe?.();
        link = this.link;
        unsubscribe = link ? link.store.subscribe(paint) : null;
      }
      paint();
    };
    const stop = this.onChange(relink);
    relink();
    return () => {
      stop();
      unsubscribe?.();
    };
  }

  dispose(): void {
    notifier.release(this.model);
    titleManager().release(this.model);
    this.link?.dispose();
    this.link = null;
    this.model.dispose();
    this.listeners.clear();
  }

  private emit(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
