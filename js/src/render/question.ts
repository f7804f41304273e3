// What a needs-input row asks, answerable from the row (issue 34): Claude Code's question
// (AskUserQuestion: 1–4 questions, each 2–4 options, single or multi-select, plus "Other") and
// its plan (ExitPlanMode). The row's `asks` line stays above it: the form is never the only way
// to read what is asked.
//
// - One single-select question: each option is a button; a click answers with its label.
// - Several questions, or a multi-select: radio buttons / checkboxes per question, one Submit
//   with every chosen label (the kernel maps labels to their questions).
// - Other: a text box; Enter or its button sends the text (with any chosen labels).
// - A plan: its text in a <details> (collapsed; "plan ready" when the CLI keeps it off the
//   hook), then Approve, and Keep planning with an optional feedback text (a deny).
// Every question is a group (role="group") named by its header and question, every control a
// real button, checkbox or labelled input: reachable by Tab and read by screen readers.
// The form is rebuilt only when the dialog changes: a new question, or the same question asked
// again (a new needs-input entry: what was ticked for the last one was sent with it). A patch
// that leaves the dialog alone keeps what the user ticked or typed.
import { el, setAttr, setHidden } from "../dom";
import type { ActionName, Ask, Question, Row } from "../types";

/** How the form answers: the view sends the action with the row's dialog token. */
export type Answerer = (action: ActionName, text?: string, options?: string[]) => void;

let nextId = 0;

/** The form's identity: a new question (or plan), or the same one asked again (a new dialog:
 * its `dialog_token` names the needs-input entry), rebuilds it. */
export function formKey(row: Row): string {
  return row.question ? `${row.dialog_token ?? ""}:${JSON.stringify(row.question)}` : "";
}

/** Does this row get a form (a question with questions, or a plan)? */
export function hasForm(row: Row): boolean {
  const q = row.question;
  if (row.ended || !row.running || row.state !== "needs-input" || !q) return false;
  return (q.kind === "question" && q.questions.length > 0) || q.kind === "plan";
}

export class QuestionForm {
  readonly el: HTMLDivElement;
  readonly key: string;
  private readonly controls: (HTMLButtonElement | HTMLInputElement)[] = [];
  private readonly choices: { ask: Ask; inputs: HTMLInputElement[] }[] = [];
  private textInput: HTMLInputElement | null = null;
  private submit: HTMLButtonElement | null = null;
  private disabled = false;

  constructor(
    question: Question,
    private readonly rowName: string,
    private readonly answer: Answerer,
    key: string,
  ) {
    this.key = key;
    this.el = el("div", "pmux-ask");
    if (question.kind === "plan") this.buildPlan(question.plan);
    else this.buildQuestions(question.questions);
  }

  /** While a click travels, nothing more is sent (as Approve's aria-disabled). */
  setDisabled(disabled: boolean): void {
    this.disabled = disabled;
    for (const control of this.controls) setAttr(control, "aria-disabled", disabled ? "true" : null);
  }

  private id(): string {
    nextId += 1;
    return `pmux-ask-${nextId}`;
  }

  private button(label: string, className: string, onClick: () => void, aria?: string): HTMLButtonElement {
    const button = el("button", `pmux-act ${className}`, label);
    button.type = "button";
    if (aria) button.setAttribute("aria-label", aria);
    button.addEventListener("click", () => {
      if (!this.disabled) onClick();
    });
    this.controls.push(button);
    return button;
  }

