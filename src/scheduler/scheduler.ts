import type { Timer } from '../core/clock.js';
import type { Detection, Frame, Picture, Result } from '../core/frame.js';
import { namedRecord } from '../core/names.js';
import { Tallies } from '../core/tallies.js';
import { errorMessage } from '../core/errors.js';
import type { CameraChanges, CameraConfig, Config } from '../config/index.js';
import { camerasOf, reportedError, takeBatch } from './batch.js';
import { UnknownModel, type SchedulerDeps, type SchedulerStats } from './contract.js';
import {
  cacheHitRatio,
  cameraLane,
  cameraStats,
  cameraTotals,
  FrameDropped,
  inCaptureOrder,
  pictureOf,
  totalStats,
  type CameraLane,
  type CameraState,
  type CameraStats,
  type CameraTotals,
  type Drop,
  type Job,
  type Lane,
} from './jobs.js';
import { ModelPool, poolStats, type BatchDetector } from './models.js';
import { misfitOf, Submissions } from './pictures.js';

/**
 * Merges the cameras' frames, and pictures submitted one by one, into batches, per model: the
 * frames of cameras on one model share its batches, and a batch never mixes models. A batch
 * leaves when `max_batch` frames wait, when the oldest has waited `max_wait_ms`, or at once when
 * none of its model is running (unless `fill_when_idle`); frames are picked by fair share of
 * priority among the queues of the model (see FairShare); each model runs at most
 * `max_in_flight` batches at once (0: one per session of its detector), so its next batch is
 * being filled while the current runs, and a busy model takes no slot of another. Unchanged
 * camera frames are answered from the cache and never wait.
 */
export class Scheduler {
  private cams = new Map<string, CameraLane>();
  private readonly submitted = new Submissions();
  /** A pool goes only once none of its batches is in flight (modelsChanged). */
  private pools = new Map<string, ModelPool<Lane>>();
  private idle: (() => void)[] = [];
  private timer: Timer | null = null;
  private timerAt = 0;
  private running = false;
  /** Each camera's counts, kept by name across its lanes. */
  private readonly totals = new Tallies<CameraTotals>(cameraTotals);

  constructor(
    private readonly cfg: Config['scheduler'],
    /** The camera section that runs (a reload or a runtime change replaces it). */
    private cameras: Record<string, CameraConfig>,
    private readonly deps: SchedulerDeps,
  ) {}

  /** Batches in flight, all models together. */
  private get inFlight(): number {
    let n = 0;
    for (const pool of this.pools.values()) n += pool.inFlight;
    return n;
  }

  private pool(model: string): ModelPool<Lane> {
    let pool = this.pools.get(model);
    if (!pool) this.pools.set(model, (pool = new ModelPool<Lane>(this.cfg.max_batch)));
    return pool;
  }

  /** Starts taking frames from the enabled cameras. */
  start(): void {
    this.running = true;
    for (const [name, c] of Object.entries(this.cameras)) this.addCamera(name, c);
  }

  /**
   * A reloaded camera section: removed cameras go, changed ones start afresh (their counters go
   * on), new ones join. Retuned ones (still streaming) keep their queue and counters: one whose
   * detection went off leaves (its frames are still counted in), one whose detection came back
   * joins, the others take their new priority at once.
   */
  setCameras(
    cameras: Record<string, CameraConfig>,
    changes: Omit<CameraChanges, 'moved' | 'retuned'> & Partial<Pick<CameraChanges, 'retuned'>>,
  ): void {
    this.cameras = cameras;
    for (const name of [...changes.removed, ...changes.changed]) this.removeCamera(name);
    for (const name of [...changes.added, ...changes.changed]) this.addCamera(name, cameras[name]!);
    for (const name of changes.retuned ?? []) {
      const c = cameras[name]!;
      const lane = this.cams.get(name);
      if (!c.enabled || !c.detect) this.removeCamera(name);
      else if (!lane) this.addCamera(name, c);
      else if (lane.priority !== c.priority) {
        // Its pass so far was earned at the old weight: it starts again among the others.
        this.pools.get(lane.model)?.fair.forget(lane);
        lane.priority = c.priority;
      }
    }
    this.dispatch();
  }

