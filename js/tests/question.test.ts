// Claude's questions and plans answered from the row and the sheet (issue 34): option buttons,
// checkboxes and Submit, Other, a plan's Approve / Keep planning; each click names the dialog
// it saw (dialog_token), nothing more goes while one travels, Approve / Deny never on a
// question, the row's own words stay; "seen" when a review row's peek or attach opens.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Question, Row } from "../src/types";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowEl, visible, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;

beforeEach(() => vi.useFakeTimers({ now: T0 + 5_000 }));
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  vi.useRealTimers();
});

async function show(rows: Row[]) {
  const fake = new FakeModel({ snapshot: snapshotOf(rows, 1) });
  mounted = await mount(fake);
  return { fake, root: mounted.el };
}

const colour: Question = {
  kind: "question",
  questions: [
    {
      question: "Which colour should the badge use?",
      header: "Colour",
      multi_select: false,
      options: [
        { label: "Purple", description: "the review colour" },
        { label: "Amber", description: "the needs-input colour" },
      ],
    },
  ],
  plan: null,
};

const checks: Question = {
  kind: "question",
  questions: [
    {
      question: "Which checks should run?",
      header: "Checks",
      multi_select: true,
      options: [
        { label: "Lint", description: "" },
        { label: "Types", description: "" },
        { label: "Tests", description: "" },
      ],
    },
  ],
  plan: null,
};

const two: Question = {
  kind: "question",
  questions: [
    colour.questions[0]!,
    {
      question: "Where does it go?",
      header: "Place",
      multi_select: false,
      options: [
        { label: "Header", description: "" },
        { label: "Row", description: "" },
      ],
    },
  ],
  plan: null,
};

const plan: Question = { kind: "plan", questions: [], plan: "1. Add the badge.\n2. Test it." };

function asking(question: Question, asks: string, token = "needs-input:1:q"): Row {
  return makeRow({ session_id: "a", name: "api", state: "needs-input", asks, question, dialog_token: token });
}

const buttons = (root: Element) =>
  [...root.querySelectorAll<HTMLButtonElement>("button")].filter((b) => visible(b)).map((b) => b.textContent);

