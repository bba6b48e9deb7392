/**
 * The live page's overlay arithmetic, plain functions with no imports and no DOM: the browser
 * imports this module as the unit tests do, so what it runs is what they test.
 *
 * latest.jpg is the whole source frame (the letterbox padding is cut away), scaled; the browser
 * scales it again to the card. A point in source pixels therefore lands at the same fraction of
 * the image as shown on each axis, whatever size the JPEG was drawn at.
 */

/** Points in source pixels of a `source` frame, in pixels of the image as `shown` (CSS px). */
export function toShown(
  points: readonly (readonly [number, number])[],
  source: { width: number; height: number },
  shown: { width: number; height: number },
): [number, number][] {
  const sx = shown.width / source.width;
  const sy = shown.height / source.height;
  return points.map(([x, y]) => [x * sx, y * sy]);
}

/**
 * Where a line's direction arrows start and which way they point: its midpoint, and the unit
 * normal towards the right of A→B as drawn (y grows downwards). An object crossing that way is
 * counted under the line's first direction, the other way under its second (src/track/lines.ts).
 */
export function lineArrow(
  a: readonly [number, number],
  b: readonly [number, number],
): { mid: [number, number]; normal: [number, number] } {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len = Math.hypot(dx, dy) || 1;
  return { mid: [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2], normal: [-dy / len, dx / len] };
}
