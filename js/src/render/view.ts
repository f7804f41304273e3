// One rendered widget (a view). It owns DOM only; the data lives in the model's Link (store,
// install answers), shared with every other view of the same model. It subscribes to the
// store and to the traits it shows, runs ONE one-second timer for the ages, and undoes all of
// it in destroy().
import { el, setClass } from "../dom";
import type { Link, Model } from "../link";
import type { StoreEvent } from "../store";
import { titleManager } from "../title";
import type { Answer } from "../link";
import type { ActionName, Env, FrontendMessage, Host, InstallResult, Row } from "../types";
import type { ActionState } from "./actions";
import { labPanel, terminalAttacher, terminalOpener } from "../lab-panel";
import { GroupingSwitch, storedGrouping } from "./grouping";
import { Header } from "./header";
import { RangeSwitch, rangeLabel, storedRange, TimeAxis } from "./range";
import type { TimelineSource } from "./strip";
import { dayStart, formatLength, insight, rangeMs, type RangeKey } from "../timeline";
import { SessionList } from "./list";
import { NotifyToggle } from "./notify-toggle";
import { UnattendedSwitch } from "./row-filter";
import type { RowActions } from "./row";
import { Screens } from "./screens";
import { Sheet } from "./sheet";

export interface ViewOptions {
  /** the clock, replaceable in tests */
  now?: () => number;
  /** age refresh period; one timer per view */
  tickMs?: number;
  /** the host's way to open a JupyterLab terminal (the side panel's); else the page's hook
   * from the labextension, if any (lab-panel.ts) */
  terminalOpener?: (name: string) => void;
  /** the host's "Attach in a terminal" for a background session (the side panel's); else the
   * page's hook from the labextension, if any */
  terminalAttacher?: (sessionId: string) => void;
}

export class WidgetView {
  readonly root: HTMLDivElement;
  readonly header: Header;
  readonly list: SessionList;
  readonly sheet: Sheet;
  readonly screens: Screens;
  private readonly toggle: NotifyToggle;
  readonly unattended: UnattendedSwitch;
  readonly grouping: GroupingSwitch;
  readonly range: RangeSwitch;
  readonly axis: TimeAxis;
  private rangeKey: RangeKey;
  /** a transition arrived since the insight was computed (recomputed on the next tick) */
  private insightDirty = true;
  private ticks = 0;
  private readonly now: () => number;
  /** the latest click per session, until the session's state moves (see actions.ts) */
  private readonly clicks = new Map<string, ActionState & { key: string }>();
  /** open peeks: the last lines read (null until the first answer) */
  private readonly peeks = new Map<string, { lines: string[]; message: string } | null>();
  /** a peek was asked and not answered yet: no second one is queued behind a busy kernel */
  private readonly peekAsked = new Set<string>();
  private installing = false;
  /** the store's hosts as last given to the list (a new object when they changed) */
  private shownHosts: Record<string, Host> = {};
  /** env.install_result when Install was clicked: a different object later is the answer */
  private installResultAtClick: InstallResult | null = null;
  private readonly cleanups: (() => void)[] = [];
  private destroyed = false;