describe("a question", () => {
  it("shows its header, text and options as buttons; a click answers with that label and the token", async () => {
    const { fake, root } = await show([asking(colour, "asks: Which colour should the badge use? — Purple / Amber")]);
    const row = rowEl(root, "a");
    // the row's words stay
    expect(q(row, ".pmux-primary").textContent).toContain("asks: Which colour should the badge use?");
    const group = q(row, '.pmux-ask [role="group"]');
    const name = root.querySelector(`#${group.getAttribute("aria-labelledby")!}`)!;
    expect(name.textContent).toBe("ColourWhich colour should the badge use?");
    expect(q(name, ".pmux-ask-header").textContent).toBe("Colour");
    // no Approve / Deny on a question
    expect(visible(row.querySelector(".pmux-act--approve"))).toBe(false);
    expect(visible(row.querySelector(".pmux-act--deny"))).toBe(false);
    const options = [...group.querySelectorAll<HTMLButtonElement>(".pmux-act--option")];
    expect(options.map((b) => b.textContent)).toEqual(["Purple", "Amber"]);
    expect(options[1]!.tagName).toBe("BUTTON");
    expect(options[1]!.getAttribute("aria-label")).toBe("Answer Amber: api");
    expect(options[1]!.title).toBe("the needs-input colour");
    options[1]!.click();
    options[0]!.click(); // refused locally while the first travels
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "answer", text: null, token: "needs-input:1:q", options: ["Amber"] },
    ]);
    expect(q(row, ".pmux-status").textContent).toBe("answering… · 5s");
    expect(options[0]!.getAttribute("aria-disabled")).toBe("true");
  });

  it("answers Other with the typed text (Enter or Send), with no option", async () => {
    const { fake, root } = await show([asking(colour, "asks: Which colour…")]);
    const row = rowEl(root, "a");
    const other = q<HTMLInputElement>(row, ".pmux-ask-other input");
    expect(other.getAttribute("aria-label")).toBe("Other answer (your own words): api");
    q<HTMLButtonElement>(row, ".pmux-act--other").click(); // empty: nothing sent
    expect(fake.sent).toEqual([]);
    other.value = "  Teal  ";
    other.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "answer", text: "Teal", token: "needs-input:1:q", options: [] },
    ]);
  });

  it("multi-select: checkboxes with labels, Submit sends every ticked label", async () => {
    const { fake, root } = await show([asking(checks, "asks: Which checks should run? — Lint / Types / Tests")]);
    const row = rowEl(root, "a");
    const boxes = [...row.querySelectorAll<HTMLInputElement>('.pmux-ask input[type="checkbox"]')];
    expect(boxes.map((b) => b.closest("label")!.textContent)).toEqual(["Lint", "Types", "Tests"]);
    expect(row.querySelector(".pmux-act--option")).toBeNull();
    const submit = q<HTMLButtonElement>(row, ".pmux-act--submit");
    submit.click(); // nothing ticked: nothing sent
    expect(fake.sent).toEqual([]);
    expect(submit.hasAttribute("data-ready")).toBe(false);
    for (const box of [boxes[0]!, boxes[2]!]) {
      box.checked = true;
      box.dispatchEvent(new Event("change"));
    }
    expect(submit.hasAttribute("data-ready")).toBe(true);
    submit.click();
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "answer", text: null, token: "needs-input:1:q", options: ["Lint", "Tests"] },
    ]);
  });

  it("several questions: one choice each, one Submit with the labels in the questions' order", async () => {
    const { fake, root } = await show([asking(two, "asks: 2 questions")]);
    const row = rowEl(root, "a");
    const groups = row.querySelectorAll('.pmux-ask [role="group"]');
    expect(groups).toHaveLength(2);
    const radios = (g: Element) => [...g.querySelectorAll<HTMLInputElement>('input[type="radio"]')];
    radios(groups[1]!)[1]!.click(); // Row
    q<HTMLButtonElement>(row, ".pmux-act--submit").click(); // the first question has no answer
    expect(fake.sent).toEqual([]);
    radios(groups[0]!)[0]!.click(); // Purple
    q<HTMLButtonElement>(row, ".pmux-act--submit").click();
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "answer", text: null, token: "needs-input:1:q", options: ["Purple", "Row"] },
    ]);
  });

  it("keeps what was ticked across patches that leave the question alone, rebuilds for a new one", async () => {
    const { fake, root } = await show([asking(checks, "asks: Which checks…")]);
    const row = rowEl(root, "a");
    const box = q<HTMLInputElement>(row, '.pmux-ask input[type="checkbox"]');
    box.checked = true;
    fake.emitCustom({ type: "patch", seq: 2, upsert: [{ ...asking(checks, "asks: Which checks…"), context_tokens: 5 }] });
    expect(q<HTMLInputElement>(row, '.pmux-ask input[type="checkbox"]')).toBe(box);
    expect(box.checked).toBe(true);
    fake.emitCustom({ type: "patch", seq: 3, upsert: [asking(colour, "asks: Which colour…", "needs-input:2:q")] });
    expect(row.querySelectorAll(".pmux-ask")).toHaveLength(1);
    expect(row.querySelector('.pmux-ask input[type="checkbox"]')).toBeNull();
    q<HTMLButtonElement>(row, ".pmux-act--option").click();
    expect(fake.sent[fake.sent.length - 1]).toMatchObject({ action: "answer", options: ["Purple"], token: "needs-input:2:q" });
  });

  it("the same question asked again (a new dialog) starts with nothing ticked", async () => {
    const { fake, root } = await show([asking(checks, "asks: Which checks…")]);
    const row = rowEl(root, "a");
    const boxes = () => [...row.querySelectorAll<HTMLInputElement>('.pmux-ask input[type="checkbox"]')];
    boxes()[0]!.checked = true;
    boxes()[0]!.dispatchEvent(new Event("change"));
    q<HTMLButtonElement>(row, ".pmux-act--submit").click();
    expect(fake.sent).toHaveLength(1);
    fake.emitCustom({ type: "action_result", session_id: "a", action: "answer", ok: true, message: "", queued: false });
    // answered: the turn goes on, then asks the very same question once more
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "a", name: "api", state: "busy" })] });
    fake.emitCustom({ type: "patch", seq: 3, upsert: [asking(checks, "asks: Which checks…", "needs-input:9:q")] });
    expect(boxes().map((b) => b.checked)).toEqual([false, false, false]);
    boxes()[1]!.checked = true;
    boxes()[1]!.dispatchEvent(new Event("change"));
    q<HTMLButtonElement>(row, ".pmux-act--submit").click();
    expect(fake.sent[fake.sent.length - 1]).toMatchObject({ options: ["Types"], token: "needs-input:9:q" });
  });

  it("shows the refusal of a stale click and can be answered again", async () => {
    const { fake, root } = await show([asking(colour, "asks: Which colour…")]);
    const row = rowEl(root, "a");
    q<HTMLButtonElement>(row, ".pmux-act--option").click();
    fake.emitCustom({
      type: "action_result",
      session_id: "a",
      action: "answer",
      ok: false,
      message: "api: the dialog changed since it was shown; look again",
      queued: false,
    });
    expect(q(row, ".pmux-act-note").textContent).toBe("refused: api: the dialog changed since it was shown; look again");
    const option = q<HTMLButtonElement>(row, ".pmux-act--option");
    expect(option.hasAttribute("aria-disabled")).toBe(false);
    option.click();
    expect(fake.sent).toHaveLength(2);
  });

  it("leaves with needs-input; a permission keeps Approve / Deny", async () => {
    const { fake, root } = await show([asking(colour, "asks: Which colour…")]);
    const row = rowEl(root, "a");
    fake.emitCustom({ type: "patch", seq: 2, upsert: [makeRow({ session_id: "a", name: "api", state: "busy" })] });
    expect(visible(row.querySelector(".pmux-ask"))).toBe(false);
    const permission: Question = { kind: "permission", questions: [], plan: null };
    fake.emitCustom({ type: "patch", seq: 3, upsert: [asking(permission, "asks to run: make", "needs-input:3:p")] });
    expect(visible(row.querySelector(".pmux-ask"))).toBe(false);
    expect(visible(q(row, ".pmux-act--approve"))).toBe(true);
    expect(visible(q(row, ".pmux-act--deny"))).toBe(true);
  });

  it("is answerable in the bell's sheet too", async () => {
    const { fake, root } = await show([asking(colour, "asks: Which colour…")]);
    q<HTMLButtonElement>(root, ".pmux-bell").click();
    const item = q(root, '.pmux-sheet-item[data-session-id="a"]');
    expect(item.querySelector('[role="group"]')).not.toBeNull();
    const options = [...item.querySelectorAll<HTMLButtonElement>(".pmux-act--option")];
    expect(options.map((b) => b.textContent)).toEqual(["Purple", "Amber"]);
    expect(visible(item.querySelector(".pmux-act--approve"))).toBe(false);
    options[0]!.click();
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "answer", text: null, token: "needs-input:1:q", options: ["Purple"] },
    ]);
    // ids stay unique with the row and the sheet both drawing the question
    const ids = [...root.querySelectorAll("[id]")].map((n) => n.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("a plan", () => {
  it("shows its text folded, Approve sends approve with the token", async () => {
    const { fake, root } = await show([asking(plan, "plan ready: 1. Add the badge.", "needs-input:1:plan")]);
    const row = rowEl(root, "a");
    const details = q<HTMLDetailsElement>(row, ".pmux-ask details");
    expect(details.open).toBe(false);
    expect(q(details, "summary").textContent).toBe("Plan");
    expect(q(details, "pre").textContent).toBe("1. Add the badge.\n2. Test it.");
    expect(q(row, '.pmux-ask [role="group"]').getAttribute("aria-label")).toBe("Plan ready: api");
    expect(buttons(q(row, ".pmux-ask"))).toEqual(["Approve", "Keep planning"]);
    expect(row.querySelectorAll(".pmux-act--approve")).toHaveLength(1); // the form's, not the bar's
    q<HTMLButtonElement>(row, ".pmux-ask .pmux-act--approve").click();
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "approve", text: null, token: "needs-input:1:plan" },
    ]);
  });

  it("Keep planning sends deny with the feedback typed (or none)", async () => {
    const { fake, root } = await show([asking(plan, "plan ready: 1. Add the badge.", "needs-input:1:plan")]);
    const row = rowEl(root, "a");
    const feedback = q<HTMLInputElement>(row, ".pmux-ask input");
    expect(feedback.getAttribute("aria-label")).toBe("Feedback to keep planning with (optional): api");
    feedback.value = "Also update the docs.";
    q<HTMLButtonElement>(row, ".pmux-ask .pmux-act--deny").click();
    expect(fake.sent).toEqual([
      { type: "action", session_id: "a", action: "deny", text: "Also update the docs.", token: "needs-input:1:plan" },
    ]);
  });

  it("says 'plan ready' when the CLI keeps the plan's text off the hook", async () => {
    const { root } = await show([asking({ kind: "plan", questions: [], plan: null }, "plan ready")]);
    const row = rowEl(root, "a");
    expect(row.querySelector(".pmux-ask details")).toBeNull();
    expect(q(row, ".pmux-ask .pmux-ask-question").textContent).toBe("plan ready");
    expect(buttons(q(row, ".pmux-ask"))).toEqual(["Approve", "Keep planning"]);
  });
});

describe("seen", () => {
  const review = makeRow({ session_id: "r", name: "done", state: "review", last_assistant: "All green." });

  it("opening a review row's peek says it was seen; a busy row's does not", async () => {
    const busy = makeRow({ session_id: "b", name: "busy", state: "busy" });
    const { fake, root } = await show([review, busy]);
    for (const id of ["r", "b"]) {
      const row = rowEl(root, id);
      row.focus();
      row.dispatchEvent(new FocusEvent("focusin", { bubbles: true }));
      q<HTMLButtonElement>(row, ".pmux-act--peek").click();
    }
    expect(fake.sent.filter((m) => (m as { type: string }).type === "seen")).toEqual([{ type: "seen", session_id: "r" }]);
  });
});
