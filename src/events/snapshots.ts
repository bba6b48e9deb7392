import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Picture, Result } from '../core/frame.js';
import { area, type Box } from '../core/geometry.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import type { EventStore } from './event-store.js';
import type { Snapshot, SnapshotFrame } from './event-record.js';
import { annotatedJpeg, croppedJpeg } from '../draw/index.js';
import { Publisher, type Output, type SnapshotPayload, type Topics } from '../publish/index.js';
import type { ObjectEvent, Sighting } from '../track/index.js';

/**
 * A box within this fraction of the frame's width (height) from its left or right (top or
 * bottom) edge touches it: the object is likely cut off there. 1 % is 19 px of a 1920-px view,
 * about 3 px at the model's 640: the detector's jitter at the edge.
 */
export const EDGE_MARGIN = 0.01;
/** A frame whose score is at least this much higher is better... */
export const SCORE_STEP = 0.05;
/** ...and so is one whose box is this many times larger, its score no more than SCORE_STEP lower. */
export const AREA_STEP = 1.1;

/** A frame an object was seen in, as its snapshot. */
export interface Candidate {
  /** The frame's time (ms since the epoch). */
  ts: number;
  score: number;
  /** In source pixels. */
  box: Box;
  /** Whether the box touches the frame's edge. */
  edge: boolean;
  /** The frame's pixels, until the snapshot is made from them. */
  picture: Picture | null;
}

/** Whether a box touches the edge of a `w`×`h` frame (within EDGE_MARGIN). */
export function onEdge(box: Readonly<Box>, w: number, h: number): boolean {
  const mx = EDGE_MARGIN * w;
  const my = EDGE_MARGIN * h;
  return box[0] <= mx || box[1] <= my || box[2] >= w - mx || box[3] >= h - my;
}

/**
 * The best-frame rule: whether frame `c` shows the object better than `best`.
 *
 * 1. A box clear of the frame's edges beats one touching an edge (the object cut off), whatever
 *    the scores: a whole car at 0.7 says more than half a car at 0.9.
 * 2. Otherwise, a score at least SCORE_STEP higher wins: the highest-scored view, without
 *    replacing a snapshot for the detector's jitter of a few hundredths.
 * 3. Or a box at least AREA_STEP times larger with a score no more than SCORE_STEP lower: an
 *    object coming closer (more pixels of it) at about the same confidence.
 *
 * Frigate's rule (its `is_better_thumbnail`: edge, then +5 % score or +10 % area) with the edge
 * made decisive both ways and the area bounded by the score.
 */
export function isBetter(c: Candidate, best: Candidate): boolean {
  if (c.edge !== best.edge) return !c.edge;
  if (c.score - best.score >= SCORE_STEP - 1e-9) return true; // 0.85 - 0.8 is 0.04999…
  return c.score > best.score - SCORE_STEP && area(c.box) >= AREA_STEP * area(best.box);
}

/**
 * Where a snapshot's picture is in its camera's recording: the frame's time, what is drawn on it,
 * and at what size and quality, as `annotatedJpeg` draws the published one.
 */
function frameOf(c: Candidate, label: string, quality: number): SnapshotFrame {
  const g = c.picture!.geometry;
  return {
    ts: c.ts,
    srcW: g.srcW,
    srcH: g.srcH,
    w: g.innerW,
    h: g.innerH,
    quality,
    detections: [{ label, score: c.score, box: [...c.box] }],
  };
}

/** Whether a frame has its pixels (tools and tests may pass results without). */
const hasPixels = (p: Picture): boolean => p.data.length === p.geometry.dstW * p.geometry.dstH * 3;

interface Tracked {
  id: string;
  camera: string;
  label: string;
  /** Announced (`new`): its snapshots are made and published. */
  confirmed: boolean;
  /** The snapshot made (its pixels let go), or null before the first. */
  shown: Candidate | null;
  shownAt: number;
  /** A better frame than `shown`, held until it may replace it (or, before `new`, the best yet). */
  waiting: Candidate | null;
}

export interface SnapshotsDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  log: Logger;
  /** Where snapshots are kept with their events; absent, they are only published. */
  history?: EventStore;
  /**
   * Whether a camera records now (its clips on, its recording running): its events' snapshots
   * are kept as frames of the recording, not as `<key>.jpg` (issue 47). Absent: none does.
   */
  records?: (camera: string) => boolean;
}

/**
 * Event snapshots: for each object, the best frame it was seen in (`isBetter`), drawn with its
 * box (and cropped to it) from the frame the model analysed: no second decode. Made into JPEGs
 * only when shown, and shown when the object is announced (`new`), when a better frame has waited
 * `min_interval_s` since the last (checked at each frame and each second), and at its `end` when
 * a better frame is still waiting. Each is published retained on
 * `<base>/cameras/<camera>/<label>/snapshot` and kept in the event history.
 *
 * Frames are chosen as results come (`offer`, `onEvent`), and the JPEGs made afterwards
 * (`render`): an event names the snapshot it will have before the JPEG exists. While it waits,
 * an object holds one frame (its pixels, not a copy); a snapshot's JPEGs are made one camera at a
 * time, in order, so a topic's last message is its latest snapshot.
 */
