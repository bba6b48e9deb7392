import type { Detection, Frame, Picture, Result } from '../core/frame.js';
import { Histogram, LATENCY_BUCKETS, type HistogramSnapshot } from '../core/histogram.js';
import type { CameraConfig } from '../config/index.js';
import { FrameQueue, type DropReason } from '../queue/index.js';

/**
 * What waits in the scheduler: jobs (camera frames and submitted pictures), the lanes they wait
 * in, what a picture that gets no answer is told, and the order a camera's answers leave in.
 */

export type Drop = DropReason | 'error';

/** A submitted picture that got no answer: its queue was full, it went stale, or its batch failed. */
export class FrameDropped extends Error {
  constructor(
    readonly reason: Drop | 'stopped',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A camera frame waiting for its answer; or (`refresh`) one answered already from the cache whose
 * result is old, waiting to be analysed only to refresh the cache: its answer is not handed on.
 * `lane`: its camera's lane when it was taken (a camera restarted meanwhile has another).
 */
export interface FrameJob {
  kind: 'frame';
  ts: number;
  frame: Frame;
  lane: CameraLane;
  refresh?: true;
}

/** A picture submitted one by one, waiting for its answer. */
export interface PictureJob {
  kind: 'picture';
  ts: number;
  picture: Picture;
  resolve: (d: Detection[]) => void;
  reject: (e: FrameDropped) => void;
}

export type Job = FrameJob | PictureJob;

/** What a job sends to the model: its frame or its picture. */
export const pictureOf = (job: Job): Picture => (job.kind === 'frame' ? job.frame : job.picture);

/**
 * A camera's counts, which only go up: kept by its name for the life of the process
 * (core/tallies.ts), so a camera whose lane goes and comes back (detection off and on, a restart)
 * goes on counting from them.
 */
export interface CameraTotals {
  /** Frames handed to the scheduler while the camera is enabled, its detection on or off. */
  framesIn: number;
  analysed: number;
  cached: number;
  errors: number;
  ageSum: number;
  /** How long its frames waited in its queue before their batch was sent (seconds). */
  queueWait: Histogram;
  resequenced: number;
  /** Its frames dropped by its queues, by reason. */
  dropped: Record<DropReason, number>;
}

export const cameraTotals = (): CameraTotals => ({
  framesIn: 0,
  analysed: 0,
  cached: 0,
  errors: 0,
  ageSum: 0,
  queueWait: new Histogram(LATENCY_BUCKETS.queueWait),
  resequenced: 0,
  dropped: { full: 0, stale: 0 },
});

/** What one lane of a camera has seen: it starts afresh with the lane. */
export interface LaneTimes {
  /** Capture times of its first and newest frame taken, and of its newest answer handed on. */
  firstIn: number | null;
  lastIn: number | null;
  lastAnswered: number | null;
  /**
   * Capture time of the first frame taken since its newest answer or failed batch (null: none
   * since): a failing detector has causes of its own, and is not one that cannot keep up.
   */
  waitingSince: number | null;
}

/** What a camera lane knows beyond its queue. */
export interface CameraState {
  name: string;
  /**
   * Moves on when the camera's model changes (it moves to another, or its model is swapped):
   * an answer of a batch sent before is reported, but not cached.
   */
  epoch: number;
  /** Its counts, shared with its earlier and later lanes. */
  totals: CameraTotals;
  times: LaneTimes;
  /** Frames taken but not yet answered or dropped (queued or in a batch), by sequence number. */
  pending: Set<number>;
  /** Answers that wait for an earlier frame's, in sequence order. */
  held: Result[];
  /** A refresh of its cached result is queued or in a batch (one at a time). */
  refreshing: boolean;
}

/**
 * A queue that competes for its model's batch slots: one per camera (its frames, with what the
 * scheduler knows of the camera), one per model and priority of submitted pictures.
 */
export type Lane = CameraLane | PictureLane;

export interface CameraLane {
  model: string;
  priority: number;
  queue: FrameQueue<FrameJob>;
  camera: CameraState;
}

export interface PictureLane {
  model: string;
  priority: number;
  queue: FrameQueue<PictureJob>;
}

export interface CameraStats {
  /** The model that analyses its frames. */
  model: string;
  framesIn: number;
  analysed: number;
  cached: number;
  dropped: Record<Drop, number>;
  queueDepth: number;
  /** Mean age of frames when their batch was sent (ms). */
  frameAgeMsMean: number;
  /** The same ages, as a histogram (seconds): `argus_camera_queue_wait_seconds`. */
  queueWait: HistogramSnapshot;
  /** Answers held back until an earlier frame's answer went out (capture order kept). */
  resequenced: number;
  /**
   * The age of its newest answered frame (ms; from its first frame while none was answered;
   * null before any frame): how far behind the camera's answers are.
   */
  lagMs: number | null;
  /**
   * Its frames have gone unanswered for more than `lagging_after_s`: the first frame taken since
   * its newest answer is that much older than its newest frame (after a camera outage, the
   * frames since it came back, not the outage, count).
   */
  lagging: boolean;
}

/** A camera's lane, as it starts: empty, on the camera's model, counting on from `totals`. */
export function cameraLane(
  name: string,
  c: CameraConfig,
  queueSize: number,
  totals: CameraTotals,
): CameraLane {
  return {
    model: c.model,
    priority: c.priority,
    // A refresh dropped is no frame lost: its frame was answered from the cache.
    queue: new FrameQueue<FrameJob>(queueSize, (j) => j.refresh === true, totals.dropped),
    camera: {
      name,
      epoch: 0,
      totals,
      times: { firstIn: null, lastIn: null, lastAnswered: null, waitingSince: null },
      pending: new Set(),
      held: [],
      refreshing: false,
    },
  };
}

/** A camera lane's numbers at time `now`; `laggingAfterMs`: scheduler.lagging_after_s. */
export function cameraStats(lane: CameraLane, now: number, laggingAfterMs: number): CameraStats {
  const t = lane.camera.times;
  const answered = t.lastAnswered ?? t.firstIn;
  return {
    ...totalStats(lane.model, lane.camera.totals),
    queueDepth: lane.queue.length,
    lagMs: answered === null ? null : Math.max(0, now - answered),
    lagging: t.waitingSince !== null && t.lastIn! - t.waitingSince > laggingAfterMs,
  };
}

/** The numbers of a camera that has no lane (its detection is off): its totals, nothing waiting. */
export function totalStats(model: string, c: CameraTotals): CameraStats {
  return {
    model,
    framesIn: c.framesIn,
    analysed: c.analysed,
    cached: c.cached,
    dropped: { ...c.dropped, error: c.errors },
    queueDepth: 0,
    frameAgeMsMean: c.analysed + c.errors ? c.ageSum / (c.analysed + c.errors) : 0,
    queueWait: c.queueWait.snapshot(),
    resequenced: c.resequenced,
    lagMs: null,
    lagging: false,
  };
}

/** The share of the cameras' answered frames that the cache answered (0 before any). */
export function cacheHitRatio(cameras: Record<string, CameraStats>): number {
  let analysed = 0;
  let cached = 0;
  for (const c of Object.values(cameras)) {
    analysed += c.analysed;
    cached += c.cached;
  }
  return analysed + cached ? cached / (analysed + cached) : 0;
}

/**
 * Hands on a camera frame's answer (or, without one, its end), in capture order: an answer
 * waits while an earlier frame of its camera is still queued or in a batch (two sessions can
 * finish out of order, and the cache answers at once), and goes out as soon as none is.
 */
export function inCaptureOrder(
  cam: CameraState,
  seq: number,
  result: Result | undefined,
  emit: (r: Result) => void,
): void {
  cam.pending.delete(seq);
  let first = Infinity;
  for (const s of cam.pending) first = Math.min(first, s);
  if (result) {
    if (result.seq > first) cam.totals.resequenced++;
    const at = cam.held.findIndex((h) => h.seq > result.seq);
    cam.held.splice(at < 0 ? cam.held.length : at, 0, result);
  }
  while (cam.held.length && cam.held[0]!.seq < first) emit(cam.held.shift()!);
}
