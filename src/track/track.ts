import { centre, type Box } from '../core/geometry.js';
import type { LineCrossing } from './events.js';
import type { ZonedDetection } from './filters.js';
import { initiate, type KalmanState } from './kalman.js';
import type { Side } from './lines.js';
import type { GroundTrack } from './speed.js';
import { ZonePresence } from './zones.js';

/**
 * A lost object ends only once at least this many of its camera's answered frames in a row have
 * not shown it (and they span more than `end_after_s`): at 0.3 answered frames a second, one
 * frame that misses a walker is 3.3 s of "evidence", and must not end it alone. The same number
 * of frames is what "seen lately" means for the counts in view (COUNT_HOLD_MS) and for the reach
 * (REACH_PER_S).
 */
export const END_AFTER_MISSES = 2;

/**
 * How far ahead (seconds) a lost object is predicted, and its reach grown, however long it went
 * unseen: a walker unseen for 5 s at 0.3 answered frames a second is looked for where 5 s took
 * it. A camera that had no answer at all for longer (lagging, offline) had an outage: the
 * tracker's clocks skip it (`update`), and its objects are looked for where they were when it
 * began, not anywhere a minute could have taken them, or another object coming in elsewhere
 * would take an id; one that walked on meanwhile ends, and comes back as `new`.
 */
export const HORIZON_S = 5;

/** One tracked object: its filter, its label's vote, its looks, its zones and lines, what was last reported. */
export interface Track {
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
  /** The filter's state at time `at` (the last match; on the filters' clock, frames' steady times). */
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

/** A tentative track, first seen as `d` at `ts`, in label group `group`, looking like `look` (if known). */
export function newTrack(
  id: string,
  d: ZonedDetection,
  group: string,
  look: Float32Array | undefined,
  ts: number,
): Track {
  return {
    id,
    label: d.label,
    group,
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
}

/** Seconds from `t`'s last match to `ts` (on the filters' clock: frames' steady times), up to HORIZON_S. */
export const since = (t: Track, ts: number): number => Math.min(HORIZON_S, Math.max(0, ts - t.at) / 1000);
