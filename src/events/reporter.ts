import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { Histogram, LATENCY_BUCKETS, type HistogramSnapshot } from '../core/histogram.js';
import type { Result } from '../core/frame.js';
import { namedRecord, own } from '../core/names.js';
import type { CameraConfig, Config } from '../config/index.js';
import type { CameraStatus } from '../ingest/index.js';
import { EventStore } from './event-store.js';
import { LineCounts, type LineCount } from './line-counts.js';
import { Snapshots } from './snapshots.js';
import {
  applyCameraFilters,
  Tracker,
  type Count,
  type TrackCounts,
  type TrackerAreas,
  type TrackerEvent,
} from '../track/index.js';
import {
  areaLabels,
  cameraLabels,
  DetectionsGate,
  lagSeconds,
  type CameraStatusPayload,
  type CrossingPayload,
  type DetectionsPayload,
  type Discovery,
  type EventPayload,
  type Output,
  type Topics,
} from '../publish/index.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** How often the snapshots due are made, and the cameras' lag checked. */
const TICK_MS = 1000;

/** The event history's directory in the state directory. */
export const HISTORY_DIR = 'events';

/**
 * Confirmed objects in view, by label, and by zone and label: the count topics' numbers. Objects
 * without a prototype (core/names.ts).
 */
export interface CountsInView {
  labels: Record<string, number>;
  zones: Record<string, Record<string, number>>;
}

export interface ReporterDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  /** A camera's current status, from its one owner (ingest). */
  cameraStatus: (camera: string) => CameraStatus | undefined;
  log: Logger;
  /**
   * Where line counts and the event history are kept across restarts; absent, line counts live
   * in memory only and there is no history.
   */
  stateDir?: string;
  /** Announces the cameras' entities to Home Assistant, and follows the reloads. */
  homeAssistant?: Pick<Discovery, 'start' | 'setCameras' | 'stop' | 'defaultLabels'>;
  /** Why a model takes no batch now (a remote model's server away), or undefined while it does. */
  modelUnavailable?: (model: string) => string | undefined;
  /**
   * How far behind a camera's answers are (the scheduler's), checked every second, and
   * `scheduler.lagging_after_s`, which the status' message names.
   */
  lag?: {
    of(camera: string): { lagMs: number | null; lagging: boolean } | undefined;
    afterS: number;
  };
  /** Which frames' detections are published. */
  detections: Config['mqtt']['detections'];
}

/** A camera's zones with `loiter_s`, and its lines, for its tracker. */
function areasOf(cam: CameraConfig | undefined): TrackerAreas {
  const zones = Object.entries(cam?.zones ?? {});
  return {
    loiterS: Object.fromEntries(
      zones.flatMap(([name, z]) => (z.loiter_s === undefined ? [] : [[name, z.loiter_s]])),
    ),
    lines: cam?.lines ?? namedRecord(),
  };
}

/** Each count of a camera's counts: by label (no zone), then by zone and label. */
function* eachCount(
  counts: TrackCounts | undefined,
): Generator<[label: string, count: Count, zone?: string]> {
  if (!counts) return;
  for (const [label, c] of counts.labels) yield [label, c];
  for (const [zone, m] of counts.zones) for (const [label, c] of m) yield [label, c, zone];
}

/**
 * Turns the pipeline's output into MQTT messages: detections after each camera's filters (when
 * they change, with a heartbeat, or every frame: DetectionsGate), object events and line
 * crossings from a per-camera tracker, each event's snapshot (snapshots.ts) and its record in the event history (kept across restarts), retained per-label
 * (and per-zone) counts of what is in view, retained cumulative line counts (kept across
 * restarts), and retained camera statuses (ingest's status, or the detector's error while a
 * camera's batches fail).
 */
export class Reporter {
  private trackers = new Map<string, Tracker>();
  private counts = new Map<string, TrackCounts>();
  private detectorErrors = new Map<string, { message: string; at: number }>();
  /** Since when each model that is unavailable has been (its cameras' statuses say so). */
  private awaySince = new Map<string, number>();
  /** Since when each lagging camera has been (while streaming: its status says so). */
  private laggingSince = new Map<string, number>();
  /** Per camera, from a frame's capture to the moment its answer is published (seconds). */
  private readonly toPublish = new Map<string, Histogram>();
  private timer: Timer | null = null;
  private readonly lineCounts: LineCounts;
  private readonly snapshots: Snapshots;
  private readonly gate: DetectionsGate;
  /** The latest events with their snapshots (GET /api/events); none without a state directory. */
  readonly history: EventStore | undefined;

