// P10 from the command line, for the Python benchmark suite:
//
//   node js/bench/run.mjs [--sessions 500] [--changes 200]
//
// prints one JSON object (see BenchResult in render-bench.ts) on stdout. It bundles
// render-bench.ts with esbuild in memory and runs it in a jsdom document, the DOM the budget
// is defined on.
import * as esbuild from "esbuild";
import { JSDOM } from "jsdom";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};

const dom = new JSDOM("<!doctype html><html><head><title>bench</title></head><body></body></html>", {
  pretendToBeVisual: true,
});
const { window } = dom;
for (const name of ["window", "document", "Node", "Text", "HTMLElement", "MutationObserver", "Event", "KeyboardEvent"]) {
  globalThis[name] = name === "window" ? window : window[name];
}

const built = await esbuild.build({
  entryPoints: [path.join(here, "render-bench.ts")],
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2020",
  write: false,
  logLevel: "error",
});
const code = built.outputFiles[0].text;
const { runRenderBench } = await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);

const result = runRenderBench({ sessions: arg("sessions", 500), changes: arg("changes", 200) });
process.stdout.write(JSON.stringify(result) + "\n");
window.close();
