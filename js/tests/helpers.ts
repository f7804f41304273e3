// Mount the widget exactly as anywidget does: the default export (a factory) is called once per
// model, then initialize() once with its own proxy, then render() per view with a fresh proxy
// and element.
import createWidget, { type Widget } from "../src/widget";
import { FakeModel } from "../testing/fake-model";

const widgets = new WeakMap<FakeModel, Widget>();

/** The model's widget object: anywidget's runtime calls the factory once per model. */
export function widgetOf(fake: FakeModel): Widget {
  let widget = widgets.get(fake);
  if (!widget) widgets.set(fake, (widget = createWidget()));
  return widget;
}

export interface Mounted {
  el: HTMLElement;
  context: symbol;
  destroy(): Promise<void>;
}

type Cleanup = void | (() => unknown);

export async function initModel(fake: FakeModel): Promise<() => void> {
  const controller = new AbortController();
  const context = Symbol("init");
  const cleanup = (await widgetOf(fake).initialize({
    model: fake.proxy(context),
    signal: controller.signal,
    experimental: { invoke: () => Promise.reject(new Error("unused")) },
  })) as Cleanup;
  return () => {
    controller.abort();
    if (typeof cleanup === "function") cleanup();
    fake.offContext(context);
  };
}

export async function renderView(fake: FakeModel): Promise<Mounted> {
  const el = document.createElement("div");
  document.body.appendChild(el);
  const controller = new AbortController();
  const context = Symbol("view");
  const cleanup = (await widgetOf(fake).render({
    model: fake.proxy(context),
    el,
    signal: controller.signal,
    host: {} as never,
    experimental: { invoke: () => Promise.reject(new Error("unused")) },
  })) as Cleanup;
  return {
    el,
    context,
    async destroy() {
      controller.abort();
      if (typeof cleanup === "function") await cleanup();
      fake.offContext(context);
      el.remove();
    },
  };
}

/** initialize + one view: the usual case. */
export async function mount(fake: FakeModel): Promise<Mounted & { uninit(): void }> {
  const uninit = await initModel(fake);
  const view = await renderView(fake);
  return {
    ...view,
    uninit,
    async destroy() {
      await view.destroy();
      uninit();
    },
  };
}

export function rowEl(root: ParentNode, sid: string): HTMLLIElement {
  const node = root.querySelector<HTMLLIElement>(`.pmux-row[data-session-id="${sid}"]`);
  if (!node) throw new Error(`no row ${sid}`);
  return node;
}

export function q<T extends Element = HTMLElement>(root: ParentNode, selector: string): T {
  const node = root.querySelector<T>(selector);
  if (!node) throw new Error(`nothing matches ${selector}`);
  return node;
}

export function rowIds(root: ParentNode, scope = ".pmux-groups"): string[] {
  return [...root.querySelectorAll<HTMLElement>(`${scope} .pmux-row`)].map((n) => n.dataset.sessionId!);
}

export function visible(node: Element | null): boolean {
  for (let n = node as HTMLElement | null; n; n = n.parentElement) if (n.hidden) return false;
  return node !== null;
}

/** Watch `root` for DOM mutations; `take()` returns the records so far. */
export function watch(root: Node): { take(): MutationRecord[]; stop(): void } {
  const observer = new MutationObserver(() => {});
  observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  return { take: () => observer.takeRecords(), stop: () => observer.disconnect() };
}
