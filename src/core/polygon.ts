/**
 * Polygons in picture pixels, checked before anything runs on them: zones, masks, a calibrated
 * zone's four corners. Each check answers what is wrong, in the words `validate` prints, so the
 * config refuses at its line what the runtime could not use. Pure; points are `[x, y]`.
 */
import type { Box, Point } from './geometry.js';

/** A polygon's area (the shoelace formula), whichever way round its points go. */
export function polygonArea(points: readonly Point[]): number {
  let twice = 0;
  points.forEach(([x, y], i) => {
    const [nx, ny] = points[(i + 1) % points.length]!;
    twice += x * ny - nx * y;
  });
  return Math.abs(twice) / 2;
}

/** Twice the signed area of the triangle o, a, b: > 0 when o→a→b turns left (counter-clockwise). */
const cross = (o: Point, a: Point, b: Point): number =>
  (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);

/** Even-odd rule point-in-polygon test. */
export function insidePolygon(p: Point, poly: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]!;
    const [xj, yj] = poly[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** Whether segments p1–p2 and q1–q2 cross or touch. */
export function segmentsMeet(p1: Point, p2: Point, q1: Point, q2: Point): boolean {
  const side = (a: Point, b: Point, c: Point): number => Math.sign(cross(a, b, c));
  const on = (a: Point, b: Point, c: Point): boolean =>
    Math.min(a[0], b[0]) <= c[0] &&
    c[0] <= Math.max(a[0], b[0]) &&
    Math.min(a[1], b[1]) <= c[1] &&
    c[1] <= Math.max(a[1], b[1]);
  const d1 = side(q1, q2, p1);
  const d2 = side(q1, q2, p2);
  const d3 = side(p1, p2, q1);
  const d4 = side(p1, p2, q2);
  if (d1 !== d2 && d3 !== d4 && d1 * d2 <= 0 && d3 * d4 <= 0) return true;
  return (
    (d1 === 0 && on(q1, q2, p1)) ||
    (d2 === 0 && on(q1, q2, p2)) ||
    (d3 === 0 && on(p1, p2, q1)) ||
    (d4 === 0 && on(p1, p2, q2))
  );
}

/** Whether a box and a polygon overlap: a corner of one inside the other, or edges that cross. */
export function boxMeetsPolygon(box: Readonly<Box>, poly: readonly Point[]): boolean {
  const corners: Point[] = [
    [box[0], box[1]],
    [box[2], box[1]],
    [box[2], box[3]],
    [box[0], box[3]],
  ];
  if (corners.some((c) => insidePolygon(c, poly))) return true;
  if (poly.some(([x, y]) => x >= box[0] && x <= box[2] && y >= box[1] && y <= box[3])) return true;
  return corners.some((a, i) =>
    poly.some((p, j) => segmentsMeet(a, corners[(i + 1) % 4]!, p, poly[(j + 1) % poly.length]!)),
  );
}

/**
 * The first two sides of the polygon that meet although they are not neighbours (a bow-tie, a
 * figure eight, a side running back over another), as the 0-based numbers of their first points
 * (side i runs from point i to the next, the last back to the first); undefined for a simple
 * polygon. A point repeated at once (the last one closing onto the first, too) is one corner, not
 * a crossing. O(n²): the schema caps n (LIMITS.points) before this runs.
 */
export function selfCrossing(points: readonly Point[]): [number, number] | undefined {
  const same = (a: Point, b: Point): boolean => a[0] === b[0] && a[1] === b[1];
  // The corners, by their index in `points`, each given once in a row.
  const at = points.flatMap((p, i) => (i > 0 && same(p, points[i - 1]!) ? [] : [i]));
  while (at.length > 1 && same(points[at[0]!]!, points[at.at(-1)!]!)) at.pop();
  const n = at.length;
  if (n < 4) return undefined;
  const corner = (k: number): Point => points[at[k % n]!]!;
  for (let i = 0; i < n; i++) {
    for (let j = i + 2; j < n; j++) {
      if (i === 0 && j === n - 1) continue; // the last side and the first share a corner
      if (segmentsMeet(corner(i), corner(i + 1), corner(j), corner(j + 1))) return [at[i]!, at[j]!];
    }
  }
  return undefined;
}

/** What makes a polygon unusable, or undefined: it crosses itself, or it encloses no area. */
export function polygonProblem(points: readonly Point[]): string | undefined {
  if (points.length < 3) return undefined; // the schema's own minimum says so
  const crossing = selfCrossing(points);
  if (crossing) {
    const [a, b] = crossing;
    return `the polygon crosses itself (the sides from point ${a + 1} and from point ${b + 1} meet): list the points in order around the area, without a bow-tie`;
  }
  if (polygonArea(points) === 0)
    return 'the points enclose no area (they are all on one line): no object could ever be inside';
  return undefined;
}

/**
 * How far from a straight line three corners of a calibrated zone must be, as a share of the
 * longest side of their triangle (1 %: about half a degree off straight).
 */
export const MIN_BEND = 0.01;

/**
 * What keeps four points from being a calibrated zone (the picture of a flat rectangle of ground,
 * mapped to metres by a homography), or undefined: a point given twice, three on a line (or
 * nearly), or a quadrilateral that is not convex (no rectangle on the ground looks like that in
 * a picture; the map would fold). Points are numbered from 1, as in docs/config.md.
 */
export function calibrationProblem(points: readonly Point[]): string | undefined {
  if (points.length !== 4) return undefined; // the schema says so
  for (let i = 0; i < 4; i++)
    for (let j = i + 1; j < 4; j++)
      if (points[i]![0] === points[j]![0] && points[i]![1] === points[j]![1])
        return `points ${i + 1} and ${j + 1} are the same point: a calibrated zone needs four distinct corners`;
  for (let i = 0; i < 4; i++) {
    const tri = [0, 1, 2, 3].filter((k) => k !== i);
    const [a, b, c] = tri.map((k) => points[k]!) as [Point, Point, Point];
    const longest = Math.max(
      Math.hypot(b[0] - a[0], b[1] - a[1]),
      Math.hypot(c[0] - b[0], c[1] - b[1]),
      Math.hypot(a[0] - c[0], a[1] - c[1]),
    );
    // The triangle's height over its longest side.
    if (Math.abs(cross(a, b, c)) / longest < MIN_BEND * longest)
      return `points ${tri.map((k) => k + 1).join(', ')} are on one line: a calibrated zone needs four corners of a quadrilateral`;
  }
  const turns = [0, 1, 2, 3].map((i) =>
    Math.sign(cross(points[i]!, points[(i + 1) % 4]!, points[(i + 2) % 4]!)),
  );
  if (!turns.every((t) => t === turns[0]))
    return 'the four points do not make a convex quadrilateral (a side crosses another, or one corner points inwards): give the corners of the patch of ground in order around it';
  return undefined;
}
