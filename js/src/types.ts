// The shapes of the kernel ↔ browser contract. They are generated from the Python contract
// (pmux_widget/core/contract.py → contract.gen.ts, see docs/development.md), so what the
// kernel sends and what the front-end reads cannot drift apart. The store normalizes incoming
// rows to these shapes (see store.ts), so the renderers never guard against a missing field.
export * from "./contract.gen";
import type { PatchMessage, Snapshot } from "./contract.gen";

/** What the store accepts: the contract's shape, but anything besides `keep` may be missing
 * (ipywidgets' empty default, an older kernel, a test); the store fills in the rest. */
export type Partly<T, Keep extends keyof T> = Pick<T, Keep> & Partial<Omit<T, Keep>>;

export type SnapshotInput = Partly<Snapshot, "seq">;
export type PatchInput = Partly<PatchMessage, "type" | "seq">;
