import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { fitsModel, type Detection, type Frame, type Picture, type Result } from '../core/frame.js';
import type { CameraChanges, CameraConfig, Config } from '../config/index.js';
import { FrameQueue, type DropReason } from '../queue/index.js';
import { FairShare } from './fair-share.js';

/** One batch's answer: per picture, its detections in source pixels. */
export interface BatchDetections {
  detections: Detection[][];
  inferMs: number;
}

/** What the scheduler needs of the detector (the worker pool, or a fake in tests). */
export interface BatchDetector {
  /** Batches it can run at once (its sessions). */
  readonly concurrency: number;
  /** The pictures it takes are inputSize × inputSize. */
  readonly inputSize: number;
  detect(pictures: readonly Picture[]): Promise<BatchDetections>;
}

/** What the scheduler needs of the frame cache. */
export interface ResultCache {
  readonly enabled: boolean;
  /** The detections `frame` may reuse (it looks like its camera's last analysed frame), if any. */
  lookup(frame: Frame): Detection[] | undefined;
  store(frame: Frame, detections: Detection[]): void;
  forget(camera: string): void;
}

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

export interface CameraStats {
  framesIn: number;
  analysed: number;
  cached: number;
  dropped: Record<Drop, number>;
  queueDepth: number;
  /** Mean age of frames when their batch was sent (ms). */
  frameAgeMsMean: number;
  /** Answers held back until an earlier frame's answer went out (capture order kept). */
  resequenced: number;
}

export interface SchedulerStats {
  cameras: Record<string, CameraStats>;
  /** Pictures submitted one by one (`submit`), and how many got no answer. */
  submitted: { answered: number; dropped: number };
  batches: number;
  /** How many batches had each size (index = size). */
  batchSizes: number[];
  inferenceMsMean: number;
  inFlight: number;
  cacheHitRatio: number;
}

export interface SchedulerDeps {
  detector: BatchDetector;
  cache: ResultCache;
  clock: Clock;
  log: Logger;
  /** Every answered camera frame, analysed or from the cache. */
  onResult: (r: Result) => void;
  /** A batch holding this camera's frames failed (deadline, detector error). */
  onDetectorError?: (camera: string, message: string) => void;
}

/** Pictures submitted at one priority wait here; beyond it the oldest is dropped. */
const SUBMIT_QUEUE = 16;

type Job =
  | { ts: number; frame: Frame }
  | {
      ts: number;
      picture: Picture;
      resolve: (d: Detection[]) => void;
      reject: (e: FrameDropped) => void;
    };

interface CameraCounters {
  framesIn: number;
  analysed: number;
  cached: number;
  errors: number;
  ageSum: number;
  resequenced: number;
}

/** What a camera lane knows beyond its queue. */
interface CameraLane {
  name: string;
  counters: CameraCounters;
  /** Frames taken but not yet answered or dropped (queued or in a batch), by sequence number. */
  pending: Set<number>;
  /** Answers that wait for an earlier frame's, in sequence order. */
  held: Result[];
}

/** A queue that competes for batch slots: one per camera, one per priority of submitted pictures. */
interface Lane {
  priority: number;
  queue: FrameQueue<Job>;
  /** Cameras only. */
  camera?: CameraLane;
}

/**
 * Merges the cameras' frames, and pictures submitted one by one, into batches for the detector:
 * a batch leaves when `max_batch` frames wait, when the oldest has waited `max_wait_ms`, or at
 * once when no batch is running (unless `fill_when_idle`); frames are picked by fair share of
 * priority (see FairShare); at most `max_in_flight` batches run at once (0: one per detector
 * session), so the next is being filled while the current runs. Unchanged camera frames are
 * answered from the cache and never wait.
 */
export class Scheduler {
  private cams = new Map<string, Lane>();
  private submitLanes = new Map<number, Lane>();
  private fair = new FairShare<Lane>();
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private timer: Timer | null = null;
  private timerAt = 0;
  private running = false;
  private batches = 0;
  private batchSizes: number[];
  private inferSum = 0;
  private okBatches = 0;
  private submitted = { answered: 0, dropped: 0 };

  constructor(
    private readonly cfg: Config['scheduler'],
    private readonly cameras: Record<string, CameraConfig>,
    private readonly deps: SchedulerDeps,
  ) {
    this.batchSizes = new Array<number>(cfg.max_batch + 1).fill(0);
  }

  private get maxInFlight(): number {
    return this.cfg.max_in_flight || this.deps.detector.concurrency;
  }

  /** Starts taking frames from the enabled cameras. */
  start(): void {
    this.running = true;
    for (const [name, c] of Object.entries(this.cameras)) this.addCamera(name, c);
  }

