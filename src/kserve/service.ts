import type { IncomingHttpHeaders } from 'node:http';
import type { Detection, Picture } from '../core/frame.js';
import { letterbox } from '../core/geometry.js';
import { FrameDropped, SUBMIT_QUEUE, UnknownModel } from '../scheduler/index.js';
import {
  bodyHeaders,
  encodeInferResponse,
  readInferRequest,
  type AcceptTensor,
  type RequestedOutput,
} from './codec.js';
import { ARGUS_RGB24, HEADER_LENGTH, type ModelMetadata, type ServerMetadata } from './protocol.js';
import { detectionTensors, nchwToRgb, OUTPUTS } from './service-tensors.js';
import { Slots } from './slots.js';
import { ProtocolError, type Tensor } from './tensor.js';

/**
 * Argus as a KServe v2 / Open Inference Protocol server (HTTP/REST, with Triton's binary tensor
 * data and model configuration extensions): health, server and model metadata, and inference
 * over Argus' own models, whose pictures share the cameras' batches. A model takes the image
 * input `images` as FP32 [B, 3, S, S] (RGB / 255, what a Triton client sends a YOLO) or, with
 * Argus' `argus_rgb24` extension, UINT8 [B, S, S, 3]; it answers post-NMS detections:
 * `detections` FP32 [B, K, 6] (x1, y1, x2, y2 in input pixels, score, class index; rows beyond an
 * item's count are zeros) and `num_detections` INT32 [B]. docs/http.md has the details.
 */

/** One of Argus' models as the service serves it. */
export interface ServedModel {
  name: string;
  inputSize: number;
  labels: readonly string[];
  ready(): boolean;
  /** A size × size RGB24 picture through the scheduler; rejects with FrameDropped when dropped. */
  detect(picture: Picture): Promise<Detection[]>;
}

export interface ServiceRequest {
  method: string;
  /** The URL's path, still percent-encoded. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}

export interface ServiceAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface ServiceInfo {
  /** Argus' version, for the server metadata. */
  version: string;
  /** The largest request body accepted (`http.max_body_mb`). */
  maxBodyBytes: number;
}

/** Argus models have one version. */
export const MODEL_VERSION = '1';
export const INPUT = 'images';
/** Room for the JSON part of a request beside its tensor. */
const JSON_SLACK = 64 * 1024;
/** The most pictures a request may hold, whatever the body limit. */
const MAX_BATCH = 64;
/**
 * A model's pictures the service has in the scheduler at once (submitted, not yet answered): as
 * many as the scheduler's queue of submitted pictures holds (16 a model and priority: docs/http.md,
 * POST /api/detect), so that a batch the model's configuration allows is never dropped for want
 * of room there; the others wait their turn here, in order.
 */
const IN_SCHEDULER = SUBMIT_QUEUE;
/** A model's pictures admitted at once (in the scheduler or waiting): this many of its largest batches. */
const ADMITTED_BATCHES = 2;

/** A picture of a request whose other picture failed: it is not sent to the scheduler. */
class Abandoned extends Error {}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): ServiceAnswer => ({
  status,
  headers: { 'Content-Type': 'application/json', ...headers },
  body: Buffer.from(JSON.stringify(value), 'utf8'),
});

/**
 * One model's pictures on their way through the scheduler: at most IN_SCHEDULER of them in it at
 * once, the others waiting their turn in order of arrival; at most `limit` admitted together
 * (waiting or in the scheduler), beyond which a request is refused whole, nothing of it run. A
 * request whose picture fails sends none of its pictures still waiting.
 */
class ModelGate {
  private readonly slots = new Slots(IN_SCHEDULER);
  private admitted = 0;

  constructor(private readonly onIdle: () => void) {}

  run(
    name: string,
    pictures: readonly Picture[],
    limit: number,
    detect: (p: Picture) => Promise<Detection[]>,
  ): Promise<Detection[][]> {
    if (this.admitted + pictures.length > limit)
      throw new Refusal(
        503,
        `model '${name}' is busy: ${this.admitted} pictures are waiting or running, and ${pictures.length} more would pass its ${limit}; try again`,
      );
    this.admitted += pictures.length;
    let failed = false;
    const one = async (p: Picture): Promise<Detection[]> => {
      try {
        await this.slots.take();
        try {
          if (failed) throw new Abandoned();
          return await detect(p);
        } finally {
          this.slots.give();
        }
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        if (--this.admitted === 0) this.onIdle();
      }
    };
    return Promise.all(pictures.map(one));
  }
}

export class InferenceService {
  /** By model name, while it has pictures admitted. */
  private gates = new Map<string, ModelGate>();

