import type { Letterbox, Point } from '../core/geometry.js';
import { GRID } from './block-hash.js';

/** A mask of the hash grid: 1 for a cell the cache ignores, row by row (GRID × GRID). */
export type CellMask = Uint8Array;

/** Twice the signed area of a polygon (the shoelace formula). */
function doubleArea(poly: readonly Point[]): number {
  let a = 0;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++)
    a += poly[j]![0] * poly[i]![1] - poly[i]![0] * poly[j]![1];
  return a;
}

/** The part of `poly` on the side of the line `keep` accepts (one step of Sutherland–Hodgman). */
function clipSide(
  poly: readonly Point[],
  keep: (p: Point) => boolean,
  cross: (p: Point, q: Point) => Point,
): Point[] {
  const out: Point[] = [];
  for (let i = 0; i < poly.length; i++) {
    const p = poly[i]!;
    const q = poly[(i + 1) % poly.length]!;
    if (keep(p)) out.push(p);
    if (keep(p) !== keep(q)) out.push(cross(p, q));
  }
  return out;
}

/** The part of `poly` inside the rectangle [x0, x1] × [y0, y1] (Sutherland–Hodgman against its four sides). */
function clipToRect(poly: readonly Point[], x0: number, y0: number, x1: number, y1: number): Point[] {
  const atX =
    (x: number) =>
    (p: Point, q: Point): Point => [x, p[1] + ((q[1] - p[1]) * (x - p[0])) / (q[0] - p[0])];
  const atY =
    (y: number) =>
    (p: Point, q: Point): Point => [p[0] + ((q[0] - p[0]) * (y - p[1])) / (q[1] - p[1]), y];
  let c = clipSide(poly, (p) => p[0] >= x0, atX(x0));
  c = clipSide(c, (p) => p[0] <= x1, atX(x1));
  c = clipSide(c, (p) => p[1] >= y0, atY(y0));
  return clipSide(c, (p) => p[1] <= y1, atY(y1));
}

/**
 * The area of `poly` inside the rectangle [x0, x1] × [y0, y1]. Clipping against a convex window
 * gives the intersection's area for any simple polygon, convex or not (a concave one may come out
 * with edges folded onto each other, which add no area).
 */
export function areaInRect(poly: readonly Point[], x0: number, y0: number, x1: number, y1: number): number {
  const c = clipToRect(poly, x0, y0, x1, y1);
  return c.length < 3 ? 0 : Math.abs(doubleArea(c)) / 2;
}

/**
 * Overlaps smaller than this share of a cell are rounding, not coverage: a polygon edge on a
 * cell boundary (x = 200 of a 640-wide source is x = 100 of its 320 input, a cell edge) must not
 * mask the cell beside it because a division came out a hair over.
 */
const SLIVER = 1e-6;

/**
 * The cells of the hash grid that `polygons` (in source pixels) overlap, for a frame of geometry
 * `g`: the grid is GRID × GRID cells over the whole `g.dstW`×`g.dstH` picture (padding included),
 * and each polygon is mapped into it through the letterbox. Undefined when no cell is masked.
 *
 * A cell is masked when the polygon covers any part of it, not only when it covers the cell's
 * centre. A cell's hash is the mean brightness of all its pixels, so a moving patch that covers a
 * quarter of a cell moves that cell by a quarter of its change: with the centre rule, a swaying
 * branch drawn around to its edge would still change the cells along the polygon's border, and
 * two or three of them are enough (`max_distance`) to defeat the mask. The price is that the
 * mask reaches at most one cell (1/32 of the picture) beyond the polygon: a change wholly within
 * that rim and outside the polygon is not seen either — the rim is next to what the user said
 * moves anyway, and a still scene is analysed afresh every `max_age_s` regardless.
 *
 * A frame hashed by its thumbnail is hashed on the thumbnail's own letterbox (THUMB_SIZE wide,
 * its padding rounded to whole pixels), so pass `letterbox(srcW, srcH, GRID)` for those: the
 * model input's padding, scaled down, may fall half a cell away from it.
 */
export function cellMask(polygons: readonly (readonly Point[])[], g: Letterbox): CellMask | undefined {
  if (polygons.length === 0) return undefined;
  const sx = g.innerW / g.srcW;
  const sy = g.innerH / g.srcH;
  const cw = g.dstW / GRID;
  const ch = g.dstH / GRID;
  const mask = new Uint8Array(GRID * GRID);
  let any = false;
  for (const polygon of polygons) {
    // The picture's part of it (the padding never changes), in cell units: the grid's cell (i, j)
    // is the square [i, i + 1] × [j, j + 1].
    const poly = clipToRect(polygon, 0, 0, g.srcW, g.srcH).map(([x, y]): Point => [
      (x * sx + g.padLeft) / cw,
      (y * sy + g.padTop) / ch,
    ]);
    if (poly.length < 3) continue;
    const xs = poly.map((p) => p[0]);
    const ys = poly.map((p) => p[1]);
    const i0 = Math.max(0, Math.floor(Math.min(...xs)));
    const i1 = Math.min(GRID - 1, Math.ceil(Math.max(...xs)) - 1);
    const j0 = Math.max(0, Math.floor(Math.min(...ys)));
    const j1 = Math.min(GRID - 1, Math.ceil(Math.max(...ys)) - 1);
    for (let j = j0; j <= j1; j++)
      for (let i = i0; i <= i1; i++) {
        if (mask[j * GRID + i] || areaInRect(poly, i, j, i + 1, j + 1) <= SLIVER) continue;
        mask[j * GRID + i] = 1;
        any = true;
      }
  }
  return any ? mask : undefined;
}
