// The one Node API the tests use (css.test.ts reads the stylesheet). Declared here rather than
// adding @types/node, which would also make Node globals look available to the browser code.
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
}
