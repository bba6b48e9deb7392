import type { IncomingHttpHeaders } from 'node:http';
import type { Detection, Picture } from '../core/frame.js';
import { letterbox } from '../core/geometry.js';
import { FrameDropped } from '../scheduler/index.js';
import { bodyHeaders, decodeInferRequest, encodeInferResponse, type RequestedOutput } from './codec.js';
import { ARGUS_RGB24, HEADER_LENGTH, type ModelMetadata, type ServerMetadata } from './protocol.js';
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
const OUTPUTS = ['detections', 'num_detections'] as const;
/** Room for the JSON part of a request beside its tensor. */
const JSON_SLACK = 64 * 1024;

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

/** FP32 RGB in 0..1, channels first, to the RGB24 picture the scheduler takes. */
export function nchwToRgb(data: Float32Array, item: number, size: number): Buffer {
  const plane = size * size;
  const base = item * 3 * plane;
  const out = Buffer.alloc(3 * plane);
  // A clamped array clamps to 0..255 and rounds half to even; NaN becomes 0.
  const clamped = new Uint8ClampedArray(out.buffer, out.byteOffset, out.length);
  for (let c = 0; c < 3; c++) {
    const from = base + c * plane;
    for (let i = 0, j = c; i < plane; i++, j += 3) clamped[j] = data[from + i]! * 255;
  }
  return out;
}

export class InferenceService {
  constructor(
    private readonly models: () => readonly ServedModel[],
    private readonly info: ServiceInfo,
  ) {}

  /** Pictures of one model that fit a request body, FP32 and UINT8. */
  private maxBatch(m: ServedModel, bytesPerElement: number): number {
    const per = 3 * m.inputSize * m.inputSize * bytesPerElement;
    return Math.max(1, Math.min(64, Math.floor((this.info.maxBodyBytes - JSON_SLACK) / per)));
  }

  async handle(req: ServiceRequest): Promise<ServiceAnswer> {
    try {
      return await this.route(req);
    } catch (err) {
      if (err instanceof Refusal) return json(err.status, { error: err.message }, err.headers);
      if (err instanceof ProtocolError) return json(400, { error: err.message });
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

  /** The request's pictures: FP32 [B, 3, S, S] or UINT8 [B, S, S, 3]. */
  private pictures(m: ServedModel, inputs: Tensor[]): Picture[] {
    const s = m.inputSize;
    const input = inputs.find((t) => t.name === INPUT);
    const others = inputs.filter((t) => t.name !== INPUT).map((t) => `'${t.name}'`);
    if (!input || others.length)
      throw new Refusal(
        400,
        `the model takes one input, '${INPUT}'${others.length ? `; unknown: ${others.join(', ')}` : ''}`,
      );
    const [b, ...rest] = input.shape;
    const shape = `[${input.shape.join(', ')}]`;
    const fp32 = input.datatype === 'FP32' && rest.join() === `3,${s},${s}`;
    const rgb24 = input.datatype === 'UINT8' && rest.join() === `${s},${s},3`;
    if (!(fp32 || rgb24) || !b)
      throw new Refusal(
        400,
        `input '${INPUT}' is ${input.datatype} ${shape}; the model takes FP32 [B, 3, ${s}, ${s}] or UINT8 [B, ${s}, ${s}, 3], B ≥ 1`,
      );
    const geometry = letterbox(s, s, s);
    const data = input.data as Float32Array | Uint8Array;
    const frame = 3 * s * s;
    return Array.from({ length: b }, (_, i) => ({
      geometry,
      data: fp32
        ? nchwToRgb(data as Float32Array, i, s)
        : Buffer.from(data.buffer, data.byteOffset + i * frame, frame),
    }));
  }

  private async infer(m: ServedModel, req: ServiceRequest): Promise<ServiceAnswer> {
    if (!m.ready()) throw new Refusal(503, `model '${m.name}' is not ready`);
    const header = req.headers[HEADER_LENGTH];
    const request = decodeInferRequest(
      req.body ?? Buffer.alloc(0),
      Array.isArray(header) ? header[0] : header,
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
      answers = await Promise.all(pictures.map((p) => m.detect(p)));
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

/** Each item's detections as rows of [x1, y1, x2, y2, score, class], K rows per item, and counts. */
export function detectionTensors(
  answers: readonly Detection[][],
  labels: readonly string[],
): Record<(typeof OUTPUTS)[number], Tensor> {
  const b = answers.length;
  const k = Math.max(0, ...answers.map((a) => a.length));
  const rows = new Float32Array(b * k * 6);
  const counts = new Int32Array(b);
  const index = new Map<string, number>();
  labels.forEach((l, i) => index.has(l) || index.set(l, i));
  answers.forEach((dets, i) => {
    counts[i] = dets.length;
    dets.forEach((d, r) => rows.set([...d.box, d.score, index.get(d.label) ?? -1], (i * k + r) * 6));
  });
  return {
    detections: { name: 'detections', datatype: 'FP32', shape: [b, k, 6], data: rows },
    num_detections: { name: 'num_detections', datatype: 'INT32', shape: [b], data: counts },
  };
}
