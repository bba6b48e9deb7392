import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import type { Result } from '../core/frame.js';
import { namedRecord, own } from '../core/names.js';
import type { CameraOwner, OwnerOf } from '../core/owner.js';
import { isoTime } from '../core/time.js';
import type { CameraConfig, CamerasNow, Config } from '../config/index.js';
import { Publisher, type EventPayload, type Output, type Topics } from '../publish/index.js';
import {
  applyCameraFilters,
  Tracker,
  type TrackedResult,
  type ObjectEvent,
  type ZonedDetection,
  type TrackerAreas,
  type TrackerEvent,
} from '../track/index.js';
import { areasOf, checkedGroundPlane, detecting } from './areas.js';
import { Clips, type ClipSource, type OpenedClip } from './clips.js';
import type { FootageRanges, KeptRange } from '../record/index.js';
import { InViewCounts, type CountsInView } from './counts.js';
import type { EventStore } from './event-store.js';
import { EventFaults, type EventFault } from './faults.js';
import { LineCounts, type LineCount } from './line-counts.js';
import { SnapshotFrames } from './snapshot-frames.js';
import { Snapshots } from './snapshots.js';

/** An object in view as the live view shows it (GET /api/cameras `objects`, docs/http.md). */
export interface LiveObject {
  id: string;
  label: string;
  current_zones: string[];
  loitering_zones: string[];
  speed: ObjectEvent['speed'];
  stationary: boolean;
}

/** How often the snapshots due are made. */
const TICK_MS = 1000;

export interface ObjectEventsDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  log: Logger;
  /** Where line counts are kept across restarts; absent, they live in memory only. */
  stateDir?: string | undefined;
  /** The event history (records and snapshots, kept across restarts); absent, none is kept. */
  history?: EventStore | undefined;
  /** The labels Home Assistant has entities for (`default_labels`), whose counts start at 0. */
  defaultLabels?: () => readonly string[];
  /** The cameras' rings of recent video, for event clips (ingest, once it runs); absent: no clips. */
  clipSource?: () => ClipSource | undefined;
  /** `http.public_url`: clips' `url`. */
  publicUrl?: string | undefined;
  /** The events' footage each camera's recording keeps (shared with ingest's rings). */
  footage?: FootageRanges;
  /** A camera's event faults changed (its status says which parts fail). */
  onFault?: (camera: string) => void;
  /** Each answered frame as tracking saw it, once its events are out (the detections topic, the live view). */
  onTracked?: (t: TrackedResult) => void;
  /** With `fleet:`, the box that runs a camera and its epoch, which its events carry. */
  owner?: OwnerOf | undefined;
  /** A camera's line counts changed (with `fleet:`, written to etcd). */
  onLineCounts?: ((camera: string) => void) | undefined;
}

/**
 * Object events and what they leave, per camera: a tracker follows the objects of each answered
 * frame (after the camera's filters); their events (`<base>/events`) and line crossings
 * (`<base>/crossings`) are published, each event recorded in the history with its snapshots
 * (snapshots.ts), each crossing counted in its line's retained cumulative count (kept across
 * restarts), and the retained counts of what is in view follow (counts.ts).
 */
export class ObjectEvents {
  readonly name = 'events';
  private trackers = new Map<string, Tracker>();
  private timer: Timer | null = null;
  private readonly mqtt: Publisher;
  private readonly lineCounts: LineCounts;
  private readonly snapshots: Snapshots;
  private readonly counts: InViewCounts;
  private readonly clips: Clips;
  /** The last payload of events whose clip is still to come. */
  private readonly awaitingClip = new Map<string, EventPayload>();
  /**
   * With `fleet:`, each camera's last owner: the events that end as a camera is handed on (its
   * owner gone by then) still name the box that made them. One entry per camera this box has run.
   */
  private readonly owners = new Map<string, CameraOwner>();
  /** Faults of each camera's parts, each contained where it happened (faults.ts). */
  readonly faults: EventFaults;
  /** Recording cameras' snapshots, drawn from their recordings (with clips and a history). */
  readonly snapshotFrames: SnapshotFrames | undefined;

