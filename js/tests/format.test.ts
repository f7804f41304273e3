import { describe, expect, it } from "vitest";
import {
  contextText,
  describeSource,
  errorText,
  formatAge,
  formatCount,
  tokensText,
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
    expect(contextText(45_000)).toBe("ctx 45k");
    expect(contextText(0)).toBe("");
  });
});

describe("describeSource (why)", () => {
  it.each([
    ["hook:Stop", "via Stop hook"],
    ["hook:PermissionRequest", "via PermissionRequest hook"],
    ["transcript:interrupt", "interrupted (Esc)"],
    ["pid:waiting", "PID file says waiting"],
    ["pid:idle", "PID file says idle"],
    ["process:gone", "process exited"],
    ["user:dismiss", "dismissed"],
    ["recovery:transcript", "transcript ended cleanly"],
    ["recovery:pid:busy", "PID file says busy (at restart)"],
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

  it("says what a needs-input session waits for", () => {
    const s = makeRow({ session_id: "a", state: "needs-input" });
    expect(waitingText({ ...s, waiting_for: "permission" })).toBe("waiting for: permission");
    expect(waitingText({ ...s, current_tool: "Bash", tool_summary: "$ rm -rf build" })).toBe(
      "waiting for: Bash · $ rm -rf build",
    );
    expect(waitingText(s)).toBe("waiting for your answer");
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
