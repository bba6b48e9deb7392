import { readFile } from 'node:fs/promises';
import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import type { Timer } from '../core/clock.js';
import { fitsModel, type Picture } from '../core/frame.js';
import { checkLabels, DetectorError, readLabels, toDetections } from '../detector/index.js';
import { scrub } from '../redact.js';
import type { BatchDetections, BatchDetector, ModelAvailability } from '../scheduler/index.js';
import { KServeHttp, RemoteRequestError } from './client.js';
import { PlanError, planRemote, type RemotePlan } from './plan.js';
import { checkReady, probeServer } from './probe.js';
import { ARGUS_RGB24 } from './protocol.js';
import type { RemoteDetectorConfig, RemoteDetectorDeps, RemoteState, RemoteStats } from './remote-options.js';
import { RemoteBatchError, RemoteRequests, RETRY_BACKOFF, sleep } from './remote-requests.js';

/** The remote model is unavailable (down, or not reached yet): its batches fail at once. */
export class RemoteUnavailableError extends RemoteBatchError {}

/** Probes of an unavailable server. */
export const PROBE_BACKOFF: BackoffPolicy = { initialMs: 1000, maxMs: 30_000, factor: 2 };
/** Batches failed in a row (for any reason the server gave) that make the model unavailable. */
export const FAILED_BATCHES_DOWN = 3;
/** While up, the server's and model's readiness are asked this often when no batch was answered. */
export const HEALTH_INTERVAL_MS = 2000;

/**
 * A model served by a KServe v2 / Open Inference Protocol server (Triton, KServe, OpenVINO Model
 * Server, another Argus) in place of a local ONNX session: the scheduler's BatchDetector. Batches
 * go out as binary tensors over keep-alive connections, at most `in_flight` at once, split to
 * what the model's batch dimension takes; answers are decoded as the local detector decodes its
 * own. A server that cannot be reached or fails every batch becomes a state (one log line,
 * `onAvailability`, batches failing at once with RemoteUnavailableError) and is probed, with
 * backoff, until it is ready and answers a trial inference. While up and idle (its cameras
 * answered from the cache), its readiness is asked every HEALTH_INTERVAL_MS. The rule is
 * docs/operations.md's (Fleets, When a remote model is unavailable). The requests themselves
 * (slots, retries, answers read and counted) are RemoteRequests'.
 */
export class RemoteDetector implements BatchDetector {
  private http: KServeHttp | undefined;
  private plan: RemotePlan | undefined;
  private fileLabels: string[] | undefined;
  private state: RemoteState = 'starting';
  private since = 0;
  private lastError: string | null = null;
  private probeTimer: Timer | null = null;
  private probeAttempt = 0;
  private healthTimer: Timer | null = null;
  /** Changes at every transition: a check begun before one does not act after it. */
  private transitions = 0;
  /** Batches failed in a row while up. */
  private failedInRow = 0;
  /** When an inference was last answered (clock ms). */
  private lastAnswerAt = 0;
  private readonly requests: RemoteRequests;

  constructor(
    readonly cfg: RemoteDetectorConfig,
    private readonly deps: RemoteDetectorDeps,
  ) {
    this.requests = new RemoteRequests(cfg, deps, {
      state: () => this.state,
      markDown: (message) => this.markDown(message),
      answered: () => {
        this.lastAnswerAt = this.deps.clock.now();
      },
      hide: (text) => this.hide(text),
    });
  }

  get concurrency(): number {
    return this.cfg.remote.in_flight;
  }

  get inputSize(): number {
    const size = this.plan?.inputSize ?? this.cfg.input_size;
    if (size === undefined) throw new Error(`remote model ${this.cfg.name}: input size asked before start`);
    return size;
  }

  get labels(): readonly string[] {
    return this.plan?.labels ?? this.fileLabels ?? [];
  }

  /** Whether batches are being sent. */
  get available(): boolean {
    return this.state === 'up';
  }

  /** Scrubs the header values and the config's secrets (a list that grows on reload). */
  private hide(text: string): string {
    return scrub(text, [...(this.deps.secrets ?? []), ...Object.values(this.cfg.remote.headers)]);
  }

  /** Why batches fail at once now (the server away, or not reached yet), or undefined when up. */
  unavailable(): string | undefined {
    return this.state === 'up' ? undefined : (this.lastError ?? `model ${this.cfg.name} is ${this.state}`);
  }

  /** Whether batches are sent, why not, and since when: what `onAvailability` tells of. */
  availability(): ModelAvailability {
    return {
      model: this.cfg.name,
      up: this.state === 'up',
      message: this.unavailable() ?? null,
      since: this.since,
    };
  }