  /** A reloaded camera section: removed cameras go, changed ones start afresh, new ones join. */
  setCameras(cameras: Record<string, CameraConfig>, changes: CameraChanges): void {
    for (const name of [...changes.removed, ...changes.changed]) this.removeCamera(name);
    for (const name of [...changes.added, ...changes.changed]) this.addCamera(name, cameras[name]!);
  }

  private addCamera(name: string, c: CameraConfig): void {
    if (!c.enabled) return;
    this.cams.set(name, {
      priority: c.priority,
      queue: new FrameQueue<Job>(this.cfg.queue_size),
      camera: {
        name,
        counters: { framesIn: 0, analysed: 0, cached: 0, errors: 0, ageSum: 0, resequenced: 0 },
        pending: new Set(),
        held: [],
      },
    });
  }

  private removeCamera(name: string): void {
    const lane = this.cams.get(name);
    if (!lane) return;
    lane.queue.clear();
    this.cams.delete(name);
    this.fair.forget(lane);
    this.deps.cache.forget(name);
  }

  /** Takes a frame from a camera. Never blocks: a full queue drops its oldest frame. */
  push(frame: Frame): void {
    const lane = this.cams.get(frame.camera);
    if (!lane || !this.running) return;
    lane.camera!.counters.framesIn++;
    if (this.answerFromCache(lane, frame)) return;
    lane.camera!.pending.add(frame.seq);
    const evicted = lane.queue.push({ frame, ts: frame.ts });
    if (evicted) this.dropped(lane, evicted, 'full');
    this.dispatch();
  }

  /**
   * Runs one picture (not from a camera, e.g. an image posted to the HTTP API) through the same
   * batches as the cameras, at `priority` (1..10) among them. Resolves with its detections;
   * rejects with FrameDropped when it gets no answer (queue full, stale, batch failed, stopped).
   */
  submit(picture: Picture, priority: number): Promise<Detection[]> {
    if (!this.running) return Promise.reject(new FrameDropped('stopped', 'the scheduler is stopped'));
    // Checked here, so a wrong picture fails alone rather than the batch it would share.
    const size = this.deps.detector.inputSize;
    const g = picture.geometry;
    if (!fitsModel(picture, size))
      return Promise.reject(
        new RangeError(
          `picture is ${g.dstW}x${g.dstH} (${picture.data.length} bytes); the model takes ${size}x${size} RGB`,
        ),
      );
    let lane = this.submitLanes.get(priority);
    if (!lane) {
      lane = { priority, queue: new FrameQueue<Job>(SUBMIT_QUEUE) };
      this.submitLanes.set(priority, lane);
    }
    const queue = lane.queue;
    return new Promise((resolve, reject) => {
      const evicted = queue.push({ ts: this.deps.clock.now(), picture, resolve, reject });
      if (evicted) this.dropped(lane, evicted, 'full');
      this.dispatch();
    });
  }

  /**
   * A job leaves without an answer: a camera's later answers need not wait for it; a submitted
   * picture's promise is rejected, saying why.
   */
  private dropped(lane: Lane, job: Job, reason: Drop | 'stopped', why?: string): void {
    if ('frame' in job) return this.answer(lane, job.frame.seq);
    this.submitted.dropped++;
    const text: Record<Drop | 'stopped', string> = {
      full: 'the detector is busy: the picture was dropped (too many pictures waiting)',
      stale: 'the detector is busy: the picture was dropped (it waited too long)',
      error: `the picture's batch failed${why ? `: ${why}` : ''}`,
      stopped: 'Argus is stopping',
    };
    job.reject(new FrameDropped(reason, text[reason]));
  }

  /**
   * Hands on a camera frame's answer (or, without one, its end), in capture order: an answer
   * waits while an earlier frame of its camera is still queued or in a batch (two sessions can
   * finish out of order, and the cache answers at once), and goes out as soon as none is.
   */
  private answer(lane: Lane, seq: number, result?: Result): void {
    const cam = lane.camera;
    if (!cam) return;
    cam.pending.delete(seq);
    let first = Infinity;
    for (const s of cam.pending) first = Math.min(first, s);
    if (result) {
      if (result.seq > first) cam.counters.resequenced++;
      const at = cam.held.findIndex((h) => h.seq > result.seq);
      cam.held.splice(at < 0 ? cam.held.length : at, 0, result);
    }
    while (cam.held.length && cam.held[0]!.seq < first) this.deps.onResult(cam.held.shift()!);
  }

  private answerFromCache(lane: Lane, frame: Frame): boolean {
    if (!this.deps.cache.enabled) return false;
    const detections = this.deps.cache.lookup(frame);
    if (!detections) return false;
    lane.camera!.counters.cached++;
    this.answer(lane, frame.seq, { ...frame, cached: true, detections });
    return true;
  }

  private armTimer(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.deps.clock.setTimeout(
      () => {
        this.timer = null;
        this.dispatch();
      },
      Math.max(0, at - this.deps.clock.now()),
    );
  }