  constructor(
    private readonly cameras: CamerasNow,
    private readonly events: Config['events'],
    private readonly deps: ObjectEventsDeps,
  ) {
    const { clock, log, stateDir, history } = deps;
    this.mqtt = new Publisher(deps.out);
    this.faults = new EventFaults({ clock, log, onChange: deps.onFault });
    const defaultLabels = deps.defaultLabels ?? (() => []);
    this.lineCounts = new LineCounts(stateDir, {
      clock,
      log,
      defaultLabels,
      ...(deps.onLineCounts ? { onChange: deps.onLineCounts } : {}),
    });
    const clipSource = deps.clipSource;
    const keeps = (camera: string): boolean => {
      const cam = own(this.cameras(), camera);
      return !!clipSource && !!cam && (cam.clips ?? events.clips.enabled);
    };
    this.snapshots = new Snapshots(events.snapshots, {
      ...deps,
      history,
      records: (camera) => {
        const ring = keeps(camera) ? clipSource?.()?.ring(camera) : undefined;
        return !!ring && !ring.isRetired && ring.unusable === undefined;
      },
    });
    this.counts = new InViewCounts(this.mqtt, deps.topics, defaultLabels, events.speed_unit);
    this.clips = new Clips(events.clips, {
      clock,
      log,
      history,
      source: () => clipSource?.(),
      keeps,
      done: (id, clip) => this.clipDone(id, clip),
      publicUrl: deps.publicUrl,
      ...(deps.footage ? { footage: deps.footage } : {}),
    });
    if (history && clipSource) {
      // Snapshots kept as frames of the recording: drawn on request, and kept as files before
      // the segments that hold them go.
      this.snapshotFrames = new SnapshotFrames({ source: () => clipSource(), log });
      history.useFrames(this.snapshotFrames, { outliveFootage: events.snapshots.outlive_footage });
      this.clips.footage.cameras = () => history.cameras();
      this.clips.footage.rescue = (camera, removed, final) =>
        history.rescueFrames(camera, removed, clipSource()?.ring(camera)?.list() ?? [], final);
    }
  }

  /** A clip is written or has failed: the event's payload, with it, as a `clip` event. */
  private clipDone(id: string, clip: EventPayload['clip']): void {
    const last = this.awaitingClip.get(id);
    if (!last) return;
    if (last.type === 'end') this.awaitingClip.delete(id);
    else this.awaitingClip.set(id, { ...last, clip });
    this.mqtt.event(this.deps.topics.events, { ...last, type: 'clip', clip });
  }

  /** An event's clip, made from its camera's recording on request (GET /api/events/<id>/clip.mp4). */
  eventClip(id: string): Promise<OpenedClip> {
    return this.clips.open(id);
  }

  /** An event deleted (DELETE /api/events/<id>): its MP4 made on request leaves the clip cache. */
  dropEventClip(id: string): Promise<void> {
    return this.clips.dropEvent(id);
  }

  /** A range of a camera's recording as an MP4 (GET /api/cameras/<camera>/recording.mp4). */
  recording(camera: string, from: number, to: number): Promise<OpenedClip> {
    return this.clips.openRange(camera, from, to);
  }

  /** What a camera's recording holds and why (GET /api/cameras/<camera>/recording); undefined: it keeps none. */
  kept(camera: string, from?: number, to?: number): KeptRange[] | undefined {
    return this.clips.kept(camera, from, to);
  }

  /** The MP4 cache's bytes, and how many clips were made and served again. */
  clipCacheStats(): { bytes: number; made: number; hits: number } {
    return this.clips.cacheStats();
  }

  /** The event history, as handed in (GET /api/events). */
  get history(): EventStore | undefined {
    return this.deps.history;
  }

  /** A camera's objects in view, as its count topics say. */
  countsOf(camera: string): CountsInView {
    return this.counts.of(camera, own(this.cameras(), camera));
  }

  /** The cameras the line counts loaded at start are of, this config's or not. */
  lineCountCameras(): string[] {
    return this.lineCounts.cameras();
  }

  /** Every line's counts now, as their retained topics say. */
  lineCountsNow(): LineCount[] {
    return this.lineCounts.all(this.cameras());
  }

  /** One camera's line counts as JSON (with `fleet:`, what etcd keeps: line-counts.ts). */
  lineCountsOf(camera: string): string {
    return this.lineCounts.cameraCounts(camera);
  }

  /**
   * Takes a camera's line counts from the box that ran it before (etcd), before it starts here:
   * published as it starts (camerasChanged).
   */
  adoptLineCounts(camera: string, json: string): void {
    this.lineCounts.adopt(camera, json);
  }

  /** Per zone of a camera, whole seconds the longest present object has been in it (none there: absent). */
  dwellOf(camera: string): Record<string, number> {
    const out = namedRecord<number>();
    for (const [zone, labels] of this.trackers.get(camera)?.counts().zones ?? [])
      for (const c of labels.values()) out[zone] = Math.max(out[zone] ?? 0, c.dwellS ?? 0);
    return out;
  }

