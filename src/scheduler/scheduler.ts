import type { Logger } from 'pino';
import { blockHash, type BlockHash } from '../cache/block-hash.js';
import type { FrameCache } from '../cache/frame-cache.js';
import { DeadlineError, type BatchResult } from '../detector/detector.js';
import type { Letterbox } from '../detector/letterbox.js';
import { rgbToNchw } from '../detector/preprocess.js';
import { toDetections, type Detection } from '../detector/results.js';
import type { Clock, Timer } from '../ingest/clock.js';
import type { Frame } from '../ingest/frames.js';
import { FrameQueue, type DropReason } from '../queue/frame-queue.js';
import { FairShare } from './fair-share.js';

/** What the scheduler needs of the detector (the worker pool, or a fake in tests). */
export interface BatchDetector {
  readonly inputSize: number;
  readonly frameFloats: number;
  readonly labels: readonly string[];
  detect(input: Float32Array, count: number, timeoutMs?: number): Promise<BatchResult>;
}

export interface SchedulerSettings {
  maxBatch: number;
  /** How long a partial batch may wait to fill while the detector is busy. */
  maxWaitMs: number;
  /**
   * Also hold a partial batch for `maxWaitMs` when no batch is running (throughput over
   * latency). Off by default: an idle detector takes what is waiting at once, and batches form
   * by themselves under load, while the previous batch runs.
   */
  fillWhenIdle?: boolean;
  /** Batches running at once: one per detector worker. */
  maxInFlight: number;
  /** Frames older than this when their turn comes are dropped as stale. */
  maxFrameAgeMs: number;
  inferenceTimeoutMs: number;
}

export interface SchedulerCamera {
  name: string;
  priority: number;
  queueSize: number;
  /** Whether unchanged frames may be answered from the cache (default true). */
  cache?: boolean;
  /** Not a camera (e.g. images posted to the HTTP API): left out of stats. */
  internal?: boolean;
}

/** One answered frame: analysed by the model, or answered from the cache. */
export interface Result {
  camera: string;
  seq: number;
  ts: number;
  geometry: Letterbox;
  cached: boolean;
  detections: Detection[];
  /** The frame's pixels (model input, RGB24), for snapshots. */
  data: Buffer;
  /** For analysed frames: how long the frame waited before its batch was sent, and the batch. */
  queuedMs?: number;
  batchSize?: number;
  inferMs?: number;
}

export type Drop = DropReason | 'error';

export interface CameraStats {
  frames_in: number;
  analysed: number;
  cached: number;
  dropped: Record<Drop, number>;
  queue_depth: number;
  /** Mean and last age of frames when their batch was sent (ms). */
  frame_age_ms_mean: number;
  frame_age_ms_last: number;
  last_detector_error: { message: string; at: number } | null;
}

export interface SchedulerStats {
  cameras: Record<string, CameraStats>;
  batches: number;
  /** How many batches had each size (index = size). */
  batch_sizes: number[];
  inference_ms_mean: number;
  inference_ms_last: number;
  in_flight: number;
  deadlines_missed: number;
  cache_hit_ratio: number;
}

interface Queued {
  frame: Frame;
  hash: BlockHash | undefined;
  ts: number;
}

interface CameraSlot {
  cfg: SchedulerCamera;
  queue: FrameQueue<Queued>;
  stats: Omit<CameraStats, 'queue_depth' | 'dropped'> & { errors: number; ageSum: number };
}

export interface SchedulerDeps {
  detector: BatchDetector;
  cache: FrameCache;
  clock: Clock;
  log: Logger;
  onResult: (r: Result) => void;
  /** A batch holding this camera's frames failed (deadline, detector error). */
  onDetectorError?: (camera: string, message: string) => void;
  /** A frame was dropped without an answer (queue full, stale, or its batch failed). */
  onDrop?: (frame: Frame, reason: Drop) => void;
  /** Allocates batch buffers (tests count allocations). */
  allocate?: (floats: number) => Float32Array;
}

