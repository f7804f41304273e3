// A row's actions (issue 13): Approve / Deny on needs-input, Stop on busy, a prompt box on idle
// and review, and Peek (the pane's last lines, read-only, refreshed while open) on every live
// row. A Claude Code background session's row (issue 26) also offers Stop session and Remove
// (`claude stop` / `claude rm`, each asked twice: the first click only asks to confirm) and
// "Attach in a terminal". The bar of a needs-input row is always shown; the others appear when the row has the
// focus (a click or Tab on the row), so the list stays lean and nothing grows under the
// pointer.
//
// Each click names the row's dialog_token as shown, so the kernel refuses it when the session
// moved on meanwhile. A click shows at once ("approving…"); the kernel's answer turns it into
// "sent" (kept until the state moves) or the refusal's reason; while no answer came for a
// second, the row says Jupyter delivers it when the running cell ends (rows.ts).
import { el, setAttr, setData, setHidden, text } from "../dom";
import type { ActionName, Row } from "../types";
import { formKey, hasForm, QuestionForm } from "./question";

/** What the view keeps per session about a click (see view.ts). */
export interface ActionState {
  /** "attach": Attach in a terminal through the kernel (a tmux window) */
  action: ActionName | "dismiss" | "attach";
  /** "approving…" until answered, then "sent" until the state moves */
  label: string;
  since: number;
  answered: boolean;
  /** the refusal's reason (the click is over) */
  refused: string | null;
}

export interface ActionHandlers {
  /** `options`: an answer's chosen labels (issue 34) */
  act(sessionId: string, action: ActionName, text?: string, options?: string[]): void;
  /** The user looks at the session (its peek or attach opened): a review ends (user:seen). */
  seen?(sessionId: string): void;
  peek(sessionId: string, open: boolean): void;
  actionState(sessionId: string): ActionState | null;
  peekLines(sessionId: string): { lines: string[]; message: string } | null;
  /** The host's way to open a JupyterLab terminal by name (injected: the side panel's is
   * JupyterLab's `terminal:open`, a notebook's widget uses the labextension's page hook);
   * null where the page cannot, and the rows offer no "Open terminal". */
  terminalOpener(): ((name: string) => void) | null;
  /** "Attach in a terminal" for a background session: a JupyterLab terminal running `claude
   * attach <job>` where the page has the labextension, else a tmux window the kernel opens;
   * null where neither can be. */
  terminalAttacher(): ((sessionId: string) => void) | null;
}

const VERB: Record<ActionName, string> = {
  approve: "Approve",
  deny: "Deny",
  interrupt: "Stop",
  send: "Send",
  answer: "Answer",
  stop: "Stop session",
  remove: "Remove",
};

/** Stop and Remove end a background session: a first click asks, a second within this long
 * does it. */
export const CONFIRM_MS = 5000;
const CONFIRM: Partial<Record<ActionName, string>> = {
  stop: "Confirm stop",
  remove: "Confirm remove",
};
const CONFIRM_WHAT: Partial<Record<ActionName, string>> = {
  stop: "stop the background session (claude stop)",
  remove: "remove the background session (claude rm)",
};

/** Which actions a row offers (a background session's Stop and Remove besides). A question or
 * a plan is answered by its form (question.ts), never by Approve / Deny buttons. */
export function actionsFor(row: Row): ActionName[] {
  if (row.ended) return [];
  const own: ActionName[] = row.background ? [...(row.running ? ["stop" as const] : []), "remove"] : [];
  if (!row.running) return own;
  switch (row.state) {
    case "needs-input":
      return hasForm(row) ? own : ["approve", "deny", ...own];
    case "busy":
      return ["interrupt", ...own];
    case "idle":
    case "review":
      return ["send", ...own];
    default:
      return own;
  }
}

export class ActionsBar {
  readonly el: HTMLDivElement;
  // Every part is created when first needed (a needs-input row costs its two buttons and
  // Peek: with hundreds of rows, elements are what rendering pays for).
  private readonly buttons = new Map<ActionName, HTMLButtonElement>();
  private input: HTMLInputElement | null = null;
  private readonly peekButton: HTMLButtonElement | null = null;
  private openButton: HTMLButtonElement | null = null;
  private attachButton: HTMLButtonElement | null = null;
  /** Stop or Remove clicked once: the next click on it within CONFIRM_MS does it */
  private confirming: ActionName | null = null;
  private confirmTimer: ReturnType<typeof setTimeout> | null = null;
  private note: Text | null = null;
  /** a question's options or a plan's buttons (created when the row asks one) */
  private form: QuestionForm | null = null;
  private peekEl: HTMLPreElement | null = null;
  private peekOpen = false;
  private row: Row;

