import { fitsModel, type Frame } from '../core/frame.js';
import type { FairShare } from './fair-share.js';
import { pictureOf, type CameraLane, type CameraState, type Drop, type Job, type Lane } from './jobs.js';

/** A job taken into a batch, with its camera's epoch when it was taken (0 for a picture). */
export interface Batched {
  job: Job;
  epoch: number;
}

/** What taking a batch needs of its model and of the scheduler. */
export interface BatchTaking {
  now: number;
  /** The model's input size: a job whose picture does not fit it is dropped. */
  size: number;
  maxBatch: number;
  fair: FairShare<Lane>;
  /** Answers a camera frame from the cache when it may reuse its camera's last result. */
  fromCache(lane: CameraLane, frame: Frame): boolean | 'refresh';
  dropped(job: Job, reason: Drop, why: string): void;
}

/**
 * Takes the next batch of a model from its lanes, one job at a time by fair share of priority:
 * a frame that its camera's cache answers now, or that no longer fits the model, leaves its slot
 * to the next pick.
 */
export function takeBatch(lanes: readonly Lane[], t: BatchTaking): Batched[] {
  const { now, size } = t;
  const batch: Batched[] = [];
  const contenders = lanes.map((lane) => ({
    key: lane,
    priority: lane.priority,
    waiting: lane.queue.length,
  }));
  while (batch.length < t.maxBatch) {
    // One frame at a time: a frame answered from the cache leaves its slot to the next pick.
    const [lane] = t.fair.pick(contenders, 1);
    if (!lane) break;
    contenders.find((c) => c.key === lane)!.waiting--;
    const job = lane.queue.shift()!;
    // A frame queued before its camera's previous analysis finished may now match it.
    if (job.kind === 'frame' && !job.refresh && t.fromCache(job.lane, job.frame)) continue;
    // Queued before a swap to a model of another input size: its camera is being restarted.
    if (!fitsModel(pictureOf(job), size)) {
      if (job.kind === 'frame') job.lane.camera.totals.errors++;
      t.dropped(job, 'error', `the model now takes ${size}x${size} pictures`);
      continue;
    }
    if (job.kind === 'picture') {
      batch.push({ job, epoch: 0 });
      continue;
    }
    const cam = job.lane.camera;
    cam.totals.ageSum += now - job.ts;
    cam.totals.queueWait.observe((now - job.ts) / 1000);
    batch.push({ job, epoch: cam.epoch });
  }
  return batch;
}

/** The cameras that have frames in a batch, each once. */
export const camerasOf = (batch: readonly Batched[]): Set<CameraState> =>
  new Set(batch.flatMap(({ job }) => (job.kind === 'frame' ? [job.lane.camera] : [])));

/**
 * A failure its detector reports itself (a remote model: one line when its server goes, one when
 * it is back) marks its error `reported`: each batch of it is logged only at debug.
 */
export const reportedError = (err: unknown): boolean =>
  err instanceof Error && (err as { reported?: unknown }).reported === true;