  /**
   * Reads the CA and labels files and asks the server about the model. A server that cannot be
   * reached (or says the model is not ready) does not fail the start when the input size is known
   * (from `input_size`): the model starts unavailable and is probed until it answers. A model the
   * server describes but Argus cannot use fails the start, naming why.
   */
  async start(): Promise<void> {
    const { remote, name } = this.cfg;
    let ca: Buffer | undefined;
    if (remote.ca) {
      try {
        ca = await readFile(remote.ca);
      } catch (err) {
        throw new DetectorError(
          `model ${name}: cannot read the CA file ${remote.ca} (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
        );
      }
    }
    if (this.cfg.labels) {
      this.fileLabels = await readLabels(this.cfg.labels);
      checkLabels(this.fileLabels, this.cfg.labels, 'the labels file');
    }
    this.http = new KServeHttp(
      {
        url: remote.url,
        headers: remote.headers,
        ca,
        maxSockets: remote.in_flight,
        timeoutMs: remote.timeout_ms,
      },
      this.deps.clock,
    );
    this.since = this.deps.clock.now();
    try {
      this.usePlan(await this.fetchPlan());
    } catch (err) {
      const message = this.describe(err);
      if (err instanceof PlanError || this.cfg.input_size === undefined) {
        this.http.close();
        const hint = err instanceof PlanError ? '' : '; set input_size to start without the server';
        throw new DetectorError(`model ${name}: ${message}${hint}`);
      }
      this.markDown(message);
    }
  }

  private describe(err: unknown): string {
    const where = this.http?.where ?? this.cfg.remote.url;
    const text =
      err instanceof PlanError
        ? `${where} model '${this.cfg.remote.model}': ${err.message}`
        : err instanceof Error
          ? err.message
          : String(err);
    return this.hide(text);
  }

  private async fetchPlan(): Promise<RemotePlan> {
    const facts = await probeServer(this.http!, this.cfg.remote.model, this.cfg.remote.version);
    if (this.deps.floatInput) facts.extensions = facts.extensions.filter((e) => e !== ARGUS_RGB24);
    const plan = planRemote(facts, this.fileLabels);
    try {
      if (plan.labelsFrom === 'server') checkLabels(plan.labels, 'its class names', 'a labels file (labels)');
    } catch (err) {
      throw new PlanError((err as Error).message);
    }
    if (this.cfg.input_size !== undefined && plan.inputSize !== this.cfg.input_size)
      throw new PlanError(
        `the model takes ${plan.inputSize}×${plan.inputSize} pictures; input_size says ${this.cfg.input_size}`,
      );
    return plan;
  }

  private usePlan(plan: RemotePlan): void {
    const first = this.plan === undefined;
    this.plan = plan;
    this.state = 'up';
    this.transitions++;
    this.lastError = null;
    this.since = this.lastAnswerAt = this.deps.clock.now();
    this.failedInRow = 0;
    this.probeAttempt = 0;
    this.scheduleHealth();
    const batch =
      'fixed' in plan.batch ? `fixed ${plan.batch.fixed}` : `dynamic, at most ${plan.batch.max ?? 'any'}`;
    if (first)
      this.deps.log.info(
        {
          server: this.http!.where,
          remoteModel: this.cfg.remote.model,
          input: plan.input,
          inputSize: plan.inputSize,
          batch,
          output: plan.output.kind,
          labels: plan.labels.length,
          labelsFrom: plan.labelsFrom,
        },
        `remote model ${this.cfg.name} ready`,
      );
  }

  /** Up → down: logged once, reported once, probed until it is back. */
  private markDown(message: string): void {
    if (this.state === 'down' || this.state === 'stopped') return;
    this.lastError = message;
    this.state = 'down';
    this.transitions++;
    this.since = this.deps.clock.now();
    if (this.healthTimer) this.deps.clock.clearTimeout(this.healthTimer);
    this.healthTimer = null;
    this.deps.log.warn(
      { server: this.http?.where, err: message },
      `remote model ${this.cfg.name} unavailable: ${message}; retrying`,
    );
    this.deps.onAvailability?.({ model: this.cfg.name, up: false, message });
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    const delay = backoffDelay(this.probeAttempt++, PROBE_BACKOFF, this.deps.random);
    this.probeTimer = this.deps.clock.setTimeout(() => {
      this.probeTimer = null;
      this.probe().catch((err: unknown) =>
        this.deps.log.error({ err: String(err) }, 'remote model probe failed'),
      );
    }, delay);
  }

  private scheduleHealth(): void {
    if (this.healthTimer) this.deps.clock.clearTimeout(this.healthTimer);
    this.healthTimer = this.deps.clock.setTimeout(() => {
      this.healthTimer = null;
      this.checkHealth().catch((err: unknown) =>
        this.deps.log.error({ err: String(err) }, 'remote model health check failed'),
      );
    }, HEALTH_INTERVAL_MS);
  }

  /**
   * While up: unless a request is out (its answer tells) or one was answered within the interval,
   * asks whether the server and the model are ready; a connection error or 502/503/504 is retried
   * as a request's is, and any other failure (not ready, no answer in time) makes it unavailable.
   */
  private async checkHealth(): Promise<void> {
    const at = this.transitions;
    const idle =
      this.requests.slots.busy === 0 && this.deps.clock.now() - this.lastAnswerAt >= HEALTH_INTERVAL_MS;
    for (let attempt = 0; idle; attempt++) {
      try {
        await checkReady(this.http!, this.cfg.remote.model, this.cfg.remote.version);
        break;
      } catch (err) {
        if (this.state !== 'up' || this.transitions !== at) return;
        const retryable =
          err instanceof RemoteRequestError && (err.kind === 'connect' || err.kind === 'unavailable');
        if (!retryable || attempt >= this.cfg.remote.retries) return this.markDown(this.describe(err));
        await sleep(this.deps.clock, backoffDelay(attempt, RETRY_BACKOFF, this.deps.random));
      }
    }
    if (this.state === 'up' && this.transitions === at) this.scheduleHealth();
  }

  /** Down: back once the server says it is ready, describes the model, and answers a trial inference. */
  private async probe(): Promise<void> {
    let plan: RemotePlan;
    try {
      plan = await this.fetchPlan();
      if (this.plan && plan.inputSize !== this.plan.inputSize)
        throw new PlanError(
          `the model now takes ${plan.inputSize}×${plan.inputSize} pictures, not ${this.plan.inputSize}×${this.plan.inputSize}: restart Argus`,
        );
      await this.requests.trial(this.http!, plan);
    } catch (err) {
      if (this.state !== 'down') return;
      this.lastError = this.describe(err);
      this.deps.log.debug({ err: this.lastError }, 'remote model still unavailable');
      return this.scheduleProbe();
    }
    if (this.state !== 'down') return;
    const downMs = this.deps.clock.now() - this.since;
    this.usePlan(plan);
    this.deps.log.info({ server: this.http!.where, downMs }, `remote model ${this.cfg.name} available again`);
    this.deps.onAvailability?.({ model: this.cfg.name, up: true, message: null });
  }

  /**
   * Runs one batch on the server: split to what the model's batch dimension takes, each part one
   * request (in flight at once up to `in_flight`). Rejects with RemoteUnavailableError at once
   * while the server is unavailable, RemoteBatchError when a request fails; FAILED_BATCHES_DOWN
   * such batches in a row make it unavailable.
   */
  async detect(pictures: readonly Picture[]): Promise<BatchDetections> {
    if (pictures.length === 0) return { detections: [], inferMs: 0 };
    const plan = this.plan;
    if (this.state !== 'up' || !plan)
      throw new RemoteUnavailableError(
        `model ${this.cfg.name} is unavailable: ${this.lastError ?? this.state}`,
      );
    for (const p of pictures)
      if (!fitsModel(p, plan.inputSize))
        throw new RangeError(
          `picture is ${p.geometry.dstW}x${p.geometry.dstH}, the model takes ${plan.inputSize}x${plan.inputSize}`,
        );
    const step = 'fixed' in plan.batch ? plan.batch.fixed : (plan.batch.max ?? pictures.length);
    const parts: Picture[][] = [];
    for (let i = 0; i < pictures.length; i += step) parts.push(pictures.slice(i, i + step));
    const t0 = performance.now();
    const at = this.transitions;
    let answers;
    try {
      answers = await Promise.all(parts.map((part) => this.requests.infer(this.http!, plan, part)));
    } catch (err) {
      if (err instanceof RemoteBatchError && this.state === 'up' && this.transitions === at)
        if (++this.failedInRow >= FAILED_BATCHES_DOWN)
          this.markDown(`${this.failedInRow} batches in a row failed, the last: ${err.message}`);
      throw err;
    }
    if (this.transitions === at) this.failedInRow = 0;
    const detections = answers.flat().map((raw, i) => toDetections(raw, pictures[i]!.geometry, plan.labels));
    return { detections, inferMs: performance.now() - t0 };
  }

  /** Its client's numbers. */
  stats(): RemoteStats {
    return {
      kind: 'remote',
      model: this.cfg.name,
      server: this.http?.where ?? '',
      remoteModel: this.cfg.remote.model,
      state: this.state,
      since: this.since,
      lastError: this.lastError,
      input: this.plan?.input ?? null,
      output: this.plan?.output.kind ?? null,
      requests: this.requests.counts.requests,
      retries: this.requests.counts.retries,
      failures: { ...this.requests.counts.failures },
      frames: this.requests.counts.frames,
      bytesSent: this.requests.counts.bytesSent,
      bytesReceived: this.requests.counts.bytesReceived,
      inFlight: this.requests.slots.busy,
      connections: this.cfg.remote.in_flight,
    };
  }

  /** Stops probing and closes the connections; requests still waiting for a slot fail. */
  stop(): Promise<void> {
    this.state = 'stopped';
    for (const timer of [this.probeTimer, this.healthTimer]) if (timer) this.deps.clock.clearTimeout(timer);
    this.probeTimer = this.healthTimer = null;
    this.requests.slots.close(new DetectorError('remote model stopped'));
    this.http?.close();
    return Promise.resolve();
  }
}
