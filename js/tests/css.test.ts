// Guards on widget.css: the stylesheet is global in the page (JupyterLab, Notebook, VS Code),
// so it must not style anything but its own classes, and must work outside JupyterLab.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// Plain string work: under jsdom the global URL is jsdom's, which resolves file: URLs wrongly.
const file = decodeURIComponent(import.meta.url.replace(/^file:\/\//, "")).replace(/tests\/[^/]+$/, "src/widget.css");
const css = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");

/** Every selector list of the sheet (inside @media too), without @keyframes steps. */
function selectors(): string[] {
  const withoutKeyframes = css.replace(/@keyframes[^{]+\{(?:[^{}]*\{[^}]*\})*\s*\}/g, "");
  const out: string[] = [];
  for (const match of withoutKeyframes.matchAll(/([^{}]+)\{/g)) {
    const selector = match[1]!.trim();
    if (!selector.startsWith("@")) out.push(...selector.split(",").map((part) => part.trim()));
  }
  return out;
}

describe("widget.css", () => {
  it("only uses pmux- classes, and every rule is scoped to one", () => {
    const all = selectors();
    expect(all.length).toBeGreaterThan(50);
    for (const selector of all) {
      for (const [, name] of selector.matchAll(/\.([A-Za-z_][\w-]*)/g)) expect(name).toMatch(/^pmux-/);
      expect(selector).toMatch(/\.pmux-/);
    }
  });

  it("gives every JupyterLab variable a fallback", () => {
    const uses = [...css.matchAll(/var\((--jp-[\w-]+)([^)]*)\)/g)];
    expect(uses.length).toBeGreaterThan(10);
    for (const [whole, , rest] of uses) expect(rest!.trim().startsWith(","), whole).toBe(true);
  });

  it("stops the spinner and pulses for prefers-reduced-motion", () => {
    const block = css.slice(css.indexOf("@media (prefers-reduced-motion: reduce)"));
    expect(block).toMatch(/animation:\s*none/);
  });

  it("draws every state's dot, for dot elements, rows' ::before and terminal tabs' ::before", () => {
    for (const state of ["busy", "needs-input", "review", "unknown", "idle"]) {
      expect(css).toContain(`.pmux-dot--${state},\n.pmux-row--${state}::before,\n.pmux-tab.pmux-state-${state} > :nth-child(2)::before {`);
    }
    expect(css).toMatch(/#9e9e9e/i);
    expect(css).toMatch(/#8b5cf6/i);
    expect(css).toMatch(/#f59e0b/i);
  });
});
