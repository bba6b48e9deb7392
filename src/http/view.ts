import type { Control } from '../control/index.js';
import type { Registry } from 'prom-client';
import type { Detection, Picture, Result } from '../core/frame.js';
import { namedRecord, own } from '../core/names.js';
import { isoTime, isoTimeOrNull } from '../core/time.js';
import type { CameraConfig, CamerasNow, Config } from '../config/index.js';
import { ImageError, loadLetterboxed, type CameraStatus } from '../ingest/index.js';
import type { KeptRange, RingStats } from '../record/index.js';
import type { ServedModel } from '../kserve/index.js';
import type { FleetView } from '../fleet/index.js';
import { providerOf, readySessions } from '../models/index.js';
import { annotatedJpeg } from '../draw/index.js';
import type { CountsInView, LiveObject } from '../events/index.js';
import { lagSeconds, type CameraRates, type StatsSources } from '../publish/index.js';
import { applyCameraFilters, type TrackedResult, type ZonedDetection } from '../track/index.js';
import { FrameDropped, UnknownModel, type SchedulerStats } from '../scheduler/index.js';
import type { EventQuery, EventStore, NoSnapshot } from '../events/index.js';
import { HttpError } from './errors.js';
import { boxCounts, cameraGeometry, type BoxCounts, type CameraGeometry } from './geometry.js';
import type { ClipFile, Health, HttpSource, LatestFrame, RecordingIndex } from './source.js';
import type { HealthReport } from '../health/index.js';

/** A camera's health as the API shows it (as its MQTT topic says it). */
function healthView(r: HealthReport | undefined): CameraView['health'] {
  if (!r) return null;
  return {
    state: r.state,
    since: new Date(r.since).toISOString(),
    ...(r.measure === undefined ? {} : { measure: r.measure }),
    faults: [...r.faults],
    learning: r.learning,
  };
}

/** What the HTTP API reads and asks of the running pipeline. */
export interface ViewSources extends StatsSources {
  /** The configured cameras (they change on reload). */
  cameras: CamerasNow;
  ingest: StatsSources['ingest'] & { status(name: string): CameraStatus | undefined };
  scheduler: StatsSources['scheduler'] & {
    submit(picture: Picture, priority: number, model: string): Promise<Detection[]>;
  };
  models: StatsSources['models'] & {
    detector(name: string): { readonly inputSize: number } | undefined;
    names(): string[];
    labels(name: string): readonly string[] | undefined;
    /** Why the model of this name takes no batch now (a remote model's server away), or undefined. */
    unavailable?(name: string): string | undefined;
  };
  stats: { rates(sched?: SchedulerStats): Record<string, CameraRates> };
  metrics: Registry;
  /** A camera's objects in view, as its count topics say (the tracker's, through the reporter). */
  counts?: (camera: string) => CountsInView;
  /** Every line's cumulative crossing counts, as the line count topics say. */
  lineCounts?: () => readonly LineCountRow[];
  /**
   * Per zone of a camera, the longest an object now in it has been there (s). The page shows it
   * beside the zone's counts; absent (the tracker keeps no time in zone yet), nothing is shown.
   */
  zoneDwell?: (camera: string) => Record<string, number>;
  /** A camera's confirmed objects in view now, with their zones, loitering and speed; absent, none. */
  objects?: (camera: string) => readonly LiveObject[];
  /**
   * The event history; absent, GET /api/events answers an empty list. Only the events of the
   * running config's cameras are listed, served and deleted: the others (of another config that
   * used the state directory, or of a camera removed since) are kept, not shown.
   */
  history?:
    Pick<EventStore, 'list' | 'has' | 'cameraOf' | 'snapshotOrWhy' | 'openClip' | 'remove'> | undefined;
  /** Event clips and ranges of the cameras' recordings, made on request (events/clips). */
  clips?: {
    eventClip(id: string): Promise<ClipFile>;
    /** An event deleted: its MP4 made on request leaves the cache. */
    dropEventClip(id: string): Promise<void>;
    recording(camera: string, from: number, to: number): Promise<ClipFile>;
    /** What a camera's recording holds and why; undefined when it keeps none. */
    kept?(camera: string, from?: number, to?: number): KeptRange[] | undefined;
  };
  /** The cameras whose events path has failing parts, and those parts (events/faults.ts). */
  eventFaults?: {
    cameras(): string[];
    of(camera: string): readonly { part: string; count: number; message: string; last: number }[];
  };
  /** Each camera's health (src/health); absent, or off for a camera: `health` is null. */
  health?: { stateOf(camera: string): HealthReport | undefined };
  /** Runtime settings (GET and PUT /api/control...); absent in tools and tests without it. */
  control?: Pick<Control, 'enabled' | 'view' | 'change'> | undefined;
  /**
   * With `fleet:`: this box's view of the fleet (/api/fleet), and the cameras of the file, whose
   * events recorded here /api/events lists (a camera handed on keeps its history on this box).
   */
  fleet?: { view(): FleetView; fileCameras(): Record<string, unknown> } | undefined;
}

