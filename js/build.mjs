// Builds the anywidget front-end into pmux_widget/static/:
//   widget.js   from js/src/widget.ts  (the Python side sets `_esm` to it)
//   widget.css  from the CSS that widget.ts imports (`_css`); esbuild writes it next to the JS
// `--dev` builds for development (unminified, with a sourcemap); `--watch` is `--dev` that
// rebuilds on every change (with ANYWIDGET_HMR=1 the open widgets reload: docs/development.md).
import * as esbuild from "esbuild";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outdir = path.join(root, "pmux_widget/static");
const watch = process.argv.includes("--watch");
const dev = watch || process.argv.includes("--dev");
const options = {
  entryPoints: { widget: path.join(root, "js/src/widget.ts") },
  outdir,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !dev,
  // Inline: anywidget loads the ESM from a blob: URL, where a separate .map file is not found.
  sourcemap: dev ? "inline" : false,
  loader: { ".css": "css" },
  logLevel: "info",
};

if (watch) {
  const ctx = await esbuild.context(options);
  await ctx.watch();
} else {
  await esbuild.build(options);
  // The widget is unstyled without its CSS file: fail the build rather than ship that.
  for (const file of ["widget.js", "widget.css"]) {
    if (!existsSync(path.join(outdir, file))) {
      console.error(`build: ${file} was not written to ${outdir}`);
      process.exit(1);
    }
  }
}