  constructor(
    private cameras: Record<string, CameraConfig>,
    private readonly events: Config['events'],
    private readonly deps: ReporterDeps,
  ) {
    const { clock, log, stateDir } = deps;
    this.lineCounts = new LineCounts(stateDir, { clock, log });
    const limits = { maxEvents: events.history.max_events, maxBytes: events.history.max_mb * 1024 * 1024 };
    this.history =
      stateDir === undefined ? undefined : new EventStore(join(stateDir, HISTORY_DIR), limits, log);
    this.snapshots = new Snapshots(events.snapshots, { ...deps, history: this.history });
    this.gate = new DetectionsGate(deps.detections);
  }

  /**
   * A camera's objects in view as its count topics say: by label, and by zone and label, with
   * the labels whose counts start at 0 (see `publishZeroCounts`) listed from 0.
   */
  countsOf(camera: string): CountsInView {
    const cam = own(this.cameras, camera);
    const out: CountsInView = { labels: namedRecord(), zones: namedRecord() };
    if (!cam) return out;
    const start = this.startsAtZero(cam);
    for (const label of start.labels) out.labels[label] = 0;
    for (const [zone, labels] of start.zones)
      for (const label of labels) (out.zones[zone] ??= namedRecord())[label] = 0;
    for (const [label, c, zone] of eachCount(this.counts.get(camera)))
      (zone === undefined ? out.labels : (out.zones[zone] ??= namedRecord()))[label] = c.inView;
    return out;
  }

  private get out(): Output {
    return this.deps.out;
  }

  private get topics(): Topics {
    return this.deps.topics;
  }

  /**
   * Announces the cameras' entities to Home Assistant (when enabled), restores (and publishes)
   * the line counts, loads the event history, then starts making the snapshots due, and checking
   * the cameras' lag, every second.
   */
  async start(): Promise<void> {
    this.deps.homeAssistant?.start(this.cameras);
    this.publishZeroCounts(this.cameras);
    await this.lineCounts.load();
    await this.history?.load();
    for (const c of this.lineCounts.all(this.cameras)) this.publishLineCount(c);
    const tick = (): void => {
      this.tick(this.deps.clock.now());
      this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
    };
    this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
  }

  private tracker(camera: string): Tracker {
    let t = this.trackers.get(camera);
    if (!t) {
      t = new Tracker(camera, this.events, areasOf(own(this.cameras, camera)));
      this.trackers.set(camera, t);
    }
    return t;
  }

  onResult(r: Result): void {
    const cam = own(this.cameras, r.camera);
    if (!cam) return;
    const dets = applyCameraFilters(r.detections, cam);
    if (this.gate.due(r.camera, dets, r.ts)) {
      const payload: DetectionsPayload = {
        camera: r.camera,
        ts: iso(r.ts),
        frame: r.seq,
        cached: r.cached,
        width: r.geometry.srcW,
        height: r.geometry.srcH,
        detections: dets.map((d) => (d.zones.length ? d : { label: d.label, score: d.score, box: d.box })),
      };
      this.out.detection(this.topics.detections(r.camera), JSON.stringify(payload));
    }
    const tracker = this.tracker(r.camera);
    const events = tracker.update(dets, r.ts, r.detections);
    this.snapshots.offer(r, tracker.sightings(), (id) => tracker.has(id));
    this.emit(events);
    this.publishCounts(r.camera);
    if (!r.cached && this.detectorErrors.delete(r.camera)) this.publishStatusOf(r.camera);
    const now = this.deps.clock.now();
    // An answer may end a lag: said at once, not at the next tick.
    if (this.laggingSince.has(r.camera)) this.checkLag(r.camera, now);
    let h = this.toPublish.get(r.camera);
    if (!h) this.toPublish.set(r.camera, (h = new Histogram(LATENCY_BUCKETS.captureToPublish)));
    h.observe((now - r.ts) / 1000);
  }

  /**
   * Per camera, the time from each frame's capture (its arrival from ffmpeg) to its answer
   * handed to MQTT (its detections when due, its events, its counts): the
   * `argus_camera_capture_to_publish_seconds` histogram.
   */
  latency(): Map<string, HistogramSnapshot> {
    return new Map([...this.toPublish].map(([camera, h]) => [camera, h.snapshot()]));
  }

