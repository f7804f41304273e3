// Builds the anywidget front-end into pmux_widget/static/:
//   widget.js   from js/src/widget.ts  (the Python side sets `_esm` to it)
//   widget.css  from the CSS that widget.ts imports (`_css`); esbuild writes it next to the JS
// `--dev` skips minification, `--watch` rebuilds on change.
import * as esbuild from "esbuild";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outdir = path.join(root, "pmux_widget/static");
const options = {
  entryPoints: { widget: path.join(root, "js/src/widget.ts") },
  outdir,
  bundle: true,
  format: "esm",
  target: "es2020",
  minify: !process.argv.includes("--dev"),
  sourcemap: false,
  loader: { ".css": "css" },
  logLevel: "info",
};

if (process.argv.includes("--watch")) {
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
