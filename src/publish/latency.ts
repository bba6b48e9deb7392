import type { Clock } from '../core/clock.js';
import type { Result } from '../core/frame.js';
import { Histogram, LATENCY_BUCKETS, type HistogramSnapshot } from '../core/histogram.js';
import { own } from '../core/names.js';
import type { CamerasNow } from '../config/index.js';

/**
 * Per camera, the time from each frame's capture (its arrival from ffmpeg) to its answer handed
 * to MQTT: the `argus_camera_capture_to_publish_seconds` histogram. The last of the parts that
 * take results, so it measures them all (detections when due, events, counts).
 */
export class PublishLatency {
  readonly name = 'latency';
  private readonly toPublish = new Map<string, Histogram>();

  constructor(
    private readonly cameras: CamerasNow,
    private readonly clock: Clock,
  ) {}

  onResult(r: Result): void {
    if (!own(this.cameras(), r.camera)) return;
    let h = this.toPublish.get(r.camera);
    if (!h) this.toPublish.set(r.camera, (h = new Histogram(LATENCY_BUCKETS.captureToPublish)));
    h.observe((this.clock.now() - r.ts) / 1000);
  }

  /**
   * Removed and disabled cameras' histograms are kept but not shown: one enabled (or added) again
   * counts on from them, so its series never go down.
   */
  latency(): Map<string, HistogramSnapshot> {
    const shown = [...this.toPublish].filter(([camera]) => own(this.cameras(), camera)?.enabled);
    return new Map(shown.map(([camera, h]) => [camera, h.snapshot()]));
  }
}