  constructor(
    row: Row,
    private readonly handlers: ActionHandlers,
    withPeek = true,
  ) {
    this.row = row;
    this.el = el("div", "pmux-actions");
    if (withPeek) {
      const peek = (this.peekButton = el("button", "pmux-act pmux-act--peek", "Peek"));
      peek.type = "button";
      peek.setAttribute("aria-expanded", "false");
      peek.addEventListener("click", () => {
        this.peekOpen = !this.peekOpen;
        handlers.peek(this.row.session_id, this.peekOpen);
        if (this.peekOpen) handlers.seen?.(this.row.session_id);
        this.update(this.row);
      });
      this.el.appendChild(peek);
    }
    this.update(row);
  }

  get peeking(): boolean {
    return this.peekOpen;
  }

  private button(action: ActionName): HTMLButtonElement {
    let button = this.buttons.get(action);
    if (!button) {
      button = el("button", `pmux-act pmux-act--${action}`, VERB[action]);
      button.type = "button";
      button.addEventListener("click", () => this.click(action));
      this.buttons.set(action, button);
      // in a fixed order, before Peek: Approve, Deny, Stop, Send
      const order: ActionName[] = ["approve", "deny", "interrupt", "send", "stop", "remove"];
      const next = order.slice(order.indexOf(action) + 1).map((a) => this.buttons.get(a));
      this.el.insertBefore(button, next.find(Boolean) ?? this.peekButton ?? this.noteEl());
    }
    return button;
  }

  /** "Open terminal": the row runs in a JupyterLab terminal and the page can open it. */
  private terminalButton(): HTMLButtonElement {
    if (!this.openButton) {
      const button = (this.openButton = el("button", "pmux-act pmux-act--terminal", "Open terminal"));
      button.type = "button";
      button.addEventListener("click", () => {
        const name = this.row.terminal?.name;
        const open = this.handlers.terminalOpener();
        if (name && open) {
          open(name);
          this.handlers.seen?.(this.row.session_id);
        }
      });
      this.el.insertBefore(button, this.peekButton ?? this.noteEl());
    }
    return this.openButton;
  }

  /** "Attach in a terminal": a background session, and the page can open a terminal. */
  private attachTerminalButton(): HTMLButtonElement {
    if (!this.attachButton) {
      const button = (this.attachButton = el("button", "pmux-act pmux-act--attach", "Attach in a terminal"));
      button.type = "button";
      button.addEventListener("click", () => {
        const attach = this.handlers.terminalAttacher();
        if (this.row.background && attach) {
          attach(this.row.session_id);
          this.handlers.seen?.(this.row.session_id);
        }
      });
      this.el.insertBefore(button, this.peekButton ?? this.noteEl());
    }
    return this.attachButton;
  }

