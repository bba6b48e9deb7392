import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import type { Detection, Picture } from '../core/frame.js';
import type { Config, ModelConfig, ProviderName } from '../config/index.js';
import type { BatchDetector, BatchDetections } from '../scheduler/index.js';
import type { RawDetection } from './decode.js';
import type { ModelPlan } from './model.js';
import { InputPool } from './preprocess.js';
import type { EngineEvent, EngineSettings, FromWorker, RunRequest, WorkerInit } from './protocol.js';
import { selectWebgpuVendor, type Skipped } from './providers.js';
import { toDetections } from './results.js';
import { describeSessions, sessionSettings, workerInits, type SessionOverrides } from './sessions.js';

/** The detector's slices of the configuration: `detector:`, and the model's own keys over it. */
export interface DetectorConfig {
  detector: Config['detector'];
  model: Pick<ModelConfig, 'conf' | 'iou' | 'max_detections'> & SessionOverrides;
  /** Where TensorRT engines are kept (the state directory) and the scheduler's largest batch. */
  engines?: EngineSettings | null;
}

/** What the detector needs of a worker thread (a real one, or a fake in tests). */
export type SessionWorker = Pick<Worker, 'postMessage' | 'terminate' | 'on'>;

const workerThread = (init: WorkerInit): SessionWorker =>
  new Worker(new URL('./worker.js', import.meta.url), { workerData: init });

/** A batch as a worker answers it: detections in model-input pixels. */
interface RawBatch {
  /** The input buffer, handed back for reuse. */
  input: Uint8Array;
  /** One list per batch item, in model-input pixels. */
  detections: RawDetection[][];
  inferMs: number;
}

/** A local model's numbers: its sessions. */
export interface DetectorStats {
  kind: 'local';
  provider: Config['detector']['providers'][number] | null;
  workers: number;
  readyWorkers: number;
  /** Sessions recreated after a missed deadline or a crash. */
  sessionsRecreated: number;
  deadlinesMissed: number;
  buffersAllocated: number;
}

interface Pending {
  resolve: (r: RawBatch) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: SessionWorker;
  /** What its session was started with (its device): a replacement starts the same. */
  init: WorkerInit;
  busy: boolean;
  pending: Map<number, Pending>;
  deadline: NodeJS.Timeout | undefined;
  /** Session loaded and warmed up. */
  ready: boolean;
  /** Past its deadline: no longer used, terminated once its run returns. */
  abandoned: boolean;
  /** Resolves when the worker has no run in progress. */
  idle: Promise<void>;
  markIdle: () => void;
}

export class DetectorError extends Error {}

/** A batch missed its deadline; its worker (and session) is being recreated. */
export class DeadlineError extends DetectorError {}

/**
 * A pool of worker threads, each owning one ONNX Runtime session. `detect` takes letterboxed
 * pictures, copies their bytes into a pooled batch buffer, hands it to an idle worker
 * (transferring, not copying, it), which converts them to the model's floats and runs them, and
 * resolves with each picture's detections in its source pixels. A batch that
 * misses `inference_timeout_ms` is abandoned and its session replaced.
 */
export class Detector implements BatchDetector {
  private slots: Slot[] = [];
  private waiting: { req: Omit<RunRequest, 'type' | 'id'>; pending: Pending; timer: NodeJS.Timeout }[] = [];
  private nextId = 1;
  private stopped = false;
  private respawnTimer: NodeJS.Timeout | undefined;
  private abandoned = new Set<Slot>();
  private recreated = 0;
  private deadlines = 0;
  private readonly pool: InputPool;
  private readonly inits: WorkerInit[];
  provider: Config['detector']['providers'][number] | undefined;
  /** Once started: the provider, why preferred ones were skipped, and the line that said so. */
  choice: { provider: ProviderName; skipped: Skipped[]; message: string } | undefined;

