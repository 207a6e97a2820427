type Child = Node | string | number | false | null | undefined;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

/**
 * Creates an element. Text always goes in as text (never as HTML), so names, messages and
 * requesters from the ledger cannot inject markup. `on*` attributes given functions become
 * listeners; `false`/`undefined` attributes are left out.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attributes, children);
  return element;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** The same for SVG elements. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  apply(element, attributes, children);
  return element;
}

function apply(element: Element, attributes: Attributes, children: Child[]): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === 'number' ? String(child) : child);
  }
}

/** Replaces an element's children. */
export function fill(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  apply(parent, {}, children);
}

/**
 * Saves text as a file: a Blob behind a temporary link (the token never goes in a URL, so an
 * export is fetched with it first and handed to the browser whole).
 */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
