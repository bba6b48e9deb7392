import type { CameraConfig, Config } from '../config/schema.js';
import type { CameraStatus } from '../ingest/camera.js';
import type { Result } from '../scheduler/scheduler.js';
import { applyCameraFilters } from './filters.js';
import type { Output } from './mqtt-output.js';
import type { CameraStatusPayload, DetectionsPayload, EventPayload, Topics } from './topics.js';
import { Tracker, type ObjectEvent } from './tracker.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Turns the pipeline's output into MQTT messages: per-frame detections after each camera's
 * filters, object events from a per-camera tracker, retained per-label counts, and retained
 * camera statuses.
 */
export class Reporter {
  private trackers = new Map<string, Tracker>();
  private counts = new Map<string, Record<string, number>>();
  private statuses = new Map<string, CameraStatus>();
  private detectorErrors = new Map<string, { message: string; at: number }>();

  constructor(
    private cameras: Record<string, CameraConfig>,
    private readonly events: Config['events'],
    private readonly topics: Topics,
    private readonly out: Output,
  ) {}

  private tracker(camera: string): Tracker {
    let t = this.trackers.get(camera);
    if (!t) {
      t = new Tracker(camera, {
        minFrames: this.events.min_frames,
        endAfterMs: this.events.end_after_s * 1000,
        matchIou: 0.3,
        updateIou: this.events.update_iou,
        updateScore: this.events.update_score,
      });
      this.trackers.set(camera, t);
    }
    return t;
  }

  onResult(r: Result): void {
    const cam = this.cameras[r.camera];
    if (!cam) return;
    const dets = applyCameraFilters(r.detections, cam);
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
    this.emit(this.tracker(r.camera).update(dets, r.ts));
    this.publishCounts(r.camera);
    if (!r.cached && this.detectorErrors.delete(r.camera)) this.publishStatus(r.camera);
  }

  private emit(events: ObjectEvent[]): void {
    for (const e of events) {
      const payload: EventPayload = {
        ...e,
        start_ts: iso(e.start_ts),
        end_ts: e.end_ts === null ? null : iso(e.end_ts),
      };
      this.out.event(this.topics.events, JSON.stringify(payload));
    }
  }

  private publishCounts(camera: string): void {
    const now = this.trackers.get(camera)?.counts() ?? {};
    const before = this.counts.get(camera) ?? {};
    for (const label of new Set([...Object.keys(before), ...Object.keys(now)])) {
      const n = now[label] ?? 0;
      if (n !== (before[label] ?? 0)) this.out.state(this.topics.count(camera, label), String(n));
    }
    this.counts.set(camera, now);
  }

  onCameraStatus(s: CameraStatus): void {
    this.statuses.set(s.camera, s);
    this.publishStatus(s.camera);
  }

  /** A batch with this camera's frames failed (missed deadline, detector error). */
  onDetectorError(camera: string, message: string, at: number): void {
    this.detectorErrors.set(camera, { message, at });
    this.publishStatus(camera);
  }

  private publishStatus(camera: string): void {
    const s = this.statuses.get(camera);
    if (!s) return;
    const det = this.detectorErrors.get(camera);
    const lastError = det
      ? { cause: 'detector' as const, message: det.message, at: iso(det.at) }
      : s.lastError && { cause: s.lastError.cause, message: s.lastError.message, at: iso(s.lastError.at) };
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
    };
    this.out.state(this.topics.cameraStatus(camera), JSON.stringify(payload));
  }

  /** Ends objects no camera has seen for `end_after_s` (called every second). */
  tick(now: number): void {
    for (const [camera, t] of this.trackers) {
      this.emit(t.expire(now));
      this.publishCounts(camera);
    }
  }

  /** A reloaded camera section: removed cameras' objects end, changed filters apply from now. */
  setCameras(cameras: Record<string, CameraConfig>): void {
    for (const [camera, t] of this.trackers) {
      if (camera in cameras) continue;
      this.emit(t.endAll());
      this.publishCounts(camera);
      this.trackers.delete(camera);
    }
    this.cameras = cameras;
  }

  /** On shutdown: every object in view ends, and counts go to zero. */
  finish(): void {
    for (const [camera, t] of this.trackers) {
      this.emit(t.endAll());
      this.publishCounts(camera);
    }
  }
}
