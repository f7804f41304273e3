import { describe, expect, it } from "vitest";
import {
  contextText,
  contextWarning,
  describeSource,
  errorText,
  formatAge,
  formatCount,
  inlineCode,
  tokensText,
  tokensTitle,
  toolText,
  waitingText,
} from "../src/format";
import { makeRow, T0 } from "../testing/fixtures";

describe("formatAge (time in state)", () => {
  it.each([
    [0, "0s"],
    [999, "0s"],
    [12_000, "12s"],
    [59_999, "59s"],
    [60_000, "1m"],
    [4 * 60_000 + 59_000, "4m"],
    [59 * 60_000, "59m"],
    [60 * 60_000, "1h"],
    [2 * 3600_000 + 5 * 60_000, "2h"],
    [47 * 3600_000, "47h"],
    [48 * 3600_000, "2d"],
    [10 * 86400_000, "10d"],
  ])("%i ms → %s", (elapsed, expected) => {
    expect(formatAge(T0, T0 + elapsed)).toBe(expected);
  });

  it("reads a kernel clock ahead of the browser as 0s, and no time as nothing", () => {
    expect(formatAge(T0 + 5000, T0)).toBe("0s");
    expect(formatAge(0, T0)).toBe("");
  });
});

describe("formatCount / tokens / context", () => {
  it.each([
    [0, "0"],
    [950, "950"],
    [1000, "1k"],
    [1234, "1.2k"],
    [12_345, "12.3k"],
    [45_000, "45k"],
    [123_456, "123k"],
    [1_234_567, "1.2M"],
    [250_000_000, "250M"],
  ])("%i → %s", (n, expected) => {
    expect(formatCount(n)).toBe(expected);
  });

  it("sums input with cache reads and writes, and says nothing before the first response", () => {
    expect(tokensText({ input: 300, output: 1200, cache_read: 12_000, cache_creation: 0 })).toBe(
      "12.3k in · 1.2k out",
    );
    expect(tokensText({ input: 0, output: 0, cache_read: 0, cache_creation: 0 })).toBe("");
  });

  it("tells the context as a share of the model's window, and warns near auto-compaction", () => {
    expect(contextText(166_000, 200_000)).toBe("ctx 83%");
    expect(contextText(166_000, 1_000_000)).toBe("ctx 17%");
    expect(contextText(0, 200_000)).toBe("");
    expect(contextWarning(150_000, 200_000)).toBeNull();
    expect(contextWarning(166_000, 200_000)).toBe("compacts soon");
    expect(contextWarning(186_000, 200_000)).toBe("compacts now");
    expect(contextWarning(186_000, 1_000_000)).toBeNull();
    // the tooltip holds the totals and the cache split
    const title = tokensTitle({ input: 300, output: 1200, cache_read: 7_600_000, cache_creation: 5 }, 166_000, 200_000);
    expect(title).toBe(
      "context 166,000 of 200,000 (83%)\ntokens: 1,200 out · 300 fresh in · 7,600,000 cache read · 5 cache write",
    );
  });

  it("renders markdown's inline code", () => {
    expect(inlineCode("run `make` then `pytest -q`.")).toEqual([
      { code: false, text: "run " },
      { code: true, text: "make" },
      { code: false, text: " then " },
      { code: true, text: "pytest -q" },
      { code: false, text: "." },
    ]);
    expect(inlineCode("no code, a lone ` tick")).toEqual([{ code: false, text: "no code, a lone ` tick" }]);
  });
});

describe("describeSource (why)", () => {
  it.each([
    ["hook:Stop", "finished its turn"],
    ["hook:PermissionRequest", "asked for permission"],
    ["hook:UserPromptSubmit", "got a prompt"],
    ["transcript:interrupt", "interrupted"],
    ["wait:background-agent", "waiting for a background agent"],
    ["pid:waiting", "waiting for you"],
    ["pid:idle", "at its prompt"],
    ["process:gone", "its process exited"],
    ["user:dismiss", "marked as seen"],
    ["recovery:transcript", "finished while the hub was down"],
    ["recovery:pid:busy", "working (at restart)"],
    ["hook:Elicitation", "signal: Elicitation"],
    ["something:new", "something:new"],
    ["", ""],
  ])("%s → %s", (source, expected) => {
    expect(describeSource(source)).toBe(expected);
  });
});

describe("tool, waiting and error texts", () => {
  it("prefixes the tool only when the summary does not start with it", () => {
    expect(toolText("Bash", "$ pytest -q")).toBe("Bash · $ pytest -q");
    expect(toolText("Read", "Read src/x.py")).toBe("Read src/x.py");
    expect(toolText("Bash", null)).toBe("Bash");
    expect(toolText(null, null)).toBeNull();
  });

  it("says what a needs-input session asks, in the kernel's words", () => {
    const s = makeRow({ session_id: "a", state: "needs-input" });
    expect(waitingText({ ...s, asks: "asks to run: rm -rf build" })).toBe("asks to run: rm -rf build");
    // an older kernel, without `asks`: the raw fields
    expect(waitingText({ ...s, asks: null, waiting_for: "permission" })).toBe("permission");
    expect(waitingText({ ...s, asks: null, current_tool: "Bash", tool_summary: "$ rm -rf build" })).toBe(
      "Bash · $ rm -rf build",
    );
    expect(waitingText({ ...s, asks: null })).toBe("waits for your answer");
  });

  it("joins error and error_detail", () => {
    const s = makeRow({ session_id: "a" });
    expect(errorText({ ...s, error: "rate_limit", error_detail: "429 Too Many Requests" })).toBe(
      "rate_limit: 429 Too Many Requests",
    );
    expect(errorText({ ...s, error: "overloaded" })).toBe("overloaded");
    expect(errorText(s)).toBeNull();
  });
});
