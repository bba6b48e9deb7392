import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import type { Detection, Frame, Result } from '../core/frame.js';
import type { CameraStats } from './jobs.js';
import type { ModelBatchStats, ModelSet } from './models.js';

/** What the scheduler takes (its cache, its models, its hooks) and what it tells (its stats, its errors). */

/** A frame answered from the cache: the detections it reuses, and whether they are due for a fresh look. */
export interface CacheAnswer {
  detections: Detection[];
  /** The result is older than `max_age_s`: the frame is also to be analysed, to refresh it. */
  refresh: boolean;
}

/** What the scheduler needs of the frame cache. */
export interface ResultCache {
  readonly enabled: boolean;
  /** What `frame` may reuse (it looks like its camera's last analysed frame), if anything. */
  lookup(frame: Frame): CacheAnswer | undefined;
  store(frame: Frame, detections: Detection[]): void;
  forget(camera: string): void;
}

/** A picture submitted for a model that is not configured. */
export class UnknownModel extends Error {
  constructor(readonly model: string) {
    super(`there is no model named '${model}'`);
  }
}

/** Keyed by camera and model names in objects without a prototype (core/names.ts). */
export interface SchedulerStats {
  cameras: Record<string, CameraStats>;
  /** Pictures submitted one by one (`submit`), and how many got no answer. */
  submitted: { answered: number; dropped: number };
  /** Each model's batches; the four below are their sums (the mean over all batches). */
  models: Record<string, ModelBatchStats>;
  batches: number;
  /** How many batches had each size (index = size). */
  batchSizes: number[];
  inferenceMsMean: number;
  inFlight: number;
  cacheHitRatio: number;
}

export interface SchedulerDeps {
  /** Each model's detector, by name: a camera's frames go to its model's. */
  models: ModelSet;
  cache: ResultCache;
  clock: Clock;
  log: Logger;
  /** Every answered camera frame, analysed or from the cache. */
  onResult: (r: Result) => void;
  /** A batch holding this camera's frames failed (deadline, detector error). */
  onDetectorError?: (camera: string, message: string) => void;
}
