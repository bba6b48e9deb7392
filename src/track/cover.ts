import { area, type Box } from '../core/geometry.js';
import type { Detection } from '../core/frame.js';
import type { ZonedDetection } from './filters.js';

/**
 * A detection much smaller than its object's predicted box along an axis (under PARTIAL of it)
 * while something in front covers the object shows part of it: the head of a walker above a
 * passer-by, or a parked car. One much larger (over 1 / PARTIAL of it) shows the object merged
 * with what is in front: a parked bus and the walkers passing it in one low-scored box. The
 * filter is then fed the whole object (`wholeObject`: at the size it had before anything covered
 * it, when known), and so are line crossings. Fed the part
 * or the merge, the filter would change the object's size and learn a false velocity from its
 * centre jumping, then lose the object when it comes out whole (or a bus standing on a line
 * would cross it). Without anything in front, a detection is taken as it is: the object has
 * changed size (walking away).
 */
export const PARTIAL = 0.6;

/**
 * Against the size an object had at its last match with nothing over it (`Track.size`), a
 * covered detection is partial (or merged) beyond this: 0.8 of it (or 1.25 times it).
 */
export const KNOWN_PARTIAL = 0.8;

/**
 * Something is in front when another detection (of any label, tracked or not: a camera that
 * tracks only people is still shown the car a walker passes behind) covers this much of the
 * object's predicted box.
 */
export const HIDDEN = 0.2;

/** Where two boxes overlap (an empty box, of area 0, where they do not). */
export const intersection = (a: Readonly<Box>, b: Readonly<Box>): Box => [
  Math.max(a[0], b[0]),
  Math.max(a[1], b[1]),
  Math.min(a[2], b[2]),
  Math.min(a[3], b[3]),
];

/** A detection with another this much inside its box may show both (`merged`). */
export const MERGED = 0.6;

/** Whether `o` is `d`'s own box (the same detection, or its copy). */
const sameBox = (o: Readonly<Box>, d: Readonly<Box>): boolean => o.every((v, i) => v === d[i]);

/** Whether a detection other than `d` covers at least HIDDEN of `predicted`. */
export function hidden(predicted: Readonly<Box>, d: ZonedDetection, others: readonly Detection[]): boolean {
  return others.some((o) => {
    if (sameBox(o.box, d.box)) return false;
    return area(intersection(predicted, o.box)) >= HIDDEN * area(predicted);
  });
}

/** A detection other than `d` lies mostly (MERGED of it) inside `d`'s box: `d` may show both. */
export function merged(d: Detection, others: readonly Detection[]): boolean {
  return others.some(
    (o) => o !== d && !sameBox(o.box, d.box) && area(intersection(o.box, d.box)) >= MERGED * area(o.box),
  );
}

/**
 * `det` made the predicted extent along each axis where it is under PARTIAL of it or over
 * 1 / PARTIAL of it, from its edge that agrees best with the prediction.
 */
export function wholeObject(
  det: Readonly<Box>,
  predicted: Readonly<Box>,
  known?: readonly [w: number, h: number],
): Box {
  const out: Box = [...det];
  for (const [lo, hi] of [
    [0, 2],
    [1, 3],
  ] as const) {
    // Against the size it had before something covered it, when known: an object hidden a little
    // more at each frame shrinks its prediction with it, and would never look partial against that.
    const size = known ? known[lo] : predicted[hi] - predicted[lo];
    const seen = det[hi] - det[lo];
    const partial = known ? KNOWN_PARTIAL : PARTIAL;
    if (seen >= partial * size && seen * partial <= size) continue;
    if (Math.abs(det[lo] - predicted[lo]) <= Math.abs(det[hi] - predicted[hi])) out[hi] = det[lo] + size;
    else out[lo] = det[hi] - size;
  }
  return out;
}
