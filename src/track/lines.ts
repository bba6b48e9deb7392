import { anchorPoint, diagonal, type Box, type Point } from '../core/geometry.js';
import type { CameraConfig } from '../config/index.js';

/** A line as the tracker counts it (a disabled line is not handed to it at all). */
export type LineConfig = Omit<CameraConfig['lines'][string], 'enabled'>;

/**
 * How far (a fraction of the box's diagonal) an object's anchor must be from a line to be on
 * one side of it: the hysteresis. Between the two bands it is on the line: nothing changes, so a
 * box that jitters, or an object that wanders about on the line or steps over it and back (a
 * walker turning round at the line in vtest.mp4, 25 px past it), is not counted again and again.
 * A quarter of a person's 60×160 box is 43 px: well above a detector's jitter, about a step.
 */
export const LINE_MARGIN = 0.25;

/** The side of a line a track was last firmly on, and where. */
export interface Side {
  side: 1 | -1;
  at: Point;
}

/** A confirmed track's anchor went from one side of a line to the other, within its ends. */
export interface Crossed {
  line: string;
  direction: string;
}

const cross = (ax: number, ay: number, bx: number, by: number): number => ax * by - ay * bx;

/**
 * Signed distance (px) of `p` from the line through A and B: negative on the left of A→B as
 * drawn on the picture (y grows downwards), positive on its right.
 */
export function signedDistance(points: readonly [Point, Point], p: Point): number {
  const [[ax, ay], [bx, by]] = points;
  return cross(bx - ax, by - ay, p[0] - ax, p[1] - ay) / Math.hypot(bx - ax, by - ay);
}

/** Whether the segment from `p` to `q` (on opposite sides of the line) passes between A and B. */
export function withinEnds(points: readonly [Point, Point], p: Point, q: Point): boolean {
  const [[ax, ay], [bx, by]] = points;
  const [dx, dy] = [q[0] - p[0], q[1] - p[1]];
  const denom = cross(bx - ax, by - ay, dx, dy);
  if (denom === 0) return false;
  const t = cross(p[0] - ax, p[1] - ay, dx, dy) / denom;
  return t >= 0 && t <= 1;
}

/**
 * Moves a track's sides on with its new box, and returns the lines it crossed. A crossing is a
 * move from firmly one side (beyond LINE_MARGIN) to firmly the other, with the straight path
 * between the two positions passing between the line's ends; the first direction is left to
 * right of A→B. `sides` (per line name) is the track's own and is updated in place.
 */
export function crossings(
  lines: Readonly<Record<string, LineConfig>>,
  sides: Map<string, Side>,
  label: string,
  box: Readonly<Box>,
): Crossed[] {
  const out: Crossed[] = [];
  const margin = LINE_MARGIN * diagonal(box);
  for (const [name, line] of Object.entries(lines)) {
    if (line.objects && !line.objects.includes(label)) continue;
    const at = anchorPoint(box, line.anchor);
    const d = signedDistance(line.points, at);
    if (Math.abs(d) <= margin) continue;
    const side = d > 0 ? 1 : -1;
    const before = sides.get(name);
    sides.set(name, { side, at });
    if (!before || before.side === side || !withinEnds(line.points, before.at, at)) continue;
    out.push({ line: name, direction: line.directions[side > 0 ? 0 : 1] });
  }
  return out;
}
