// The panel's "New session" form (issue 21): the agent (Claude Code, or Codex: issue 36), a
// folder, an optional first prompt, a permission mode (Claude's only), and where (a new JupyterLab terminal, a tmux window, or in the background: a Claude
// Code background session, `claude --bg`, which needs a prompt; issue 26) → POST
// pmux/api/sessions/new; a new terminal's tab is opened at once (its row comes with the
// session's first hook). When the server's terminals are off (GET pmux/api/terminals), the
// terminal choice is disabled and the form says why.
import { URLExt } from "@jupyterlab/coreutils";
import { ServerConnection } from "@jupyterlab/services";
import { agentName, type Agent } from "../../src/agents";
import { AGENT_NAMES } from "../../src/types";
import { agentCan, newSessionBody } from "./new-session-body";

export const NEW_PATH = "pmux/api/sessions/new";
export const TERMINALS_PATH = "pmux/api/terminals";

/** The permission modes `claude --permission-mode` takes (pmux_widget/system/launch.py). */
const MODES: readonly [string, string][] = [
  ["default", "Ask before edits and commands (default)"],
  ["acceptEdits", "Accept edits"],
  ["plan", "Plan only"],
  ["auto", "Auto"],
  ["bypassPermissions", "Bypass permissions"],
];

export interface NewSessionHost {
  settings: ServerConnection.ISettings;
  /** the server's root folder: the folder field's first value */
  root: string;
  /** open the terminal of that name (JupyterLab's terminal:open) */
  openTerminal(name: string): void;
}

let counter = 0;

export class NewSessionForm {
  readonly el: HTMLDetailsElement;
  private readonly form: HTMLFormElement;
  private readonly agent: HTMLSelectElement;
  private readonly folder: HTMLInputElement;
  private readonly prompt: HTMLTextAreaElement;
  private readonly mode: HTMLSelectElement;
  private readonly inTerminal: HTMLInputElement;
  private readonly inTmux: HTMLInputElement;
  private readonly inBackground: HTMLInputElement;
  private readonly submit: HTMLButtonElement;
  private readonly status: HTMLParagraphElement;
  private readonly note: HTMLParagraphElement;
  private terminalsOff: string | null = null;