  private lanes(): Lane[] {
    return [...this.cams.values(), ...this.submitLanes.values()];
  }

  /** Sends batches while a slot is free and a batch is due. */
  private dispatch(): void {
    while (this.running && this.inFlight < this.maxInFlight) {
      const now = this.deps.clock.now();
      const cutoff = now - this.cfg.max_frame_age_ms;
      const lanes = this.lanes();
      let total = 0;
      let oldest = Infinity;
      for (const lane of lanes) {
        lane.queue.dropOlderThan(cutoff, (job) => this.dropped(lane, job, 'stale'));
        total += lane.queue.length;
        const head = lane.queue.peek();
        if (head && head.ts < oldest) oldest = head.ts;
      }
      if (total === 0) return;
      const idle = this.inFlight === 0 && !this.cfg.fill_when_idle;
      if (!idle && total < this.cfg.max_batch && now - oldest < this.cfg.max_wait_ms) {
        this.armTimer(oldest + this.cfg.max_wait_ms);
        return;
      }
      this.sendBatch(now, lanes);
    }
  }

  private sendBatch(now: number, lanes: Lane[]): void {
    const batch: { job: Job; lane: Lane }[] = [];
    const contenders = lanes.map((lane) => ({
      key: lane,
      priority: lane.priority,
      waiting: lane.queue.length,
    }));
    while (batch.length < this.cfg.max_batch) {
      // One frame at a time: a frame answered from the cache leaves its slot to the next pick.
      const [lane] = this.fair.pick(contenders, 1);
      if (!lane) break;
      contenders.find((c) => c.key === lane)!.waiting--;
      const job = lane.queue.shift()!;
      // A frame queued before its camera's previous analysis finished may now match it.
      if ('frame' in job && this.answerFromCache(lane, job.frame)) continue;
      if (lane.camera) lane.camera.counters.ageSum += now - job.ts;
      batch.push({ job, lane });
    }
    if (batch.length === 0) return;
    this.inFlight++;
    this.batches++;
    this.batchSizes[batch.length]!++;
    const pictures = batch.map(({ job }) => ('frame' in job ? job.frame : job.picture));
    this.deps.detector.detect(pictures).then(
      (result) => {
        this.okBatches++;
        this.inferSum += result.inferMs;
        batch.forEach(({ job, lane }, i) => {
          const detections = result.detections[i] ?? [];
          if (!('frame' in job)) {
            this.submitted.answered++;
            return job.resolve(detections);
          }
          const f = job.frame;
          // A camera removed (or restarted) while its frame was in the batch: nothing to report,
          // and nothing to remember (a restarted camera may show another scene).
          if (this.cams.get(f.camera) !== lane) return;
          this.deps.cache.store(f, detections);
          lane.camera!.counters.analysed++;
          this.answer(lane, f.seq, {
            ...f,
            cached: false,
            detections,
            queuedMs: now - job.ts,
            batchSize: batch.length,
            inferMs: result.inferMs,
          });
        });
        this.settle();
      },
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        const cameras = new Set(batch.flatMap(({ lane }) => (lane.camera ? [lane.camera] : [])));
        this.deps.log.warn(
          { cameras: [...cameras].map((c) => c.name), frames: batch.length, err: message },
          'batch failed; its frames are dropped',
        );
        for (const camera of cameras) this.deps.onDetectorError?.(camera.name, message);
        for (const { job, lane } of batch) {
          if (lane.camera) lane.camera.counters.errors++;
          this.dropped(lane, job, 'error', message);
        }
        this.settle();
      },
    );
  }

  private settle(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    this.dispatch();
  }

  /** Stops taking frames, drops what is queued, and waits for the batches in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const lane of this.lanes())
      while (lane.queue.length) this.dropped(lane, lane.queue.shift()!, 'stopped');
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  stats(): SchedulerStats {
    const cameras: Record<string, CameraStats> = {};
    let analysed = 0;
    let cached = 0;
    for (const [name, lane] of this.cams) {
      const c = lane.camera!.counters;
      analysed += c.analysed;
      cached += c.cached;
      cameras[name] = {
        framesIn: c.framesIn,
        analysed: c.analysed,
        cached: c.cached,
        dropped: { ...lane.queue.dropped, error: c.errors },
        queueDepth: lane.queue.length,
        frameAgeMsMean: c.analysed + c.errors ? c.ageSum / (c.analysed + c.errors) : 0,
        resequenced: c.resequenced,
      };
    }
    return {
      cameras,
      submitted: { ...this.submitted },
      batches: this.batches,
      batchSizes: [...this.batchSizes],
      inferenceMsMean: this.okBatches ? this.inferSum / this.okBatches : 0,
      inFlight: this.inFlight,
      cacheHitRatio: analysed + cached ? cached / (analysed + cached) : 0,
    };
  }
}