  private emit(events: TrackerEvent[]): void {
    for (const e of events) {
      if (e.type === 'crossing') {
        const { camera, line, label, direction } = e;
        const count = this.lineCounts.add(camera, line, label, direction);
        const payload: CrossingPayload = { camera, line, direction, id: e.id, label, ts: iso(e.ts), count };
        this.out.event(this.topics.crossings, JSON.stringify(payload));
        this.publishLineCount({ camera, line, label, direction, count });
        continue;
      }
      const { startTs, endTs, currentZones, enteredZones, loiteringZones, ...rest } = e;
      const payload: EventPayload = {
        ...rest,
        start_ts: iso(startTs),
        end_ts: endTs === null ? null : iso(endTs),
        current_zones: currentZones,
        entered_zones: enteredZones,
        loitering_zones: loiteringZones,
        snapshot: this.snapshots.onEvent(e),
      };
      this.out.event(this.topics.events, JSON.stringify(payload));
      const stored = {
        id: e.id,
        camera: e.camera,
        label: e.label,
        zones: enteredZones,
        start: startTs,
        event: payload,
      };
      if (e.type === 'new') this.history?.add(stored);
      else this.history?.update(stored);
    }
    this.snapshots.render();
  }

  /**
   * Retained counts of objects in view (and of the active ones), per label and per zone and
   * label, each published when it changes.
   */
  private publishCounts(camera: string): void {
    const none: TrackCounts = { labels: new Map(), zones: new Map() };
    const now = this.trackers.get(camera)?.counts() ?? none;
    const before = this.counts.get(camera) ?? none;
    this.publishChanged(before.labels, now.labels, (label) => this.countTopics(camera, label));
    for (const zone of new Set([...before.zones.keys(), ...now.zones.keys()]))
      this.publishChanged(before.zones.get(zone), now.zones.get(zone), (label) =>
        this.countTopics(camera, label, zone),
      );
    this.counts.set(camera, now);
  }

  /** A count's two topics, in view and active: the camera's, or with `zone` that zone's. */
  private countTopics(camera: string, label: string, zone?: string): [inView: string, active: string] {
    const t = this.topics;
    return zone === undefined
      ? [t.count(camera, label), t.countActive(camera, label)]
      : [t.zoneCount(camera, zone, label), t.zoneCountActive(camera, zone, label)];
  }

  /**
   * The labels whose counts start at 0, so subscribers (Home Assistant's sensors) have a value
   * before the first object: those the camera tracks and its zones' labels; for a camera that
   * tracks every label, its zones' `objects`, and the labels Home Assistant has entities for
   * (`default_labels`) while discovery is on. Its other counts appear with their objects.
   */
  private startsAtZero(cam: CameraConfig): { labels: string[]; zones: Map<string, string[]> } {
    const defaults = this.deps.homeAssistant?.defaultLabels() ?? [];
    const zones = new Map<string, string[]>();
    for (const [zone, z] of Object.entries(cam.zones)) zones.set(zone, areaLabels(z.objects, cam, defaults));
    return { labels: cameraLabels(cam, defaults), zones };
  }

  /** The count topics (in view and active) of `startsAtZero`. */
  private zeroTopics(camera: string, cam: CameraConfig | undefined): string[] {
    if (!cam) return [];
    const start = this.startsAtZero(cam);
    const out = start.labels.flatMap((label) => this.countTopics(camera, label));
    for (const [zone, labels] of start.zones)
      for (const label of labels) out.push(...this.countTopics(camera, label, zone));
    return out;
  }

  /** The count topics whose last published value is not 0. */
  private countedTopics(camera: string): Set<string> {
    const out = new Set<string>();
    for (const [label, c, zone] of eachCount(this.counts.get(camera))) {
      const [inView, active] = this.countTopics(camera, label, zone);
      if (c.inView) out.add(inView);
      if (c.active) out.add(active);
    }
    return out;
  }

  /**
   * Nothing is in view before the first frame: the counts of `startsAtZero` are published as 0,
   * replacing what a crashed run may have left retained on the broker. At a reload, those a
   * camera did not have before are (a zone or label added), unless counted already.
   */
  private publishZeroCounts(
    cameras: Record<string, CameraConfig>,
    before?: Record<string, CameraConfig>,
  ): void {
    for (const [camera, cam] of Object.entries(cameras)) {
      const had = new Set(this.zeroTopics(camera, own(before, camera)));
      const counted = this.countedTopics(camera);
      for (const topic of this.zeroTopics(camera, cam))
        if (!had.has(topic) && !counted.has(topic)) this.out.state(topic, '0');
    }
  }

