import { anchorPoint, area, centre, diagonal, distance, iou, type Box } from '../core/geometry.js';
import type { Detection } from '../core/frame.js';
import { namedRecord, own } from '../core/names.js';
import type { Config } from '../config/index.js';
import { assign } from './assign.js';
import {
  blend,
  colourHistogram,
  coveredCells,
  patchChanged,
  patchOf,
  similarity,
  type Pixels,
} from './appearance.js';
import type { ZonedDetection } from './filters.js';
import {
  centreDistance2,
  GATE_99,
  halt,
  initiate,
  predict,
  toBox,
  update,
  type KalmanState,
} from './kalman.js';
import { crossings, type LineConfig, type Side } from './lines.js';
import { GroundTrack, SPEED_UNITS, type SpeedUnit } from './speed.js';
import { ZonePresence, type ZoneArea } from './zones.js';

/**
 * A move of the filtered centre beyond this fraction of the box's diagonal makes an object
 * active (and restarts its stationary clock); staying within it for `stationary_after_s` makes it
 * stationary. 10 % of a person's 60×160 box is 17 px: well above a detector's jitter of a few
 * pixels, well below a step.
 */
export const STATIONARY_MOVE = 0.1;

/**
 * An object counts as in view when it was matched in one of its camera's last two answered
 * frames, or within this long of the latest: a frame or two missed (a dip under `model.conf`, a
 * passer-by in front) does not make counts flicker, and an object that left stops counting
 * within a second (two answered frames when they come sparser), long before its track ends.
 */
export const COUNT_HOLD_MS = 1000;

/**
 * A lost object ends only once at least this many of its camera's answered frames in a row have
 * not shown it (and they span more than `end_after_s`): at 0.3 answered frames a second, one
 * frame that misses a walker is 3.3 s of "evidence", and must not end it alone. The same number
 * of frames is what "seen lately" means for the counts in view (COUNT_HOLD_MS) and for the reach
 * (REACH_PER_S).
 */
export const END_AFTER_MISSES = 2;

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

/**
 * How far ahead (seconds) a lost object is predicted, and its reach grown, however long it went
 * unseen: a walker unseen for 5 s at 0.3 answered frames a second is looked for where 5 s took
 * it. A camera that had no answer at all for longer (lagging, offline) had an outage: the
 * tracker's clocks skip it (`update`), and its objects are looked for where they were when it
 * began, not anywhere a minute could have taken them, or another object coming in elsewhere
 * would take an id; one that walked on meanwhile ends, and comes back as `new`.
 */
export const HORIZON_S = 5;

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
 * A detection of the same label group whose box overlaps one matched in the same frame this
 * much (IoU) is the same object under another label (the detector's `car` box inside the van's
 * `truck` box): it votes for that object's label and starts nothing.
 */
export const DUPLICATE_IOU = 0.6;

/**
 * The label vote's lead (tracker `relabel`): a confirmed object's label changes only when another
 * label's vote (the sum of its detections' scores) exceeds its label's by 10 % of it plus 1 (two
 * confident detections).
 */
export const LABEL_LEAD = 0.1;
export const LABEL_MARGIN = 1;

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

export interface ObjectEvent {
  type: 'new' | 'update' | 'end';
  id: string;
  camera: string;
  label: string;
  /** Highest score seen. */
  score: number;
  /** The last detection's box. */
  box: Box;
  /** When the object was first seen, and (for `end`) last seen: ms since the epoch. */
  startTs: number;
  endTs: number | null;
  /** The zones it is in now (the same as `currentZones`, kept for subscribers that read it). */
  zones: string[];
  currentZones: string[];
  /** Every zone it has been in during the visit, in order of entry. */
  enteredZones: string[];
  /** Zones it has stayed in for their `loiter_s` and is still in, in the order it got there. */
  loiteringZones: string[];
  /** Seconds in each zone entered (zones.ts `times`): the current stay, or the last one. */
  zoneTimes: Record<string, number>;
  /** Its speed on a calibrated zone's ground, once measured there (speed.ts); else null. */
  speed: SpeedReport | null;
  stationary: boolean;
}

/** An object's speed in the unit of `events.speed_unit`, to 0.1. */
export interface SpeedReport {
  /** Over the last second (null: not measured in the last second, e.g. it left the zone). */
  current: number | null;
  /** The highest measured during the visit. */
  max: number;
  unit: SpeedUnit;
  /** The calibrated zone it was measured in. */
  zone: string;
}