  /**
   * A camera's confirmed objects in view now, as its events would say them now: id, label, the
   * zones it is in and loiters in, its speed (null before one was measured). None while it has
   * no tracker (no answered frame yet, detection off).
   */
  objectsOf(camera: string): LiveObject[] {
    return (this.trackers.get(camera)?.inView() ?? []).map((e) => ({
      id: e.id,
      label: e.label,
      current_zones: e.currentZones,
      loitering_zones: e.loiteringZones,
      speed: e.speed,
      stationary: e.stationary,
    }));
  }

  /**
   * Publishes the counts that start at 0, restores (and publishes) the line counts, loads the
   * event history, then makes the snapshots due every second.
   */
  async start(): Promise<void> {
    this.counts.publishZeros(this.cameras());
    await this.lineCounts.load();
    await this.deps.history?.load();
    await this.clips.start();
    for (const c of this.lineCounts.all(this.cameras())) this.publishLineCount(c);
    const tick = (): void => {
      this.tick(this.deps.clock.now());
      this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
    };
    this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
  }

  /** A camera's failed parts now (`/healthz`, its status). */
  faultsOf(camera: string): EventFault[] {
    return this.faults.of(camera);
  }

  /** A camera's zones and lines for its tracker; a calibration it cannot use is a `speed` fault. */
  private areas(camera: string, cam: CameraConfig | undefined): TrackerAreas {
    return areasOf(cam, this.events.speed_unit, (name, z) =>
      this.faults.guard(camera, 'speed', () => checkedGroundPlane(name, z), undefined),
    );
  }

  private tracker(camera: string): Tracker {
    let t = this.trackers.get(camera);
    if (!t) {
      t = new Tracker(camera, this.events, this.areas(camera, own(this.cameras(), camera)));
      this.trackers.set(camera, t);
    }
    return t;
  }

  /**
   * One answered frame: tracked, then its snapshots offered, its events and crossings published,
   * its counts published, each part on its own (a part that throws is a fault of that camera's
   * part, faults.ts: the others go on).
   */
  onResult(r: Result): void {
    const camera = r.camera;
    const cam = own(this.cameras(), camera);
    // A frame answered just after detection was switched off is not an event.
    if (!cam || !detecting(cam)) return;
    let detections: ZonedDetection[] | undefined;
    const tracked = this.faults.guard(
      camera,
      'tracking',
      () => {
        detections = applyCameraFilters(r.detections, cam);
        const tracker = this.tracker(camera);
        const events = tracker.update(detections, r.ts, {
          others: r.detections,
          cached: r.cached,
          pixels: r,
          steady: r.steady,
        });
        return { tracker, events, tracks: tracker.identify(detections) };
      },
      undefined,
    );
    if (tracked) {
      const { tracker, events } = tracked;
      if (cam.snapshots)
        this.faults.guard(
          camera,
          'snapshots',
          () => this.snapshots.offer(r, tracker.sightings(), (id) => tracker.has(id)),
          undefined,
        );
      this.emit(camera, events);
      this.faults.guard(camera, 'counts', () => this.counts.publish(camera, tracker.counts()), undefined);
    }
    // Then the frame as tracking saw it, to those that show it (its events are out first).
    if (detections) this.deps.onTracked?.({ result: r, detections, tracks: tracked?.tracks });
  }

  /** Publishes events and crossings, each part of each on its own (faults.ts). */
  private emit(camera: string, events: TrackerEvent[]): void {
    const { faults } = this;
    for (const e of events) {
      if (e.type === 'crossing') {
        const { line, label, direction } = e;
        const count = faults.guard(
          camera,
          'line_counts',
          () => this.lineCounts.add(camera, line, label, direction),
          null,
        );
        const crossing = { camera, line, direction, id: e.id, label, ts: isoTime(e.ts), count };
        faults.guard(
          camera,
          'events',
          () => this.mqtt.event(this.deps.topics.crossings, crossing),
          undefined,
        );
        if (count !== null)
          faults.guard(
            camera,
            'line_counts',
            () => this.publishLineCount({ camera, line, label, direction, count }),
            undefined,
          );
        continue;
      }
      faults.guard(e.camera, 'events', () => this.emitEvent(e), undefined);
    }
    faults.guard(camera, 'snapshots', () => this.snapshots.render(), undefined);
  }

