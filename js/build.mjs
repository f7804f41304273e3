// Builds the anywidget front-end (js/src/widget.ts + widget.css) into pmux_widget/static/.
import * as esbuild from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const options = {
  entryPoints: { widget: path.join(root, "js/src/widget.ts") },
  outdir: path.join(root, "pmux_widget/static"),
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
}
