import { centre, diagonal, distance, iou, type Box } from '../core/geometry.js';
import { similarity, type Pixels } from './appearance.js';
import { assign } from './assign.js';
import type { ZonedDetection } from './filters.js';
import { centreDistance2, GATE_99, halt, toBox, type KalmanState } from './kalman.js';
import { END_AFTER_MISSES, since, type Track } from './track.js';

/**
 * The gate's floor: a detection whose centre is within this fraction of a diagonal (the larger
 * of the predicted box's and the detection's) from the predicted centre may match even outside
 * the 99 % ellipse. A filter that has tracked a standing or steady object for long grows
 * confident; without the floor, the object starting to walk or turning would leave its own track
 * (at 5 fps a walker starting off is 40 px away on the next frame: a quarter of its diagonal).
 * The larger diagonal: a track last matched to part of its object (a head above a passer-by who
 * hides the rest) has shrunk, and must take the whole object back when it comes out.
 */
export const GATE_FLOOR = 0.5;

/**
 * How far an object may have gone, in its box diagonals per second since it was last matched,
 * whatever its velocity said: a circle around where it was last seen, growing with the time
 * since. At 5–10 answers a second the prediction's gate and GATE_FLOOR cover a walker; with
 * sparse answers (a busy detector serving a camera 0.3–1 frames a second) a walker who stopped,
 * started off or turned back is far from where its velocity predicted it (at 0.3 frames a
 * second, 3.3 s of 100 px/s the other way is 660 px off), but within 1.5 of its diagonals a
 * second of where it was: a person walks at about 0.8 of theirs, and jogs at 1.5.
 */
export const REACH_PER_S = 1.5;

/** Where a track was last matched, and how far it may have gone since (REACH_PER_S). */
export interface Reach {
  centre: readonly [number, number];
  radius: number;
}

/**
 * What each answered frame an object was not seen in adds to pairing it (up to LOST_COST_MAX):
 * of two alike walkers crossing, one hidden behind the other a frame ago, the detection goes to
 * the one it showed, not to the one that just went behind.
 */
export const LOST_COST = 0.1;
export const LOST_COST_MAX = 0.5;

/**
 * Where motion is ambiguous (a track could take more than one detection, or a detection more
 * than one track: two walkers whose boxes cross), appearance counts this many times over.
 */
export const AMBIGUOUS = 3;

/** A pair costs less than 5 (motion under 2, appearance at most AMBIGUOUS); every gated pair can be made. */
const COST_LIMIT = 2 + AMBIGUOUS + 0.001;

/**
 * Appearance (appearance.ts: a colour histogram of the middle of each box) joins the motion
 * cost as 1 − the Bhattacharyya coefficient of the detection's histogram and the object's
 * running mean: when two walkers' boxes cross, or a lost object is looked for after a gap, the
 * one that looks like it wins. Two crops of one walker score 0.8–0.95; two people in different
 * clothes 0.3–0.6.
 */
export const LOOK_RATE = 0.2;
/**
 * An object unseen in more than END_AFTER_MISSES answered frames (out of view, behind
 * something) is matched again only to a detection at least this alike: another object coming
 * in where it was does not take its id.
 */
export const LOOK_GATE = 0.6;

/**
 * What pairing a track's predicted state with a detected box costs: d²/(d² + 9.21) + (1 − IoU),
 * d² being `centreDistance2`; the first term grows with the distance and stays under 1 (½ on the
 * 99 % ellipse), the second is in [0, 1]. Infinity outside the gate: d² > 9.21, farther than
 * GATE_FLOOR diagonals of the larger box from the prediction, and (with `reach`) outside the
 * circle the object may have gone to since it was last matched. Among detections that do not
 * overlap the prediction (common at low fps) the nearer one is cheaper.
 */
export function matchCost(p: KalmanState, box: Readonly<Box>, reach?: Reach): number {
  const d2 = centreDistance2(p, box);
  const pb = toBox(p);
  const c = centre(box);
  const near =
    distance(c, centre(pb)) <= GATE_FLOOR * Math.max(diagonal(pb), diagonal(box)) ||
    (reach !== undefined && distance(c, reach.centre) <= reach.radius);
  if (d2 > GATE_99 && !near) return Infinity;
  return d2 / (d2 + GATE_99) + (1 - iou(pb, box));
}

