import type { Detection } from '../core/frame.js';
import { anchorPoint, area, type Box, type Point } from '../core/geometry.js';
import { own } from '../core/names.js';
import { boxMeetsPolygon, insidePolygon } from '../core/polygon.js';
import type { CameraConfig } from '../config/index.js';

/** A zone as the filters read it; one with `enabled: false` holds no object. */
export type ZoneRule = Omit<CameraConfig['zones'][string], 'enabled' | 'anchor' | 'inertia'> & {
  enabled?: boolean;
  anchor?: CameraConfig['zones'][string]['anchor'];
  inertia?: number;
};

/** The polygon tests the filters use (core/polygon.ts), as the track stage has always offered them. */
export { boxMeetsPolygon, insidePolygon };

/** A detection after the camera's filters, with the zones it is in. */
export interface ZonedDetection extends Detection {
  zones: string[];
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
