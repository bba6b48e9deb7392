import type { Homography } from './speed.js';

/** What the tracker knows of a camera's zone (enabled ones only). */
export interface ZoneArea {
  /** Consecutive answered frames inside (or outside) before the object has entered (or left). */
  inertia: number;
  /** An object in the zone this long is loitering. */
  loiterS?: number;
  /** A calibrated zone: picture pixels to metres on the ground (speed.ts). */
  ground?: Homography;
  /** With `ground`: an object enters only while faster than this (m/s). */
  speedThreshold?: number;
}

/** A stay in a zone: from the first frame of the streak that entered it, to the last frame inside. */
export interface Stay {
  from: number;
  /** The last frame it was inside; null while it is in the zone. */
  to: number | null;
}

/**
 * An object's presence in its camera's zones, with hysteresis: a zone is entered after `inertia`
 * answered frames in a row inside it (box jitter at a zone's edge does not make the object enter
 * and leave at every frame), and left after as many in a row outside. Its stay counts from the
 * first frame of the streak that entered it (it was there then) to the last frame inside, so the
 * time in a zone and loitering use the same clock as before inertia delayed the entry. A zone
 * the camera no longer has (a reload) is left at once.
 */
export class ZonePresence {
  /** The zones it is in now, in order of entry. */
  current: string[] = [];
  /** Every zone it has been in during the visit, in order of first entry. */
  entered: string[] = [];
  /** The latest stay in each zone entered. */
  readonly stays = new Map<string, Stay>();
  /** Per zone, the streak that may change its presence: frames in a row, and the first one's time. */
  private streaks = new Map<string, { n: number; from: number }>();
  /** The last frame's time inside each zone it is in now. */
  private lastInside = new Map<string, number>();
  /** The zones whose streak this frame continued (the others' are broken at its end). */
  private touched = new Set<string>();

  /**
   * One answered frame that showed the object at `ts`, inside the zones `candidates` (the
   * detection's zones) moving at `speed` m/s on each calibrated zone's ground (unknown: absent).
   * Returns whether the zones it is in changed.
   */
  update(
    candidates: readonly string[],
    ts: number,
    areas: ReadonlyMap<string, ZoneArea>,
    speed: (zone: string) => number | undefined = () => undefined,
  ): boolean {
    let changed = false;
    for (const z of [...this.current]) {
      const area = areas.get(z);
      if (!area) {
        this.leave(z, this.lastInside.get(z) ?? ts);
        changed = true;
      } else if (candidates.includes(z)) {
        this.lastInside.set(z, ts);
        this.streaks.delete(z);
      } else if (this.streak(z, ts) >= area.inertia) {
        this.leave(z, this.lastInside.get(z) ?? ts);
        changed = true;
      }
    }
    for (const z of candidates) {
      if (this.current.includes(z)) continue;
      const area = areas.get(z);
      if (!area) continue;
      if (area.speedThreshold !== undefined && !((speed(z) ?? 0) > area.speedThreshold)) {
        this.streaks.delete(z);
        continue;
      }
      if (this.streak(z, ts) < area.inertia) continue;
      this.stays.set(z, { from: this.streaks.get(z)!.from, to: null });
      this.streaks.delete(z);
      this.current = [...this.current, z];
      this.lastInside.set(z, ts);
      if (!this.entered.includes(z)) this.entered = [...this.entered, z];
      changed = true;
    }
    // A streak this frame did not continue is broken.
    for (const z of this.streaks.keys()) if (!this.touched.has(z)) this.streaks.delete(z);
    this.touched.clear();
    return changed;
  }

  private streak(z: string, ts: number): number {
    const s = this.streaks.get(z) ?? { n: 0, from: ts };
    s.n++;
    this.streaks.set(z, s);
    this.touched.add(z);
    return s.n;
  }

  private leave(z: string, last: number): void {
    this.current = this.current.filter((c) => c !== z);
    const stay = this.stays.get(z);
    if (stay) stay.to = last;
    this.streaks.delete(z);
    this.lastInside.delete(z);
  }

  /** How long it has been in a zone it is in now, at `ts`, in ms. */
  inFor(z: string, ts: number): number {
    const stay = this.stays.get(z);
    return stay && stay.to === null ? Math.max(0, ts - stay.from) : 0;
  }

  /**
   * Seconds in each zone entered during the visit, to 0.1 s: the current stay up to `now` (the
   * object's last frame) for the zones it is in, the last stay for those it has left.
   */
  times(now: number): Record<string, number> {
    const out: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const z of this.entered) {
      const s = this.stays.get(z)!;
      out[z] = Math.round((Math.max(0, (s.to ?? now) - s.from) / 1000) * 10) / 10;
    }
    return out;
  }
}