  /**
   * Cameras of a reloaded section whose model changed (and only that) go on with `cameras[name].model`:
   * their queued frames, counters and the order of their answers are kept; their cached answers
   * (the old model's) are forgotten.
   */
  moveCameras(cameras: Record<string, CameraConfig>, names: readonly string[]): void {
    const section = namedRecord<CameraConfig>();
    for (const [name, c] of Object.entries(this.cameras))
      section[name] = names.includes(name) ? cameras[name]! : c;
    this.cameras = section;
    for (const name of names) {
      const lane = this.cams.get(name);
      if (!lane) continue;
      this.pools.get(lane.model)?.fair.forget(lane);
      lane.model = cameras[name]!.model;
      this.newEpoch(lane.camera);
    }
    this.dispatch();
  }

  /**
   * Models were swapped, added or removed (a reload): the next batches go to the detectors the
   * model set gives now. The cameras of a swapped model forget their cached answers; pictures
   * waiting for a model that is gone are refused.
   */
  modelsChanged(names: readonly string[]): void {
    for (const lane of this.cams.values()) if (names.includes(lane.model)) this.newEpoch(lane.camera);
    for (const lane of this.submitted.removeGone((model) => !!this.deps.models.detector(model)))
      while (lane.queue.length) this.dropped(lane.queue.shift()!, 'stopped', 'its model was removed');
    for (const [name, pool] of this.pools)
      if (!this.deps.models.detector(name) && pool.inFlight === 0) this.pools.delete(name);
    this.dispatch();
  }

  private newEpoch(cam: CameraState): void {
    cam.epoch++;
    this.deps.cache.forget(cam.name);
  }

  private addCamera(name: string, c: CameraConfig): void {
    if (!c.enabled || !c.detect) return;
    this.cams.set(name, cameraLane(name, c, this.cfg.queue_size, this.totals.of(name)));
  }

  private removeCamera(name: string): void {
    const lane = this.cams.get(name);
    if (!lane) return;
    lane.queue.clear();
    this.cams.delete(name);
    this.pools.get(lane.model)?.fair.forget(lane);
    this.deps.cache.forget(name);
  }

  /**
   * Takes a frame from a camera. Never blocks: a full queue drops its oldest frame. A frame of an
   * enabled camera whose detection is off is counted in (its fps_in), and goes no further.
   */
  push(frame: Frame): void {
    if (!this.running || !this.enabled(frame.camera)) return;
    this.totals.of(frame.camera).framesIn++;
    const lane = this.cams.get(frame.camera);
    if (!lane) return;
    const cam = lane.camera;
    const times = cam.times;
    times.firstIn ??= frame.ts;
    times.lastIn = Math.max(times.lastIn ?? frame.ts, frame.ts);
    times.waitingSince ??= frame.ts;
    const cached = this.answerFromCache(lane, frame);
    // A refresh queued for the cache is sent like any frame, also when nothing else is waiting.
    if (cached === 'refresh') this.dispatch();
    if (cached) return;
    cam.pending.add(frame.seq);
    const evicted = lane.queue.push({ kind: 'frame', frame, ts: frame.ts, lane });
    if (evicted) this.dropped(evicted, 'full');
    this.dispatch();
  }

