import { END_AFTER_MISSES, type Track } from './track.js';

/**
 * An object counts as in view when it was matched in one of its camera's last two answered
 * frames, or within this long of the latest: a frame or two missed (a dip under `model.conf`, a
 * passer-by in front) does not make counts flicker, and an object that left stops counting
 * within a second (two answered frames when they come sparser), long before its track ends.
 */
export const COUNT_HOLD_MS = 1000;

export interface Count {
  /** Confirmed objects in view now (see COUNT_HOLD_MS). */
  inView: number;
  /** Those of them not stationary. */
  active: number;
  /** In a zone's counts: whole seconds the longest present of them has been in the zone. */
  dwellS?: number;
  /**
   * In a calibrated zone's counts: the highest speed (m/s, over the last second) of those of them
   * the latest answered frame showed and measured there; absent when none was measured.
   */
  speedMps?: number;
}

export interface TrackCounts {
  /** By label. */
  labels: Map<string, Count>;
  /** By zone, then label. */
  zones: Map<string, Map<string, Count>>;
}

/** Whether `t` is a confirmed object in view at `lastFrame` (see COUNT_HOLD_MS). */
export const inView = (t: Track, lastFrame: number): boolean =>
  t.confirmed && !(t.held === null && t.misses >= END_AFTER_MISSES && lastFrame - t.lastSeen > COUNT_HOLD_MS);

/**
 * Of `tracks`, the confirmed objects in view at `lastFrame` (the latest answered frame's time:
 * matched in one of the last two answered frames, held, or within COUNT_HOLD_MS of it), by
 * label and zone.
 */
export function countTracks(tracks: readonly Track[], lastFrame: number): TrackCounts {
  const out: TrackCounts = { labels: new Map(), zones: new Map() };
  const add = (
    m: Map<string, Count>,
    label: string,
    active: boolean,
    dwellMs?: number,
    speedMps?: number,
  ): void => {
    let c = m.get(label);
    if (!c)
      m.set(
        label,
        (c = dwellMs === undefined ? { inView: 0, active: 0 } : { inView: 0, active: 0, dwellS: 0 }),
      );
    c.inView++;
    if (active) c.active++;
    if (dwellMs !== undefined) c.dwellS = Math.max(c.dwellS ?? 0, Math.floor(dwellMs / 1000));
    if (speedMps !== undefined) c.speedMps = Math.max(c.speedMps ?? 0, speedMps);
  };
  const zone = (z: string): Map<string, Count> => {
    let m = out.zones.get(z);
    if (!m) out.zones.set(z, (m = new Map<string, Count>()));
    return m;
  };
  for (const t of tracks) {
    if (!inView(t, lastFrame)) continue;
    add(out.labels, t.label, !t.stationary);
    for (const z of t.presence.current) {
      // Measured in this frame only: an object not seen in it has no speed now.
      const speed = t.lastSeen === lastFrame ? t.ground.get(z)?.speed() : undefined;
      add(zone(z), t.label, !t.stationary, t.presence.inFor(z, lastFrame), speed);
    }
  }
  return out;
}
