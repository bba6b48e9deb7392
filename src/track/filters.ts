import type { Detection } from '../core/frame.js';
import { anchorPoint, area, type Box, type Point } from '../core/geometry.js';
import { own } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';

/** A zone as the filters read it; one with `enabled: false` holds no object. */
export type ZoneRule = Omit<CameraConfig['zones'][string], 'enabled' | 'anchor' | 'inertia'> & {
  enabled?: boolean;
  anchor?: CameraConfig['zones'][string]['anchor'];
  inertia?: number;
};

/** A detection after the camera's filters, with the zones it is in. */
export interface ZonedDetection extends Detection {
  zones: string[];
}

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
function segmentsMeet(p1: Point, p2: Point, q1: Point, q2: Point): boolean {
  const side = (a: Point, b: Point, c: Point): number =>
    Math.sign((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
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
 * Whether a box is in a zone, by the zone's `anchor`: its bottom centre (where a person or car
 * stands: a zone drawn on the ground), its centre (a zone drawn around things seen from above or
 * on a wall), or any part of the box (`any`: a doorway, a shelf, where touching is enough).
 */
export function inZone(box: Readonly<Box>, zone: Pick<ZoneRule, 'points' | 'anchor'>): boolean {
  const anchor = zone.anchor ?? 'bottom_center';
  if (anchor === 'any') return boxMeetsPolygon(box, zone.points);
  return insidePolygon(anchorPoint(box, anchor), zone.points);
}

/** Whether a detection is masked: its bottom centre is inside one of the polygons. */
const masked = (box: Readonly<Box>, masks: readonly (readonly Point[])[] | undefined): boolean => {
  if (!masks?.length) return false;
  const foot = anchorPoint(box, 'bottom_center');
  return masks.some((m) => insidePolygon(foot, m));
};

/**
 * Applies a camera's `objects` filters (labels tracked, object masks, per-label minimum score,
 * area and mask) and finds each detection's zones. A masked detection is dropped before tracking
 * as if the model had not seen it: the mask is where the bottom centre of its box is (where it
 * stands), so a person walking past a masked poster, whose feet are outside it, is kept. A
 * detection is in a zone when the zone's `anchor` says so (inZone) and the zone accepts its label.
 */
export function applyCameraFilters(
  dets: readonly Detection[],
  cam: Pick<CameraConfig, 'objects'> & { zones: Record<string, ZoneRule> },
): ZonedDetection[] {
  const track = cam.objects.track;
  const out: ZonedDetection[] = [];
  for (const d of dets) {
    if (track && !track.includes(d.label)) continue;
    const f = own(cam.objects.filters, d.label);
    if (f) {
      if (d.score < f.min_score || area(d.box) < f.min_area) continue;
      if (masked(d.box, f.mask)) continue;
    }
    if (masked(d.box, cam.objects.mask)) continue;
    const zones = Object.entries(cam.zones)
      .filter(
        ([, z]) => z.enabled !== false && (!z.objects || z.objects.includes(d.label)) && inZone(d.box, z),
      )
      .map(([name]) => name);
    out.push({ ...d, zones });
  }
  return out;
}
