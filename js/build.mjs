// Builds both front-ends:
//   pmux_widget/static/widget.js   the anywidget ESM, from js/src/widget.ts (`_esm`)
//   pmux_widget/static/widget.css  the CSS that widget.ts imports (`_css`)
//   pmux_widget/labextension/      the prebuilt JupyterLab extension, from js/lab (its own
//                                  package.json and node_modules: @jupyterlab/* stay out of
//                                  the widget's bundle and out of the root node_modules)
// `--dev` builds for development (unminified, with a sourcemap); `--watch` is `--dev` that
// rebuilds the widget on every change (with ANYWIDGET_HMR=1 the open widgets reload:
// docs/development.md); `--widget-only` skips the labextension.
import * as esbuild from "esbuild";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outdir = path.join(root, "pmux_widget/static");
const watch = process.argv.includes("--watch");
const dev = watch || process.argv.includes("--dev");
const widgetOnly = watch || process.argv.includes("--widget-only");
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
  if (!widgetOnly) buildLab();
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: "inherit" });
  if (result.error || result.status !== 0) {
    console.error(`build: ${command} ${args.join(" ")} failed${result.error ? `: ${result.error.message}` : ""}`);
    process.exit(1);
  }
}

/** The labextension: its node_modules from its own lock (npm ci, only when the lock is newer
 * than the install), tsc, then the extension template's builder (pip `jupyter-builder`
 * driving npm `@jupyter/builder`, Rspack). */
function buildLab() {
  const lab = path.join(root, "js/lab");
  const installed = path.join(lab, "node_modules/.package-lock.json");
  const lock = path.join(lab, "package-lock.json");
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], lab);
  }
  run(process.execPath, [path.join(lab, "node_modules/typescript/bin/tsc"), "-p", lab], lab);
  run(jupyterBuilder(), dev ? ["build", "--development", "True", lab] : ["build", lab], lab);
  // install.json goes inside the labextension (the wheel's one shared-data folder): mapped as
  // a file of its own, an editable install wrote a second copy there through the venv's link
  // to this folder, and the next wheel held two files at one path.
  const out = path.join(root, "pmux_widget/labextension");
  copyFileSync(path.join(root, "install.json"), path.join(out, "install.json"));
  for (const file of ["package.json", "static/style.js", "install.json"]) {
    if (!existsSync(path.join(out, file))) {
      console.error(`build: labextension/${file} was not written`);
      process.exit(1);
    }
  }
}

/** pip's `jupyter-builder`: the project's venv, else the one on PATH (a wheel build's
 * isolated environment has it from build-system.requires). */
function jupyterBuilder() {
  const venv = path.join(root, process.env.VENV ?? ".venv", "bin/jupyter-builder");
  return existsSync(venv) ? venv : "jupyter-builder";
}
