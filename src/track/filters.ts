import type { Detection } from '../core/frame.js';
import { anchorPoint, area, type Point } from '../core/geometry.js';
import { own } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';

/** A zone as the filters read it; one with `enabled: false` holds no object. */
export type ZoneRule = Omit<CameraConfig['zones'][string], 'enabled'> & { enabled?: boolean };

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

/**
 * Applies a camera's `objects` filters (labels tracked, per-label minimum score and area) and
 * finds each detection's zones. An object is in a zone when the bottom centre of its box (where
 * it stands) is inside the polygon, and the zone accepts its label.
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
    }
    const foot = anchorPoint(d.box, 'bottom_center');
    const zones = Object.entries(cam.zones)
      .filter(
        ([, z]) =>
          z.enabled !== false && (!z.objects || z.objects.includes(d.label)) && insidePolygon(foot, z.points),
      )
      .map(([name]) => name);
    out.push({ ...d, zones });
  }
  return out;
}