/**
 * Where `t` was last matched, and how far it may have gone by `ts` (REACH_PER_S), while it was
 * matched in one of its camera's two answered frames before this one: the gap is the camera's
 * sparse answers, not the object gone. An object unseen in more frames than that (it left the
 * view, or went behind something) is looked for by its prediction only, or another coming in
 * where it was would take its id.
 */
function reachOf(t: Track, ts: number): Reach | undefined {
  if (t.misses > END_AFTER_MISSES) return undefined;
  const last = toBox(t.kf);
  return { centre: centre(last), radius: REACH_PER_S * diagonal(last) * since(t, ts) };
}

/** Whether `t`, unseen in the last frame, is predicted wholly outside the picture (its size known from its pixels). */
export function gone(t: Track, p: KalmanState, pixels: Pixels | undefined): boolean {
  const g = pixels?.geometry;
  if (!g || t.misses <= 1) return false;
  const [x1, y1, x2, y2] = toBox(p);
  return x2 < 0 || y2 < 0 || x1 > g.srcW || y1 > g.srcH;
}

/**
 * How alike an object that went out of the picture and a detection where it was last seen must
 * look (`comeBackCost`): two crops of one walker score 0.8–0.95. LOOK_GATE (0.6) let a woman in
 * red coming in at vtest's right edge take the id of a man in a dark coat who had left there.
 */
export const COME_BACK_LOOK = 0.8;
/**
 * And how far its height may differ from the object's last (a share of it): colours of a box
 * cut by the edge are few, and a man's dark coat and a woman's red jacket over dark trousers
 * scored 0.84 there; his box was 71 px tall, hers 59.
 */
export const COME_BACK_HEIGHT = 0.12;

/**
 * Pairing an object that went out of the picture (`gone`) with a detection where it was last
 * seen: a walker who stopped or turned back at the edge, half out of view, is missed by the
 * detector for seconds while its prediction walks on out of the picture, and is seen again
 * where it stood. Only a detection wholly in the picture that looks much like it
 * (COME_BACK_LOOK) and is as tall (COME_BACK_HEIGHT) may be it — someone else coming in where it went out is someone else — at
 * its filter's last state halted (`matchCost`)
 * plus LOST_COST_MAX, so an object seen lately is preferred. Infinity without looks.
 */
export function comeBackCost(
  t: Track,
  box: Readonly<Box>,
  look: Float32Array | undefined,
  pixels: Pixels | undefined,
): number {
  const g = pixels?.geometry;
  // A box the edge cuts shows too little of its object to tell it (someone coming in).
  if (!g || box[0] < 1 || box[1] < 1 || box[2] > g.srcW - 1 || box[3] > g.srcH - 1) return Infinity;
  if (!t.look || !look || similarity(t.look, look) < COME_BACK_LOOK) return Infinity;
  // Where it stood it is as tall as it was.
  const tall = t.size?.[1] ?? t.box[3] - t.box[1];
  if (Math.abs((box[3] - box[1]) / Math.max(1, tall) - 1) > COME_BACK_HEIGHT) return Infinity;
  return matchCost(halt(t.kf), box) + LOST_COST_MAX;
}

/**
 * Pairing `t` (predicted `p` at `ts`) with a detected box by motion: `matchCost`, within its
 * reach. A detection either of two could be goes to the one the last frame showed (LOST_COST). An
 * object unseen since its prediction left the picture has gone: someone coming in where it
 * went out is someone else. An object hidden behind another (`held` 'hidden', hold.ts) and
 * unseen in more than one answered frame may have stopped there, as hold.ts already supposes:
 * it is also paired from where it was last seen (its filter halted), whichever costs less. At
 * vtest's lamp post, a man who walked behind the sign and stopped was predicted 45 px on, beyond
 * his gate: the walker beside him, whose prediction reached, took his box, and the walker's own
 * reappearance started a new id (issue 42 item 6).
 */
