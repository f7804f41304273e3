// What the `env` trait calls for: the "Claude not installed" screen, the "hooks not installed"
// banner with its Install button, the result of an install, the empty state, and the
// sidebar note. Each is one element shown or hidden; nothing here depends on the fleet size.
import { el, setAttr, setClass, setData, setHidden, text } from "../dom";
import type { Env, InstallResult } from "../types";

export interface ScreenState {
  env: Env | null;
  note: string;
  /** the latest install answer: the message if one came in, else env.install_result */
  installResult: InstallResult | null;
  /** Install was clicked and no answer came yet */
  installing: boolean;
  liveCount: number;
  endedCount: number;
}

export class Screens {
  readonly note: HTMLDivElement;
  readonly noClaude: HTMLDivElement;
  readonly hooksBanner: HTMLDivElement;
  readonly empty: HTMLDivElement;
  private readonly noteText: Text;
  private readonly problemText: Text;
  private readonly installButton: HTMLButtonElement;
  private readonly resultLine: HTMLDivElement;
  private readonly resultText: Text;
  private readonly emptyTitle: Text;

  constructor(onInstall: () => void) {
    this.note = el("div", "pmux-note");
    this.note.setAttribute("role", "note");
    this.noteText = text(this.note);

    this.noClaude = el("div", "pmux-screen pmux-screen--no-claude");
    this.noClaude.appendChild(el("h3", "pmux-screen-title", "Claude Code not installed"));
    const explain = this.noClaude.appendChild(el("p"));
    explain.append(
      "No Claude Code configuration directory was found. pmux-widget reads ",
      el("code", "", "$CLAUDE_CONFIG_DIR"),
      " when it is set, otherwise ",
      el("code", "", "~/.claude"),
      ".",
    );
    const fix = this.noClaude.appendChild(el("p"));
    fix.append(
      "Install Claude Code and run ",
      el("code", "", "claude"),
      " once, or set ",
      el("code", "", "CLAUDE_CONFIG_DIR"),
      " to the directory your Claude uses before starting Jupyter.",
    );

    this.hooksBanner = el("div", "pmux-banner pmux-banner--hooks");
    this.hooksBanner.setAttribute("role", "region");
    this.hooksBanner.setAttribute("aria-label", "Hooks not installed");
    const bannerText = this.hooksBanner.appendChild(el("p", "pmux-banner-text"));
    bannerText.append(
      el("strong", "", "Hooks not installed."),
      " States come from PID files and transcripts only: slower, and permission prompts may be missed.",
    );
    this.problemText = text(this.hooksBanner.appendChild(el("p", "pmux-banner-problem")));
    this.installButton = this.hooksBanner.appendChild(el("button", "pmux-install", "Install hooks"));
    this.installButton.type = "button";
    this.installButton.addEventListener("click", () => {
      if (this.installButton.getAttribute("aria-disabled") !== "true") onInstall();
    });
    this.resultLine = el("div", "pmux-install-result");
    this.resultLine.setAttribute("role", "status");
    this.resultText = text(this.resultLine);

    this.empty = el("div", "pmux-empty");
    this.emptyTitle = text(this.empty.appendChild(el("p", "pmux-empty-title")));
    const how = this.empty.appendChild(el("p"));
    how.append(
      "Start one: run ",
      el("code", "", "claude"),
      " in a terminal (inside tmux to see window.pane names). It shows up here within a second.",
    );
  }

  /** The install answer is shown below the banner, or on its own once hooks are installed. */
  get installResultLine(): HTMLDivElement {
    return this.resultLine;
  }

  update(s: ScreenState): void {
    setData(this.noteText, s.note);
    setHidden(this.note, s.note === "");

    const noClaude = s.env?.claude_installed === false;
    setHidden(this.noClaude, !noClaude);

    const hooksMissing = !noClaude && s.env?.hooks_installed === false;
    setHidden(this.hooksBanner, !hooksMissing);
    const problem = s.env?.hooks_problem ?? "";
    setData(this.problemText, problem);
    setHidden(this.problemText.parentElement as HTMLElement, problem === "");
    setAttr(this.installButton, "aria-disabled", s.installing ? "true" : null);
    setData(this.installButton.firstChild as Text, s.installing ? "Installing…" : "Install hooks");
    setAttr(
      this.installButton,
      "title",
      s.installing
        ? "Runs when the kernel is idle (Jupyter handles widget messages between cells)"
        : "Add pmux-widget's entries to Claude's settings.json (a backup is written first)",
    );

    const result = s.installing ? null : s.installResult;
    setHidden(this.resultLine, result === null);
    if (result) {
      setData(this.resultText, result.message || (result.ok ? "Hooks installed." : "Install failed."));
      setClass(this.resultLine, `pmux-install-result ${result.ok ? "pmux-ok" : "pmux-error"}`);
    }

    const none = s.liveCount === 0 && !noClaude;
    setHidden(this.empty, !none);
    setData(
      this.emptyTitle,
      s.endedCount > 0 ? "No running Claude Code sessions." : "No Claude Code sessions yet.",
    );
  }
}
