import { iou, type Box } from '../core/geometry.js';
import { colourHistogram, similarity, type Pixels } from './appearance.js';
import { toBox, type KalmanState } from './kalman.js';
import { LOOK_GATE } from './match.js';
import type { Track } from './track.js';

/**
 * How many of the objects seen in a camera's last answered frame must be lost at once, their
 * places no longer showing them, for the frame to be a cut; and what share of those objects.
 * In vtest.mp4's four playings no other frame lost more than two at once.
 */
export const CUT_MIN = 4;
export const CUT_SHARE = 0.4;
/** At a cut, an object goes on only where this frame's box overlaps its prediction this much. */
export const CUT_IOU = 0.5;

/** What the tracker knows of one label group in a frame, before its pairs are applied. */
export interface CutFrame {
  /** The group's confirmed objects, and those of them predicted out of the picture. */
  confirmed: readonly Track[];
  away: ReadonlySet<Track>;
  /** Each object's pair in this frame, by motion: the detection's box. */
  pairs: ReadonlyMap<Track, Readonly<Box>>;
  predicted: ReadonlyMap<Track, KalmanState>;
  pixels: Pixels | undefined;
}

/** Whether `t`'s predicted place in `pixels` no longer looks like it (or is out of the picture). */
function changed(t: Track, f: CutFrame): boolean {
  if (!t.look || !f.pixels) return false;
  const here = colourHistogram(f.pixels, toBox(f.predicted.get(t)!));
  return here === undefined || similarity(t.look, here) < LOOK_GATE;
}

/**
 * The objects a cut took away, or undefined when the frame is no cut. A cut is the picture
 * jumping from one moment to another: a looped file starting again, a PTZ camera at another
 * preset, a recorder switching channels. Its sign: of the objects seen in the last answered
 * frame, at least CUT_MIN (and CUT_SHARE of them) went unpaired in this one while, where each
 * was predicted, the picture no longer looks like it (colours under LOOK_GATE alike). A detector
 * that misses many at once (a smeared frame, a dazzle) misses objects still there, whose places
 * still look like them; a crowd walking on is paired.
 *
 * At a cut only what stayed goes on: an object paired with a box overlapping its prediction
 * (CUT_IOU) or one held still where it stood, its place looking like it (a parked car). The rest
 * of the old picture's objects are returned, to end: whoever stands about where one of them was,
 * now or later, is someone else.
 */
export function cutOf(f: CutFrame): Set<Track> | undefined {
  if (!f.pixels) return undefined;
  const seenLast = f.confirmed.filter((t) => t.misses === 1 && !f.away.has(t));
  const need = Math.max(CUT_MIN, CUT_SHARE * seenLast.length);
  // Counting the unpaired first: most frames have too few to be a cut, and need no histogram.
  const unpaired = seenLast.filter((t) => !f.pairs.has(t));
  if (unpaired.length < need) return undefined;
  const gone = unpaired.filter((t) => changed(t, f));
  if (gone.length < need) return undefined;
  const stayed = (t: Track): boolean => {
    // A walker is not where it was after a jump in time; someone standing there may be.
    if (!t.stationary && t.still === undefined) return false;
    const box = f.pairs.get(t);
    return (box === undefined || iou(toBox(f.predicted.get(t)!), box) >= CUT_IOU) && !changed(t, f);
  };
  const ended = new Set(f.confirmed.filter((t) => !stayed(t)));
  return ended;
}
