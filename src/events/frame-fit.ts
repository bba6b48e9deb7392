import type { Logger } from 'pino';
import type { Point } from '../core/geometry.js';
import { own } from '../core/names.js';
import { boxMeetsPolygon } from '../core/polygon.js';
import type { CameraConfig, CamerasNow } from '../config/index.js';
import type { CameraStatus } from '../ingest/index.js';

/**
 * The shapes of a camera (zones, lines, masks) that lie wholly outside its picture: they can
 * never hold, cross or hide anything. The config does not know a stream's size, so this is said
 * once the camera streams (and again when its size changes), as a warning naming each shape.
 */

/** The config paths of a camera's shapes that lie wholly outside a `w` × `h` picture. */
export function shapesOutside(cam: CameraConfig, w: number, h: number): string[] {
  const frame = [0, 0, w, h] as const;
  const out: string[] = [];
  const polygons = (path: string, list: readonly (readonly Point[])[]): void =>
    list.forEach((poly, i) => {
      if (!boxMeetsPolygon(frame, poly)) out.push(`${path}[${i}]`);
    });
  for (const [name, zone] of Object.entries(cam.zones))
    if (!boxMeetsPolygon(frame, zone.points)) out.push(`zones.${name}`);
  for (const [name, line] of Object.entries(cam.lines))
    // A segment is a polygon of two points: it meets the picture where it crosses or enters it.
    if (!boxMeetsPolygon(frame, line.points)) out.push(`lines.${name}`);
  polygons('objects.mask', cam.objects.mask);
  for (const [label, f] of Object.entries(cam.objects.filters))
    polygons(`objects.filters.${label}.mask`, f.mask);
  polygons('cache_mask', cam.cache_mask);
  return out;
}

/** Warns, once per camera and picture size, of the shapes that lie outside the picture. */
export class FrameFit {
  readonly name = 'frame-fit';
  /** Camera → the picture size last checked (`640x480`). */
  private readonly checked = new Map<string, string>();

  constructor(
    private readonly cameras: CamerasNow,
    private readonly log: Logger,
  ) {}

  onCameraStatus(s: CameraStatus): void {
    const cam = own(this.cameras(), s.camera);
    if (!cam || !s.source) return;
    const { width, height } = s.source;
    const size = `${width}x${height}`;
    if (this.checked.get(s.camera) === size) return;
    this.checked.set(s.camera, size);
    const outside = shapesOutside(cam, width, height);
    if (outside.length)
      this.log.warn(
        { camera: s.camera, shapes: outside, picture: size },
        `cameras.${s.camera}: ${outside.join(', ')} lie wholly outside its ${size} picture: they can never hold, cross or hide anything`,
      );
  }

  /** A reload or a change: the shapes are checked again at the next status. */
  camerasChanged(): void {
    this.checked.clear();
  }
}
