import { centre, diagonal, distance } from '../core/geometry.js';
import type { LineCrossing, ObjectEvent, SpeedReport } from './events.js';
import type { Crossed } from './lines.js';
import { SPEED_UNITS, type SpeedUnit } from './speed.js';
import type { Track } from './track.js';

const sameZones = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((z, i) => z === b[i]);

/** `t`'s speed on the calibrated zone it was last measured in, in `unit`, to 0.1; null before one. */
function speedOf(t: Track, unit: SpeedUnit): SpeedReport | null {
  const zone = t.speedZone;
  const g = zone === null ? undefined : t.ground.get(zone);
  if (zone === null || !g || !g.measured) return null;
  const round = (mps: number): number => Math.round(mps * SPEED_UNITS[unit] * 10) / 10;
  const now = t.presence.current.includes(zone) ? g.speed() : undefined;
  return { current: now === undefined ? null : round(now), max: round(g.max), unit, zone };
}

/** The event of type `type` for `t`, seen by `camera`, its speed in `unit`. */
export function objectEvent(
  type: ObjectEvent['type'],
  t: Track,
  camera: string,
  unit: SpeedUnit,
): ObjectEvent {
  return {
    type,
    id: t.id,
    camera,
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
    speed: speedOf(t, unit),
    stationary: t.stationary,
  };
}

/** `objectEvent`, and what it said kept as `t.reported` (what `due` compares against). */
export function report(type: 'new' | 'update', t: Track, camera: string, unit: SpeedUnit): ObjectEvent {
  t.reported = {
    label: t.label,
    box: t.box,
    score: t.topScore,
    zones: t.presence.current,
    loitering: t.loitering,
    stationary: t.stationary,
  };
  return objectEvent(type, t, camera, unit);
}

/**
 * Whether a confirmed object has changed enough since its last report for an `update`: it moved
 * (while active) more than `updateMove` of the reported box's diagonal, its label, stationary
 * state, zones or loitering changed, or its best score rose by `updateScore`.
 */
export function due(t: Track, updateMove: number, updateScore: number): boolean {
  const r = t.reported!;
  const moved = !t.stationary && distance(centre(t.box), centre(r.box)) > updateMove * diagonal(r.box);
  return (
    moved ||
    t.label !== r.label ||
    t.stationary !== r.stationary ||
    !sameZones(t.presence.current, r.zones) ||
    !sameZones(t.loitering, r.loitering) ||
    t.topScore - r.score >= updateScore
  );
}

/** The lines `t` crossed (`crossed`), as its crossings seen by `camera` at `ts`. */
export function crossingEvents(
  t: Track,
  camera: string,
  ts: number,
  crossed: readonly Crossed[],
): LineCrossing[] {
  return crossed.map((c): LineCrossing => ({
    type: 'crossing',
    id: t.id,
    camera,
    label: t.label,
    ...c,
    ts,
  }));
}
