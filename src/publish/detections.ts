import type { OwnerOf } from '../core/owner.js';
import { own } from '../core/names.js';
import { isoTime } from '../core/time.js';
import type { CameraConfig, CamerasNow, Config } from '../config/index.js';
import type { TrackedResult } from '../track/index.js';
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
    private readonly cameras: CamerasNow,
    cfg: Config['mqtt']['detections'],
    private readonly deps: { out: Output; topics: Topics; owner?: OwnerOf | undefined },
  ) {
    this.gate = new DetectionsGate(cfg);
    this.mqtt = new Publisher(deps.out);
  }

  /** A frame as tracking saw it (its detections filtered once, their ids): made before this hears of it. */
  onTracked(t: TrackedResult): void {
    const { result: r, detections: dets, tracks } = t;
    if (!own(this.cameras(), r.camera)) return;
    const tracking = tracks ? tracks.map((t) => t.id ?? t.track).join(' ') : '';
    if (!this.gate.due(r.camera, dets, r.ts, tracking)) return;
    const owner = this.deps.owner?.(r.camera);
    this.mqtt.detection(this.deps.topics.detections(r.camera), {
      camera: r.camera,
      ...(owner ? { owner } : {}),
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
  camerasChanged(before: Record<string, CameraConfig>): void {
    const now = this.cameras();
    for (const camera of Object.keys(before)) if (!own(now, camera)?.enabled) this.gate.forget(camera);
  }
}
