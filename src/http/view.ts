import type { Registry } from 'prom-client';
import type { Detection, Picture, Result } from '../core/frame.js';
import type { CameraConfig, Config } from '../config/index.js';
import { ImageError, loadLetterboxed, type CameraStatus } from '../ingest/index.js';
import {
  annotatedJpeg,
  applyCameraFilters,
  type CameraRates,
  type StatsSources,
  type TrackCounts,
  type ZonedDetection,
} from '../publish/index.js';
import { FrameDropped, type SchedulerStats } from '../scheduler/index.js';
import type { EventQuery, EventStore } from '../state/index.js';
import { HttpError, type Health, type HttpSource } from './server.js';

/** What the HTTP API reads and asks of the running pipeline. */
export interface ViewSources extends StatsSources {
  /** The configured cameras (they change on reload). */
  cameras: () => Record<string, CameraConfig>;
  ingest: StatsSources['ingest'] & { status(name: string): CameraStatus | undefined };
  scheduler: StatsSources['scheduler'] & {
    submit(picture: Picture, priority: number): Promise<Detection[]>;
  };
  detector: StatsSources['detector'] & { readonly inputSize: number };
  stats: { rates(sched?: SchedulerStats): Record<string, CameraRates> };
  metrics: Registry;
  /** A camera's objects in view, as its count topics last said (the reporter's). */
  counts?: (camera: string) => TrackCounts | undefined;
  /** The event history; absent, GET /api/events answers an empty list. */
  history?: Pick<EventStore, 'list' | 'has' | 'snapshot'> | undefined;
}

/** A camera as GET /api/cameras answers it (docs/http.md). */
export interface CameraView {
  camera: string;
  state: string;
  since: string | null;
  restarts: number;
  last_error: { cause: string; message: string } | null;
  source: { width: number; height: number } | null;
  fps_in: number;
  fps_analysed: number;
  queue_depth: number;
  has_frame: boolean;
  last_frame_ts: string | null;
  cached: boolean;
  detections: ZonedDetection[];
  counts: ViewCounts;
}

/** Confirmed objects in view, by label, and by zone and label (the count topics' numbers). */
export interface ViewCounts {
  labels: Record<string, number>;
  zones: Record<string, Record<string, number>>;
}

/**
 * The HTTP API's view of the pipeline: health, the cameras with their latest answered frame
 * (kept here, for the live page and snapshots), metrics, the event history (kept by the
 * reporter), and images posted for detection, which go through the scheduler's batches at
 * `http.detect_priority`.
 */
export class LiveView implements HttpSource {
  /** Each camera's latest answered frame, its detections through the camera's filters. */
  private latest = new Map<string, Result & { detections: ZonedDetection[] }>();

  constructor(
    private readonly cfg: Pick<Config['http'], 'detect_priority'>,
    private readonly src: ViewSources,
  ) {}

  /** Every answered camera frame passes here; the latest of each camera is kept. */
  onResult(r: Result): void {
    const cam = this.src.cameras()[r.camera];
    if (cam) this.latest.set(r.camera, { ...r, detections: applyCameraFilters(r.detections, cam) });
  }

  /** Drops what is kept for cameras no longer configured. */
  prune(): void {
    const cameras = this.src.cameras();
    for (const name of this.latest.keys()) if (!(name in cameras)) this.latest.delete(name);
  }

  /**
   * Healthy while a detector session is ready and the broker has not refused Argus: a login it
   * refuses (or TLS it fails) needs someone to fix the configuration, while a broker that is
   * away only delays what Argus publishes (it buffers and reconnects on its own).
   */
  health(): Health {
    const det = this.src.detector.stats();
    const mqtt = this.src.output.stats();
    const cameras: Record<string, string> = {};
    for (const s of this.src.ingest.statuses()) cameras[s.camera] = s.state;
    const err = mqtt.lastError;
    const refused = !mqtt.connected && err !== null && ['auth', 'refused', 'tls'].includes(err.cause);
    return {
      ok: det.readyWorkers > 0 && !refused,
      detector: { ready_workers: det.readyWorkers, provider: det.provider },
      mqtt: { connected: mqtt.connected, last_error: err && { cause: err.cause, message: err.message } },
      cameras,
    };
  }

