import type { CameraView, Point } from './api.js';
import { svg, svgText } from './dom.js';
import { lineTotal, pointList, topPoint } from './format.js';
import { lineArrow, toShown } from './overlay.js';

/** What the overlay is drawn into: the card's image (for its size shown), its SVG, its id. */
export interface OverlayTarget {
  img: HTMLImageElement;
  overlay: SVGSVGElement;
  id: number;
}

/**
 * The camera's geometry over its frame, in pixels of the image as shown (overlay.ts): object
 * masks hatched, cache masks dotted magenta, zones cyan with a translucent fill (dashed when
 * off), lines yellow with an arrow per direction, its name and count. Redrawn at each refresh;
 * a resize in between stretches it (viewBox) until then.
 */
export function drawOverlay(c: OverlayTarget, cam: CameraView): void {
  const geo = cam.geometry;
  const shown = { width: c.img.clientWidth, height: c.img.clientHeight };
  const o = c.overlay;
  o.replaceChildren();
  const off = !cam.has_frame || !geo.width || !geo.height || !shown.width || !shown.height;
  o.style.display = off ? 'none' : '';
  if (off) return;
  const source = { width: geo.width!, height: geo.height! };
  o.setAttribute('viewBox', '0 0 ' + shown.width + ' ' + shown.height);
  o.setAttribute('preserveAspectRatio', 'none');
  const map = (pts: readonly Point[]): Point[] => toShown(pts, source, shown);
  // A name's start, moved left when it would run past the image's right edge (12 px glyphs under 7 px wide).
  const inside = (x: number, text: string): number =>
    Math.max(2, Math.min(x, shown.width - text.length * 7 - 2));
  const hatch = 'argus-hatch-' + c.id;
  const pattern = svg(
    'pattern',
    { id: hatch, width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)' },
    svg('defs', {}, o),
  );
  svg('rect', { width: 8, height: 8, fill: 'rgba(0, 0, 0, .55)' }, pattern);
  svg('line', { x1: 0, y1: 0, x2: 0, y2: 8, stroke: 'rgba(220, 220, 220, .8)', 'stroke-width': 2 }, pattern);
  const shape = (kind: string, name: string, pts: Point[], attrs: Record<string, string>): SVGElement => {
    const g = svg('g', { 'data-kind': kind, 'data-name': name }, o);
    const p = map(pts);
    svg('polygon', { points: pointList(p), 'data-name': name, ...attrs }, g);
    const t = topPoint(p);
    svgText(g, name, inside(t[0] + 3, name), t[1] + 14);
    return g;
  };
  const perLabel = new Map<string, number>();
  for (const m of geo.masks) {
    const key = m.label === null ? '' : m.label + ' ';
    const n = (perLabel.get(key) ?? 0) + 1;
    perLabel.set(key, n);
    const g = shape('mask', key + 'mask ' + n, m.points, { fill: 'url(#' + hatch + ')' });
    if (m.label !== null) g.dataset.label = m.label;
  }
  geo.cache_mask.forEach((pts, i) => shape('cache_mask', 'cache mask ' + (i + 1), pts, {}));
  for (const [name, z] of Object.entries(geo.zones)) {
    const g = shape('zone', name, z.points, {});
    if (!z.enabled) g.classList.add('off');
  }
  for (const [name, l] of Object.entries(geo.lines)) drawLine(o, cam, name, l, map, inside);
}

/** A line: its ends A and B, its name, and an arrow with its count for each direction. */
function drawLine(
  o: SVGSVGElement,
  cam: CameraView,
  name: string,
  l: CameraView['geometry']['lines'][string],
  map: (pts: readonly Point[]) => Point[],
  inside: (x: number, text: string) => number,
): void {
  const g = svg('g', { 'data-kind': 'line', 'data-name': name }, o);
  if (!l.enabled) g.classList.add('off');
  const [a, b] = map(l.points) as [Point, Point];
  svg('line', { x1: a[0], y1: a[1], x2: b[0], y2: b[1], 'data-name': name }, g);
  const { mid, normal } = lineArrow(a, b);
  const along = [normal[1], -normal[0]] as const;
  // A and B just inside the line's ends, the name a quarter of the way along, on the left side.
  const end = (p: Point, s: number, text: string): void =>
    svgText(
      g,
      text,
      inside(p[0] + along[0] * 10 * s - 4 - normal[0] * 10, text),
      p[1] + along[1] * 10 * s - normal[1] * 10 + 4,
    );
  end(a, 1, 'A');
  end(b, -1, 'B');
  svgText(
    g,
    name,
    inside((3 * a[0] + b[0]) / 4 - normal[0] * 12, name),
    (3 * a[1] + b[1]) / 4 - normal[1] * 12 + 4,
  );
  // The first direction is crossing to the right of A→B (normal), the second back; each
  // arrow starts a little aside of the midpoint so the two do not overlap.
  l.directions.forEach((direction, k) => {
    const s = k === 0 ? 1 : -1;
    const n: Point = [normal[0] * s, normal[1] * s];
    const from: Point = [mid[0] + along[0] * 10 * s, mid[1] + along[1] * 10 * s];
    const tip: Point = [from[0] + n[0] * 24, from[1] + n[1] * 24];
    const total = lineTotal(cam, name, direction);
    const d = svg('g', { 'data-direction': direction, 'data-count': total }, g);
    svg('line', { x1: from[0], y1: from[1], x2: tip[0] - n[0] * 6, y2: tip[1] - n[1] * 6 }, d);
    const head: Point[] = [
      tip,
      [tip[0] - n[0] * 8 + n[1] * 5, tip[1] - n[1] * 8 - n[0] * 5],
      [tip[0] - n[0] * 8 - n[1] * 5, tip[1] - n[1] * 8 + n[0] * 5],
    ];
    svg('polygon', { points: pointList(head) }, d);
    svgText(d, direction + ' ' + total, tip[0] + n[0] * 10, tip[1] + n[1] * 10 + 4, {
      'text-anchor': 'middle',
    });
  });
}