  /** One object event: its payload (with its snapshot and clip, if they can be had), published and kept. */
  private emitEvent(e: ObjectEvent): void {
    const { faults } = this;
    const { startTs, endTs, currentZones, enteredZones, loiteringZones, zoneTimes, ...rest } = e;
    const payload: EventPayload = {
      ...rest,
      start_ts: isoTime(startTs),
      end_ts: endTs === null ? null : isoTime(endTs),
      current_zones: currentZones,
      entered_zones: enteredZones,
      loitering_zones: loiteringZones,
      zone_time_s: zoneTimes,
      snapshot: faults.guard(e.camera, 'snapshots', () => this.snapshots.onEvent(e), null),
      clip: faults.guard(e.camera, 'clips', () => this.clips.onEvent(e), null),
      ...this.ownerOf(e.camera),
    };
    if (payload.clip?.state === 'recording') this.awaitingClip.set(e.id, payload);
    else this.awaitingClip.delete(e.id);
    this.mqtt.event(this.deps.topics.events, payload);
    const stored = {
      id: e.id,
      camera: e.camera,
      label: e.label,
      zones: enteredZones,
      start: startTs,
      event: payload,
    };
    faults.guard(
      e.camera,
      'history',
      () => (e.type === 'new' ? this.deps.history?.add(stored) : this.deps.history?.update(stored)),
      undefined,
    );
  }

  /** `{ owner }` with `fleet:` (the camera's owner now, else its last), `{}` without. */
  private ownerOf(camera: string): { owner?: CameraOwner } {
    if (!this.deps.owner) return {};
    const now = this.deps.owner(camera);
    if (now) this.owners.set(camera, now);
    const owner = now ?? this.owners.get(camera);
    return owner ? { owner } : {};
  }

  private lineCountTopic(c: LineCount): ReturnType<Topics['lineCount']> {
    return this.deps.topics.lineCount(c.camera, c.line, c.label, c.direction);
  }

  private publishLineCount(c: LineCount): void {
    this.mqtt.state(this.lineCountTopic(c), c.count);
  }

  /**
   * Makes the snapshots due at time `now`. Objects end, and counts change, only with their
   * camera's answered frames (Tracker): a camera that gets no answer keeps them.
   */
  tick(now: number): void {
    this.clips.tick(now);
    this.deps.history?.expire();
    this.snapshots.due(now);
    for (const [camera, t] of this.trackers) this.snapshots.untracked(camera, (id) => t.has(id));
    this.snapshots.render();
  }

  /**
   * A reloaded camera section: removed and disabled cameras' objects end; changed filters, zones
   * and lines apply from now. Counts of lines removed are forgotten and their retained topics
   * cleared; new lines' counts are published.
   */
  camerasChanged(before: Record<string, CameraConfig>): void {
    const cameras = this.cameras();
    for (const [camera, t] of this.trackers) {
      // A camera disabled, or whose detection is off, has no more answers: its objects end
      // now, as a removed camera's do.
      const cam = own(cameras, camera);
      if (detecting(cam)) {
        // A camera whose section changed may be mended: its faults are forgotten, found again if not.
        if (JSON.stringify(cam) !== JSON.stringify(own(before, camera))) this.faults.forget(camera);
        t.setAreas(this.areas(camera, cam));
        continue;
      }
      this.emit(camera, t.endAll());
      this.counts.publish(camera, t.counts());
      this.trackers.delete(camera);
    }
    this.snapshots.prune(cameras);
    const gone = new Map(this.lineCounts.all(before).map((c) => [this.lineCountTopic(c), c.count]));
    this.lineCounts.prune(cameras);
    this.counts.publishZeros(cameras, before);
    for (const c of this.lineCounts.all(cameras)) {
      const topic = this.lineCountTopic(c);
      if (gone.get(topic) !== c.count) this.publishLineCount(c);
      gone.delete(topic);
    }
    for (const topic of gone.keys()) this.mqtt.clear(topic);
  }

  /** Sets a line's counts back to 0 and publishes them (a reset asked for at run time). */
  resetLine(camera: string, line: string): boolean {
    const cam = own(this.cameras(), camera);
    if (!own(cam?.lines, line)) return false;
    for (const c of this.lineCounts.reset(camera, line, cam!)) this.publishLineCount(c);
    return true;
  }

  /**
   * On shutdown: every object in view ends, counts of what is in view go to zero, the last
   * snapshots are made and published, the history and line counts are saved.
   */
  async stop(): Promise<void> {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const [camera, t] of this.trackers) {
      this.emit(camera, t.endAll());
      this.counts.publish(camera, t.counts());
    }
    await this.snapshots.idle();
    await this.clips.stop();
    await this.deps.history?.flush();
    await this.lineCounts.flush();
  }
}
