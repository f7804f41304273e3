import { afterEach, describe, expect, it } from "vitest";
import { FakeModel, defaultEnv, snapshotOf } from "../testing/fake-model";
import { makeRow } from "../testing/fixtures";
import { mount, q, visible, type Mounted } from "./helpers";

let mounted: (Mounted & { uninit(): void }) | null = null;
afterEach(async () => {
  await mounted?.destroy();
  mounted = null;
});

async function show(fake: FakeModel) {
  mounted = await mount(fake);
  return mounted.el;
}

describe("env screens", () => {
  it("Claude not installed: explains CLAUDE_CONFIG_DIR, no hooks banner, no empty state", async () => {
    const root = await show(new FakeModel({ env: defaultEnv({ claude_installed: false, hooks_installed: false }) }));
    const screen = q(root, ".pmux-screen--no-claude");
    expect(visible(screen)).toBe(true);
    expect(screen.textContent).toContain("CLAUDE_CONFIG_DIR");
    expect(screen.textContent).toContain("~/.claude");
    expect(visible(q(root, ".pmux-banner--hooks"))).toBe(false);
    expect(visible(q(root, ".pmux-empty"))).toBe(false);
  });

  it("hooks not installed: a banner whose Install button sends install_hooks and shows the answer", async () => {
    const fake = new FakeModel({
      env: defaultEnv({ hooks_installed: false, hooks_problem: "settings.json has no pmux entries" }),
      snapshot: snapshotOf([makeRow({ session_id: "a" })]),
    });
    const root = await show(fake);
    const banner = q(root, ".pmux-banner--hooks");
    expect(visible(banner)).toBe(true);
    expect(banner.textContent).toContain("settings.json has no pmux entries");
    const button = q<HTMLButtonElement>(banner, "button.pmux-install");
    button.click();
    expect(fake.sent).toEqual([{ type: "install_hooks" }]);
    expect(button.textContent).toBe("Installing…");
    button.click(); // ignored while waiting
    expect(fake.sent).toHaveLength(1);

    fake.emitCustom({ type: "install_result", ok: false, message: "settings.json is not valid JSON" });
    const result = q(root, ".pmux-install-result");
    expect(visible(result)).toBe(true);
    expect(result.textContent).toBe("settings.json is not valid JSON");
    expect(result.classList.contains("pmux-error")).toBe(true);
    expect(button.textContent).toBe("Install hooks");

    button.click();
    fake.emitCustom({ type: "install_result", ok: true, message: "Hooks installed (backup: settings.json.bak)" });
    fake.kernelSet("env", defaultEnv({ hooks_installed: true, install_result: { ok: true, message: "x" } }));
    expect(visible(banner)).toBe(false);
    expect(result.textContent).toBe("Hooks installed (backup: settings.json.bak)");
    expect(result.classList.contains("pmux-ok")).toBe(true);
  });

  it("takes the answer from env.install_result too (the mirror may come first)", async () => {
    const fake = new FakeModel({ env: defaultEnv({ hooks_installed: false }) });
    const root = await show(fake);
    q<HTMLButtonElement>(root, "button.pmux-install").click();
    fake.kernelSet("env", defaultEnv({ hooks_installed: false, install_result: { ok: false, message: "permission denied" } }));
    expect(q(root, ".pmux-install-result").textContent).toBe("permission denied");
    expect(q(root, "button.pmux-install").textContent).toBe("Install hooks");
  });

  it("no sessions: an empty state that says how to start one", async () => {
    const fake = new FakeModel();
    const root = await show(fake);
    const empty = q(root, ".pmux-empty");
    expect(visible(empty)).toBe(true);
    expect(empty.textContent).toContain("No Claude Code sessions yet.");
    expect(empty.textContent).toContain("claude");
    fake.emitCustom({ type: "patch", seq: 1, upsert: [makeRow({ session_id: "a", state: "busy" })] });
    expect(visible(empty)).toBe(false);
  });

  it("shows sidebar_note when non-empty", async () => {
    const fake = new FakeModel();
    const root = await show(fake);
    const note = q(root, ".pmux-note");
    expect(visible(note)).toBe(false);
    fake.kernelSet("sidebar_note", "sidecar cannot dock in Notebook 7");
    expect(visible(note)).toBe(true);
    expect(note.textContent).toBe("sidecar cannot dock in Notebook 7");
  });

  it("tolerates a missing env (treated as installed)", async () => {
    const root = await show(new FakeModel({ env: null }));
    expect(visible(q(root, ".pmux-screen--no-claude"))).toBe(false);
    expect(visible(q(root, ".pmux-banner--hooks"))).toBe(false);
  });
});
