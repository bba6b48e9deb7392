import type { Detection, Picture } from '../core/frame.js';
import { Histogram, LATENCY_BUCKETS, type HistogramSnapshot } from '../core/histogram.js';
import { namedRecord } from '../core/names.js';
import { FairShare } from './fair-share.js';

/** One batch's answer: per picture, its detections in source pixels. */
export interface BatchDetections {
  detections: Detection[][];
  inferMs: number;
}

/** What the scheduler needs of a model's detector (a worker pool, a remote server, or a fake). */
export interface BatchDetector {
  /** Batches it can run at once (its sessions). */
  readonly concurrency: number;
  /** The pictures it takes are inputSize × inputSize. */
  readonly inputSize: number;
  detect(pictures: readonly Picture[]): Promise<BatchDetections>;
}

/** A model's availability, decided once, by the model (kserve's RemoteDetector). */
export interface ModelAvailability {
  model: string;
  up: boolean;
  /** Why it takes no batch; null while up. */
  message: string | null;
  /** Since when it has been up, or away (clock ms). */
  since: number;
}

/** The models the scheduler batches for, by name. */
export interface ModelSet {
  /** The detector that runs the model of this name now (a reload may swap it); undefined when none. */
  detector(name: string): BatchDetector | undefined;
}

/** One model's batches, as SchedulerStats reports them. */
export interface ModelBatchStats {
  batches: number;
  /** How many batches had each size (index = size). */
  batchSizes: number[];
  /** Pictures sent to it (camera frames and submitted pictures). */
  frames: number;
  inferenceMsMean: number;
  /** Inference time per batch that succeeded (seconds): `argus_detector_inference_duration_seconds`. */
  inference: HistogramSnapshot;
  inFlight: number;
}

/**
 * The scheduler's bookkeeping for one model: its batches in flight (its own limit), the fair
 * share among the queues of its cameras, and its counters.
 */
export class ModelPool<K> {
  inFlight = 0;
  readonly fair = new FairShare<K>();
  private batches = 0;
  private readonly sizes: number[];
  private frames = 0;
  private inferSum = 0;
  private ok = 0;
  private readonly inferTimes = new Histogram(LATENCY_BUCKETS.inference);

  constructor(maxBatch: number) {
    this.sizes = new Array<number>(maxBatch + 1).fill(0);
  }

  sent(size: number): void {
    this.inFlight++;
    this.batches++;
    this.sizes[size]!++;
    this.frames += size;
  }

  /** A batch came back: with its inference time, or failed (undefined). */
  settled(inferMs: number | undefined): void {
    this.inFlight--;
    if (inferMs === undefined) return;
    this.ok++;
    this.inferSum += inferMs;
    this.inferTimes.observe(inferMs / 1000);
  }

  /** Inference time summed over the batches that succeeded, and their count. */
  inference(): { sum: number; count: number } {
    return { sum: this.inferSum, count: this.ok };
  }

  stats(): ModelBatchStats {
    return {
      batches: this.batches,
      batchSizes: [...this.sizes],
      frames: this.frames,
      inferenceMsMean: this.ok ? this.inferSum / this.ok : 0,
      inference: this.inferTimes.snapshot(),
      inFlight: this.inFlight,
    };
  }
}

/** Each model's batch stats, and their sums: batches, sizes, the mean inference time over all. */
export function poolStats(
  pools: ReadonlyMap<string, ModelPool<unknown>>,
  maxBatch: number,
): {
  models: Record<string, ModelBatchStats>;
  batches: number;
  batchSizes: number[];
  inferenceMsMean: number;
} {
  const models = namedRecord<ModelBatchStats>();
  const batchSizes = new Array<number>(maxBatch + 1).fill(0);
  let batches = 0;
  let inferSum = 0;
  let ok = 0;
  for (const [name, pool] of pools) {
    const m = (models[name] = pool.stats());
    m.batchSizes.forEach((n, size) => (batchSizes[size]! += n));
    batches += m.batches;
    const { sum, count } = pool.inference();
    inferSum += sum;
    ok += count;
  }
  return { models, batches, batchSizes, inferenceMsMean: ok ? inferSum / ok : 0 };
}