/** One line count: crossings of `line` by `label` in `direction`, on `camera`. */
export interface LineCountRow {
  camera: string;
  line: string;
  label: string;
  direction: string;
  count: number;
}

/** A camera as GET /api/cameras answers it (docs/http.md). */
export interface CameraView {
  camera: string;
  /** The model that analyses its frames. */
  model: string;
  state: string;
  since: string | null;
  restarts: number;
  last_error: { cause: string; message: string } | null;
  source: { width: number; height: number } | null;
  fps_in: number;
  fps_analysed: number;
  queue_depth: number;
  /** The age of its newest answered frame (s); null before any frame. */
  lag_s: number | null;
  /** Its answers are more than `scheduler.lagging_after_s` behind its frames. */
  lagging: boolean;
  has_frame: boolean;
  last_frame_ts: string | null;
  cached: boolean;
  detections: readonly ZonedDetection[];
  /** `detections` counted by label, and by zone and label: what the count chips show. */
  boxes: BoxCounts;
  /** The tracker's confirmed objects in view, as the count topics say. */
  counts: CountsInView;
  /** line → label → direction → crossings, as the line count topics say. */
  line_counts: Record<string, Record<string, Record<string, number>>>;
  /** zone → the longest an object now in it has been there (s); empty while nothing provides it. */
  zone_dwell_s: Record<string, number>;
  /** The tracker's confirmed objects in view now: id, label, zones, loitering zones, speed. */
  objects: readonly LiveObject[];
  geometry: CameraGeometry;
  /** Its ring of recent video (clips): whether its directory can be used, why not, what it holds; null without one. */
  ring: { ok: boolean; error: string | null; bytes: number } | null;
  /** Its health as `…/cameras/<camera>/health` says; null with health off for it. */
  health?: { state: string; since: string; measure?: number; faults: string[]; learning: boolean } | null;
}

/**
 * The detections a camera's latest frame shows now: those its filters left (as tracking saw
 * the frame: filtered once, there; camerasChanged filters them again after a reload), none while its detection is off (its objects have ended, its
 * counts are 0: a box left on the last frame would say it still detects).
 */
function shownDetections(shown: Shown | undefined, cfg: CameraConfig): readonly ZonedDetection[] {
  if (!shown || !cfg.enabled || !cfg.detect) return [];
  // A frame tracking did not see (its tracking failed, or a view fed results alone) is filtered here.
  return shown.detections ?? applyCameraFilters(shown.result.detections, cfg);
}

/** A camera's latest answered frame, and its detections once tracking has seen it. */
interface Shown {
  result: Result;
  detections: readonly ZonedDetection[] | undefined;
}

/** The rows of one camera as line → label → direction → count (objects without a prototype). */
function lineCountsOf(rows: readonly LineCountRow[], camera: string): CameraView['line_counts'] {
  const out = namedRecord<Record<string, Record<string, number>>>();
  for (const r of rows)
    if (r.camera === camera)
      ((out[r.line] ??= namedRecord())[r.label] ??= namedRecord())[r.direction] = r.count;
  return out;
}

/** A camera's ring of recent video as /api/cameras shows it; null when it keeps none. */
function ringView(r: RingStats | undefined): CameraView['ring'] {
  return r ? { ok: r.problem === undefined, error: r.problem ?? null, bytes: r.bytes } : null;
}

/**
 * An event of the history as the recording's index lists it (its payload's id, label, times and
 * clip); undefined for a record without them.
 */
