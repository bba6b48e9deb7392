import { iou, type Box } from '../core/geometry.js';
import type { Config } from '../config/index.js';
import type { ZonedDetection } from './filters.js';

/** Smallest IoU that links a detection to a tracked object. */
const MATCH_IOU = 0.3;

export interface ObjectEvent {
  type: 'new' | 'update' | 'end';
  id: string;
  camera: string;
  label: string;
  /** Highest score seen. */
  score: number;
  box: Box;
  /** When the object was first seen, and (for `end`) last seen: ms since the epoch. */
  startTs: number;
  endTs: number | null;
  zones: string[];
}

interface Track {
  id: string;
  label: string;
  box: Box;
  score: number;
  topScore: number;
  zones: string[];
  start: number;
  lastSeen: number;
  hits: number;
  confirmed: boolean;
  reported: { box: Box; score: number; zones: string[] } | null;
}

/**
 * A per-camera IoU tracker. Each frame's detections are matched greedily, best overlap first,
 * to objects of the same label; an object seen in `min_frames` frames is announced (`new`),
 * re-announced when it moves, changes zones or gains score materially (`update`), and ends when
 * unseen for `end_after_s` (`end`). Objects never confirmed vanish without an event.
 */
export class Tracker {
  private tracks: Track[] = [];
  private counter = 0;

  constructor(
    readonly camera: string,
    private readonly cfg: Config['events'],
  ) {}

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
      zones: t.zones,
    };
  }

  /** Feeds one frame's detections (time `ts`); returns the events it causes. */
  update(dets: readonly ZonedDetection[], ts: number): ObjectEvent[] {
    const events: ObjectEvent[] = [];
    const pairs: { t: Track; d: number; iou: number }[] = [];
    this.tracks.forEach((t) => {
      dets.forEach((d, i) => {
        if (d.label !== t.label) return;
        const o = iou(t.box, d.box);
        if (o >= MATCH_IOU) pairs.push({ t, d: i, iou: o });
      });
    });
    pairs.sort((a, b) => b.iou - a.iou);
    const usedTracks = new Set<Track>();
    const usedDets = new Set<number>();
    for (const p of pairs) {
      if (usedTracks.has(p.t) || usedDets.has(p.d)) continue;
      usedTracks.add(p.t);
      usedDets.add(p.d);
      const d = dets[p.d]!;
      const t = p.t;
      t.box = d.box;
      t.score = d.score;
      t.topScore = Math.max(t.topScore, d.score);
      t.zones = d.zones;
      t.lastSeen = ts;
      t.hits++;
      if (!t.confirmed && t.hits >= this.cfg.min_frames) {
        t.confirmed = true;
        t.reported = { box: t.box, score: t.topScore, zones: t.zones };
        events.push(this.event('new', t));
      } else if (t.confirmed && t.reported) {
        const moved = iou(t.reported.box, t.box) < this.cfg.update_iou;
        const zonesChanged = t.zones.join('\u0000') !== t.reported.zones.join('\u0000');
        const better = t.topScore - t.reported.score >= this.cfg.update_score;
        if (moved || zonesChanged || better) {
          t.reported = { box: t.box, score: t.topScore, zones: t.zones };
          events.push(this.event('update', t));
        }
      }
    }
    dets.forEach((d, i) => {
      if (usedDets.has(i)) return;
      const t: Track = {
        id: `${ts}-${this.camera}-${++this.counter}`,
        label: d.label,
        box: d.box,
        score: d.score,
        topScore: d.score,
        zones: d.zones,
        start: ts,
        lastSeen: ts,
        hits: 1,
        confirmed: false,
        reported: null,
      };
      this.tracks.push(t);
      if (this.cfg.min_frames <= 1) {
        t.confirmed = true;
        t.reported = { box: t.box, score: t.topScore, zones: t.zones };
        events.push(this.event('new', t));
      }
    });
    events.push(...this.expire(ts));
    return events;
  }

  /** Ends objects unseen for `end_after_s` at time `now` (also called on a timer). */
  expire(now: number): ObjectEvent[] {
    const events: ObjectEvent[] = [];
    this.tracks = this.tracks.filter((t) => {
      if (now - t.lastSeen < this.cfg.end_after_s * 1000) return true;
      if (t.confirmed) events.push(this.event('end', t));
      return false;
    });
    return events;
  }

  /** Ends every object now (shutdown, camera removed). */
  endAll(): ObjectEvent[] {
    const events = this.tracks.filter((t) => t.confirmed).map((t) => this.event('end', t));
    this.tracks = [];
    return events;
  }

  /** Confirmed objects in view, by label. */
  counts(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const t of this.tracks) if (t.confirmed) c[t.label] = (c[t.label] ?? 0) + 1;
    return c;
  }
}
