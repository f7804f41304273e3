// Issue 36: a Codex session's row, bell item, status-bar line and terminal tab carry a small
// mark naming its agent, in the contract's words (AGENT_NAMES, core/wording.py); Claude's
// rows carry none.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { agentCan, newSessionBody } from "../lab/src/new-session-body";
import { decorFor, withClasses } from "../lab/src/tab-dots";
import { runningList, waitingList } from "../lab/src/waiting";
import { agentMark, agentName, withAgent } from "../src/agents";
import type { Row } from "../src/types";
import { AGENT_NAMES } from "../src/types";
import { SAMPLE } from "../testing/contract-sample.gen";
import { FakeModel, snapshotOf } from "../testing/fake-model";
import { makeRow, T0 } from "../testing/fixtures";
import { mount, q, rowEl, visible, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;

beforeEach(() => vi.useFakeTimers({ now: T0 + 12_000 }));
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

const codex = (over: Partial<Row> & { session_id: string }): Row => makeRow({ agent: "codex", ...over });

describe("the agent's words", () => {
  it("are the kernel's: the same mark per agent as core/wording.py, none for Claude", () => {
    for (const [agent, mark] of Object.entries(SAMPLE.agent_marks)) {
      expect(agentMark(agent as Row["agent"])).toBe(mark);
    }
    expect(agentMark("claude")).toBeNull();
    expect(agentMark("codex")).toBe("Codex");
    expect(agentName("claude")).toBe("Claude");
    expect(Object.keys(AGENT_NAMES).sort()).toEqual(["claude", "codex"]);
    expect(withAgent("api", "codex")).toBe("api (Codex)");
    expect(withAgent("api", "claude")).toBe("api");
  });

  it("the contract's sample has rows of both agents, and the store keeps each row's agent", () => {
    expect(new Set(SAMPLE.rows.map((r) => r.agent))).toEqual(new Set(["claude", "codex"]));
  });
});

describe("a row's mark", () => {
  it("a Codex row's name starts with the mark; its accessible name says it; a Claude row has none", async () => {
    const { root } = await show([
      codex({ session_id: "x", name: "api (main:1.%3)", state: "needs-input", waiting_for: "Bash: make deploy" }),
      makeRow({ session_id: "c", name: "web (main:1.%4)", state: "busy" }),
    ]);
    const row = rowEl(root, "x");
    const mark = q(row, ".pmux-name > .pmux-agent");
    expect(visible(mark)).toBe(true);
    expect(mark.textContent).toBe("Codex");
    expect(mark.className).toBe("pmux-agent pmux-agent--codex");
    expect(mark.getAttribute("title")).toMatch(/Codex/);
    // the row's accessible name carries it once (the mark itself is hidden from readers)
    expect(mark.getAttribute("aria-hidden")).toBe("true");
    expect(row.getAttribute("aria-label")).toMatch(/^api \(main:1\.%3\) \(Codex\), needs input: /);
    // the mark sits before the name's text, so the name's ellipsis never hides it
    expect(q(row, ".pmux-name").textContent).toBe("Codexapi (main:1.%3)");
    const claude = rowEl(root, "c");
    expect(claude.querySelector(".pmux-agent")).toBeNull();
    expect(claude.getAttribute("aria-label")).toMatch(/^web \(main:1\.%4\), busy/);
  });

  it("follows a row whose agent is learnt late (a Codex hook after the process was seen)", async () => {
    const { fake, root } = await show([makeRow({ session_id: "x", name: "api" })]);
    expect(rowEl(root, "x").querySelector(".pmux-agent")).toBeNull();
    fake.emitCustom({ type: "patch", seq: 2, upsert: [codex({ session_id: "x", name: "api" })], remove: [] });
    await vi.advanceTimersByTimeAsync(100);
    expect(q(rowEl(root, "x"), ".pmux-agent").textContent).toBe("Codex");
    fake.emitCustom({ type: "patch", seq: 3, upsert: [makeRow({ session_id: "x", name: "api" })], remove: [] });
    await vi.advanceTimersByTimeAsync(100);
    expect(visible(q(rowEl(root, "x"), ".pmux-agent"))).toBe(false);
    expect(rowEl(root, "x").getAttribute("aria-label")).toMatch(/^api, idle/);
  });

  it("the bell's sheet names a Codex session with its mark", async () => {
    const { root } = await show([
      codex({ session_id: "x", name: "api", state: "needs-input", waiting_for: "Bash: ls" }),
      makeRow({ session_id: "c", name: "web", state: "review" }),
    ]);
    q<HTMLButtonElement>(root, ".pmux-bell").click();
    const names = [...root.querySelectorAll(".pmux-sheet-item .pmux-name")].map((n) => n.textContent);
    expect(names).toEqual(["api (Codex)", "web"]);
  });
});

describe("the status bar's tooltip", () => {
  it("lists a waiting Codex session with its mark", () => {
    const tip = waitingList([
      codex({ session_id: "x", name: "api", state: "needs-input", asks: "asks to run: ls" }),
      makeRow({ session_id: "c", name: "web", state: "review", state_since: T0 - 5 }),
    ]);
    expect(tip.split("\n")).toEqual(["2 sessions need you:", "• api (Codex) — needs input: asks to run: ls", "• web — review"]);
  });

  it("counts each agent's running sessions when nothing waits (Claude's alone as before)", () => {
    const claude = [makeRow({ session_id: "a" }), makeRow({ session_id: "b" }), makeRow({ session_id: "e", ended: true })];
    expect(runningList(claude)).toBe("Claude sessions: 2 running");
    expect(runningList([])).toBe("Claude sessions: 0 running");
    expect(runningList([...claude, codex({ session_id: "x" }), codex({ session_id: "y", ended: true })])).toBe(
      "Claude sessions: 2 running, Codex sessions: 1 running",
    );
  });
});

describe("a terminal tab", () => {
  it("of a Codex session says Codex and carries the mark's class; Claude's tabs as before", () => {
    const decor = decorFor(codex({ session_id: "x", name: "api", state: "busy", activity: "running ls", terminal: { name: "1" } }));
    expect(decor.classes).toBe("pmux-tab pmux-state-busy pmux-agent-codex");
    expect(decor.caption).toBe("Codex: busy — running ls\nsession api");
    expect(decor.label).toBe("Codex: busy, session api");
    const claude = decorFor(makeRow({ session_id: "c", name: "web", state: "idle", terminal: { name: "2" } }));
    expect(claude.classes).toBe("pmux-tab pmux-state-idle");
    // the mark's class is ours: replaced and removed with the rest
    const first = withClasses("jp-Terminal-tab", decor);
    expect(withClasses(first, claude)).toBe("jp-Terminal-tab pmux-tab pmux-state-idle");
    expect(withClasses(first, null)).toBe("jp-Terminal-tab");
  });
});

describe("the panel's New session form (its request body)", () => {
  const base = { cwd: " /home/u/api ", prompt: " hi ", mode: "plan", where: "terminal" as const };

  it("Claude: the fields as before, no agent named", () => {
    expect(newSessionBody({ ...base, agent: "claude" })).toEqual({
      cwd: "/home/u/api",
      where: "terminal",
      prompt: "hi",
      permission_mode: "plan",
    });
    expect(newSessionBody({ ...base, agent: "claude", mode: "default", prompt: "", where: "background" })).toEqual({
      cwd: "/home/u/api",
      where: "background",
    });
  });

  it("Codex: agent codex, never a permission mode nor the background (the server refuses both)", () => {
    expect(agentCan("codex")).toEqual({ background: false, mode: false });
    expect(newSessionBody({ ...base, agent: "codex" })).toEqual({
      cwd: "/home/u/api",
      where: "terminal",
      prompt: "hi",
      agent: "codex",
    });
    expect(newSessionBody({ ...base, agent: "codex", where: "background" }).where).toBe("terminal");
    expect(newSessionBody({ ...base, agent: "codex", where: "tmux" }).where).toBe("tmux");
  });
});