  constructor(
    private readonly models: () => readonly ServedModel[],
    private readonly info: ServiceInfo,
  ) {}

  /**
   * Pictures of one model a request may hold, FP32 and UINT8: what fits a request body (at most
   * MAX_BATCH). The model's configuration says so, and an idle server takes that many at once.
   */
  private maxBatch(m: ServedModel, bytesPerElement: number): number {
    const per = 3 * m.inputSize * m.inputSize * bytesPerElement;
    return Math.max(1, Math.min(MAX_BATCH, Math.floor((this.info.maxBodyBytes - JSON_SLACK) / per)));
  }

  async handle(req: ServiceRequest): Promise<ServiceAnswer> {
    try {
      return await this.route(req);
    } catch (err) {
      if (err instanceof Refusal) return json(err.status, { error: err.message }, err.headers);
      if (err instanceof ProtocolError) return json(400, { error: err.message });
      // A reload removed the model while its pictures were on their way.
      if (err instanceof UnknownModel) return json(503, { error: err.message });
      throw err;
    }
  }

  private async route(req: ServiceRequest): Promise<ServiceAnswer> {
    const path = req.path.replace(/\/+$/, '');
    const get = (): void => {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        throw new Refusal(405, `${req.method} is not allowed here`, { Allow: 'GET, HEAD' });
    };
    if (path === '/v2') {
      get();
      const meta: ServerMetadata = {
        name: 'argus',
        version: this.info.version,
        extensions: ['binary_tensor_data', 'model_configuration', ARGUS_RGB24],
      };
      return json(200, meta);
    }
    if (path === '/v2/health/live') {
      get();
      return json(200, { live: true });
    }
    if (path === '/v2/health/ready') {
      get();
      const ready = this.models().every((m) => m.ready());
      // "A 200 status code indicates true and a 4xx status code indicates false."
      return json(ready ? 200 : 400, { ready });
    }
    const m = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?(\/ready|\/config|\/infer)?$/.exec(path);
    if (!m) throw new Refusal(404, `no such endpoint: ${req.method} ${path}`);
    const model = this.model(m[1]!, m[2]);
    const action = m[3];
    if (action === '/infer') {
      if (req.method !== 'POST') throw new Refusal(405, 'inference takes POST', { Allow: 'POST' });
      return this.infer(model, req);
    }
    get();
    if (action === '/ready') {
      const ready = model.ready();
      return json(ready ? 200 : 400, { name: model.name, ready });
    }
    if (action === '/config') return json(200, this.config(model));
    return json(200, this.metadata(model));
  }

  private model(encodedName: string, encodedVersion: string | undefined): ServedModel {
    let name: string;
    let version: string | undefined;
    try {
      name = decodeURIComponent(encodedName);
      version = encodedVersion === undefined ? undefined : decodeURIComponent(encodedVersion);
    } catch {
      throw new Refusal(400, 'the model name or version is not valid percent-encoding');
    }
    const model = this.models().find((x) => x.name === name);
    if (!model)
      throw new Refusal(
        404,
        `unknown model '${name}' (models: ${this.models()
          .map((x) => x.name)
          .join(', ')})`,
      );
    if (version !== undefined && version !== MODEL_VERSION)
      throw new Refusal(
        404,
        `model '${name}' has no version '${version}' (its one version is ${MODEL_VERSION})`,
      );
    return model;
  }

  private metadata(m: ServedModel): ModelMetadata {
    const s = m.inputSize;
    return {
      name: m.name,
      versions: [MODEL_VERSION],
      platform: 'onnx_onnxv1',
      inputs: [{ name: INPUT, datatype: 'FP32', shape: [-1, 3, s, s] }],
      outputs: [
        { name: 'detections', datatype: 'FP32', shape: [-1, -1, 6] },
        { name: 'num_detections', datatype: 'INT32', shape: [-1] },
      ],
    };
  }

  /** Triton's ModelConfig, as JSON, with the class names where Ultralytics' Triton guide puts them. */
  private config(m: ServedModel): unknown {
    const s = m.inputSize;
    const names = m.labels.map((l, i) => `${i}: ${JSON.stringify(l)}`).join(', ');
    return {
      name: m.name,
      platform: 'onnx_onnxv1',
      max_batch_size: this.maxBatch(m, 4),
      input: [{ name: INPUT, data_type: 'TYPE_FP32', format: 'FORMAT_NCHW', dims: [3, s, s] }],
      output: [
        { name: 'detections', data_type: 'TYPE_FP32', dims: [-1, 6] },
        { name: 'num_detections', data_type: 'TYPE_INT32', dims: [1], reshape: { shape: [] } },
      ],
      parameters: {
        metadata: { string_value: `{'names': {${names}}, 'imgsz': [${s}, ${s}]}` },
        rgb24_max_batch_size: { string_value: String(this.maxBatch(m, 1)) },
      },
    };
  }