/**
 * Merges the cameras' frames into batches for the detector: a batch leaves when `maxBatch`
 * frames wait, when the oldest has waited `maxWaitMs`, or at once when no batch is running
 * (unless `fillWhenIdle`); frames are picked by fair share of
 * priority (see FairShare); at most `maxInFlight` batches run at once, so the next is being
 * filled while the current runs. Unchanged frames are answered from the cache and never wait.
 */
export class Scheduler {
  private cams = new Map<string, CameraSlot>();
  private fair = new FairShare();
  private pool: Float32Array[] = [];
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private timer: Timer | null = null;
  private timerAt = 0;
  private stopped = false;
  private batches = 0;
  private batchSizes: number[] = [];
  private inferSum = 0;
  private okBatches = 0;
  private inferLast = 0;
  private deadlines = 0;
  private readonly allocate: (floats: number) => Float32Array;

  constructor(
    private readonly settings: SchedulerSettings,
    private readonly deps: SchedulerDeps,
  ) {
    this.allocate = deps.allocate ?? ((n) => new Float32Array(n));
    this.batchSizes = new Array<number>(settings.maxBatch + 1).fill(0);
  }

  addCamera(cfg: SchedulerCamera): void {
    const old = this.cams.get(cfg.name);
    this.cams.set(cfg.name, {
      cfg,
      queue: new FrameQueue<Queued>(cfg.queueSize),
      stats: old?.stats ?? {
        frames_in: 0,
        analysed: 0,
        cached: 0,
        errors: 0,
        ageSum: 0,
        frame_age_ms_mean: 0,
        frame_age_ms_last: 0,
        last_detector_error: null,
      },
    });
  }

  removeCamera(name: string): void {
    this.cams.get(name)?.queue.clear();
    this.cams.delete(name);
    this.fair.forget(name);
    this.deps.cache.forget(name);
  }

  /** Takes a frame from a camera. Never blocks: a full queue drops its oldest frame. */
  push(frame: Frame): void {
    const cam = this.cams.get(frame.camera);
    if (!cam || this.stopped) return;
    cam.stats.frames_in++;
    let hash: BlockHash | undefined;
    if (this.deps.cache.enabled && cam.cfg.cache !== false) {
      hash = blockHash(frame.data, this.deps.detector.inputSize);
      if (this.answerFromCache(cam, frame, hash)) return;
    }
    const evicted = cam.queue.push({ frame, hash, ts: frame.ts });
    if (evicted) this.deps.onDrop?.(evicted.frame, 'full');
    this.dispatch();
  }

