import type { Box } from '../core/geometry.js';
import type { SpeedUnit } from './speed.js';

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
