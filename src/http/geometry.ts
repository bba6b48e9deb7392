import type { Point } from '../core/geometry.js';
import { namedRecord } from '../core/names.js';
import type { CameraConfig } from '../config/index.js';
import type { ZonedDetection } from '../track/index.js';

/** A polygon or a line's two ends, `[x, y]` in source pixels. */
type Points = Point[];

/**
 * What a camera's configuration draws over its frame (GET /api/cameras `geometry`): its zones,
 * lines, object masks and cache masks, all in source pixels of a `width`×`height` frame, so the
 * page (or a user checking the YAML) can see where the coordinates typed in actually are.
 */
export interface CameraGeometry {
  /** The frame's source size the points are in; null before the stream's size is known. */
  width: number | null;
  height: number | null;
  zones: Record<string, { points: Points; enabled: boolean }>;
  lines: Record<string, { points: [Point, Point]; directions: [string, string]; enabled: boolean }>;
  /** Object masks: the camera's (`label` null: every label) and each label filter's. */
  masks: { label: string | null; points: Points }[];
  cache_mask: Points[];
}

/** A camera's geometry as its configuration says now, in a frame of `size` (null: unknown). */
export function cameraGeometry(
  cam: Pick<CameraConfig, 'zones' | 'lines' | 'objects' | 'cache_mask'>,
  size: { width: number; height: number } | null,
): CameraGeometry {
  const zones = namedRecord<CameraGeometry['zones'][string]>();
  for (const [name, z] of Object.entries(cam.zones)) zones[name] = { points: z.points, enabled: z.enabled };
  const lines = namedRecord<CameraGeometry['lines'][string]>();
  for (const [name, l] of Object.entries(cam.lines))
    lines[name] = { points: l.points, directions: l.directions, enabled: l.enabled };
  const masks: CameraGeometry['masks'] = cam.objects.mask.map((points) => ({ label: null, points }));
  for (const [label, f] of Object.entries(cam.objects.filters))
    for (const points of f.mask) masks.push({ label, points });
  return {
    width: size?.width ?? null,
    height: size?.height ?? null,
    zones,
    lines,
    masks,
    cache_mask: cam.cache_mask,
  };
}

/** The boxes of one frame, counted as the count chips show them: by label, and by zone and label. */
export interface BoxCounts {
  labels: Record<string, number>;
  zones: Record<string, Record<string, number>>;
}

/** Counts the boxes drawn (detections after the camera's filters). Objects without a prototype. */
export function boxCounts(detections: readonly ZonedDetection[]): BoxCounts {
  const out: BoxCounts = { labels: namedRecord(), zones: namedRecord() };
  for (const d of detections) {
    out.labels[d.label] = (out.labels[d.label] ?? 0) + 1;
    for (const z of d.zones) {
      const byLabel = (out.zones[z] ??= namedRecord());
      byLabel[d.label] = (byLabel[d.label] ?? 0) + 1;
    }
  }
  return out;
}

/**
 * JSON with every character outside printable ASCII escaped (`\uXXXX`): safe as an HTTP header
 * value whatever the names (a header takes Latin-1 only), and `JSON.parse` reads it back as is.
 */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
