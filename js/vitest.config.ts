import { defineConfig } from "vitest/config";

// Two projects: the perf test (P10) runs after the others have finished, so that the numbers
// it prints are not inflated by test files running in parallel with it.
export default defineConfig({
  test: {
    environment: "jsdom",
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["tests/**/*.test.ts"], exclude: ["tests/perf.test.ts"] },
      },
      {
        extends: true,
        test: { name: "perf", include: ["tests/perf.test.ts"], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