  /**
   * Runs one picture (not from a camera, e.g. an image posted to the HTTP API) through the same
   * batches as the cameras of `model`, at `priority` (1..10) among them. Resolves with its
   * detections; rejects with UnknownModel, or FrameDropped when it gets no answer (queue full,
   * stale, batch failed, stopped).
   */
  submit(picture: Picture, priority: number, model = 'default'): Promise<Detection[]> {
    if (!this.running) return Promise.reject(new FrameDropped('stopped', 'the scheduler is stopped'));
    const detector = this.deps.models.detector(model);
    if (!detector) return Promise.reject(new UnknownModel(model));
    // Checked here, so a wrong picture fails alone rather than the batch it would share.
    const misfit = misfitOf(picture, detector.inputSize);
    if (misfit) return Promise.reject(misfit);
    const queue = this.submitted.lane(model, priority).queue;
    return new Promise((resolve, reject) => {
      const evicted = queue.push({ kind: 'picture', ts: this.deps.clock.now(), picture, resolve, reject });
      if (evicted) this.dropped(evicted, 'full');
      this.dispatch();
    });
  }

  /**
   * A job leaves without an answer: a camera's later answers need not wait for it; a submitted
   * picture's promise is rejected, saying why.
   */
  private dropped(job: Job, reason: Drop | 'stopped', why?: string): void {
    if (job.kind === 'frame') {
      // A refresh was answered already: the next frame that reuses the old result asks again.
      if (job.refresh) job.lane.camera.refreshing = false;
      else this.answer(job.lane.camera, job.frame.seq);
      return;
    }
    this.submitted.dropped(job, reason, why);
  }

  /** Hands on a camera frame's answer (or, without one, its end), in capture order. */
  private answer(cam: CameraState, seq: number, result?: Result): void {
    inCaptureOrder(cam, seq, result, (r) => {
      cam.times.lastAnswered = r.ts;
      cam.times.waitingSince = null;
      this.deps.onResult(r);
    });
  }

  /**
   * Answers a camera frame from the cache when it may reuse its camera's last result. When that
   * result is due for a fresh look, the frame is also queued to refresh it (unless a refresh is
   * queued or running already): the camera's frames are answered from the old result meanwhile.
   */
  private answerFromCache(lane: CameraLane, frame: Frame): boolean | 'refresh' {
    if (!this.deps.cache.enabled) return false;
    const hit = this.deps.cache.lookup(frame);
    if (!hit) return false;
    const cam = lane.camera;
    cam.totals.cached++;
    this.answer(cam, frame.seq, { ...frame, cached: true, detections: hit.detections });
    if (!hit.refresh || cam.refreshing) return true;
    cam.refreshing = true;
    const evicted = lane.queue.push({ kind: 'frame', frame, ts: frame.ts, lane, refresh: true });
    if (evicted) this.dropped(evicted, 'full');
    return 'refresh';
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
    return [...this.cams.values(), ...this.submitted.lanes()];
  }

  /** Sends batches while a model has a slot free and a batch due. */
  private dispatch(): void {
    if (!this.running) return;
    const byModel = new Map<string, Lane[]>();
    for (const lane of this.lanes()) {
      const lanes = byModel.get(lane.model);
      if (lanes) lanes.push(lane);
      else byModel.set(lane.model, [lane]);
    }
    for (const [model, lanes] of byModel) this.dispatchModel(model, lanes);
  }

  private dispatchModel(model: string, lanes: Lane[]): void {
    for (;;) {
      const detector = this.deps.models.detector(model);
      if (!this.running || !detector) return;
      const pool = this.pool(model);
      if (pool.inFlight >= (this.cfg.max_in_flight || detector.concurrency)) return;
      const now = this.deps.clock.now();
      const cutoff = now - this.cfg.max_frame_age_ms;
      let total = 0;
      let oldest = Infinity;
      for (const lane of lanes) {
        lane.queue.dropOlderThan(cutoff, (job: Job) => this.dropped(job, 'stale'));
        total += lane.queue.length;
        const head = lane.queue.peek();
        if (head && head.ts < oldest) oldest = head.ts;
      }
      if (total === 0) return;
      const idle = pool.inFlight === 0 && !this.cfg.fill_when_idle;
      if (!idle && total < this.cfg.max_batch && now - oldest < this.cfg.max_wait_ms) {
        this.armTimer(oldest + this.cfg.max_wait_ms);
        return;
      }
      this.sendBatch(now, detector, pool, lanes);
    }
  }