  private promptInput(): HTMLInputElement {
    if (!this.input) {
      const input = (this.input = el("input", "pmux-prompt"));
      input.type = "text";
      input.placeholder = "Prompt…";
      input.addEventListener("keydown", (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          this.click("send");
        }
      });
      this.el.insertBefore(input, this.el.firstChild);
    }
    return this.input;
  }

  private noteEl(): HTMLSpanElement | null {
    return (this.note?.parentNode as HTMLSpanElement | null) ?? null;
  }

  private click(action: ActionName): void {
    const button = this.buttons.get(action);
    if (!button || button.getAttribute("aria-disabled") === "true") return;
    const confirm = CONFIRM[action];
    if (confirm && this.confirming !== action) {
      this.confirming = action;
      if (this.confirmTimer) clearTimeout(this.confirmTimer);
      this.confirmTimer = setTimeout(() => {
        this.confirming = null;
        this.update(this.row);
      }, CONFIRM_MS);
      this.update(this.row);
      button.focus();
      return;
    }
    if (confirm) {
      this.confirming = null;
      if (this.confirmTimer) clearTimeout(this.confirmTimer);
      this.handlers.act(this.row.session_id, action);
      return;
    }
    if (action === "send") {
      const input = this.promptInput();
      const value = input.value.trim();
      if (!value) {
        input.focus();
        return;
      }
      this.handlers.act(this.row.session_id, action, value);
      input.value = "";
    } else {
      this.handlers.act(this.row.session_id, action);
    }
  }

  update(row: Row): void {
    this.row = row;
    const offered = new Set(actionsFor(row));
    const state = this.handlers.actionState(row.session_id);
    // an attach keeps every action open: it opens a window, it answers nothing
    const busy = state !== null && !state.refused && state.action !== "dismiss" && state.action !== "attach";
    for (const action of offered) this.button(action);
    if (this.confirming && !offered.has(this.confirming)) this.confirming = null;
    for (const [action, button] of this.buttons) {
      setHidden(button, !offered.has(action));
      setAttr(button, "aria-disabled", busy ? "true" : null);
      const asking = this.confirming === action;
      const label = asking ? (CONFIRM[action] ?? VERB[action]) : VERB[action];
      if (button.textContent !== label) button.textContent = label;
      setAttr(button, "data-confirm", asking ? "true" : null);
      setAttr(
        button,
        "aria-label",
        asking ? `Click again to ${CONFIRM_WHAT[action] ?? action}: ${row.name}` : `${VERB[action]}: ${row.name}`,
      );
    }
    if (offered.has("send")) setAttr(this.promptInput(), "aria-label", `Prompt for ${row.name}`);
    this.updateForm(row, busy);
    const terminal = !row.ended && row.terminal !== null && this.handlers.terminalOpener() !== null;
    if (terminal || this.openButton) {
      const button = this.terminalButton();
      setHidden(button, !terminal);
      setAttr(button, "aria-label", row.terminal ? `Open terminal ${row.terminal.name}: ${row.name}` : null);
    }
    const attach = !row.ended && row.background !== null && this.handlers.terminalAttacher() !== null;
    if (attach || this.attachButton) {
      const button = this.attachTerminalButton();
      setHidden(button, !attach);
      setAttr(button, "aria-label", `Attach in a terminal (claude attach ${row.background?.job ?? ""}): ${row.name}`);
    }
    if (this.input) setHidden(this.input, !offered.has("send"));
    const note = state?.refused
      ? `${state.action === "attach" ? "attach refused" : "refused"}: ${state.refused}`
      : state && !state.answered ? "" : (state?.label ?? "");
    if (note && !this.note) {
      const span = this.el.insertBefore(el("span", "pmux-act-note"), this.peekEl);
      span.setAttribute("role", "status");
      this.note = text(span);
    }
    if (this.note) {
      setData(this.note, note);
      setHidden(this.noteEl()!, note === "");
    }
    if (this.peekButton) {
      setAttr(this.peekButton, "aria-expanded", this.peekOpen ? "true" : "false");
      setData(this.peekButton.firstChild as Text, this.peekOpen ? "Hide" : "Peek");
      setHidden(this.peekButton, row.ended);
    }
    if (this.peekOpen && !this.peekEl) this.peekEl = this.el.appendChild(el("pre", "pmux-peek"));
    if (this.peekEl) {
      setHidden(this.peekEl, !this.peekOpen);
      if (this.peekOpen) {
        const seen = this.handlers.peekLines(row.session_id);
        const body = seen === null ? "reading the pane…" : seen.message || seen.lines.join("\n") || "(empty)";
        if (this.peekEl.textContent !== body) this.peekEl.textContent = body;
      }
    }
  }

  /** The question's form: built when the row asks, rebuilt when the dialog changes (question.ts
   * formKey), kept (with what was ticked or typed) across patches that leave it alone. */
  private updateForm(row: Row, busy: boolean): void {
    const wanted = hasForm(row);
    const key = formKey(row);
    if (wanted && this.form?.key !== key) {
      const form = new QuestionForm(
        row.question!,
        row.name,
        (action, text, options) => this.handlers.act(this.row.session_id, action, text, options),
        key,
      );
      if (this.form) this.form.el.replaceWith(form.el);
      else this.el.insertBefore(form.el, this.el.firstChild);
      this.form = form;
    }
    if (this.form) {
      this.form.hide(!wanted);
      this.form.setDisabled(busy);
    }
  }

  /** The row went away or the bar is no longer wanted: stop refreshing the peek. */
  close(): void {
    if (this.confirmTimer) clearTimeout(this.confirmTimer);
    if (this.peekOpen) this.handlers.peek(this.row.session_id, false);
    this.peekOpen = false;
  }
}
