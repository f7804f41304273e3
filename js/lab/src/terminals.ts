// The dots on JupyterLab's terminal tabs (issue 21): each tab whose terminal runs a Claude
// session gets `pmux-tab pmux-state-<state>` on its title (Lumino puts a title's className on
// the tab; the widget's CSS draws the dot), the state in its tooltip and accessible name.
// Repainted on every change of the page's store and whenever a terminal widget appears, so a
// reopened tab has its dot at once. Which tab gets what is tab-dots.ts (pure).
import type { JupyterFrontEnd } from "@jupyterlab/application";
import { URLExt } from "@jupyterlab/coreutils";
import { ServerConnection } from "@jupyterlab/services";
import type { ITerminalTracker } from "@jupyterlab/terminal";
import type { Live } from "./live";
import { decorFor, seenInTerminal, sessionsByTerminal, withClasses, type TabDecor } from "./tab-dots";

type TerminalWidget = NonNullable<ITerminalTracker["currentWidget"]>;

/** The data attribute (data-pmux-terminal) that finds a decorated tab's element. */
const DATA_KEY = "pmux-terminal";

export class TerminalDots {
  private readonly stop: () => void;
  /** the last look told to the kernel (session:state_since): one look is told once */
  private seenKey: string | null = null;
  private readonly onVisibility = (): void => this.look();
  /** the caption a tab had before we wrote ours, restored when its session goes */
  private readonly captions = new WeakMap<TerminalWidget, string>();
  /** what each decorated widget shows now (its accessible name is re-applied from it) */
  private readonly shown = new WeakMap<TerminalWidget, TabDecor>();
  private readonly watched = new WeakSet<TerminalWidget>();

  constructor(
    private readonly tracker: ITerminalTracker,
    private readonly live: Live,
    /** the page's shell: its current widget is the tab the user looks at */
    private readonly shell: JupyterFrontEnd.IShell | null = null,
  ) {
    this.stop = live.follow(() => {
      this.paint();
      this.look();
    });
    tracker.widgetAdded.connect(this.onAdded, this);
    shell?.currentChanged?.connect(this.look, this);
    document.addEventListener("visibilitychange", this.onVisibility);
  }

  /** Seen (issue 34): a terminal tab that is the shell's current widget in a visible page
   * shows its session; a review there ends (the kernel's ``user:seen``, silent). Checked when
   * the current tab changes, the page shows again, or a session in it enters review while
   * the user looks. */
  look(): void {
    const rows = this.live.link?.store.rows;
    const current = this.shell?.currentWidget ?? null;
    let name: string | null = null;
    this.tracker.forEach((widget) => {
      if (widget === current) name = widget.content.session?.name ?? null;
    });
    const seen = rows ? seenInTerminal(rows.values(), name, document.visibilityState === "visible", this.seenKey) : null;
    if (!seen) return;
    this.seenKey = seen.key;
    this.live.model.send({ type: "seen", session_id: seen.row.session_id });
  }

  private onAdded(_: ITerminalTracker, widget: TerminalWidget): void {
    this.paint();
    // the tab's element is (re)made when Lumino renders it: its accessible name follows
    requestAnimationFrame(() => this.label(widget));
  }

  /** Decorate every terminal tab from the store as it is now. */
  paint(): void {
    const rows = this.live.link?.store.rows;
    const live = rows ? sessionsByTerminal(rows.values()) : new Map();
    this.tracker.forEach((widget) => {
      const name = widget.content.session?.name;
      const row = name ? live.get(name) : undefined;
      this.apply(widget, row ? decorFor(row) : null, name ?? "");
    });
  }

