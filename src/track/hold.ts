import { area, centre, diagonal, distance, iou, type Box } from '../core/geometry.js';
import type { Detection } from '../core/frame.js';
import { coveredCells, patchChanged, patchOf, type Pixels } from './appearance.js';
import { intersection, merged } from './cover.js';
import type { ZonedDetection } from './filters.js';
import { halt, predict, toBox, type KalmanState } from './kalman.js';
import { since, type Track } from './track.js';

/**
 * A move of the filtered centre beyond this fraction of the box's diagonal makes an object
 * active (and restarts its stationary clock); staying within it for `stationary_after_s` makes it
 * stationary. 10 % of a person's 60×160 box is 17 px: well above a detector's jitter of a few
 * pixels, well below a step.
 */
export const STATIONARY_MOVE = 0.1;

/**
 * An object missed while it has not moved for this long (or is stationary) is held as long as
 * the picture where it stands has not changed (appearance.ts `patchChanged`): the detector
 * missing a parked car does not end it; the car driving off does.
 */
export const HOLD_STILL_MS = 2000;
/**
 * A detection overlapping where a still object stood this much (IoU) is it, seen again; a
 * confident one overlapping less, not hidden, says it has moved on (its place is forgotten).
 */
export const STILL_IOU = 0.5;

/**
 * A lost object is hidden while its predicted centre lies inside another detection's box (any
 * label: the bus a walker passed behind, a walker in front of a parked car), or one covers this
 * much of its predicted box; it is then held for `events.hold_hidden_s` at most, and a
 * detection coming out there is matched to it (by place and looks) before a new track starts.
 */
export const HIDDEN_HOLD = 0.4;

/**
 * An object slower than this (box diagonals a second: a walker goes about 0.8) may be hidden
 * where it was last seen, having stopped behind what hides it; a faster one only where it is
 * predicted.
 */
export const SLOW_PER_S = 1.2;

/**
 * A confirmed object just matched at `ts`: moved beyond STATIONARY_MOVE of its filtered box's
 * diagonal from its anchor, it is active and anchored anew; within it for `stationaryAfterS`,
 * it is stationary.
 */
export function settle(t: Track, ts: number, stationaryAfterS: number): void {
  const filtered = toBox(t.kf);
  const c = centre(filtered);
  if (distance(c, t.anchor) > STATIONARY_MOVE * diagonal(filtered)) {
    t.anchor = c;
    t.anchorAt = ts;
    t.stationary = false;
  } else if (ts - t.anchorAt >= stationaryAfterS * 1000) t.stationary = true;
}

/**
 * Where a confirmed object matched to `d` stands still, what its place looks like: it is held
 * while that does not change. Kept from a clear (`covered` false) look at it once it has not
 * moved for HOLD_STILL_MS (or is stationary); forgotten when a fresh detection scoring at least
 * `highScore`, with nothing over it, shows it elsewhere (IoU under STILL_IOU).
 */
export function notePlace(
  t: Track,
  d: ZonedDetection,
  ts: number,
  seen: { pixels: Pixels | undefined; covered: boolean; fresh: boolean; highScore: number },
): void {
  const { pixels, covered, fresh, highScore } = seen;
  const patch =
    pixels && !covered && (t.stationary || ts - t.anchorAt >= HOLD_STILL_MS)
      ? patchOf(pixels, d.box)
      : undefined;
  if (patch) t.still = { box: [...d.box], patch };
  else if (fresh && !covered && d.score >= highScore && t.still && iou(d.box, t.still.box) < STILL_IOU)
    t.still = undefined;
}

/**
 * Why a lost object is kept, if it is (Tracker `endLost`): it stood still and the part of its
 * place that nothing else stands in front of shows what it showed (`still`); or others' boxes
 * cover its predicted centre, the centre where it was last seen, or HIDDEN_HOLD of its
 * predicted box, for `holdHiddenS` at most since it was last seen (`hidden`). `lastFrame`: the
 * latest answered frame's time, and its steady time (the filters' clock).
 */