/** A confirmed object crossed a line (lines.ts): at `ts`, the time of the frame that showed it across. */
export interface LineCrossing {
  type: 'crossing';
  id: string;
  camera: string;
  label: string;
  line: string;
  direction: string;
  ts: number;
}

export type TrackerEvent = ObjectEvent | LineCrossing;

/** An object matched (or first seen) in the latest frame, tentative or confirmed, and its detection there. */
export interface Sighting {
  id: string;
  label: string;
  detection: ZonedDetection;
}

/** A detection's place in tracking (Tracker.identify): `id` is its object's event id once confirmed. */
export type DetectionTrack = { id: string; track: 'confirmed' } | { id: null; track: 'tentative' | 'none' };

/** A camera's zones and lines. */
export interface TrackerAreas {
  /**
   * Its enabled zones. Not given (tests of tracking alone): every zone a detection names is
   * entered at once (inertia 1), and `loiterS` gives their loitering times.
   */
  zones?: Readonly<Record<string, ZoneArea>>;
  /** Per zone with `loiter_s`, how long an object may stay before it is loitering (without `zones`). */
  loiterS?: Readonly<Record<string, number>>;
  lines?: Readonly<Record<string, LineConfig>>;
}

export interface Count {
  /** Confirmed objects in view now (see COUNT_HOLD_MS). */
  inView: number;
  /** Those of them not stationary. */
  active: number;
  /** In a zone's counts: whole seconds the longest present of them has been in the zone. */
  dwellS?: number;
}

export interface TrackCounts {
  /** By label. */
  labels: Map<string, Count>;
  /** By zone, then label. */
  zones: Map<string, Map<string, Count>>;
}

interface Track {
  id: string;
  /** Its label: the one with the highest vote (the sum of its detections' scores per label). */
  label: string;
  /** Its box's size at its last analysed match with nothing over it: what a covered detection shows part of. */
  size: [w: number, h: number] | undefined;
  /** Its label group (`events.label_groups`, or the label alone): detections of the group may be it. */
  group: string;
  votes: Map<string, number>;
  /** The running mean of its colour histograms (appearance.ts), when pixels are given. */
  look: Float32Array | undefined;
  /**
   * Where it stood still, and what its place looked like, at its last clear match there: kept
   * through odd low-scored boxes (merged with passers-by), dropped once it is seen clearly elsewhere.
   */
  still: { box: Box; patch: Uint8Array } | undefined;
  /** Why a lost object is kept past `end_after_s`: the place still shows it, or something is in front. */
  held: 'still' | 'hidden' | null;
  /** The box it was last hidden behind. */
  hiddenBy: Box | null;
  /** The filter's state at time `at` (the last match). */
  kf: KalmanState;
  at: number;
  box: Box;
  topScore: number;
  /** Its zones (entered, left, how long): zones.ts. */
  presence: ZonePresence;
  /** Per calibrated zone, its positions on that ground; and the last such zone it was in. */
  ground: Map<string, GroundTrack>;
  speedZone: string | null;
  loitering: string[];
  start: number;
  lastSeen: number;
  /** Answered frames of its camera in a row that did not show it. */
  misses: number;
  hits: number;
  confirmed: boolean;
  stationary: boolean;
  /** Where the object was when it last moved beyond STATIONARY_MOVE, and when. */
  anchor: [number, number];
  anchorAt: number;
  /** The side of each line it was last firmly on; crossings seen before it was confirmed. */
  sides: Map<string, Side>;
  unconfirmedCrossings: LineCrossing[];
  reported: {
    label: string;
    box: Box;
    score: number;
    zones: string[];
    loitering: string[];
    stationary: boolean;
  } | null;
}

/** One frame's update, as its stages share it. */
interface Step {
  ts: number;
  others: readonly Detection[];
  fresh: boolean;
  pixels: Pixels | undefined;
  /** Each detection's colour histogram, when pixels came and appearance is on. */
  looks: Map<ZonedDetection, Float32Array>;
  events: TrackerEvent[];
}

/** What `Tracker.update` may know of a frame besides its detections. */
export interface TrackFrame {
  /** Every detection of the frame, also those the camera's filters dropped (what may stand in front). */
  others?: readonly Detection[];
  /**
   * Answered from the cache: the detections are the last analysed frame's, repeated. They keep
   * their objects seen, but teach neither the filters nor speeds nor lines anything: an old box
   * at a new time would read as a halt, then a jump.
   */
  cached?: boolean;
  /** The picture the model saw, for appearance and for whether a still object's place changed. */
  pixels?: Pixels;
}

