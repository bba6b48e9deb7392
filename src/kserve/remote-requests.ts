import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import type { Clock } from '../core/clock.js';
import type { Picture } from '../core/frame.js';
import { letterbox } from '../core/geometry.js';
import { DetectorError, type RawDetection } from '../detector/index.js';
import { KServeHttp, RemoteRequestError, type FailureKind } from './client.js';
import { decodeInferResponse, encodeInferRequest, type EncodedBody, type RequestedOutput } from './codec.js';
import { packPictures, unpackDetections } from './pack.js';
import { answerLimit, type RemotePlan } from './plan.js';
import { modelPath } from './probe.js';
import { HEADER_LENGTH } from './protocol.js';
import type { RemoteDetectorConfig, RemoteDetectorDeps, RemoteState } from './remote-options.js';
import { Slots } from './slots.js';
import { ProtocolError } from './tensor.js';

/**
 * A batch the remote model failed. Its model accounts for it (its metrics count it; the rule
 * that makes it unavailable logs one line when it goes and one when it is back), so it is
 * `reported`: the scheduler logs each such batch at debug only.
 */
export class RemoteBatchError extends DetectorError {
  readonly reported = true;
}

/** Retries of one request: quick, since a frame's worth waits on them. */
export const RETRY_BACKOFF: BackoffPolicy = { initialMs: 100, maxMs: 2000, factor: 2 };

/** Waits `ms` on the clock. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise<void>((r) => clock.setTimeout(r, ms));
}

/** What the requests need of the remote model they serve. */
export interface RequestsOwner {
  state(): RemoteState;
  /** The server says it is away (or the model gone). */
  markDown(message: string): void;
  /** An inference was answered. */
  answered(): void;
  /** Scrubs the header values and the config's secrets. */
  hide(text: string): string;
}

/**
 * A remote model's inference requests: each one's body (its pictures packed as the plan says),
 * sent on one of `in_flight` slots and retried on connection errors and 502/503/504, its answer
 * decoded to the pictures' detections and checked against the labels; counted for its stats.
 */
export class RemoteRequests {
  readonly slots: Slots;
  readonly counts = {
    requests: 0,
    retries: 0,
    frames: 0,
    bytesSent: 0,
    bytesReceived: 0,
    failures: { connect: 0, timeout: 0, unavailable: 0, rejected: 0, protocol: 0 } as Record<
      FailureKind,
      number
    >,
  };

  constructor(
    private readonly cfg: RemoteDetectorConfig,
    private readonly deps: RemoteDetectorDeps,
    private readonly owner: RequestsOwner,
  ) {
    this.slots = new Slots(cfg.remote.in_flight);
  }

  private get inferPath(): string {
    return `${modelPath(this.cfg.remote.model, this.cfg.remote.version)}/infer`;
  }

  /** The request body for `part`, in `slots` batch items (a fixed batch: zeros after the pictures). */
  private encode(plan: RemotePlan, part: readonly Picture[], slots: number): EncodedBody {
    const input = packPictures(plan.inputName, part, plan.input, plan.inputSize, slots);
    const names =
      plan.output.kind === 'yolo' ? [plan.output.name] : [plan.output.name, plan.output.countName];
    const outputs: RequestedOutput[] = names.map((name) => ({ name, binary: true }));
    return encodeInferRequest({ inputs: [input], outputs });
  }

  /** One request for `part`, retried on connection errors and 502/503/504 with backoff and jitter. */
  async infer(http: KServeHttp, plan: RemotePlan, part: Picture[]): Promise<RawDetection[][]> {
    const slots = 'fixed' in plan.batch ? plan.batch.fixed : part.length;
    const body = this.encode(plan, part, slots);
    for (let attempt = 0; ; attempt++) {
      try {
        const raw = await this.post(http, plan, body, slots, part.length, attempt > 0);
        this.counts.frames += part.length;
        return raw;
      } catch (err) {
        if (!(err instanceof RemoteRequestError)) throw err;
        const message = this.owner.hide(err.message);
        const retryable = err.kind === 'connect' || err.kind === 'unavailable';
        if (retryable && attempt < this.cfg.remote.retries && this.owner.state() === 'up') {
          await sleep(this.deps.clock, backoffDelay(attempt, RETRY_BACKOFF, this.deps.random));
          continue;
        }
        // The server says it is away (or the model gone): unavailable at once.
        if (retryable || err.status === 404) this.owner.markDown(message);
        throw new RemoteBatchError(message);
      }
    }
  }

  /**
   * Sends one inference request (on a slot) and reads its answer, bounded by what `slots` items
   * can need: the first `count` items' detections, every class among the model's labels. Rejects
   * with RemoteRequestError (counted by its kind), an answer that breaks the protocol as `protocol`.
   */
  private async post(
    http: KServeHttp,
    plan: RemotePlan,
    body: EncodedBody,
    slots: number,
    count: number,
    retry: boolean,
  ): Promise<RawDetection[][]> {
    const what = `POST ${http.where}${this.inferPath}`;
    await this.slots.take();
    try {
      let answer;
      try {
        if (this.owner.state() === 'stopped') throw new DetectorError('remote model stopped');
        this.counts.requests++;
        if (retry) this.counts.retries++;
        this.counts.bytesSent += body.length;
        const limit = answerLimit(plan, slots);
        answer = KServeHttp.check(await http.request('POST', this.inferPath, body, limit), what);
      } finally {
        this.slots.give();
      }
      this.counts.bytesReceived += answer.body.length;
      const header = answer.headers[HEADER_LENGTH];
      const res = decodeInferResponse(answer.body, Array.isArray(header) ? header[0] : header);
      const raw = unpackDetections(res.outputs, plan.output, count, {
        conf: this.cfg.conf,
        iou: this.cfg.iou,
        maxDet: this.cfg.max_detections,
      });
      checkClasses(raw, plan.labels.length);
      this.owner.answered();
      return raw;
    } catch (err) {
      const failure =
        err instanceof ProtocolError ? new RemoteRequestError('protocol', `${what}: ${err.message}`) : err;
      if (failure instanceof RemoteRequestError) this.counts.failures[failure.kind]++;
      throw failure;
    }
  }

  /** One blank picture through the model: a server that answers it is back. */
  async trial(http: KServeHttp, plan: RemotePlan): Promise<void> {
    const s = plan.inputSize;
    const blank: Picture = { data: Buffer.alloc(s * s * 3), geometry: letterbox(s, s, s) };
    const slots = 'fixed' in plan.batch ? plan.batch.fixed : 1;
    await this.post(http, plan, this.encode(plan, [blank], slots), slots, 1, false);
  }
}

/**
 * Refuses an answer that names a class the model's labels do not have: the server's model is not
 * the one its labels describe, so none of its answers can be trusted (a failed batch).
 */
function checkClasses(raw: readonly RawDetection[][], labels: number): void {
  raw.forEach((dets, i) => {
    const bad = dets.find((d) => !(Number.isInteger(d.classId) && d.classId >= 0 && d.classId < labels));
    if (bad)
      throw new ProtocolError(
        `picture ${i}: class index ${bad.classId} is outside the model's ${labels} labels`,
      );
  });
}