function eventMark(e: Record<string, unknown>): RecordingIndex['events'][number] | undefined {
  const { id, label, start_ts: start, end_ts: end } = e;
  if (typeof id !== 'string' || typeof label !== 'string' || typeof start !== 'string') return undefined;
  const clip = e.clip as { state?: unknown; path?: unknown } | null | undefined;
  return {
    id,
    label,
    start,
    end: typeof end === 'string' ? end : null,
    clip: clip?.state === 'ready' && typeof clip.path === 'string' ? clip.path : null,
  };
}

/**
 * The HTTP API's view of the pipeline: health, the cameras with their latest answered frame
 * (kept here, for the live page and snapshots), metrics, the event history (kept by the
 * reporter), and images posted for detection, which go through the scheduler's batches at
 * `http.detect_priority`.
 */
export class LiveView implements HttpSource {
  readonly name = 'live view';
  /** Each camera's latest answered frame, as the model answered it, with its filtered detections. */
  private latest = new Map<string, Shown>();

  constructor(
    private readonly cfg: Pick<Config['http'], 'detect_priority'>,
    private readonly src: ViewSources,
  ) {}

  /** Every answered camera frame passes here; the latest of each camera is kept. */
  onResult(r: Result): void {
    if (Object.hasOwn(this.src.cameras(), r.camera))
      this.latest.set(r.camera, { result: r, detections: undefined });
  }

  /** The same frame as tracking saw it: its detections after the camera's filters. */
  onTracked(t: TrackedResult): void {
    const shown = this.latest.get(t.result.camera);
    if (shown?.result === t.result) shown.detections = t.detections;
  }

  /**
   * A reloaded camera section: what is kept for cameras no longer configured is dropped, and the
   * latest frame of each other camera is shown through its filters as they are now (a reload
   * that stops tracking a label hides it at once).
   */
  camerasChanged(): void {
    const cameras = this.src.cameras();
    for (const [name, shown] of this.latest) {
      const cam = own(cameras, name);
      if (!cam) this.latest.delete(name);
      else if (shown.detections) shown.detections = applyCameraFilters(shown.result.detections, cam);
    }
  }

  /**
   * Healthy while every model has a session (or a remote connection) ready and the broker has not
   * refused Argus: a login it refuses (or TLS it fails) needs someone to fix the configuration,
   * while a broker that is away only delays what Argus publishes (it buffers and reconnects on
   * its own).
   */
  health(): Health {
    const models = Object.entries(this.src.models.stats());
    const mqtt = this.src.output.stats();
    const cameras = namedRecord<string>();
    for (const s of this.src.ingest.statuses()) cameras[s.camera] = s.state;
    const byModel = namedRecord<Health['models'][string]>();
    for (const [name, m] of models)
      byModel[name] = { ready_workers: readySessions(m), provider: providerOf(m) };
    const err = mqtt.lastError;
    const refused = !mqtt.connected && err !== null && ['auth', 'refused', 'tls'].includes(err.cause);
    const providers = [...new Set(models.flatMap(([, m]) => providerOf(m) ?? []))];
    return {
      ok: models.length > 0 && models.every(([, m]) => readySessions(m) > 0) && !refused,
      detector: {
        ready_workers: models.reduce((n, [, m]) => n + readySessions(m), 0),
        provider: providers.length ? providers.join(',') : null,
      },
      models: byModel,
      mqtt: { connected: mqtt.connected, last_error: err && { cause: err.cause, message: err.message } },
      cameras,
      event_faults: this.eventFaults(),
      rings: this.rings(),
    };
  }

  /** Per camera with failing parts in its events path, each part's faults (`/healthz`). */
  private eventFaults(): Health['event_faults'] {
    const out = namedRecord<Health['event_faults'][string]>();
    const faults = this.src.eventFaults;
    for (const camera of faults?.cameras() ?? [])
      out[camera] = faults!
        .of(camera)
        .map((f) => ({ part: f.part, count: f.count, message: f.message, last: isoTime(f.last) }));
    return out;
  }