export function holds(
  t: Track,
  others: readonly Detection[],
  pixels: Pixels | undefined,
  { ts: lastFrame, steady }: { ts: number; steady: number },
  holdHiddenS: number,
): Track['held'] {
  if (!t.confirmed) return null;
  const boxes = others.map((o) => o.box);
  const still = t.still;
  if (still) {
    // Without a new picture (a cached answer repeats the last), what was held stays held.
    if (!pixels) return t.held === 'still' ? 'still' : null;
    const now = patchOf(pixels, still.box);
    const covered = coveredCells(still.box, boxes);
    const visible = covered.length - covered.reduce((a, b) => a + b, 0);
    if (now && visible >= (1 - HIDDEN_HOLD) * covered.length && !patchChanged(still.patch, now, covered)) {
      // It stands where it stood: looked for there, not where a velocity would take it.
      t.kf = halt(t.kf);
      return 'still';
    }
  }
  if (lastFrame - t.lastSeen > holdHiddenS * 1000) return null;
  const pb = toBox(predict(t.kf, since(t, steady)));
  const c = centre(pb);
  // Where it is predicted, or, for a slow one, where it was last seen (it may have stopped
  // behind the other; a bus gone at speed is not held because a walker crosses where it was).
  const last = toBox(t.kf);
  const slow = Math.hypot(t.kf.cx.v, t.kf.cy.v) <= SLOW_PER_S * diagonal(last);
  const at = still ? [c, centre(still.box)] : slow ? [c, centre(last)] : [c];
  const over = boxes.filter((b) => at.some(([x, y]) => x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3]));
  // About to come out: still within what hid it (grown by its size), which is still there.
  const by = t.hiddenBy;
  if (t.held === 'hidden' && by && !over.length && boxes.some((b) => iou(b, by) >= 0.5)) {
    const [w, h] = [pb[2] - pb[0], pb[3] - pb[1]];
    if (c[0] >= by[0] - w && c[0] <= by[2] + w && c[1] >= by[1] - h && c[1] <= by[3] + h) return 'hidden';
  }
  const covered = coveredCells(pb, boxes);
  if (!over.length && covered.reduce((a, b) => a + b, 0) < HIDDEN_HOLD * covered.length) return null;
  const covers = over.length ? over : boxes.filter((b) => area(intersection(b, pb)) > 0);
  t.hiddenBy = covers.reduce<Box>(
    (u, b) => [Math.min(u[0], b[0]), Math.min(u[1], b[1]), Math.max(u[2], b[2]), Math.max(u[3], b[3])],
    [...covers[0]!],
  );
  return 'hidden';
}

/**
 * Pairing a held object (predicted `p` at `ts`) with a detection: where a still one stood
 * (IoU ≥ STILL_IOU), or, for a hidden one, coming out where it hid: allowed only within the
 * box it was hidden behind, grown by the object's own size (matchCost's gate, which grows with
 * the time unseen, may reach across the view: someone else coming in at the edge is not it);
 * the nearer the prediction, the cheaper, and `matchPool` adds the looks. `others`: every
 * detection of the frame.
 */
export function comeOutCost(
  t: Track,
  p: KalmanState,
  d: ZonedDetection,
  others: readonly Detection[],
  ts: number,
): number {
  if (t.still) {
    const overlap = iou(t.still.box, d.box);
    if (overlap >= STILL_IOU) return 1 - overlap;
    // A box holding its place and what stands in front of it (`merged`) shows it too.
    const inside = area(intersection(t.still.box, d.box)) / area(t.still.box);
    if (inside >= 1 - HIDDEN_HOLD / 2 && merged(d, others)) return 1 - overlap;
  }
  if (t.held !== 'hidden') return Infinity;
  const pb = toBox(p);
  const c = centre(d.box);
  const [w, h] = [pb[2] - pb[0], pb[3] - pb[1]];
  const by = t.hiddenBy;
  if (by === null || c[0] < by[0] - w || c[0] > by[2] + w || c[1] < by[1] - h || c[1] > by[3] + h)
    return Infinity;
  const diag = Math.max(diagonal(pb), diagonal(d.box));
  return Math.min(1, distance(c, centre(pb)) / (diag * (1 + since(t, ts))));
}