export function motionCost(
  t: Track,
  p: KalmanState,
  box: Readonly<Box>,
  ts: number,
  pixels: Pixels | undefined,
): number {
  if (gone(t, p, pixels)) return Infinity;
  const moving = matchCost(p, box, reachOf(t, ts));
  const stopped = t.held === 'hidden' && t.misses > 1 ? matchCost(halt(t.kf), box) : Infinity;
  return Math.min(moving, stopped) + Math.min(LOST_COST_MAX, LOST_COST * (t.misses - 1));
}

/**
 * What a track pays to take a detection only its partner's gate holds (`matchPool`'s `partners`),
 * on top of the partner's own cost for it: two crossing walkers whose tracks motion paired with
 * each other's boxes in the frame they overlapped are predicted on each other's side a frame
 * later, each beyond its own walker's gate, and motion alone keeps them swapped. With the extra
 * cost, looks pair them back only where they tell the two apart: across two pairs, by more
 * than 2 × SWAP_COST ÷ AMBIGUOUS of similarity (0.17; one walker's crops differ by 0.05–0.15).
 */
export const SWAP_COST = 0.25;

/**
 * Whether two confirmed tracks, both seen in the last frame, are predicted within a diagonal
 * (of the larger box) of each other: walkers meeting or crossing, whose boxes may be either's.
 */
export function partners(a: Track, pa: KalmanState, b: Track, pb: KalmanState): boolean {
  if (!a.confirmed || !b.confirmed || a.misses > 1 || b.misses > 1) return false;
  const ba = toBox(pa);
  const bb = toBox(pb);
  return distance(centre(ba), centre(bb)) <= Math.max(diagonal(ba), diagonal(bb));
}

/** What unlike looks add to a pair's cost (0–1); Infinity after a gap when they are too unlike. */
function lookCost(t: Track, look: Float32Array | undefined): number {
  if (!t.look || !look) return 0;
  const s = similarity(t.look, look);
  if (t.misses > END_AFTER_MISSES && s < LOOK_GATE) return Infinity;
  return 1 - s;
}

/**
 * Assigns `ds` to `pool` by `cost` plus what unlike looks add (`lookCost`, by each detection's
 * histogram in `looks`), AMBIGUOUS times over where a track could take more than one detection
 * or a detection more than one track; hands each pair to `pair`, in the assignment's order;
 * returns what is left of each. With `partners` (two tracks whose boxes may be either's), a
 * track with a look may also take a detection with a look that only its partner's gate holds,
 * at the partner's cost plus SWAP_COST.
 */
export function matchPool(
  pool: Track[],
  ds: ZonedDetection[],
  cost: (t: Track, d: ZonedDetection) => number,
  looks: ReadonlyMap<ZonedDetection, Float32Array>,
  pair: (t: Track, d: ZonedDetection) => void,
  partnersOf?: (a: Track, b: Track) => boolean,
): { tracks: Track[]; dets: ZonedDetection[] } {
  const own = pool.map((t) => ds.map((d) => cost(t, d)));
  const m = own.map((r) => [...r]);
  if (partnersOf)
    for (const [r, t] of pool.entries())
      for (const [r2, u] of pool.entries()) {
        if (r === r2 || !t.look || !partnersOf(t, u)) continue;
        for (const [c, d] of ds.entries())
          if (!Number.isFinite(own[r]![c]) && Number.isFinite(own[r2]![c]) && looks.has(d))
            m[r]![c] = Math.min(m[r]![c]!, own[r2]![c]! + SWAP_COST);
      }
  const rows = m.map((r) => r.filter(Number.isFinite).length);
  const cols = ds.map((_, c) => m.filter((r) => Number.isFinite(r[c])).length);
  for (const [r, t] of pool.entries())
    for (const [c, d] of ds.entries()) {
      if (!Number.isFinite(m[r]![c])) continue;
      const look = lookCost(t, looks.get(d));
      m[r]![c]! += rows[r]! > 1 || cols[c]! > 1 ? AMBIGUOUS * look : look;
    }
  const a = assign(m, ds.length, COST_LIMIT);
  for (const [r, c] of a.pairs) pair(pool[r]!, ds[c]!);
  return { tracks: a.unmatchedRows.map((r) => pool[r]!), dets: a.unmatchedCols.map((c) => ds[c]!) };
}