  private answerFromCache(cam: CameraSlot, frame: Frame, hash: BlockHash): boolean {
    const d = this.deps.cache.lookup(frame.camera, hash, frame.ts);
    if (!d.hit) return false;
    cam.stats.cached++;
    this.deps.onResult({
      camera: frame.camera,
      seq: frame.seq,
      ts: frame.ts,
      geometry: frame.geometry,
      cached: true,
      detections: d.detections,
      data: frame.data,
    });
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

  /** Sends batches while a slot is free and a batch is due. */
  private dispatch(): void {
    while (!this.stopped && this.inFlight < this.settings.maxInFlight) {
      const now = this.deps.clock.now();
      const cutoff = now - this.settings.maxFrameAgeMs;
      let total = 0;
      let oldest = Infinity;
      for (const c of this.cams.values()) {
        c.queue.dropOlderThan(cutoff, (q) => this.deps.onDrop?.(q.frame, 'stale'));
        total += c.queue.length;
        const head = c.queue.peek();
        if (head && head.ts < oldest) oldest = head.ts;
      }
      if (total === 0) return;
      const idle = this.inFlight === 0 && !this.settings.fillWhenIdle;
      if (!idle && total < this.settings.maxBatch && now - oldest < this.settings.maxWaitMs) {
        this.armTimer(oldest + this.settings.maxWaitMs);
        return;
      }
      this.sendBatch(now);
    }
  }

  private sendBatch(now: number): void {
    const batch: Queued[] = [];
    const contenders = [...this.cams.values()].map((c) => ({
      camera: c.cfg.name,
      priority: c.cfg.priority,
      waiting: c.queue.length,
    }));
    while (batch.length < this.settings.maxBatch) {
      // One frame at a time: a frame answered from the cache leaves its slot to the next pick.
      const [pick] = this.fair.pick(contenders, 1);
      if (!pick) break;
      contenders.find((c) => c.camera === pick)!.waiting--;
      const cam = this.cams.get(pick)!;
      const q = cam.queue.shift()!;
      // A frame queued before its camera's previous analysis finished may now match it.
      if (q.hash && this.answerFromCache(cam, q.frame, q.hash)) continue;
      batch.push(q);
    }
    if (batch.length === 0) return;
    const det = this.deps.detector;
    const size = det.inputSize;
    const input = this.pool.pop() ?? this.allocate(this.settings.maxBatch * det.frameFloats);
    batch.forEach((q, i) => {
      rgbToNchw(q.frame.data, size, size, input, i);
      const s = this.cams.get(q.frame.camera)?.stats;
      if (s) {
        const age = now - q.ts;
        s.frame_age_ms_last = age;
        s.ageSum += age;
      }
    });
    this.inFlight++;
    this.batches++;
    this.batchSizes[batch.length]!++;
    det.detect(input, batch.length, this.settings.inferenceTimeoutMs).then(
      (result) => {
        this.pool.push(result.input);
        this.okBatches++;
        this.inferSum += result.inferMs;
        this.inferLast = result.inferMs;
        batch.forEach((q, i) => {
          const f = q.frame;
          const detections = toDetections(result.detections[i] ?? [], f.geometry, det.labels);
          if (q.hash) this.deps.cache.store(f.camera, q.hash, f.ts, detections);
          const cam = this.cams.get(f.camera);
          if (!cam) return;
          cam.stats.analysed++;
          this.deps.onResult({
            camera: f.camera,
            seq: f.seq,
            ts: f.ts,
            geometry: f.geometry,
            cached: false,
            detections,
            data: f.data,
            queuedMs: now - q.ts,
            batchSize: batch.length,
            inferMs: result.inferMs,
          });
        });
        this.settle();
      },
      (err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        if (err instanceof DeadlineError) this.deadlines++;
        // The buffer went with the failed batch; a new one is allocated when needed.
        const input = (err as { input?: Float32Array }).input;
        if (input) this.pool.push(input);
        const cameras = new Set(batch.map((q) => q.frame.camera));
        this.deps.log.warn(
          { cameras: [...cameras], frames: batch.length, err: message },
          'batch failed; its frames are dropped',
        );
        for (const camera of cameras) {
          const cam = this.cams.get(camera);
          if (cam) cam.stats.last_detector_error = { message, at: this.deps.clock.now() };
          this.deps.onDetectorError?.(camera, message);
        }
        for (const q of batch) {
          const cam = this.cams.get(q.frame.camera);
          if (cam) cam.stats.errors++;
          this.deps.onDrop?.(q.frame, 'error');
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
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const c of this.cams.values()) c.queue.clear();
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  get inFlightBatches(): number {
    return this.inFlight;
  }

  stats(): SchedulerStats {
    const cameras: Record<string, CameraStats> = {};
    let analysed = 0;
    let cached = 0;
    for (const [name, c] of this.cams) {
      if (c.cfg.internal) continue;
      const s = c.stats;
      analysed += s.analysed;
      cached += s.cached;
      cameras[name] = {
        frames_in: s.frames_in,
        analysed: s.analysed,
        cached: s.cached,
        dropped: { ...c.queue.dropped, error: s.errors },
        queue_depth: c.queue.length,
        frame_age_ms_mean: s.analysed + s.errors ? s.ageSum / (s.analysed + s.errors) : 0,
        frame_age_ms_last: s.frame_age_ms_last,
        last_detector_error: s.last_detector_error,
      };
    }
    return {
      cameras,
      batches: this.batches,
      batch_sizes: [...this.batchSizes],
      inference_ms_mean: this.okBatches ? this.inferSum / this.okBatches : 0,
      inference_ms_last: this.inferLast,
      in_flight: this.inFlight,
      deadlines_missed: this.deadlines,
      cache_hit_ratio: analysed + cached ? cached / (analysed + cached) : 0,
    };
  }
}