  private sendBatch(now: number, detector: BatchDetector, pool: ModelPool<Lane>, lanes: Lane[]): void {
    const batch = takeBatch(lanes, {
      now,
      size: detector.inputSize,
      maxBatch: this.cfg.max_batch,
      fair: pool.fair,
      fromCache: (lane, frame) => this.answerFromCache(lane, frame),
      dropped: (job, reason, why) => this.dropped(job, reason, why),
    });
    if (batch.length === 0) return;
    pool.sent(batch.length);
    const pictures = batch.map(({ job }) => pictureOf(job));
    detector.detect(pictures).then(
      (result) => {
        pool.settled(result.inferMs);
        batch.forEach(({ job, epoch }, i) => {
          const detections = result.detections[i] ?? [];
          if (job.kind === 'picture') return this.submitted.answered(job, detections);
          const { frame: f, lane } = job;
          // A camera removed (or restarted) while its frame was in the batch: nothing to report,
          // and nothing to remember (a restarted camera may show another scene).
          if (this.cams.get(f.camera) !== lane) return;
          // Its model changed meanwhile: the answer stands, but the next frames need the new model's.
          if (lane.camera.epoch === epoch) this.deps.cache.store(f, detections);
          lane.camera.totals.analysed++;
          if (job.refresh) {
            lane.camera.refreshing = false;
            return;
          }
          this.answer(lane.camera, f.seq, { ...f, cached: false, detections });
        });
        this.settle();
      },
      (err: unknown) => {
        pool.settled(undefined);
        const message = errorMessage(err);
        const cameras = camerasOf(batch);
        this.deps.log[reportedError(err) ? 'debug' : 'warn'](
          { cameras: [...cameras].map((c) => c.name), frames: batch.length, err: message },
          'batch failed; its frames are dropped',
        );
        for (const camera of cameras) {
          // A failing detector is not one that cannot keep up: lagging counts from the next frame.
          camera.times.waitingSince = null;
          this.deps.onDetectorError?.(camera.name, message);
        }
        for (const { job } of batch) {
          if (job.kind === 'frame') job.lane.camera.totals.errors++;
          this.dropped(job, 'error', message);
        }
        this.settle();
      },
    );
  }

  private settle(): void {
    if (this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    this.dispatch();
  }

  /** Stops taking frames, drops what is queued, and waits for the batches in flight. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    for (const lane of this.lanes()) while (lane.queue.length) this.dropped(lane.queue.shift()!, 'stopped');
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.push(r));
  }

  /** How far behind a camera's answers are (CameraStats' lagMs and lagging); undefined for no camera. */
  lag(camera: string): Pick<CameraStats, 'lagMs' | 'lagging'> | undefined {
    const lane = this.cams.get(camera);
    if (!lane) return undefined;
    const { lagMs, lagging } = cameraStats(lane, this.deps.clock.now(), this.cfg.lagging_after_s * 1000);
    return { lagMs, lagging };
  }

  /** Whether `camera` is configured and enabled (it streams, its detection on or off). */
  private enabled(camera: string): boolean {
    return Object.hasOwn(this.cameras, camera) && this.cameras[camera]!.enabled;
  }

  /**
   * The numbers of each enabled camera: those with a lane, then those whose detection is off
   * (their totals, nothing waiting).
   */
  stats(): SchedulerStats {
    const cameras = namedRecord<CameraStats>();
    const now = this.deps.clock.now();
    for (const [name, lane] of this.cams)
      cameras[name] = cameraStats(lane, now, this.cfg.lagging_after_s * 1000);
    for (const [name, c] of Object.entries(this.cameras))
      if (c.enabled && !this.cams.has(name)) cameras[name] = totalStats(c.model, this.totals.of(name));
    return {
      cameras,
      submitted: this.submitted.stats(),
      ...poolStats(this.pools, this.cfg.max_batch),
      inFlight: this.inFlight,
      cacheHitRatio: cacheHitRatio(cameras),
    };
  }
}