export class Snapshots {
  private objects = new Map<string, Tracked>();
  /** Chosen, to be made and published by `render`. */
  private toShow: { o: Tracked; c: Candidate; ref: SnapshotPayload }[] = [];
  /** Per camera, the JPEGs being made and published, in order. */
  private chains = new Map<string, Promise<void>>();
  private readonly mqtt: Publisher;

  constructor(
    private readonly cfg: Config['events']['snapshots'],
    private readonly deps: SnapshotsDeps,
  ) {
    this.mqtt = new Publisher(deps.out);
  }

  /** The frames of a result's sightings become their objects' candidates, when better. */
  offer(r: Result, sightings: readonly Sighting[], tracked: (id: string) => boolean): void {
    if (this.cfg.enabled && hasPixels(r)) {
      const { srcW, srcH } = r.geometry;
      for (const s of sightings) {
        let o = this.objects.get(s.id);
        if (!o) {
          o = {
            id: s.id,
            camera: r.camera,
            label: s.label,
            confirmed: false,
            shown: null,
            shownAt: 0,
            waiting: null,
          };
          this.objects.set(s.id, o);
        }
        const { score, box } = s.detection;
        const picture = { data: r.data, geometry: r.geometry };
        const c: Candidate = { ts: r.ts, score, box, edge: onEdge(box, srcW, srcH), picture };
        const best = o.waiting ?? o.shown;
        if (!best || isBetter(c, best)) o.waiting = c;
      }
    }
    this.untracked(r.camera, tracked);
    this.due(this.deps.clock.now());
  }

  /** Forgets a camera's tentative objects its tracker dropped (with the frame each held). */
  untracked(camera: string, tracked: (id: string) => boolean): void {
    for (const [id, o] of this.objects)
      if (o.camera === camera && !o.confirmed && !tracked(id)) this.objects.delete(id);
  }

  /** Shows the better frames that have waited long enough. */
  due(now: number): void {
    for (const o of this.objects.values())
      if (o.confirmed && o.waiting && now - o.shownAt >= this.cfg.min_interval_s * 1000) this.show(o, now);
  }

  /**
   * An object event is about to be published: what its `snapshot` field says. `new` shows the
   * best frame yet; `end` shows a better one still waiting, and forgets the object.
   */
  onEvent(e: ObjectEvent): SnapshotPayload | null {
    const o = this.objects.get(e.id);
    if (!o) return null;
    if (e.type === 'new') o.confirmed = true;
    if (e.type !== 'update' && o.waiting) this.show(o, this.deps.clock.now());
    if (e.type === 'end') this.objects.delete(e.id);
    return o.shown && this.ref(o.id, o.shown);
  }

  /** Forgets the objects of cameras no longer configured (their `end`s have been sent). */
  prune(cameras: Record<string, unknown>): void {
    for (const [id, o] of this.objects) if (!Object.hasOwn(cameras, o.camera)) this.objects.delete(id);
  }

  private ref(id: string, c: Candidate): SnapshotPayload {
    return {
      path: `/api/events/${encodeURIComponent(id)}/snapshot.jpg`,
      ts: isoTime(c.ts),
      score: c.score,
      box: c.box,
    };
  }

  private show(o: Tracked, now: number): void {
    const c = o.waiting!;
    o.waiting = null;
    o.shown = { ...c, picture: null };
    o.shownAt = now;
    this.toShow.push({ o, c, ref: this.ref(o.id, o.shown) });
  }

  /** Makes the JPEGs of the snapshots chosen since the last call, publishes and keeps them. */
  render(): void {
    for (const { o, c, ref } of this.toShow.splice(0)) {
      const jpegs = this.encode(c, o.label);
      const topic = this.deps.topics.snapshot(o.camera, o.label);
      const before = this.chains.get(o.camera) ?? Promise.resolve();
      const next = before
        .then(() => jpegs)
        .then(
          (s) => this.mqtt.state(topic, s.full),
          (err: unknown) => this.deps.log.warn({ id: o.id, err: String(err) }, 'cannot make a snapshot JPEG'),
        );
      this.chains.set(o.camera, next);
      void next.then(() => {
        if (this.chains.get(o.camera) === next) this.chains.delete(o.camera);
      });
      const frame = this.deps.records?.(o.camera) ? frameOf(c, o.label, this.cfg.quality) : undefined;
      this.deps.history?.setSnapshot(o.id, jpegs, { snapshot: ref }, frame);
    }
  }

  private async encode(c: Candidate, label: string): Promise<Snapshot> {
    const { data, geometry } = c.picture!;
    const q = this.cfg.quality;
    const [full, crop] = await Promise.all([
      annotatedJpeg(data, geometry, [{ label, score: c.score, box: c.box }], { quality: q }),
      croppedJpeg(data, geometry, c.box, q),
    ]);
    return { full, crop };
  }

  /** Waits for the snapshots being made and published. */
  async idle(): Promise<void> {
    while (this.chains.size) await Promise.all(this.chains.values());
  }
}