  private buildQuestions(asks: Ask[]): void {
    // One single-select question: a click is the answer.
    const direct = asks.length === 1 && !asks[0]!.multi_select;
    for (const ask of asks) {
      const group = this.el.appendChild(el("div", "pmux-ask-group"));
      group.setAttribute("role", "group");
      const titleId = this.id();
      const title = group.appendChild(el("div", "pmux-ask-question"));
      title.id = titleId;
      if (ask.header) title.appendChild(el("span", "pmux-ask-header", ask.header));
      title.appendChild(document.createTextNode(ask.question));
      if (ask.multi_select) title.appendChild(el("span", "pmux-ask-hint", " (choose any)"));
      group.setAttribute("aria-labelledby", titleId);
      const options = group.appendChild(el("div", "pmux-ask-options"));
      if (direct) {
        for (const option of ask.options) {
          const button = this.button(
            option.label,
            "pmux-act--option",
            () => this.answer("answer", undefined, [option.label]),
            `Answer ${option.label}: ${this.rowName}`,
          );
          if (option.description) button.title = option.description;
          options.appendChild(button);
        }
        continue;
      }
      const name = this.id();
      const inputs: HTMLInputElement[] = [];
      for (const option of ask.options) {
        const label = options.appendChild(el("label", "pmux-ask-choice"));
        const input = label.appendChild(el("input"));
        input.type = ask.multi_select ? "checkbox" : "radio";
        input.name = name;
        input.value = option.label;
        input.addEventListener("change", () => this.refreshSubmit());
        label.appendChild(document.createTextNode(option.label));
        if (option.description) label.title = option.description;
        this.controls.push(input);
        inputs.push(input);
      }
      this.choices.push({ ask, inputs });
    }
    this.buildOther(direct);
    if (!direct) {
      this.submit = this.button("Submit", "pmux-act--submit", () => this.send(), `Submit the answer: ${this.rowName}`);
      this.el.appendChild(this.submit);
      this.refreshSubmit();
    }
  }

  /** The free-text answer ("Other"). */
  private buildOther(direct: boolean): void {
    const row = this.el.appendChild(el("div", "pmux-ask-other"));
    const input = (this.textInput = row.appendChild(el("input", "pmux-prompt")));
    input.type = "text";
    input.placeholder = "Other…";
    input.setAttribute("aria-label", `Other answer (your own words): ${this.rowName}`);
    input.addEventListener("input", () => this.refreshSubmit());
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        if (!this.disabled) this.send();
      }
    });
    this.controls.push(input);
    if (direct) {
      const button = this.button("Send", "pmux-act--other", () => this.send(), `Answer in your own words: ${this.rowName}`);
      row.appendChild(button);
    }
  }

  /** The chosen labels, in the questions' order. */
  chosen(): string[] {
    return this.choices.flatMap(({ inputs }) => inputs.filter((i) => i.checked).map((i) => i.value));
  }

  /** Submit when every question has a choice, or Other has text. */
  private ready(): boolean {
    const text = this.textInput?.value.trim() ?? "";
    if (text) return true;
    return this.choices.length > 0 && this.choices.every(({ inputs }) => inputs.some((i) => i.checked));
  }

  private refreshSubmit(): void {
    if (!this.submit) return;
    setAttr(this.submit, "data-ready", this.ready() ? "true" : null);
  }

  private send(): void {
    const text = this.textInput?.value.trim() ?? "";
    const options = this.chosen();
    if (!text && (options.length === 0 || !this.ready())) {
      (this.choices.find(({ inputs }) => !inputs.some((i) => i.checked))?.inputs[0] ?? this.textInput)?.focus();
      return;
    }
    this.answer("answer", text || undefined, options);
  }

  private buildPlan(plan: string | null): void {
    const group = this.el.appendChild(el("div", "pmux-ask-group pmux-ask-plan"));
    group.setAttribute("role", "group");
    group.setAttribute("aria-label", `Plan ready: ${this.rowName}`);
    if (plan) {
      const details = group.appendChild(el("details", "pmux-plan"));
      details.appendChild(el("summary", undefined, "Plan"));
      details.appendChild(el("pre", "pmux-plan-text", plan));
    } else {
      group.appendChild(el("div", "pmux-ask-question", "plan ready"));
    }
    const buttons = group.appendChild(el("div", "pmux-ask-options"));
    buttons.appendChild(
      this.button("Approve", "pmux-act--approve", () => this.answer("approve"), `Approve the plan: ${this.rowName}`),
    );
    const feedback = (this.textInput = el("input", "pmux-prompt"));
    feedback.type = "text";
    feedback.placeholder = "Feedback (optional)…";
    feedback.setAttribute("aria-label", `Feedback to keep planning with (optional): ${this.rowName}`);
    feedback.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        if (!this.disabled) this.keepPlanning();
      }
    });
    this.controls.push(feedback);
    buttons.appendChild(
      this.button("Keep planning", "pmux-act--deny", () => this.keepPlanning(), `Keep planning: ${this.rowName}`),
    );
    buttons.appendChild(feedback);
  }

  private keepPlanning(): void {
    const text = this.textInput?.value.trim() ?? "";
    this.answer("deny", text || undefined);
  }

  /** Hide the form (the row left needs-input). */
  hide(hidden: boolean): void {
    setHidden(this.el, hidden);
  }
}
