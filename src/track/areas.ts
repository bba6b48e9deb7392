import { anchorPoint, type Box } from '../core/geometry.js';
import { namedRecord, own } from '../core/names.js';
import type { ZonedDetection } from './filters.js';
import { toBox } from './kalman.js';
import { crossings, type Crossed, type LineConfig } from './lines.js';
import { GroundTrack } from './speed.js';
import type { Track } from './track.js';
import type { ZoneArea } from './zones.js';

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

/**
 * A camera's zones and lines as tracking reads them, and what they make of an object: where it
 * stands on calibrated ground, its zones, its loitering, its crossings.
 */
export class CameraAreas {
  /** The camera's zones (undefined: any zone named, at once: TrackerAreas). */
  private zoneAreas: ReadonlyMap<string, ZoneArea> | undefined;
  private loiterS = new Map<string, number>();
  private lines: Readonly<Record<string, LineConfig>> = namedRecord();

  /**
   * New zones and lines (a reload): `tracks` keep their ids; a line changed or removed starts
   * their sides afresh, and forgets the crossings tentative objects made of it.
   */
  set(areas: TrackerAreas, tracks: readonly Track[]): void {
    this.loiterS = new Map(Object.entries(areas.loiterS ?? {}));
    this.zoneAreas = areas.zones ? new Map(Object.entries(areas.zones)) : undefined;
    for (const t of tracks)
      for (const z of t.ground.keys()) if (!this.zoneAreas?.get(z)?.ground) t.ground.delete(z);
    const before = this.lines;
    this.lines = areas.lines ?? namedRecord();
    const changed = (name: string): boolean =>
      JSON.stringify(own(before, name)) !== JSON.stringify(own(this.lines, name));
    for (const t of tracks) {
      for (const name of t.sides.keys()) if (changed(name)) t.sides.delete(name);
      t.unconfirmedCrossings = t.unconfirmedCrossings.filter((c) => !changed(c.line));
    }
  }

  /** The zones a detection's zones give, with their configuration (TrackerAreas). */
  private zonesFor(candidates: readonly string[], t: Track): ReadonlyMap<string, ZoneArea> {
    if (this.zoneAreas) return this.zoneAreas;
    const out = new Map<string, ZoneArea>();
    for (const z of [...candidates, ...t.presence.current])
      out.set(z, { inertia: 1, loiterS: this.loiterS.get(z) });
    return out;
  }

  /**
   * Where the object (its filtered box's bottom centre) stands on each calibrated zone's ground;
   * its speed there is then known (speed.ts, over the frames' steady times). Then its zones, by
   * their inertia and speed thresholds, at time `ts`.
   */
  place(
    t: Track,
    d: ZonedDetection,
    { ts, steady }: { ts: number; steady: number },
    fresh: boolean,
  ): boolean {
    const areas = this.zonesFor(d.zones, t);
    const foot = anchorPoint(toBox(t.kf), 'bottom_center');
    const speeds = new Map<string, number | undefined>();
    for (const [z, a] of areas) {
      if (!a.ground) continue;
      let g = t.ground.get(z);
      if (!g) t.ground.set(z, (g = new GroundTrack(a.ground)));
      // A cached answer's box is an old one: no position at this time, the speed as it was.
      speeds.set(z, fresh ? g.add(steady, foot, d.zones.includes(z)) : g.speed());
    }
    const changed = t.presence.update(d.zones, ts, areas, (z) => speeds.get(z));
    const measured = t.presence.current.find((z) => t.ground.has(z));
    if (measured !== undefined) t.speedZone = measured;
    return changed;
  }

  /**
   * Zone times: a zone left is forgotten (coming back starts its clock again); an object that has
   * been in a zone with `loiter_s` for that long is loitering there (one update says so).
   */
  loiter(t: Track, ts: number): void {
    const stayed = t.presence.current.filter((z) => {
      const limit = this.zoneAreas ? this.zoneAreas.get(z)?.loiterS : this.loiterS.get(z);
      return limit !== undefined && t.presence.inFor(z, ts) >= limit * 1000;
    });
    const still = t.loitering.filter((z) => stayed.includes(z));
    t.loitering = [...still, ...stayed.filter((z) => !still.includes(z))];
  }

  /** Moves `t`'s sides of the lines on with `box` (lines.ts `crossings`); the lines it crossed. */
  cross(t: Track, box: Readonly<Box>): Crossed[] {
    return crossings(this.lines, t.sides, t.label, box);
  }
}
