// The only way this page makes DOM: elements by name, text as text nodes. Nothing here (or
// anywhere in the page) assigns innerHTML, so a `<script>` or `<img onerror>` in a cell's output
// or a model's reply is shown as the characters it is.

/** What an element may hold: nodes, text (numbers too), nothing, or lists of these. */
export type Child = Node | string | number | null | undefined | false | Child[];

/** Attributes and handlers of an element. */
export interface Attrs {
  class?: string;
  title?: string;
  /** Only this page's own paths: a link never leads off the host. */
  href?: string;
  id?: string;
  data?: Record<string, string>;
  onclick?: (event: MouseEvent) => void;
  ontoggle?: (event: Event) => void;
  disabled?: boolean;
  type?: string;
}

/** Append children to a node: text as text nodes, lists flattened, empties skipped. */
export function append(node: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, ...child);
    else node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
  }
}

/** An element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs.class) el.className = attrs.class;
  if (attrs.title) el.title = attrs.title;
  if (attrs.id) el.id = attrs.id;
  if (attrs.href !== undefined) {
    if (!attrs.href.startsWith("/") || attrs.href.startsWith("//")) throw new Error(`not a path of this page: ${attrs.href}`);
    el.setAttribute("href", attrs.href);
  }
  if (attrs.type) el.setAttribute("type", attrs.type);
  if (attrs.disabled) el.setAttribute("disabled", "");
  for (const [k, v] of Object.entries(attrs.data ?? {})) el.dataset[k] = v;
  if (attrs.onclick) el.addEventListener("click", attrs.onclick as EventListener);
  if (attrs.ontoggle) el.addEventListener("toggle", attrs.ontoggle);
  append(el, ...children);
  return el;
}

/** Replace every child of `node`. */
export function replaceChildren(node: Element, ...children: Child[]): void {
  node.replaceChildren();
  append(node, ...children);
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (numbers and fixed strings only). */
export function svg(tag: string, attrs: Record<string, string | number> = {}, ...children: Array<Node | string>): SVGElement {
  const el = document.createElementNS(SVG, tag) as SVGElement;
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  return el;
}