  private publishChanged(
    before: ReadonlyMap<string, Count> = new Map(),
    now: ReadonlyMap<string, Count> = new Map(),
    topicsOf: (label: string) => [inView: string, active: string],
  ): void {
    const zero: Count = { inView: 0, active: 0 };
    for (const label of new Set([...before.keys(), ...now.keys()])) {
      const n = now.get(label) ?? zero;
      const b = before.get(label) ?? zero;
      const [inView, active] = topicsOf(label);
      if (n.inView !== b.inView) this.out.state(inView, String(n.inView));
      if (n.active !== b.active) this.out.state(active, String(n.active));
    }
  }

  private publishLineCount(c: LineCount): void {
    this.out.state(this.topics.lineCount(c.camera, c.line, c.label, c.direction), String(c.count));
  }

  /** A camera's status changed. */
  onCameraStatus(s: CameraStatus): void {
    this.publishStatus(s);
  }

  /**
   * A batch with this camera's frames failed (missed deadline, detector error). While its model
   * is unavailable its status already says so: each batch refused meanwhile publishes nothing.
   */
  onDetectorError(camera: string, message: string): void {
    this.detectorErrors.set(camera, { message, at: this.deps.clock.now() });
    if (!this.away(camera)) this.publishStatusOf(camera);
  }

  /**
   * A model may have become unavailable (a remote model's server cannot be reached) or available
   * again: when it did, each camera on it publishes its status once (`detector_unavailable`, or
   * its own state, the batches refused meanwhile forgotten). Nothing changed, nothing is sent.
   */
  onModelAvailability(model: string): void {
    const up = this.deps.modelUnavailable?.(model) === undefined;
    const was = !this.awaySince.has(model);
    if (up === was) return;
    if (up) this.awaySince.delete(model);
    else this.awaySince.set(model, this.deps.clock.now());
    for (const [camera, cfg] of Object.entries(this.cameras)) {
      if (cfg.model !== model) continue;
      if (up) this.detectorErrors.delete(camera);
      this.publishStatusOf(camera);
    }
  }

  /** Why the camera's model is unavailable now, and since when; undefined while it is not. */
  private away(camera: string): { message: string; at: number } | undefined {
    const model = own(this.cameras, camera)?.model;
    const message = model === undefined ? undefined : this.deps.modelUnavailable?.(model);
    if (model === undefined || message === undefined) return undefined;
    let at = this.awaySince.get(model);
    if (at === undefined) this.awaySince.set(model, (at = this.deps.clock.now()));
    return { message, at };
  }

  private publishStatusOf(camera: string): void {
    const s = this.deps.cameraStatus(camera);
    if (s) this.publishStatus(s);
  }

  private publishStatus(s: CameraStatus): void {
    const camera = s.camera;
    const det = this.detectorErrors.get(camera);
    const away = this.away(camera);
    const lag = this.deps.lag?.of(camera);
    const lagS = lagSeconds(lag?.lagMs ?? null);
    // Lagging is a streaming camera's: a camera gone offline says why itself, at once.
    const laggingAt = s.state === 'streaming' ? this.laggingSince.get(camera) : undefined;
    const lastError = away
      ? { cause: 'detector_unavailable' as const, message: away.message, at: iso(away.at) }
      : det
        ? { cause: 'detector' as const, message: det.message, at: iso(det.at) }
        : laggingAt !== undefined
          ? {
              cause: 'lagging' as const,
              message: `its newest answered frame is ${lagS} s old (over scheduler.lagging_after_s: ${this.deps.lag?.afterS} s): the detector cannot keep up`,
              at: iso(laggingAt),
            }
          : s.lastError && {
              cause: s.lastError.cause,
              message: s.lastError.message,
              at: iso(s.lastError.at),
            };
    const payload: CameraStatusPayload = {
      camera,
      state: s.state,
      since: iso(s.since),
      restarts: s.restarts,
      frames_received: s.framesReceived,
      last_frame: s.lastFrameAt === null ? null : iso(s.lastFrameAt),
      source: s.source,
      last_error: lastError,
      retry_at: s.retryAt === null ? null : iso(s.retryAt),
      lag_s: lagS,
    };
    this.out.state(this.topics.cameraStatus(camera), JSON.stringify(payload));
  }