  /** Each ring's directory: usable, or why not (a ring that cannot write does not fail the health: its camera still detects). */
  private rings(): NonNullable<Health['rings']> {
    const out = namedRecord<NonNullable<Health['rings']>[string]>();
    for (const [name, r] of Object.entries(this.src.ingest.ringStats?.() ?? {}))
      out[name] = { ok: r.problem === undefined, error: r.problem ?? null };
    return out;
  }

  cameraNames(): string[] {
    return Object.keys(this.src.cameras());
  }

  modelNames(): string[] {
    return this.src.models.names();
  }

  cameras(): CameraView[] {
    const sched = this.src.scheduler.stats();
    const rates = this.src.stats.rates(sched);
    const lines = this.src.lineCounts?.() ?? [];
    const rings = this.src.ingest.ringStats?.() ?? {};
    return Object.entries(this.src.cameras()).map(([name, cfg]) => {
      const st = this.src.ingest.status(name);
      const latest = this.latest.get(name);
      const rate = own(rates, name);
      const queue = own(sched.cameras, name);
      // As its MQTT status says: its model's being unavailable first, then its own failure.
      const away = this.src.models.unavailable?.(cfg.model);
      const detections = shownDetections(latest, cfg);
      const frame = latest?.result;
      const size = frame ? { width: frame.geometry.srcW, height: frame.geometry.srcH } : st?.source;
      return {
        camera: name,
        model: cfg.model,
        state: st?.state ?? (cfg.enabled ? 'connecting' : 'disabled'),
        since: isoTimeOrNull(st?.since),
        restarts: st?.restarts ?? 0,
        last_error:
          away !== undefined
            ? { cause: 'detector_unavailable', message: away }
            : st?.lastError
              ? { cause: st.lastError.cause, message: st.lastError.message }
              : null,
        source: st?.source ?? null,
        fps_in: rate?.fpsIn ?? 0,
        fps_analysed: rate?.fpsAnalysed ?? 0,
        queue_depth: queue?.queueDepth ?? 0,
        lag_s: lagSeconds(queue?.lagMs ?? null),
        lagging: queue?.lagging ?? false,
        has_frame: latest !== undefined,
        last_frame_ts: isoTimeOrNull(frame?.ts),
        cached: frame?.cached ?? false,
        detections,
        boxes: boxCounts(detections),
        counts: this.src.counts?.(name) ?? { labels: namedRecord(), zones: namedRecord() },
        line_counts: lineCountsOf(lines, name),
        zone_dwell_s: this.src.zoneDwell?.(name) ?? namedRecord(),
        objects: this.src.objects?.(name) ?? [],
        geometry: cameraGeometry(cfg, size ?? null),
        ring: ringView(own(rings, name)),
        ...(this.src.health ? { health: healthView(this.src.health.stateOf(name)) } : {}),
      };
    });
  }

  /**
   * The latest frame with its detections drawn, and those boxes counted: the page's count chips
   * come from here, so they always count the boxes of the frame the card shows (GET
   * /api/cameras may have answered for an older frame).
   */
  async latestJpeg(camera: string, width?: number): Promise<LatestFrame | undefined> {
    const shown = this.latest.get(camera);
    const cfg = own(this.src.cameras(), camera);
    if (!shown || !cfg) return undefined;
    const r = shown.result;
    const detections = shownDetections(shown, cfg);
    const jpeg = await annotatedJpeg(r.data, r.geometry, detections, { width });
    return { jpeg, ts: r.ts, boxes: boxCounts(detections) };
  }

  events(query: EventQuery): unknown[] {
    return this.src.history?.list({ ...query, cameras: new Set(Object.keys(this.historyCameras())) }) ?? [];
  }

  /**
   * Whether the history holds an event of that id, of one of the running config's cameras (with
   * `fleet:`, of the file's: those another box runs now too).
   */
  hasEvent(id: string): boolean {
    const camera = this.src.history?.cameraOf(id);
    return camera !== undefined && Object.hasOwn(this.historyCameras(), camera);
  }

  /** The cameras whose events the API serves: those that run, or with `fleet:` the file's. */
  private historyCameras(): Record<string, unknown> {
    return this.src.fleet?.fileCameras() ?? this.src.cameras();
  }

  /** This box's view of the fleet (/api/fleet); undefined without `fleet:`. */
  fleet(): FleetView | undefined {
    return this.src.fleet?.view();
  }