const sameZones = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((z, i) => z === b[i]);

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
const intersection = (a: Readonly<Box>, b: Readonly<Box>): Box => [
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
function hidden(predicted: Readonly<Box>, d: ZonedDetection, others: readonly Detection[]): boolean {
  return others.some((o) => {
    if (sameBox(o.box, d.box)) return false;
    return area(intersection(predicted, o.box)) >= HIDDEN * area(predicted);
  });
}

/** A detection other than `d` lies mostly (MERGED of it) inside `d`'s box: `d` may show both. */
function merged(d: Detection, others: readonly Detection[]): boolean {
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

/** Seconds from `t`'s last match to `ts`, up to HORIZON_S. */
const since = (t: Track, ts: number): number => Math.min(HORIZON_S, Math.max(0, ts - t.at) / 1000);

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

/**
 * A per-camera multi-object tracker of the ByteTrack family; pure, time passed in (ms).
 *
 * Each track carries a constant-velocity Kalman filter in box space (kalman.ts), predicted to
 * the frame's time. Per label, detections are assigned to the predicted boxes by least total
 * cost (assign.ts, `matchCost`), which adds the squared Mahalanobis distance of the centres d²
 * (centre distance normalised by box size and by the time since the track was last seen) and
 * 1 − IoU. A pair is made only within the gate: d² ≤ 9.21 (the 99 % ellipse, which grows with
 * the time since the last match), a centre distance of at most GATE_FLOOR box diagonals from the
 * prediction, or REACH_PER_S box diagonals a second from where it was last matched (sparse
 * answers). IoU alone fails at low fps: a walker at 2 fps moves more than its width between
 * frames.
 *
 * As ByteTrack: (1) detections scoring at least `high_score` against confirmed tracks, lost or
 * not; (2) the lower-scored ones (down to `model.conf` and the camera's filters) against the
 * confirmed tracks still unmatched, so an object whose score dips keeps its track; (3) the
 * high-scored ones left against tentative tracks. High-scored detections left over start
 * tentative tracks; a tentative track missed once is dropped, and one matched in `min_frames`
 * frames is confirmed (`new`). A confirmed track not matched is lost: kept and predicted on, so
 * it keeps its id through a dropout, and ended (`end`, end time = last seen) once its camera's
 * answered frames have not shown it for more than `end_after_s` (and END_AFTER_MISSES of them in
 * a row). Time alone ends nothing: a camera whose frames get no answer (the detector cannot keep
 * up, its server is away, the camera is offline) keeps its objects, and their counts, until
 * frames are answered again; the prediction still runs on real time, so a walker seen again
 * after a gap is looked for where it has walked meanwhile.
 *
 * A detection showing part of a confirmed object while another detection covers it (PARTIAL,
 * HIDDEN) updates the filter, and line crossings, as the whole object: a walker passing behind
 * another, or behind a car, keeps its id and crosses no line with its head alone.
 *
 * A confirmed object whose filtered centre stays within STATIONARY_MOVE of its box diagonal for
 * `stationary_after_s` becomes stationary (one `update`); moving beyond it makes it active
 * again (one `update`). Otherwise an `update` is sent when its zones change, its best score rose
 * by `update_score` since the last report, or (while active) its centre moved more than
 * `update_move` box diagonals from the last reported box.
 */
export class Tracker {
  private tracks: Track[] = [];
  private counter = 0;
  private seen: Sighting[] = [];
  /** The latest answered frame's time. */
  private lastFrame = -Infinity;

  /** The camera's zones as tracking reads them (undefined: any zone named, at once: TrackerAreas). */
  private zoneAreas: ReadonlyMap<string, ZoneArea> | undefined;
  private loiterS = new Map<string, number>();
  private lines: Readonly<Record<string, LineConfig>> = namedRecord();
  /** Each grouped label's group (`events.label_groups`). */
  private readonly groups = new Map<string, string>();

  constructor(
    readonly camera: string,
    private readonly cfg: Config['events'],
    areas: TrackerAreas = {},
  ) {
    this.setAreas(areas);
    (cfg.label_groups ?? []).forEach((labels, i) => {
      for (const l of labels) this.groups.set(l, `group ${i}`);
    });
  }

  /** A label's group: the detections that may be one object (a label alone is its own). */
  private groupOf(label: string): string {
    return this.groups.get(label) ?? `label ${label}`;
  }

  /**
   * New zones and lines (a reload): objects keep their ids; a line changed or removed starts its
   * sides afresh, and forgets the crossings tentative objects made of it.
   */
  setAreas(areas: TrackerAreas): void {
    this.loiterS = new Map(Object.entries(areas.loiterS ?? {}));
    this.zoneAreas = areas.zones ? new Map(Object.entries(areas.zones)) : undefined;
    for (const t of this.tracks)
      for (const z of t.ground.keys()) if (!this.zoneAreas?.get(z)?.ground) t.ground.delete(z);
    const before = this.lines;
    this.lines = areas.lines ?? namedRecord();
    const changed = (name: string): boolean =>
      JSON.stringify(own(before, name)) !== JSON.stringify(own(this.lines, name));
    for (const t of this.tracks) {
      for (const name of t.sides.keys()) if (changed(name)) t.sides.delete(name);
      t.unconfirmedCrossings = t.unconfirmedCrossings.filter((c) => !changed(c.line));
    }
  }

  private event(type: ObjectEvent['type'], t: Track): ObjectEvent {
    return {
      type,
      id: t.id,
      camera: this.camera,
      label: t.label,
      score: t.topScore,
      box: t.box,
      startTs: t.start,
      endTs: type === 'end' ? t.lastSeen : null,
      zones: t.presence.current,
      currentZones: t.presence.current,
      enteredZones: t.presence.entered,
      loiteringZones: t.loitering,
      zoneTimes: t.presence.times(t.lastSeen),
      speed: this.speedOf(t),
      stationary: t.stationary,
    };
  }

  private speedOf(t: Track): SpeedReport | null {
    const zone = t.speedZone;
    const g = zone === null ? undefined : t.ground.get(zone);
    if (zone === null || !g || !g.measured) return null;
    const unit = this.cfg.speed_unit;
    const round = (mps: number): number => Math.round(mps * SPEED_UNITS[unit] * 10) / 10;
    const now = t.presence.current.includes(zone) ? g.speed() : undefined;
    return { current: now === undefined ? null : round(now), max: round(g.max), unit, zone };
  }

  /** The zones a detection's zones give, with their configuration (TrackerAreas). */
  private areas(candidates: readonly string[], t: Track): ReadonlyMap<string, ZoneArea> {
    if (this.zoneAreas) return this.zoneAreas;
    const out = new Map<string, ZoneArea>();
    for (const z of [...candidates, ...t.presence.current])
      out.set(z, { inertia: 1, loiterS: this.loiterS.get(z) });
    return out;
  }

  /**
   * Where the object (its filtered box's bottom centre) stands on each calibrated zone's ground;
   * its speed there is then known (speed.ts). Then its zones, by their inertia and speed thresholds.
   */
  private place(t: Track, d: ZonedDetection, ts: number, fresh: boolean): boolean {
    const areas = this.areas(d.zones, t);
    const foot = anchorPoint(toBox(t.kf), 'bottom_center');
    const speeds = new Map<string, number | undefined>();
    for (const [z, a] of areas) {
      if (!a.ground) continue;
      let g = t.ground.get(z);
      if (!g) t.ground.set(z, (g = new GroundTrack(a.ground)));
      // A cached answer's box is an old one: no position at this time, the speed as it was.
      speeds.set(z, fresh ? g.add(ts, foot, d.zones.includes(z)) : g.speed());
    }
    const changed = t.presence.update(d.zones, ts, areas, (z) => speeds.get(z));
    const measured = t.presence.current.find((z) => t.ground.has(z));
    if (measured !== undefined) t.speedZone = measured;
    return changed;
  }

  private report(type: 'new' | 'update', t: Track): ObjectEvent {
    t.reported = {
      label: t.label,
      box: t.box,
      score: t.topScore,
      zones: t.presence.current,
      loitering: t.loitering,
      stationary: t.stationary,
    };
    return this.event(type, t);
  }

  /**
   * Feeds one frame's detections (time `ts`); returns the events and line crossings it causes.
   * `others`: every detection of the frame, also those the camera's filters dropped (what may
   * stand in front of a tracked object).
   */
  update(dets: readonly ZonedDetection[], ts: number, frame: TrackFrame = {}): TrackerEvent[] {
    const others = frame.others ?? dets;
    const fresh = frame.cached !== true;
    const pixels = fresh ? frame.pixels : undefined;
    this.seen = [];
    // An outage (no answer for longer than HORIZON_S): the filters' clocks skip it.
    const gap = ts - this.lastFrame;
    if (gap > HORIZON_S * 1000) for (const t of this.tracks) t.at += gap;
    this.lastFrame = Math.max(this.lastFrame, ts);
    const events: TrackerEvent[] = [];
    for (const t of this.tracks) t.misses++;
    const looks = new Map<ZonedDetection, Float32Array>();
    if (pixels && this.cfg.appearance !== false)
      for (const d of dets) {
        const h = colourHistogram(pixels, d.box);
        if (h) looks.set(d, h);
      }
    const step: Step = { ts, others, fresh, pixels, looks, events };
    const groups = new Set([...this.tracks.map((t) => t.group), ...dets.map((d) => this.groupOf(d.label))]);
    for (const group of groups) this.updateGroup(group, dets, step);
    events.push(...this.endLost(others, frame.pixels));
    return events;
  }

  /** One label group's part of `update`: the ByteTrack stages, duplicates, objects coming out from behind others. */
  private updateGroup(group: string, dets: readonly ZonedDetection[], step: Step): void {
    const { ts } = step;
    const tracks = this.tracks.filter((t) => t.group === group);
    const own = dets.filter((d) => this.groupOf(d.label) === group);
    // A cached answer shows the picture of the last analysed frame: its boxes are where they were.
    const predicted = new Map(tracks.map((t) => [t, predict(t.kf, step.fresh ? since(t, ts) : 0)]));
    const high = own.filter((d) => d.score >= this.cfg.high_score);
    const low = own.filter((d) => d.score < this.cfg.high_score);
    const matchedHere: { t: Track; d: ZonedDetection }[] = [];
    /**
     * Assigns `ds` to `pool` by `cost` plus what unlike looks add (`lookCost`), AMBIGUOUS times
     * over where a track could take more than one detection or a detection more than one track;
     * updates the matched tracks; returns what is left of each.
     */
    const match = (
      pool: Track[],
      ds: ZonedDetection[],
      cost: (t: Track, d: ZonedDetection) => number,
    ): { tracks: Track[]; dets: ZonedDetection[] } => {
      const m = pool.map((t) => ds.map((d) => cost(t, d)));
      const rows = m.map((r) => r.filter(Number.isFinite).length);
      const cols = ds.map((_, c) => m.filter((r) => Number.isFinite(r[c])).length);
      for (const [r, t] of pool.entries())
        for (const [c, d] of ds.entries()) {
          if (!Number.isFinite(m[r]![c])) continue;
          const look = this.lookCost(t, step.looks.get(d));
          m[r]![c]! += rows[r]! > 1 || cols[c]! > 1 ? AMBIGUOUS * look : look;
        }
      const a = assign(m, ds.length, COST_LIMIT);
      for (const [r, c] of a.pairs) {
        this.matched(pool[r]!, predicted.get(pool[r]!)!, ds[c]!, step);
        matchedHere.push({ t: pool[r]!, d: ds[c]! });
      }
      return { tracks: a.unmatchedRows.map((r) => pool[r]!), dets: a.unmatchedCols.map((c) => ds[c]!) };
    };
    // A detection either of two could be goes to the one the last frame showed (LOST_COST). An
    // object unseen since its prediction left the picture has gone: someone coming in where it
    // went out is someone else.
    const motion = (t: Track, d: ZonedDetection): number =>
      this.gone(t, predicted.get(t)!, step)
        ? Infinity
        : matchCost(predicted.get(t)!, d.box, reachOf(t, ts)) +
          Math.min(LOST_COST_MAX, LOST_COST * (t.misses - 1));
    const first = match(
      tracks.filter((t) => t.confirmed),
      high,
      motion,
    );
    match(first.tracks, low, motion);
    const tentative = tracks.filter((t) => !t.confirmed);
    const third = match(tentative, first.dets, motion);
    // Another label's box on an object matched in this frame is that object.
    let left = third.dets.filter((d) => {
      const same = matchedHere.find((m) => iou(m.d.box, d.box) >= DUPLICATE_IOU);
      if (!same) return true;
      same.t.votes.set(d.label, (same.t.votes.get(d.label) ?? 0) + d.score);
      this.seen.push({ id: same.t.id, label: same.t.label, detection: d });
      return false;
    });
    // An object coming out from behind another, or seen again where it stood, before anything
    // new starts there.
    const held = tracks.filter((t) => t.held !== null && t.misses > 0);
    if (held.length && left.length)
      left = match(held, left, (t, d) => this.comeOutCost(t, predicted.get(t)!, d, step)).dets;
    const dropped = new Set(third.tracks);
    this.tracks = this.tracks.filter((t) => !dropped.has(t));
    for (const d of left) this.start(d, step);
  }

  /** Whether `t`, unseen in the last frame, is predicted wholly outside the picture (its size known from its pixels). */
  private gone(t: Track, p: KalmanState, step: Step): boolean {
    const g = step.pixels?.geometry;
    if (!g || t.misses <= 1) return false;
    const [x1, y1, x2, y2] = toBox(p);
    return x2 < 0 || y2 < 0 || x1 > g.srcW || y1 > g.srcH;
  }

  /** What unlike looks add to a pair's cost (0–1); Infinity after a gap when they are too unlike. */
  private lookCost(t: Track, look: Float32Array | undefined): number {
    if (!t.look || !look) return 0;
    const s = similarity(t.look, look);
    if (t.misses > END_AFTER_MISSES && s < LOOK_GATE) return Infinity;
    return 1 - s;
  }

  /**
   * Pairing a held object with a detection: where a still one stood (IoU ≥ STILL_IOU), or, for a
   * hidden one, coming out where it hid: allowed only within the
   * box it was hidden behind, grown by the object's own size (matchCost's gate, which grows with
   * the time unseen, may reach across the view: someone else coming in at the edge is not it);
   * the nearer the prediction, the cheaper, and `match` adds the looks.
   */
  private comeOutCost(t: Track, p: KalmanState, d: ZonedDetection, step: Step): number {
    if (t.still) {
      const overlap = iou(t.still.box, d.box);
      if (overlap >= STILL_IOU) return 1 - overlap;
      // A box holding its place and what stands in front of it (`merged`) shows it too.
      const inside = area(intersection(t.still.box, d.box)) / area(t.still.box);
      if (inside >= 1 - HIDDEN_HOLD / 2 && merged(d, step.others)) return 1 - overlap;
    }
    if (t.held !== 'hidden') return Infinity;
    const pb = toBox(p);
    const c = centre(d.box);
    const [w, h] = [pb[2] - pb[0], pb[3] - pb[1]];
    const by = t.hiddenBy;
    if (by === null || c[0] < by[0] - w || c[0] > by[2] + w || c[1] < by[1] - h || c[1] > by[3] + h)
      return Infinity;
    const diag = Math.max(diagonal(pb), diagonal(d.box));
    return Math.min(1, distance(c, centre(pb)) / (diag * (1 + since(t, step.ts))));
  }

  /**
   * Ends the confirmed objects the camera's answered frames have not shown for more than
   * `end_after_s` (END_AFTER_MISSES of them in a row at least), unless they are held: a still
   * object whose place shows what it showed, or one hidden behind another detection (for
   * `hold_hidden_s` at most). Tentative ones were dropped at their first miss.
   */
  private endLost(others: readonly Detection[], pixels: Pixels | undefined): ObjectEvent[] {
    const events: ObjectEvent[] = [];
    this.tracks = this.tracks.filter((t) => {
      if (t.misses === 0) {
        t.held = null;
        return true;
      }
      t.held = this.holds(t, others, pixels);
      if (t.held) return true;
      if (t.misses < END_AFTER_MISSES || this.lastFrame - t.lastSeen <= this.cfg.end_after_s * 1000)
        return true;
      events.push(this.event('end', t));
      return false;
    });
    return events;
  }

  /**
   * Why a lost object is kept, if it is (endLost): it stood still and the part of its place
   * that nothing else stands in front of shows what it showed (`still`); or others' boxes
   * cover its predicted centre, the centre where it was last seen, or HIDDEN_HOLD of its
   * predicted box, for `hold_hidden_s` at most (`hidden`).
   */
  private holds(t: Track, others: readonly Detection[], pixels: Pixels | undefined): Track['held'] {
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
    if (this.lastFrame - t.lastSeen > this.cfg.hold_hidden_s * 1000) return null;
    const pb = toBox(predict(t.kf, since(t, this.lastFrame)));
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

  private start(d: ZonedDetection, step: Step): void {
    const { ts, events } = step;
    const look = step.looks.get(d);
    const t: Track = {
      id: `${ts}-${this.camera}-${++this.counter}`,
      label: d.label,
      group: this.groupOf(d.label),
      size: undefined,
      votes: new Map([[d.label, d.score]]),
      look: look && Float32Array.from(look),
      still: undefined,
      held: null,
      hiddenBy: null,
      kf: initiate(d.box),
      at: ts,
      box: d.box,
      topScore: d.score,
      presence: new ZonePresence(),
      ground: new Map(),
      speedZone: null,
      loitering: [],
      start: ts,
      lastSeen: ts,
      misses: 0,
      hits: 1,
      confirmed: false,
      stationary: false,
      anchor: centre(d.box),
      anchorAt: ts,
      sides: new Map(),
      unconfirmedCrossings: [],
      reported: null,
    };
    crossings(this.lines, t.sides, t.label, d.box);
    this.place(t, d, ts, step.fresh);
    this.loiter(t, ts);
    this.tracks.push(t);
    this.seen.push({ id: t.id, label: t.label, detection: d });
    if (this.cfg.min_frames <= 1) this.confirm(t, ts, events);
  }

  private confirm(t: Track, ts: number, events: TrackerEvent[]): void {
    t.confirmed = true;
    t.anchor = centre(toBox(t.kf));
    t.anchorAt = ts;
    events.push(this.report('new', t), ...t.unconfirmedCrossings);
    t.unconfirmedCrossings = [];
  }

  private matched(t: Track, p: KalmanState, d: ZonedDetection, step: Step): void {
    const { ts, others, fresh, events } = step;
    t.votes.set(d.label, (t.votes.get(d.label) ?? 0) + d.score);
    const pb = toBox(p);
    const covered = t.confirmed && (hidden(pb, d, others) || merged(d, others));
    const whole = covered ? wholeObject(d.box, pb, t.size) : d.box;
    if (fresh && !covered) t.size = [d.box[2] - d.box[0], d.box[3] - d.box[1]];
    // A cached answer repeats the last analysed box: the picture has not changed, so the object
    // is there and has not moved (its velocity goes to 0: a walker who stopped in a still scene
    // is not predicted on across the view when the next analysed frame comes); no position at
    // this time for the filter, speeds or lines.
    if (fresh) t.kf = update(p, whole);
    else t.kf = halt(t.kf);
    t.at = Math.max(t.at, ts);
    t.box = d.box;
    t.topScore = Math.max(t.topScore, d.score);
    t.lastSeen = Math.max(t.lastSeen, ts);
    this.place(t, d, ts, fresh);
    this.loiter(t, ts);
    t.misses = 0;
    t.held = null;
    t.hits++;
    const look = step.looks.get(d);
    if (look && !covered) t.look = t.look ? blend(t.look, look, LOOK_RATE) : Float32Array.from(look);
    this.relabel(t);
    this.seen.push({ id: t.id, label: t.label, detection: d });
    const crossed = fresh
      ? crossings(this.lines, t.sides, t.label, toBox(t.kf)).map((c): LineCrossing => ({
          type: 'crossing',
          id: t.id,
          camera: this.camera,
          label: t.label,
          ...c,
          ts,
        }))
      : [];
    if (!t.confirmed) {
      t.unconfirmedCrossings.push(...crossed);
      if (t.hits >= this.cfg.min_frames) this.confirm(t, ts, events);
      return;
    }
    const filtered = toBox(t.kf);
    const c = centre(filtered);
    if (distance(c, t.anchor) > STATIONARY_MOVE * diagonal(filtered)) {
      t.anchor = c;
      t.anchorAt = ts;
      t.stationary = false;
    } else if (ts - t.anchorAt >= this.cfg.stationary_after_s * 1000) t.stationary = true;
    // Where it stands still, what its place looks like: it is held while that does not change.
    const patch =
      step.pixels && !covered && (t.stationary || ts - t.anchorAt >= HOLD_STILL_MS)
        ? patchOf(step.pixels, d.box)
        : undefined;
    if (patch) t.still = { box: [...d.box], patch };
    else if (
      fresh &&
      !covered &&
      d.score >= this.cfg.high_score &&
      t.still &&
      iou(d.box, t.still.box) < STILL_IOU
    )
      t.still = undefined;
    const r = t.reported!;
    const moved =
      !t.stationary && distance(centre(t.box), centre(r.box)) > this.cfg.update_move * diagonal(r.box);
    if (
      moved ||
      t.label !== r.label ||
      t.stationary !== r.stationary ||
      !sameZones(t.presence.current, r.zones) ||
      !sameZones(t.loitering, r.loitering) ||
      t.topScore - r.score >= this.cfg.update_score
    )
      events.push(this.report('update', t));
    events.push(...crossed);
  }

  /**
   * Its label: the one with the highest vote. Once announced, another label takes over only when
   * its vote exceeds the current one's by LABEL_LEAD (a fraction of it, plus a margin): labels
   * that alternate evenly do not flip it back and forth.
   */
  private relabel(t: Track): void {
    const current = t.votes.get(t.label) ?? 0;
    let best = t.label;
    let top = t.confirmed ? current * (1 + LABEL_LEAD) + LABEL_MARGIN : current;
    for (const [label, v] of t.votes)
      if (v > top) {
        best = label;
        top = v;
      }
    t.label = best;
  }

  /**
   * Zone times: a zone left is forgotten (coming back starts its clock again); an object that has
   * been in a zone with `loiter_s` for that long is loitering there (one update says so).
   */
  private loiter(t: Track, ts: number): void {
    const stayed = t.presence.current.filter((z) => {
      const limit = this.zoneAreas ? this.zoneAreas.get(z)?.loiterS : this.loiterS.get(z);
      return limit !== undefined && t.presence.inFor(z, ts) >= limit * 1000;
    });
    const still = t.loitering.filter((z) => stayed.includes(z));
    t.loitering = [...still, ...stayed.filter((z) => !still.includes(z))];
  }

  /** The objects matched or first seen in the latest frame given to `update`, with their detections. */
  sightings(): readonly Sighting[] {
    return this.seen;
  }

  /**
   * What tracking made of each of the latest frame's detections (those given to `update`, in
   * their order): the object it showed, confirmed (its id is its event's) or tentative, or none
   * (a low score that started nothing).
   */
  identify(dets: readonly ZonedDetection[]): DetectionTrack[] {
    const tracks = new Map(this.tracks.map((t) => [t.id, t]));
    const by = new Map(this.seen.map((s) => [s.detection, s.id]));
    return dets.map((d) => {
      const id = by.get(d);
      const t = id === undefined ? undefined : tracks.get(id);
      if (!t) return { id: null, track: 'none' };
      return t.confirmed ? { id: t.id, track: 'confirmed' } : { id: null, track: 'tentative' };
    });
  }

  /** Whether an object (tentative or confirmed) of that id is tracked. */
  has(id: string): boolean {
    return this.tracks.some((t) => t.id === id);
  }

  /** Ends every object now (shutdown, camera removed). */
  endAll(): ObjectEvent[] {
    const events = this.tracks.filter((t) => t.confirmed).map((t) => this.event('end', t));
    this.tracks = [];
    return events;
  }

  /**
   * Confirmed objects in view now (matched in one of the last two answered frames, or within
   * COUNT_HOLD_MS of the latest), by label and zone.
   */
  counts(): TrackCounts {
    const out: TrackCounts = { labels: new Map(), zones: new Map() };
    const add = (m: Map<string, Count>, label: string, active: boolean, dwellMs?: number): void => {
      let c = m.get(label);
      if (!c)
        m.set(
          label,
          (c = dwellMs === undefined ? { inView: 0, active: 0 } : { inView: 0, active: 0, dwellS: 0 }),
        );
      c.inView++;
      if (active) c.active++;
      if (dwellMs !== undefined) c.dwellS = Math.max(c.dwellS ?? 0, Math.floor(dwellMs / 1000));
    };
    const zone = (z: string): Map<string, Count> => {
      let m = out.zones.get(z);
      if (!m) out.zones.set(z, (m = new Map<string, Count>()));
      return m;
    };
    for (const t of this.tracks) {
      if (
        !t.confirmed ||
        (t.held === null && t.misses >= END_AFTER_MISSES && this.lastFrame - t.lastSeen > COUNT_HOLD_MS)
      )
        continue;
      add(out.labels, t.label, !t.stationary);
      for (const z of t.presence.current)
        add(zone(z), t.label, !t.stationary, t.presence.inFor(z, this.lastFrame));
    }
    return out;
  }
}
