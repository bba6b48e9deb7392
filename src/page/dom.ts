/** The page's DOM helpers: elements by id, new elements with text (never HTML), SVG, blob URLs. */

/** The page's element of that id (the HTML in src/http/page.ts has each). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error('the page has no #' + id);
  return e as T;
}

/** A new element, with a class and its text (set as text, never as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** Revokes an element's blob URL (frames and thumbnails are blobs: each must be freed once). */
export function free(img: HTMLImageElement | null): void {
  if (img && img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
}

export const SVG = 'http://www.w3.org/2000/svg';

/** A new SVG element with its attributes, appended to `parent`. */
export function svg(tag: string, attrs: Record<string, string | number>, parent: Element): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  parent.append(e);
  return e;
}

/** SVG text at (x, y), to 0.1 px. */
export function svgText(
  parent: Element,
  text: string,
  x: number,
  y: number,
  attrs?: Record<string, string | number>,
): void {
  svg('text', { x: x.toFixed(1), y: y.toFixed(1), ...attrs }, parent).textContent = text;
}