  constructor(private readonly host: NewSessionHost) {
    const id = `pmux-new-${++counter}`;
    this.el = document.createElement("details");
    this.el.className = "pmux-new";
    const summary = document.createElement("summary");
    summary.textContent = "New session";
    this.form = document.createElement("form");
    this.form.className = "pmux-new-form";
    this.form.setAttribute("aria-label", "Start a session");

    this.agent = input(this.form, `${id}-agent`, "Agent", document.createElement("select"));
    for (const agent of Object.keys(AGENT_NAMES) as Agent[]) {
      this.agent.add(new Option(agent === "claude" ? "Claude Code" : agentName(agent), agent));
    }
    this.folder = input(this.form, `${id}-folder`, "Folder", document.createElement("input"));
    this.folder.type = "text";
    this.folder.required = true;
    this.folder.value = host.root;
    this.folder.spellcheck = false;
    this.prompt = input(this.form, `${id}-prompt`, "First prompt (optional)", document.createElement("textarea"));
    this.prompt.rows = 2;
    this.mode = input(this.form, `${id}-mode`, "Permission mode", document.createElement("select"));
    for (const [value, label] of MODES) this.mode.add(new Option(label, value));

    const where = document.createElement("fieldset");
    where.className = "pmux-new-where";
    const legend = document.createElement("legend");
    legend.textContent = "Run it in";
    where.append(legend);
    this.inTerminal = radio(where, `${id}-where`, "terminal", "a new JupyterLab terminal");
    this.inTmux = radio(where, `${id}-where`, "tmux", "a new tmux window");
    this.inBackground = radio(where, `${id}-where`, "background", "the background (claude --bg; needs a prompt)");
    this.inTerminal.checked = true;
    this.note = document.createElement("p");
    this.note.className = "pmux-new-note";
    this.note.hidden = true;
    where.append(this.note);
    this.form.append(where);

    this.submit = document.createElement("button");
    this.submit.type = "submit";
    this.submit.className = "pmux-act pmux-new-start";
    this.submit.textContent = "Start";
    this.status = document.createElement("p");
    this.status.className = "pmux-new-status";
    this.status.setAttribute("role", "status");
    this.form.append(this.submit, this.status);
    this.el.append(summary, this.form);

    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.start();
    });
    for (const r of [this.inTerminal, this.inTmux, this.inBackground]) r.addEventListener("change", () => this.sync());
    this.agent.addEventListener("change", () => this.sync());
    // what the server can do is asked each time the form opens (terminals may be turned off)
    this.el.addEventListener("toggle", () => {
      if (this.el.open) void this.check();
    });
  }

  /** GET pmux/api/terminals: whether sessions can run in this server's terminals. */
  async check(): Promise<void> {
    try {
      const answer = await request(this.host.settings, TERMINALS_PATH, { method: "GET" });
      const body = (await answer.json()) as { available?: boolean; reason?: string | null };
      this.terminalsOff = body.available === false ? (body.reason ?? "terminals are off on this server") : null;
    } catch (reason) {
      this.terminalsOff = `the server did not answer (${String(reason)})`;
    }
    this.sync();
  }

  private sync(): void {
    const off = this.terminalsOff;
    const can = agentCan(this.agent.value as Agent);
    this.inTerminal.disabled = off !== null;
    if (off !== null && this.inTerminal.checked) this.inTmux.checked = true;
    // Codex: no background sessions, and its permission mode is its config's
    this.inBackground.disabled = !can.background;
    if (!can.background && this.inBackground.checked) (off === null ? this.inTerminal : this.inTmux).checked = true;
    this.mode.disabled = !can.mode;
    const notes = [];
    if (off !== null) notes.push(`Sessions cannot be started or answered in this server's terminals: ${off}.`);
    if (!can.mode) {
      notes.push(`${agentName(this.agent.value as Agent)} takes its permission mode from its own config, and has no background sessions.`);
    }
    this.note.hidden = notes.length === 0;
    this.note.textContent = notes.join(" ");
    // claude --bg starts with its prompt: the field is required then
    this.prompt.required = this.inBackground.checked;
    const label = this.prompt.labels?.[0];
    if (label) label.textContent = this.inBackground.checked ? "First prompt" : "First prompt (optional)";
  }

  private async start(): Promise<void> {
    const where = this.inBackground.checked ? "background" : this.inTmux.checked ? "tmux" : "terminal";
    const body = newSessionBody({
      agent: this.agent.value as Agent,
      cwd: this.folder.value,
      prompt: this.prompt.value,
      mode: this.mode.value,
      where,
    });
    this.submit.disabled = true;
    this.status.textContent = "starting…";
    try {
      const answer = await request(this.host.settings, NEW_PATH, { method: "POST", body: JSON.stringify(body) });
      const reply = (await answer.json().catch(() => ({}))) as {
        terminal?: string;
        tmux?: string;
        background?: string;
        error?: string;
        message?: string;
      };
      if (answer.status === 201) {
        this.prompt.value = "";
        if (reply.terminal) {
          this.status.textContent = `Started in terminal ${reply.terminal}.`;
          this.host.openTerminal(reply.terminal);
        } else if (reply.background) {
          this.status.textContent = `Started in the background: job ${reply.background}.`;
        } else {
          this.status.textContent = `Started in tmux ${reply.tmux ?? ""}.`.replace(" .", ".");
        }
      } else {
        this.status.textContent = `Not started: ${reply.error ?? reply.message ?? `HTTP ${answer.status}`}`;
      }
    } catch (reason) {
      this.status.textContent = `Not started: ${String(reason)}`;
    } finally {
      this.submit.disabled = false;
    }
  }
}

function request(settings: ServerConnection.ISettings, path: string, init: RequestInit): Promise<Response> {
  return ServerConnection.makeRequest(URLExt.join(settings.baseUrl, path), init, settings);
}

function input<T extends HTMLElement>(form: HTMLElement, id: string, label: string, field: T): T {
  const wrap = document.createElement("div");
  wrap.className = "pmux-new-field";
  const l = document.createElement("label");
  l.htmlFor = id;
  l.textContent = label;
  field.id = id;
  wrap.append(l, field);
  form.append(wrap);
  return field;
}

function radio(parent: HTMLElement, name: string, value: string, label: string): HTMLInputElement {
  const l = document.createElement("label");
  const r = document.createElement("input");
  r.type = "radio";
  r.name = name;
  r.value = value;
  l.append(r, ` ${label}`);
  parent.append(l);
  return r;
}