  /**
   * Makes the snapshots due at time `now`, and checks each camera's lag. Objects end, and counts
   * change, only with their camera's answered frames (Tracker): a camera that gets no answer
   * keeps them.
   */
  tick(now: number): void {
    this.snapshots.due(now);
    for (const [camera, t] of this.trackers) this.snapshots.untracked(camera, (id) => t.has(id));
    this.snapshots.render();
    for (const camera of Object.keys(this.cameras)) this.checkLag(camera, now);
  }

  /**
   * A streaming camera whose answers fell `lagging_after_s` behind its frames turns `lagging`
   * (unless its model is unavailable: its status says so already), and back when they catch up:
   * one log line and one status each way. Its objects and counts
   * hold meanwhile (Tracker); the status tells a subscriber they are not fresh.
   */
  private checkLag(camera: string, now: number): void {
    const lag = this.deps.lag?.of(camera);
    const streaming = this.deps.cameraStatus(camera)?.state === 'streaming';
    // A model that is away already says why the camera gets no answer.
    const lagging = streaming && lag?.lagging === true && !this.away(camera);
    if (lagging === this.laggingSince.has(camera)) return;
    const lagS = lagSeconds(lag?.lagMs ?? null);
    if (lagging) {
      this.laggingSince.set(camera, now);
      this.deps.log.warn(
        { camera, lag_s: lagS },
        'camera lagging: its frames get no answer in time (the detector cannot keep up); its objects and counts hold',
      );
    } else {
      this.laggingSince.delete(camera);
      const why = !streaming
        ? `camera no longer lagging: it is ${this.deps.cameraStatus(camera)?.state ?? 'gone'}`
        : lag?.lagging
          ? 'camera no longer lagging: its model is unavailable (its status says so)'
          : 'camera answered in time again';
      this.deps.log.info({ camera, lag_s: lagS }, why);
    }
    this.publishStatusOf(camera);
  }

  /**
   * A reloaded camera section: removed and disabled cameras' objects end; changed filters, zones and lines
   * apply from now. Counts of lines removed are forgotten and their retained topics cleared; new
   * lines' counts are published. Home Assistant's entities follow. A camera moved to another
   * model publishes its status again when either model is unavailable.
   */
  setCameras(cameras: Record<string, CameraConfig>): void {
    this.deps.homeAssistant?.setCameras(cameras);
    for (const [camera, t] of this.trackers) {
      // A camera disabled sends no more frames: its objects end now, as a removed camera's do.
      const cam = own(cameras, camera);
      if (cam?.enabled) {
        t.setAreas(areasOf(cam));
        continue;
      }
      this.emit(t.endAll());
      this.publishCounts(camera);
      this.trackers.delete(camera);
      this.toPublish.delete(camera);
      this.gate.forget(camera);
    }
    this.snapshots.prune(cameras);
    for (const camera of this.laggingSince.keys())
      if (!own(cameras, camera)?.enabled) this.laggingSince.delete(camera);
    const key = (c: LineCount): string => this.topics.lineCount(c.camera, c.line, c.label, c.direction);
    const gone = new Map(this.lineCounts.all(this.cameras).map((c) => [key(c), c.count]));
    this.lineCounts.prune(cameras);
    const before = this.cameras;
    this.cameras = cameras;
    this.publishZeroCounts(cameras, before);
    for (const c of this.lineCounts.all(cameras)) {
      if (gone.get(key(c)) !== c.count) this.publishLineCount(c);
      gone.delete(key(c));
    }
    for (const topic of gone.keys()) this.out.state(topic, ''); // an empty retained message deletes it
    const unavailable = (model: string | undefined): boolean =>
      model !== undefined && this.deps.modelUnavailable?.(model) !== undefined;
    for (const [camera, c] of Object.entries(cameras)) {
      const was = own(before, camera)?.model;
      if (was !== undefined && was !== c.model && (unavailable(was) || unavailable(c.model)))
        this.publishStatusOf(camera);
    }
  }

  /**
   * On shutdown: every object in view ends, counts of what is in view go to zero, the last
   * snapshots are made and published, the history and line counts are saved.
   */
  async stop(): Promise<void> {
    this.deps.homeAssistant?.stop();
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const [camera, t] of this.trackers) {
      this.emit(t.endAll());
      this.publishCounts(camera);
    }
    await this.snapshots.idle();
    await this.history?.flush();
    await this.lineCounts.flush();
  }
}
