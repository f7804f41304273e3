// Small DOM helpers. Every writer compares before writing: a row that did not change must cause
// no DOM mutation at all (P10, and the keyed-update tests observe mutations).

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.appendChild(document.createTextNode(text));
  return node;
}

/** A text node whose value is only written when it changes. */
export function text(parent: Node, value = ""): Text {
  const node = document.createTextNode(value);
  parent.appendChild(node);
  return node;
}

export function setData(node: Text, value: string): void {
  if (node.data !== value) node.data = value;
}

export function setAttr(node: Element, name: string, value: string | null): void {
  if (value === null) {
    if (node.hasAttribute(name)) node.removeAttribute(name);
  } else if (node.getAttribute(name) !== value) {
    node.setAttribute(name, value);
  }
}

export function setHidden(node: HTMLElement, hidden: boolean): void {
  if (node.hidden !== hidden) node.hidden = hidden;
}

export function setClass(node: Element, className: string): void {
  if (node.className !== className) node.className = className;
}

/** Put `node` right before `before` in `parent`, touching the DOM only if it is not there yet:
 * re-sorting moves the rows whose position changed, and nothing else. */
export function place(parent: Node, node: Node, before: Node | null): void {
  if (node.parentNode !== parent || node.nextSibling !== before) parent.insertBefore(node, before);
}

/** Bring `parent`'s children into the order of `nodes` (all already children or new), moving
 * only the nodes that are out of place. Walks from the end so each check is O(1). */
export function reorder(parent: Node, nodes: readonly Node[]): void {
  let before: Node | null = null;
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    place(parent, node, before);
    before = node;
  }
}

/** Index at which `item` goes in the sorted `items` (after equal ones). */
export function insertionIndex<T>(items: readonly T[], item: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(items[mid]!, item) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** An SVG bell (no icon font needed; currentColor follows the theme). */
export function bellIcon(): SVGSVGElement {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("width", "16");
  svg.setAttribute("height", "16");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "pmux-bell-icon");
  const path = document.createElementNS(ns, "path");
  path.setAttribute(
    "d",
    "M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 " +
      "1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2z",
  );
  path.setAttribute("fill", "currentColor");
  svg.appendChild(path);
  return svg;
}
