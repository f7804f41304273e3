// One meaning of "need you" (issue 30): the status bar said "2 need you" while the panel's
// "Needs you" section said "1 session", its review row sitting below it. The words and the rows
// here must be Python's (the sample is generated from core/wording.py and core/contract.py):
// the count, the sentence, the tab title, and which rows the bell, the section, the sheet and
// the status item's tooltip hold.
import { afterEach, describe, expect, it } from "vitest";
import { waitingList } from "../lab/src/waiting";
import { attentionRows } from "../src/render/sheet";
import { NEEDS_YOU, needYou, needYouSentence, titlePrefix } from "../src/states";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { SAMPLE } from "../testing/contract-sample.gen";
import { mount, q, type Mounted } from "./helpers";

let mounted: Mounted | null = null;
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
  localStorage.removeItem("pmux-widget.grouping");
});

const sorted = (ids: Iterable<string | undefined>): string[] => [...ids].map(String).sort();
const idsIn = (node: ParentNode, selector: string): string[] =>
  sorted([...node.querySelectorAll<HTMLElement>(selector)].map((n) => n.dataset.sessionId));

describe("need you, in Python's words", () => {
  it("says the count, the sentence and the tab title's prefix as the kernel and `status` do", () => {
    expect(Object.keys(SAMPLE.need_you).length).toBeGreaterThan(2);
    for (const [n, [count, sentence, title]] of Object.entries(SAMPLE.need_you)) {
      expect(needYou(Number(n))).toBe(count);
      expect(needYouSentence(Number(n))).toBe(sentence);
      expect(titlePrefix(Number(n))).toBe(title);
    }
    expect(NEEDS_YOU).toBe("Needs you");
  });

  it("counts and lists the same rows everywhere: the bell, the Needs you section, the sheet, the tooltip", async () => {
    const n = SAMPLE.counts.attention;
    const want = sorted(SAMPLE.needs_you_ids);
    expect(want.length).toBe(n); // the sample's own two numbers agree
    expect(n).toBeGreaterThan(1);
    expect(sorted(attentionRows(SAMPLE.rows).map((r) => r.session_id))).toEqual(want);

    mounted = await mount(new FakeModel({ snapshot: snapshotOf(SAMPLE.rows, 1) }));
    const root = mounted.el;
    expect(q(root, ".pmux-bell-count").textContent).toBe(String(n));
    expect(q(root, ".pmux-bell").getAttribute("aria-label")).toBe(`${needYouSentence(n)}: open the list`);
    // by workspace: the pinned block
    const section = q(root, `.pmux-group[data-group="${NEEDS_YOU}"]`);
    expect(idsIn(section, ".pmux-row")).toEqual(want);
    expect(q(section, ".pmux-group-summary").textContent).toBe(`${n} sessions`);
    // by state: the first group, the same rows
    const select = q<HTMLSelectElement>(root, ".pmux-grouping select");
    select.value = "state";
    select.dispatchEvent(new Event("change"));
    expect(idsIn(q(root, `.pmux-group[data-group="${NEEDS_YOU}"]`), ".pmux-row")).toEqual(want);
    // the bell's sheet
    q<HTMLButtonElement>(root, ".pmux-bell").click();
    expect(q(root, ".pmux-sheet-title").textContent).toBe(NEEDS_YOU);
    expect(idsIn(q(root, ".pmux-sheet"), ".pmux-sheet-item")).toEqual(want);
    // the status item's (and Notebook 7's top bar's) tooltip: the sentence, then one line each
    const tip = waitingList(SAMPLE.rows).split("\n");
    expect(tip[0]).toBe(`${needYouSentence(n)}:`);
    expect(tip.length).toBe(1 + n);
  });
});
