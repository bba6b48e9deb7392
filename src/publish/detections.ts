import type { Result } from '../core/frame.js';
import { own } from '../core/names.js';
import { isoTime } from '../core/time.js';
import type { CameraConfig, Config } from '../config/index.js';
import { applyCameraFilters, type DetectionTrack, type ZonedDetection } from '../track/index.js';
import { DetectionsGate } from './detections-gate.js';
import type { Output } from './mqtt-output.js';
import { Publisher } from './publisher.js';
import type { Topics } from './topics.js';

/**
 * Each camera's detections (`<base>/cameras/<camera>/detections`) after its filters and with its
 * zones, for the frames `mqtt.detections` says (when they change, with a heartbeat, or every
 * frame: DetectionsGate).
 */
export class DetectionsPublisher {
  readonly name = 'detections';
  private readonly gate: DetectionsGate;
  private readonly mqtt: Publisher;

  constructor(
    private cameras: Record<string, CameraConfig>,
    cfg: Config['mqtt']['detections'],
    private readonly deps: {
      out: Output;
      topics: Topics;
      /**
       * A result's filtered detections and what tracking made of them (ObjectEvents.tracksOf),
       * when it tracked the result: they are not filtered twice.
       */
      tracksOf?: (
        r: Result,
      ) => { detections: readonly ZonedDetection[]; tracks: readonly DetectionTrack[] } | undefined;
    },
  ) {
    this.gate = new DetectionsGate(cfg);
    this.mqtt = new Publisher(deps.out);
  }

  onResult(r: Result): void {
    const cam = own(this.cameras, r.camera);
    if (!cam) return;
    const tracked = this.deps.tracksOf?.(r);
    const dets = tracked?.detections ?? applyCameraFilters(r.detections, cam);
    const tracks = tracked?.tracks;
    const tracking = tracks ? tracks.map((t) => t.id ?? t.track).join(' ') : '';
    if (!this.gate.due(r.camera, dets, r.ts, tracking)) return;
    this.mqtt.detection(this.deps.topics.detections(r.camera), {
      camera: r.camera,
      ts: isoTime(r.ts),
      frame: r.seq,
      cached: r.cached,
      width: r.geometry.srcW,
      height: r.geometry.srcH,
      detections: dets.map((d, i) => {
        const { zones, ...plain } = d;
        return { ...plain, ...(zones.length ? { zones } : {}), ...(tracks?.[i] ?? {}) };
      }),
    });
  }

  /** Removed and disabled cameras are forgotten: their next frame, if they come back, is published. */
  setCameras(cameras: Record<string, CameraConfig>): void {
    for (const camera of Object.keys(this.cameras))
      if (!own(cameras, camera)?.enabled) this.gate.forget(camera);
    this.cameras = cameras;
  }
}
