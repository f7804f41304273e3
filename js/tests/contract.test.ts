// The browser against the Python contract: the sample (generated from core/contract.py, with
// the counts of core.model.count_states and the labels of contract.describe_source) must come
// out the same here, so the two sides cannot count or label a fleet differently.
import { describe, expect, it } from "vitest";
import { contextWindow, describeSource } from "../src/format";
import { emptyCounts, isState } from "../src/states";
import { countRows, normalizeRow, SessionStore } from "../src/store";
import { COUNT_KEYS, STATES } from "../src/types";
import { SAMPLE } from "../testing/contract-sample.gen";

describe("the Python contract's sample", () => {
  it("counts the same as the kernel (count_states over the live rows)", () => {
    expect(countRows(SAMPLE.rows)).toEqual(SAMPLE.counts);
    // the store's own tally, when a kernel sends no counts
    const store = new SessionStore();
    const sessions = Object.fromEntries(SAMPLE.rows.map((row) => [row.session_id, row]));
    store.applySnapshot({ seq: 1, sessions });
    expect(store.counts).toEqual(SAMPLE.counts);
  });

  it("labels every source the same as the kernel", () => {
    for (const [source, label] of Object.entries(SAMPLE.sources)) {
      expect(describeSource(source)).toBe(label);
    }
  });

  it("finds the same context window per model as the kernel", () => {
    for (const [model, size] of Object.entries(SAMPLE.windows)) expect(contextWindow(model || null)).toBe(size);
  });

  it("keeps every row's question as the kernel sent it (each kind of dialog)", () => {
    const kinds = new Set<string>();
    for (const row of SAMPLE.rows) {
      expect(normalizeRow(row).question).toEqual(row.question);
      if (row.question) kinds.add(row.question.kind);
    }
    expect([...kinds].sort()).toEqual(["permission", "plan", "question"]);
    expect(normalizeRow({ ...SAMPLE.rows[0], question: { kind: "bogus" } }).question).toBeNull();
  });

  it("has the contract's states and count keys", () => {
    expect(Object.keys(emptyCounts())).toEqual([...COUNT_KEYS]);
    expect(STATES.every(isState)).toBe(true);
    for (const row of SAMPLE.rows) expect(isState(row.state)).toBe(true);
  });
});