  /**
   * Checks each input's header before its data is read: the one input `images`, as FP32
   * [B, 3, S, S] or UINT8 [B, S, S, 3], B from 1 to what the model's configuration says.
   */
  private accept(m: ServedModel): AcceptTensor {
    const s = m.inputSize;
    let seen = false;
    return (t) => {
      if (t.name !== INPUT || seen)
        throw new Refusal(
          400,
          t.name === INPUT
            ? `input '${INPUT}' is given twice`
            : `the model takes one input, '${INPUT}'; unknown: '${t.name}'`,
        );
      seen = true;
      const [b, ...rest] = t.shape;
      const fp32 = t.datatype === 'FP32' && rest.join() === `3,${s},${s}`;
      const rgb24 = t.datatype === 'UINT8' && rest.join() === `${s},${s},3`;
      if (!(fp32 || rgb24) || !b)
        throw new Refusal(
          400,
          `input '${INPUT}' is ${t.datatype} [${t.shape.join(', ')}]; the model takes FP32 [B, 3, ${s}, ${s}] or UINT8 [B, ${s}, ${s}, 3], B ≥ 1`,
        );
      const max = this.maxBatch(m, fp32 ? 4 : 1);
      if (b > max)
        throw new Refusal(
          400,
          `input '${INPUT}' holds ${b} pictures; the model takes at most ${max} a request as ${t.datatype} (${fp32 ? 'max_batch_size' : 'parameters.rgb24_max_batch_size'} in its configuration)`,
        );
    };
  }

  /** The request's pictures, its input checked already (accept): FP32 [B, 3, S, S] or UINT8 [B, S, S, 3]. */
  private pictures(m: ServedModel, inputs: Tensor[]): Picture[] {
    const s = m.inputSize;
    const input = inputs[0];
    if (!input) throw new Refusal(400, `the model takes one input, '${INPUT}'`);
    const fp32 = input.datatype === 'FP32';
    const geometry = letterbox(s, s, s);
    const data = input.data as Float32Array | Uint8Array;
    const frame = 3 * s * s;
    return Array.from({ length: input.shape[0]! }, (_, i) => ({
      geometry,
      data: fp32
        ? nchwToRgb(data as Float32Array, i, s)
        : Buffer.from(data.buffer, data.byteOffset + i * frame, frame),
    }));
  }

  /** The model's pictures through its gate (created at its first request, gone once idle). */
  private detectAll(m: ServedModel, pictures: readonly Picture[]): Promise<Detection[][]> {
    let gate = this.gates.get(m.name);
    if (!gate) {
      const created = new ModelGate(() => {
        if (this.gates.get(m.name) === created) this.gates.delete(m.name);
      });
      this.gates.set(m.name, (gate = created));
    }
    const limit = ADMITTED_BATCHES * this.maxBatch(m, 1);
    return gate.run(m.name, pictures, limit, (p) => m.detect(p));
  }

  private async infer(m: ServedModel, req: ServiceRequest): Promise<ServiceAnswer> {
    if (!m.ready()) throw new Refusal(503, `model '${m.name}' is not ready`);
    const header = req.headers[HEADER_LENGTH];
    const request = await readInferRequest(
      req.body ?? Buffer.alloc(0),
      Array.isArray(header) ? header[0] : header,
      this.accept(m),
    );
    const wanted: RequestedOutput[] =
      request.outputs ?? OUTPUTS.map((name) => ({ name, binary: request.binaryOutput }));
    const unknown = wanted
      .filter((o) => !(OUTPUTS as readonly string[]).includes(o.name))
      .map((o) => `'${o.name}'`);
    if (unknown.length)
      throw new Refusal(
        400,
        `unknown output ${unknown.join(', ')}; the model gives 'detections' and 'num_detections'`,
      );
    const pictures = this.pictures(m, request.inputs);
    let answers: Detection[][];
    try {
      answers = await this.detectAll(m, pictures);
    } catch (err) {
      if (err instanceof FrameDropped) throw new Refusal(503, err.message);
      throw err;
    }
    const tensors = detectionTensors(answers, m.labels);
    const body = encodeInferResponse({
      modelName: m.name,
      modelVersion: MODEL_VERSION,
      ...(request.id === undefined ? {} : { id: request.id }),
      outputs: wanted.map((o) => ({ ...tensors[o.name as (typeof OUTPUTS)[number]], binary: o.binary })),
    });
    return { status: 200, headers: bodyHeaders(body), body: Buffer.concat(body.chunks, body.length) };
  }
}