  cameraNames(): string[] {
    return Object.keys(this.src.cameras());
  }

  cameras(): CameraView[] {
    const sched = this.src.scheduler.stats();
    const rates = this.src.stats.rates(sched);
    return Object.entries(this.src.cameras()).map(([name, cfg]) => {
      const st = this.src.ingest.status(name);
      const latest = this.latest.get(name);
      return {
        camera: name,
        state: st?.state ?? (cfg.enabled ? 'connecting' : 'disabled'),
        since: st ? new Date(st.since).toISOString() : null,
        restarts: st?.restarts ?? 0,
        last_error: st?.lastError ? { cause: st.lastError.cause, message: st.lastError.message } : null,
        source: st?.source ?? null,
        fps_in: rates[name]?.fpsIn ?? 0,
        fps_analysed: rates[name]?.fpsAnalysed ?? 0,
        queue_depth: sched.cameras[name]?.queueDepth ?? 0,
        has_frame: latest !== undefined,
        last_frame_ts: latest ? new Date(latest.ts).toISOString() : null,
        cached: latest?.cached ?? false,
        detections: latest?.detections ?? [],
        counts: this.countsOf(name, cfg),
      };
    });
  }

  /**
   * What the count topics say of a camera: its tracked labels (and its zones' labels) at 0
   * unless in view, so a quiet camera still lists what it looks for.
   */
  private countsOf(name: string, cfg: CameraConfig): ViewCounts {
    const now = this.src.counts?.(name);
    const out: ViewCounts = { labels: {}, zones: {} };
    const track = cfg.objects.track ?? [];
    for (const label of track) out.labels[label] = 0;
    for (const [zone, z] of Object.entries(cfg.zones)) {
      const labels: Record<string, number> = (out.zones[zone] = {});
      for (const label of z.objects ?? track) labels[label] = 0;
    }
    for (const [label, c] of Object.entries(now?.labels ?? {})) out.labels[label] = c.inView;
    for (const [zone, m] of Object.entries(now?.zones ?? {}))
      for (const [label, c] of Object.entries(m)) (out.zones[zone] ??= {})[label] = c.inView;
    return out;
  }

  async latestJpeg(camera: string, width?: number): Promise<Buffer | undefined> {
    const r = this.latest.get(camera);
    return r ? annotatedJpeg(r.data, r.geometry, r.detections, { width }) : undefined;
  }

  events(query: EventQuery): unknown[] {
    return this.src.history?.list(query) ?? [];
  }

  hasEvent(id: string): boolean {
    return this.src.history?.has(id) ?? false;
  }

  eventSnapshot(id: string, crop: boolean): Promise<Buffer | undefined> {
    return this.src.history?.snapshot(id, crop ? 'crop' : 'full') ?? Promise.resolve(undefined);
  }

  async metrics(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.src.metrics.contentType, body: await this.src.metrics.metrics() };
  }

  /** One posted image through the scheduler: the same JSON as `argus detect`. */
  async detect(image: Buffer, name: string): Promise<unknown> {
    let picture: Picture;
    try {
      picture = await loadLetterboxed(image, this.src.detector.inputSize, name);
    } catch (err) {
      if (err instanceof ImageError) throw new HttpError(400, err.message);
      throw err;
    }
    let detections: Detection[];
    try {
      detections = await this.src.scheduler.submit(picture, this.cfg.detect_priority);
    } catch (err) {
      if (err instanceof FrameDropped) throw new HttpError(503, err.message);
      throw err;
    }
    const g = picture.geometry;
    return { image: name, width: g.srcW, height: g.srcH, detections };
  }
}