  private apply(widget: TerminalWidget, decor: TabDecor | null, name: string): void {
    const title = widget.title;
    const was = this.shown.get(widget);
    if (decor === null && was === undefined) return;
    if (!this.watched.has(widget)) {
      this.watched.add(widget);
      // Claude Code retitles the terminal (OSC); the tab is re-rendered, its name re-applied
      title.changed.connect(() => this.label(widget));
    }
    const className = withClasses(title.className, decor);
    if (title.className !== className) title.className = className;
    if (decor) {
      if (!this.captions.has(widget)) this.captions.set(widget, title.caption);
      if (title.caption !== decor.caption) title.caption = decor.caption;
      this.shown.set(widget, decor);
      if (title.dataset[DATA_KEY] !== name) title.dataset = { ...title.dataset, [DATA_KEY]: name };
    } else {
      title.caption = this.captions.get(widget) ?? "";
      this.captions.delete(widget);
      this.shown.delete(widget);
    }
    this.label(widget);
    // the element may not be re-rendered yet: again once Lumino has drawn the tab
    requestAnimationFrame(() => this.label(widget));
  }

  /** The tab's element, now: its accessible name (its label, then the session's state), and
   * its classes at once rather than at Lumino's next frame (Lumino renders the same classes
   * from the title then; it renders no accessible name, and keeps attributes it does not
   * render across its updates). */
  private label(widget: TerminalWidget): void {
    const name = widget.title.dataset[DATA_KEY];
    if (!name) return;
    const decor = this.shown.get(widget) ?? null;
    for (const tab of document.querySelectorAll<HTMLElement>(`li.lm-TabBar-tab[data-${DATA_KEY}="${CSS.escape(name)}"]`)) {
      const className = withClasses(tab.className, decor);
      if (tab.className !== className) tab.className = className;
      const aria = decor ? `${widget.title.label}, ${decor.label}` : null;
      if (aria === null) tab.removeAttribute("aria-label");
      else if (tab.getAttribute("aria-label") !== aria) tab.setAttribute("aria-label", aria);
    }
  }

  dispose(): void {
    this.stop();
    this.tracker.widgetAdded.disconnect(this.onAdded, this);
    this.shell?.currentChanged?.disconnect(this.look, this);
    document.removeEventListener("visibilitychange", this.onVisibility);
  }
}

export const OPEN_TERMINAL = "pmux-widget:open-terminal";

/** The command behind "Open terminal", for the palette and other extensions: activate the
 * tab of the terminal a session runs in (``terminal:open`` reopens a closed tab while the
 * terminal runs). Args: ``{session_id}``. */
export function addOpenTerminal(app: JupyterFrontEnd, live: Live): void {
  const terminalOf = (args: { session_id?: unknown }): string | null => {
    const id = typeof args.session_id === "string" ? args.session_id : "";
    const row = live.link?.store.rows.get(id);
    return row && !row.ended && row.terminal ? row.terminal.name : null;
  };
  app.commands.addCommand(OPEN_TERMINAL, {
    label: "Open the Claude Session's Terminal",
    caption: "Show the JupyterLab terminal the session runs in (reopens its tab if closed)",
    isEnabled: (args) => terminalOf(args) !== null,
    execute: async (args) => {
      const name = terminalOf(args);
      if (name !== null) await app.commands.execute("terminal:open", { name });
    },
  });
}

export const ATTACH_PATH = "pmux/api/sessions/attach";

/** "Attach in a terminal" (issue 26): the server opens a JupyterLab terminal running `claude
 * attach <job>` for a background session, or names the one that runs it already; that tab is
 * brought to the front. A refusal is logged (the row keeps its state and actions). */
export function attachInTerminal(
  settings: ServerConnection.ISettings,
  openTerminal: (name: string) => void,
): (sessionId: string) => void {
  return (sessionId) => {
    void (async () => {
      const answer = await ServerConnection.makeRequest(
        URLExt.join(settings.baseUrl, ATTACH_PATH),
        { method: "POST", body: JSON.stringify({ session_id: sessionId }) },
        settings,
      );
      const reply = (await answer.json().catch(() => ({}))) as { terminal?: string; error?: string; message?: string };
      if (answer.status === 201 && reply.terminal) openTerminal(reply.terminal);
      else console.warn("[pmux-widget] attach in a terminal:", reply.error ?? reply.message ?? `HTTP ${answer.status}`);
    })().catch((reason: unknown) => console.warn("[pmux-widget] attach in a terminal:", reason));
  };
}