  constructor(
    private readonly model: Model,
    private readonly link: Link,
    host: HTMLElement,
    options: ViewOptions = {},
  ) {
    this.now = options.now ?? (() => link.store.kernelNow());
    this.rangeKey = storedRange();
    const timeline: TimelineSource = {
      entries: (id) => link.store.history.get(id),
      rangeMs: () => rangeMs(this.rangeKey),
      rangeLabel: () => rangeLabel(this.rangeKey),
      clockOffset: () => link.store.clockOffset,
    };
    const actions: RowActions = {
      timeline,
      dismiss: (id) => this.dismiss(id),
      isDismissPending: (id) => {
        const click = this.clicks.get(id);
        return click?.action === "dismiss" && !click.refused;
      },
      pending: (id) => {
        const click = this.clicks.get(id);
        // an attach leaves the row's state line alone: its answer is a note in the bar
        return click && !click.refused && click.action !== "attach" ? click : null;
      },
      act: (id, action, text, options) => this.act(id, action, text, options),
      seen: (id) => this.seen(id),
      peek: (id, open) => this.peek(id, open),
      actionState: (id) => this.clicks.get(id) ?? null,
      peekLines: (id) => this.peeks.get(id) ?? null,
      terminalOpener: () => options.terminalOpener ?? terminalOpener(),
      // where the page has no JupyterLab terminal to open (no labextension: classic Notebook,
      // VS Code, …) the kernel opens a tmux window instead (an "attach" message)
      terminalAttacher: () => options.terminalAttacher ?? terminalAttacher() ?? ((id) => this.attachInTmux(id)),
    };

    this.root = el("div", "pmux-root");
    this.toggle = new NotifyToggle(model);
    this.sheet = new Sheet(actions, () => this.closeSheet(true));
    const grouping = storedGrouping();
    this.grouping = new GroupingSwitch(grouping, (g) => this.list.setGrouping(g, this.now()));
    this.range = new RangeSwitch(this.rangeKey, (range) => this.setRange(range));
    this.axis = new TimeAxis(this.rangeKey);
    this.screens = new Screens(() => this.install());
    this.list = new SessionList(actions, grouping);
    this.unattended = new UnattendedSwitch(model, this.list.el);
    this.header = new Header(this.sheet.id, () => this.toggleSheet(), [
      this.grouping.el,
      this.range.el,
      this.unattended.el,
      this.toggle.el,
    ]);
    this.header.el.appendChild(this.axis.el);
    this.root.append(
      this.screens.note,
      this.header.el,
      this.sheet.el,
      this.screens.noClaude,
      this.screens.hooksBanner,
      this.screens.installResultLine,
      this.screens.empty,
      this.list.el,
    );

    const store = link.store;
    this.shownHosts = store.hosts;
    this.list.setHosts(store.hosts, this.now());
    this.list.reset(store.rows.values(), this.now());
    this.header.setCounts(store.counts);
    this.refreshInsight();
    this.refreshScreens();
    this.refreshTitle();
    host.appendChild(this.root);

    this.cleanups.push(store.subscribe((event) => this.onStore(event)));
    this.cleanups.push(
      link.onInstallResult(() => {
        this.installing = false;
        this.refreshScreens();
      }),
    );
    this.cleanups.push(link.onAnswer((answer) => this.onAnswer(answer)));
    this.listen("change:env", () => {
      const result = this.env()?.install_result ?? null;
      if (this.installing && result !== this.installResultAtClick) this.installing = false;
      this.refreshScreens();
    });
    this.listen("change:sidebar_note", () => this.refreshScreens());
    this.listen("change:mode", () => this.refreshScreens());
    this.listen("change:title_prefix", () => this.refreshTitle());

    this.root.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.sheet.isOpen) {
        event.stopPropagation(); // JupyterLab would otherwise leave edit mode
        this.closeSheet(true);
      }
    });
    // A click elsewhere closes the sheet, as popovers do (focus stays where the user clicked).
    const onPointer = (event: Event) => {
      const target = event.target as Node | null;
      if (!this.sheet.isOpen || !target) return;
      if (!this.sheet.el.contains(target) && !this.header.bell.contains(target)) this.closeSheet(false);
    };
    document.addEventListener("pointerdown", onPointer);
    this.cleanups.push(() => document.removeEventListener("pointerdown", onPointer));

    const timer = setInterval(() => {
      this.tick();
      this.refreshPeeks();
    }, options.tickMs ?? 1000);
    this.cleanups.push(() => clearInterval(timer));
    this.cleanups.push(() => titleManager().remove(this));
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    this.toggle.destroy();
    this.unattended.destroy();
    this.root.remove();
  }

  tick(): void {
    const now = this.now();
    this.list.tick(now);
    this.sheet.tick(now);
    // Waits grow while sessions wait: the insight follows every 5 s, or at the next tick
    // after a transition (never on the patch itself: P10/P14 count a patch's cost).
    this.ticks += 1;
    if (this.insightDirty || this.ticks % 5 === 0) this.refreshInsight();
  }

  /** Show another range: every strip redraws (the axis too). */
  setRange(range: RangeKey): void {
    this.rangeKey = range;
    this.axis.set(range);
    const now = this.now();
    this.list.forEachView((view) => view.strip?.draw(now, view.row.ended ? view.row.state_since : null));
  }

  /** Today's insight (the browser's midnight: the user's day) in the header and per row. */
  refreshInsight(): void {
    this.insightDirty = false;
    const store = this.link.store;
    const now = this.now();
    const since = dayStart(now + store.clockOffset) - store.clockOffset;
    const ends = new Map<string, number>();
    for (const row of store.rows.values()) if (row.ended) ends.set(row.session_id, row.state_since);
    const today = insight(store.history, since, now, ends);
    const parts: string[] = [];
    if (today.waitedMs >= 1000) parts.push(`waited on you ${formatLength(today.waitedMs)}`);
    if (today.medianResponseMs !== null) parts.push(`median response ${formatLength(today.medianResponseMs)}`);
    if (today.turns > 0) parts.push(`${today.turns} turn${today.turns === 1 ? "" : "s"} finished`);
    this.header.setInsight(parts.length ? `Today: ${parts.join(" · ")}` : "");
    this.list.forEachView((view) => view.strip?.setWaited(today.waitedBySession.get(view.row.session_id) ?? 0));
  }

  toggleSheet(): void {
    if (this.sheet.isOpen) this.closeSheet(true);
    else this.openSheet();
  }

  openSheet(): void {
    this.sheet.show(this.link.store.rows.values(), this.now());
    this.header.setExpanded(true);
    this.sheet.el.focus();
  }

  closeSheet(returnFocus: boolean): void {
    if (!this.sheet.isOpen) return;
    this.sheet.hide();
    this.header.setExpanded(false);
    if (returnFocus) this.header.bell.focus();
  }

  private onStore(event: StoreEvent): void {
    const store = this.link.store;
    const now = this.now();
    if (store.hosts !== this.shownHosts) {
      this.shownHosts = store.hosts;
      this.list.setHosts(store.hosts, now);
    }
    if (event.kind === "reset") {
      for (const [id, click] of this.clicks) {
        const row = store.rows.get(id);
        if (!row || this.over(click, row)) this.clicks.delete(id);
      }
      this.list.reset(store.rows.values(), now);
    } else {
      for (const row of event.upserted) {
        const click = this.clicks.get(row.session_id);
        if (click && this.over(click, row)) this.clicks.delete(row.session_id);
      }
      for (const id of event.removed) {
        this.clicks.delete(id);
        this.peeks.delete(id);
      }
      this.list.apply(event.upserted, event.removed, now);
    }
    this.header.setCounts(store.counts);
    this.insightDirty = true;
    this.sheet.sync(store.rows.values(), now);
    this.refreshScreens();
    this.refreshTitle();
  }

  /** A click is over once its session's state moved — once the kernel answered it: a click
   * still in flight stays, so that its refusal (a dialog that changed meanwhile) is shown. A
   * dismiss gets no answer but the row. */
  private over(click: ActionState & { key: string }, row: Row): boolean {
    return (click.answered || click.action === "dismiss") && this.moved(click, row);
  }

  /** The session's state moved since the click. The kernel answers every dismiss with the
   * row, so for a dismiss any row that is no longer in review ends it too. */
  private moved(click: ActionState & { key: string }, row: Row): boolean {
    if (row.ended || `${row.state}:${row.state_since}` !== click.key) return true;
    return click.action === "dismiss" && row.state !== "review";
  }

  private remember(sessionId: string, action: ActionState["action"], label: string): void {
    const row = this.link.store.rows.get(sessionId);
    const key = row ? `${row.state}:${row.state_since}` : "";
    this.clicks.set(sessionId, { action, label, since: Date.now(), answered: false, refused: null, key });
  }

  private dismiss(sessionId: string): void {
    this.remember(sessionId, "dismiss", "dismissing…");
    this.send({ type: "dismiss", session_id: sessionId });
    this.redraw(sessionId);
  }

  /** Answer a session as its row's buttons do (the panel's palette commands call it too).
   * `options`: an answer's chosen labels. */
  act(sessionId: string, action: ActionName, text?: string, options?: string[]): void {
    const row = this.link.store.rows.get(sessionId);
    this.remember(sessionId, action, ACTING[action]);
    this.send({
      type: "action",
      session_id: sessionId,
      action,
      text: text ?? null,
      token: row?.dialog_token || null,
      ...(options ? { options } : {}),
    });
    this.redraw(sessionId);
  }

  /** The user looks at a session (its peek, terminal or attach opened; the labextension's
   * focused terminal tab): a review ends, silently. Only a review is worth the message. */
  seen(sessionId: string): void {
    const row = this.link.store.rows.get(sessionId);
    if (row && !row.ended && row.state === "review") this.send({ type: "seen", session_id: sessionId });
  }

  /** "Attach in a terminal" through the kernel: a tmux window running `claude attach <job>`;
   * the answer says which window, and how to see it (`tmux attach -t …`). */
  attachInTmux(sessionId: string): void {
    this.remember(sessionId, "attach", "opening a tmux window…");
    this.send({ type: "attach", session_id: sessionId });
    this.redraw(sessionId);
  }

  private peek(sessionId: string, open: boolean): void {
    if (!open) {
      this.peeks.delete(sessionId);
      return;
    }
    this.peeks.set(sessionId, null);
    this.askPeek(sessionId);
  }

  private askPeek(sessionId: string): void {
    if (this.peekAsked.has(sessionId)) return;
    this.peekAsked.add(sessionId);
    this.send({ type: "peek", session_id: sessionId });
  }

  /** Open peeks are re-read every PEEK_EVERY_MS (never two asks in flight for one session). */
  private refreshPeeks(): void {
    if (this.peeks.size === 0 || Date.now() - this.lastPeekRound < PEEK_EVERY_MS) return;
    this.lastPeekRound = Date.now();
    for (const id of this.peeks.keys()) this.askPeek(id);
  }

  private lastPeekRound = 0;

  private onAnswer(answer: Answer): void {
    const id = answer.session_id;
    if (answer.type === "peek_result") {
      this.peekAsked.delete(id);
      if (!this.peeks.has(id)) return;
      this.peeks.set(id, { lines: answer.lines ?? [], message: answer.ok ? "" : (answer.message ?? "") });
    } else if (answer.type === "attach_result") {
      const click = this.clicks.get(id);
      if (!click || click.action !== "attach") return;
      click.answered = true;
      // shown until the state moves: where the window is outlives the click
      const row = this.link.store.rows.get(id);
      if (row) click.key = `${row.state}:${row.state_since}`;
      if (answer.ok) click.label = answer.message || `attached in tmux window ${answer.target}`;
      else click.refused = answer.message || "refused";
    } else {
      const click = this.clicks.get(id);
      if (!click || click.action !== answer.action) return;
      click.answered = true;
      const row = this.link.store.rows.get(id);
      if (answer.ok) {
        click.label = answer.queued ? "queued" : "sent";
        if (!row || this.moved(click, row)) this.clicks.delete(id); // it moved already
      } else {
        click.refused = answer.message || "refused";
        // shown until the state moves again
        if (row) click.key = `${row.state}:${row.state_since}`;
      }
    }
    this.redraw(id);
  }

  /** Show a session's pending click (or its end) at once, in the list and the sheet. */
  private redraw(sessionId: string): void {
    const now = this.now();
    this.list.rowView(sessionId)?.refresh(now);
    this.sheet.sync(this.link.store.rows.values(), now);
  }

  private install(): void {
    this.installing = true;
    this.installResultAtClick = this.env()?.install_result ?? null;
    this.send({ type: "install_hooks" });
    this.refreshScreens();
  }

  private send(message: FrontendMessage): void {
    this.model.send(message);
  }

  private env(): Env | null {
    return this.model.get("env") ?? null;
  }

  private refreshScreens(): void {
    // sidebar()'s stand-in in the cell: where the extension's panel shows the sessions (Lab
    // and Notebook 7 with the extension loaded) or the sidecar docks (JupyterLab without it),
    // the cell shows only the note; elsewhere (other front-ends) the whole widget, under it.
    const standIn = this.model.get("mode") === "sidebar-stub";
    const panel = standIn && labPanel() !== undefined;
    const stub = panel || (standIn && docksSidecars(this.root));
    setClass(this.root, stub ? "pmux-root pmux-root--stub" : "pmux-root");
    const note = panel ? IN_PANEL : standIn && !stub ? CANNOT_DOCK : this.model.get("sidebar_note") || "";
    const env = this.env();
    // An install answer from this page wins; a stored one (env) only matters while hooks are
    // still missing: otherwise every reload would repeat an old "installed".
    const stored = env?.hooks_installed === false ? (env.install_result ?? null) : null;
    this.screens.update({
      env,
      note,
      installResult: this.link.installResult ?? stored,
      installing: this.installing,
      liveCount: this.list.liveCount,
      endedCount: this.list.ended.count,
    });
  }

  private refreshTitle(): void {
    const on = this.model.get("title_prefix") !== false;
    titleManager().set(this, on ? this.link.store.counts.attention : 0, this.model);
  }

  private listen(event: `change:${string}`, callback: () => void): void {
    this.model.on(event, callback);
    this.cleanups.push(() => this.model.off(event, callback));
  }
}

/** A row's status while its click travels. */
const ACTING: Record<ActionName, string> = {
  approve: "approving…",
  deny: "denying…",
  interrupt: "stopping…",
  send: "sending…",
  answer: "answering…",
  stop: "stopping…",
  remove: "removing…",
};
/** How often an open peek is re-read. */
const PEEK_EVERY_MS = 2000;

const IN_PANEL = "Shown in the Claude sessions side panel (and the status bar's Claude item opens it).";

const CANNOT_DOCK =
  "This front-end cannot dock a sidebar (Notebook 7 has no sidecar area): the widget is shown here instead.";

/** Is this page JupyterLab, whose right area holds sidecars? (Notebook 7's shell is not a
 * LabShell and has no sidecar area.) */
function docksSidecars(node: HTMLElement): boolean {
  return node.ownerDocument.querySelector(".jp-LabShell") !== null;
}