  eventSnapshot(id: string, which: 'full' | 'crop'): Promise<Buffer | NoSnapshot | undefined> {
    if (!this.hasEvent(id)) return Promise.resolve(undefined);
    return this.src.history?.snapshotOrWhy(id, which) ?? Promise.resolve(undefined);
  }

  async eventClip(id: string): Promise<ClipFile | undefined> {
    if (!this.hasEvent(id)) return undefined;
    // A clip written by an earlier version (its own file) is served as it is, until it ages out.
    const kept = await this.src.history?.openClip(id);
    if (kept) return kept;
    return this.src.clips?.eventClip(id) ?? { status: 404, error: 'no clip for this event' };
  }

  recording(camera: string, from: number, to: number): Promise<ClipFile> {
    if (!own(this.src.cameras(), camera)) return Promise.resolve({ status: 404, error: 'no such camera' });
    return (
      this.src.clips?.recording(camera, from, to) ?? Promise.resolve({ status: 404, error: 'no recordings' })
    );
  }

  recordingIndex(camera: string, from?: number, to?: number): RecordingIndex | undefined {
    if (!own(this.src.cameras(), camera)) return undefined;
    const kept = this.src.clips?.kept?.(camera, from, to);
    const lo = from ?? -Infinity;
    const hi = to ?? Infinity;
    const events = (this.src.history?.list({ camera, limit: Number.MAX_SAFE_INTEGER }) ?? [])
      .flatMap((e) => eventMark(e) ?? [])
      .filter((e) => Date.parse(e.start) <= hi && (e.end === null || Date.parse(e.end) >= lo))
      .reverse();
    return {
      camera,
      start: from === undefined ? null : isoTime(from),
      end: to === undefined ? null : isoTime(to),
      recording: kept !== undefined,
      ranges: (kept ?? []).map((r) => ({
        start: isoTime(r.start),
        end: isoTime(r.end),
        duration_s: Math.round((r.end - r.start) / 100) / 10,
        why: r.why,
        events: r.events,
        bytes: r.bytes,
      })),
      events,
    };
  }

  /** Deletes an event with its snapshots and clip: its record's files, and its MP4 made on request. */
  async deleteEvent(id: string): Promise<boolean> {
    if (!this.hasEvent(id)) return false;
    const removed = (await this.src.history?.remove(id)) ?? false;
    if (removed) await this.src.clips?.dropEventClip(id);
    return removed;
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.src.metrics.contentType, body: await this.src.metrics.metrics() };
  }

  /**
   * The models KServe v2 clients may use, by their names: their pictures go through the scheduler
   * at `http.detect_priority`, as posted images do.
   */
  servedModels(): ServedModel[] {
    const { models, scheduler } = this.src;
    return models.names().flatMap((name): ServedModel[] => {
      const detector = models.detector(name);
      if (!detector) return [];
      return [
        {
          name,
          inputSize: detector.inputSize,
          labels: models.labels(name) ?? [],
          ready: () => {
            const m = own(models.stats(), name);
            return m !== undefined && readySessions(m) > 0;
          },
          detect: (picture) => scheduler.submit(picture, this.cfg.detect_priority, name),
        },
      ];
    });
  }

  control(): ViewSources['control'] {
    return this.src.control;
  }

  /** One posted image through the scheduler, on `model`: the same JSON as `argus detect`. */
  async detect(image: Buffer, name: string, model: string): Promise<unknown> {
    const detector = this.src.models.detector(model);
    if (!detector) throw new HttpError(400, `model: there is no model named '${model}'`);
    let picture: Picture;
    try {
      picture = await loadLetterboxed(image, detector.inputSize, name);
    } catch (err) {
      if (err instanceof ImageError) throw new HttpError(400, err.message);
      throw err;
    }
    let detections: Detection[];
    try {
      detections = await this.src.scheduler.submit(picture, this.cfg.detect_priority, model);
    } catch (err) {
      if (err instanceof FrameDropped) throw new HttpError(503, err.message);
      // Removed by a reload while the image was read.
      if (err instanceof UnknownModel) throw new HttpError(400, `model: ${err.message}`);
      throw err;
    }
    const g = picture.geometry;
    return { image: name, width: g.srcW, height: g.srcH, detections };
  }
}