  constructor(
    readonly plan: ModelPlan,
    private readonly cfg: DetectorConfig,
    private readonly log: Logger,
    cores = availableParallelism(),
    private readonly createWorker: (init: WorkerInit) => SessionWorker = workerThread,
  ) {
    const settings = sessionSettings(cfg.detector, cfg.model);
    const engines = settings.engine_cache ? (cfg.engines ?? null) : null;
    this.inits = workerInits(plan, settings, cfg.model, cores, engines);
    this.pool = new InputPool(plan.inputSize);
  }

  get inputSize(): number {
    return this.plan.inputSize;
  }

  get labels(): readonly string[] {
    return this.plan.labels;
  }

  /** Batches that can run at once: one per session. */
  get concurrency(): number {
    return this.inits.length;
  }

  /** Starts every worker, loads and warms up its session. Rejects naming the model on failure. */
  async start(): Promise<void> {
    const t0 = performance.now();
    if (this.inits[0]?.providers.includes('webgpu')) {
      const held = selectWebgpuVendor(this.cfg.detector.webgpu.vendor);
      if (held) this.log.warn(held);
    }
    // Sessions that share a device share its TensorRT engine: the first builds it, the others load it.
    const first = this.inits.filter(
      (init, i) => this.inits.findIndex((o) => o.deviceId === init.deviceId) === i,
    );
    const rest = this.inits.filter((init) => !first.includes(init));
    const shared = this.inits[0]?.providers.includes('tensorrt') && this.inits[0].engines !== null;
    const results = shared
      ? [
          ...(await Promise.allSettled(first.map((init) => this.spawn(init)))),
          ...(await Promise.allSettled(rest.map((init) => this.spawn(init)))),
        ]
      : await Promise.allSettled(this.inits.map((init) => this.spawn(init)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await this.stop();
      const reason = errorMessage(failed.reason);
      throw new DetectorError(`${this.plan.path}: ${reason}`);
    }
    const readies = results.map(
      (r) => (r as PromiseFulfilledResult<Extract<FromWorker, { type: 'ready' }>>).value,
    );
    const ready = readies[0]!;
    this.provider = ready.provider;
    // One line: where the sessions run, and why each preferred provider was skipped (warn when any was).
    const where = describeSessions(
      readies.map((r, i) => ({ ...r, deviceId: this.inits[i]!.deviceId })),
      this.cfg.detector.webgpu.vendor,
    );
    this.choice = { provider: ready.provider, skipped: ready.skipped, message: where.message };
    this.log[where.warn ? 'warn' : 'info'](
      {
        provider: ready.provider,
        precision: ready.precision,
        skipped: ready.skipped,
        workers: this.inits.length,
      },
      where.message,
    );
    if (this.plan.staticBatch !== null) {
      this.log.info(
        `model has a static batch of ${this.plan.staticBatch}: batches run ${this.plan.staticBatch === 1 ? 'item by item' : `in chunks of ${this.plan.staticBatch}`}`,
      );
    }
    this.log.info(
      {
        file: this.plan.path,
        input: this.plan.inputSize,
        labels: this.plan.labels.length,
        labelsFrom: this.plan.labelsFrom,
        layout: ready.layout.kind,
        quantization: this.plan.quantization,
        startMs: Math.round(performance.now() - t0),
        warmupMs: Math.round(ready.warmupMs),
      },
      'detector ready',
    );
  }

  private spawn(init: WorkerInit): Promise<Extract<FromWorker, { type: 'ready' }>> {
    const worker = this.createWorker(init);
    const slot: Slot = {
      worker,
      init,
      busy: false,
      pending: new Map(),
      deadline: undefined,
      ready: false,
      abandoned: false,
      idle: Promise.resolve(),
      markIdle: () => undefined,
    };
    this.slots.push(slot);
    return new Promise((resolve, reject) => {
      let started = false;
      worker.on('message', (msg: FromWorker) => {
        switch (msg.type) {
          case 'ready':
            started = true;
            slot.ready = true;
            resolve(msg);
            this.pump();
            break;
          case 'engine':
            this.logEngine(msg.event, init.deviceId);
            break;
          case 'init-error':
            reject(new Error(msg.message));
            this.slots = this.slots.filter((s) => s !== slot);
            void worker.terminate();
            break;
          case 'result':
          case 'run-error': {
            slot.busy = false;
            slot.markIdle();
            clearTimeout(slot.deadline);
            if (slot.abandoned) {
              // Terminating a worker inside session.run aborts the whole process; now it is idle.
              this.abandoned.delete(slot);
              void worker.terminate();
              return;
            }
            const p = slot.pending.get(msg.id);
            slot.pending.delete(msg.id);
            if (p && msg.type === 'result')
              p.resolve({ input: msg.input, detections: msg.detections, inferMs: msg.inferMs });
            else if (p && msg.type === 'run-error')
              p.reject(
                Object.assign(new DetectorError(`inference failed: ${msg.message}`), { input: msg.input }),
              );
            this.pump();
            break;
          }
        }
      });
      worker.on('error', (err: Error) => {
        if (!started) reject(err);
        this.failSlot(slot, err);
      });
      worker.on('exit', (code: number) => {
        if (!started) reject(new Error(`worker exited with code ${code} before the model was ready`));
        const wasLive = this.slots.includes(slot);
        this.failSlot(slot, new Error(`detector worker exited (code ${code})`));
        if (started && wasLive && !this.stopped) {
          this.log.error({ code }, 'detector worker died; recreating its session');
          this.replaceWorker(slot.init);
        }
      });
    });
  }

  /** The lines that say a TensorRT engine is being built (minutes), was built, or was loaded. */
  private logEngine(e: EngineEvent, device: number): void {
    const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
    switch (e.phase) {
      case 'building':
        this.log.warn(
          { device, dir: e.dir, reason: e.reason },
          `building the TensorRT engine for device ${device} (${e.reason}); this can take minutes`,
        );
        break;
      case 'built':
        this.log[e.saved ? 'info' : 'warn'](
          { device, dir: e.dir, buildMs: Math.round(e.ms), saved: e.saved },
          e.saved
            ? `TensorRT engine built in ${s(e.ms)} and kept for the next start`
            : `TensorRT engine built in ${s(e.ms)}, but ONNX Runtime wrote no engine file: the next start builds it again`,
        );
        break;
      case 'loaded':
        this.log.info(
          { device, dir: e.dir, loadMs: Math.round(e.ms) },
          `TensorRT engine loaded from the cache in ${s(e.ms)}`,
        );
        break;
    }
  }

  private failSlot(slot: Slot, err: Error): void {
    clearTimeout(slot.deadline);
    for (const p of slot.pending.values())
      p.reject(err instanceof DetectorError ? err : new DetectorError(err.message));
    slot.pending.clear();
    this.slots = this.slots.filter((s) => s !== slot);
  }

  /** Starts a new worker in place of a lost one, retrying every few seconds until it loads. */
  private replaceWorker(init: WorkerInit): void {
    if (this.stopped) return;
    this.recreated++;
    this.spawn(init).then(
      () => this.log.info({ workers: this.slots.length }, 'detector session recreated'),
      (err: unknown) => {
        this.log.error(
          { err: errorMessage(err) },
          'could not recreate the detector session; retrying in 5 s',
        );
        this.respawnTimer = setTimeout(() => this.replaceWorker(init), 5000);
      },
    );
  }

  /**
   * Abandons a batch that ran past its deadline: a new session takes the worker's place at
   * once. The old worker cannot be terminated mid-run (onnxruntime-node aborts the process), so
   * it is terminated when its run returns.
   */
  private expire(slot: Slot, timeoutMs: number): void {
    if (!this.slots.includes(slot)) return;
    this.log.error(
      { timeoutMs },
      `inference missed its ${timeoutMs} ms deadline; recreating the detector session`,
    );
    this.deadlines++;
    this.failSlot(slot, new DeadlineError(`inference missed its ${timeoutMs} ms deadline`));
    slot.abandoned = true;
    this.abandoned.add(slot);
    this.replaceWorker(slot.init);
    this.pump();
  }

  /** Sessions loaded and able to take a batch (busy or not). */
  private get readyWorkers(): number {
    return this.slots.filter((s) => s.ready).length;
  }

  stats(): DetectorStats {
    return {
      kind: 'local',
      provider: this.provider ?? null,
      workers: this.slots.length,
      readyWorkers: this.readyWorkers,
      sessionsRecreated: this.recreated,
      deadlinesMissed: this.deadlines,
      buffersAllocated: this.pool.allocated,
    };
  }

  /**
   * Runs the model on letterboxed pictures (one batch) and resolves with each picture's
   * detections, mapped back to its source pixels. Rejects with DetectorError (DeadlineError past
   * `inference_timeout_ms`).
   */
  async detect(pictures: readonly Picture[]): Promise<BatchDetections> {
    if (this.stopped) throw new DetectorError('detector is stopped');
    if (pictures.length === 0) return { detections: [], inferMs: 0 };
    const input = this.pool.pack(pictures);
    let raw: RawBatch;
    try {
      raw = await this.run(input, pictures.length);
    } catch (err) {
      // The buffer comes back with a failed run; one lost with its worker is allocated anew.
      const back = (err as { input?: Uint8Array }).input;
      if (back) this.pool.release(back);
      throw err;
    }
    this.pool.release(raw.input);
    const detections: Detection[][] = pictures.map((p, i) =>
      toDetections(raw.detections[i] ?? [], p.geometry, this.plan.labels),
    );
    return { detections, inferMs: raw.inferMs };
  }

  /**
   * `input` is transferred to a worker: it is not touched until the result hands it back. A batch
   * no session takes within `inference_timeout_ms` (none is ready: they are being recreated, or
   * cannot load) fails rather than wait without end.
   */
  private run(input: Uint8Array, count: number): Promise<RawBatch> {
    return new Promise((resolve, reject) => {
      const timeoutMs = this.cfg.detector.inference_timeout_ms;
      const entry = {
        req: { input, count },
        pending: { resolve, reject },
        timer: setTimeout(() => {
          this.waiting = this.waiting.filter((w) => w !== entry);
          const message = `no detector session was free within ${timeoutMs} ms`;
          reject(Object.assign(new DetectorError(message), { input }));
        }, timeoutMs),
      };
      this.waiting.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy || !slot.ready) continue;
      const next = this.waiting.shift();
      if (!next) return;
      clearTimeout(next.timer);
      const id = this.nextId++;
      slot.busy = true;
      slot.idle = new Promise((r) => (slot.markIdle = r));
      slot.pending.set(id, next.pending);
      const msg: RunRequest = { type: 'run', id, ...next.req };
      slot.worker.postMessage(msg, [msg.input.buffer as ArrayBuffer]);
      const timeoutMs = this.cfg.detector.inference_timeout_ms;
      slot.deadline = setTimeout(() => this.expire(slot, timeoutMs), timeoutMs);
    }
  }

  /**
   * Stops every worker. A worker in the middle of a run is left to finish it (for at most
   * `graceMs`), since terminating one inside session.run aborts the process.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    clearTimeout(this.respawnTimer);
    for (const w of this.waiting) {
      clearTimeout(w.timer);
      w.pending.reject(new DetectorError('detector stopped'));
    }
    this.waiting = [];
    const slots = [...this.slots, ...this.abandoned];
    this.slots = [];
    this.abandoned.clear();
    for (const s of slots) this.failSlot(s, new DetectorError('detector stopped'));
    await Promise.all(
      slots.map(async (s) => {
        if (s.busy) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([s.idle, new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
          clearTimeout(timer);
        }
        await s.worker.terminate();
      }),
    );
  }
}
