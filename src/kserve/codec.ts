import {
  BINARY_DATA,
  BINARY_DATA_OUTPUT,
  BINARY_DATA_SIZE,
  isDatatype,
  type Datatype,
  type InferRequestJson,
  type InferResponseJson,
  type Parameters,
  type RequestOutputJson,
  type ResponseOutputJson,
} from './protocol.js';
import { tensorFromJson } from './json-data.js';
import { JsonData, parseJson, runSteps, runStepsYielding, type Steps } from './json.js';
import {
  elementCount,
  ProtocolError,
  tensorFromBytes,
  tensorToBytes,
  tensorToJson,
  type Tensor,
} from './tensor.js';

/**
 * Inference requests and responses as HTTP bodies: the JSON object of the Open Inference Protocol,
 * followed, for tensors sent as binary data, by their bytes in the order the JSON lists them
 * (Triton's binary tensor data extension). `Inference-Header-Content-Length` gives the JSON's
 * length whenever binary data follows it.
 */

/** A tensor already in its binary layout (what a client builds straight from pictures). */
export interface WireTensor {
  name: string;
  datatype: Datatype;
  shape: number[];
  bytes: Buffer;
}

/** A body to send: its parts in order, and the JSON's length when binary data follows it. */
export interface EncodedBody {
  chunks: Buffer[];
  length: number;
  /** Undefined when the body is JSON alone (then no Inference-Header-Content-Length is sent). */
  headerLength: number | undefined;
}

export interface RequestedOutput {
  name: string;
  binary: boolean;
}

export interface DecodedRequest {
  id: string | undefined;
  parameters: Parameters;
  inputs: Tensor[];
  /** As requested; undefined: every output, binary when `binaryOutput`. */
  outputs: RequestedOutput[] | undefined;
  binaryOutput: boolean;
}

export interface DecodedResponse {
  modelName: string | undefined;
  modelVersion: string | undefined;
  id: string | undefined;
  outputs: Tensor[];
}

/**
 * The JSON, then the binary data. With binary data the JSON is padded with spaces (JSON allows
 * them) to a multiple of 8 bytes, so that tensors of 8-, 4- and 2-byte elements start aligned in
 * the receiver's buffer and are read in place rather than copied.
 */
function body(json: unknown, binary: Buffer[]): EncodedBody {
  const text = JSON.stringify(json);
  const size = Buffer.byteLength(text, 'utf8');
  const pad = binary.length ? (8 - (size % 8)) % 8 : 0;
  const header = Buffer.from(text + ' '.repeat(pad), 'utf8');
  const chunks = [header, ...binary];
  const length = chunks.reduce((n, c) => n + c.length, 0);
  return { chunks, length, headerLength: binary.length ? header.length : undefined };
}

/** What a body is, for its headers: JSON alone, or JSON then binary tensors (with the JSON's length). */
export function bodyHeaders(body: EncodedBody): Record<string, string> {
  if (body.headerLength === undefined) return { 'Content-Type': 'application/json' };
  return {
    'Content-Type': 'application/octet-stream',
    'Inference-Header-Content-Length': String(body.headerLength),
  };
}

/** An inference request with every input as binary data, asking for `outputs` (binary or JSON). */
export function encodeInferRequest(req: {
  id?: string;
  inputs: WireTensor[];
  outputs: RequestedOutput[];
}): EncodedBody {
  const json: InferRequestJson = {
    ...(req.id === undefined ? {} : { id: req.id }),
    inputs: req.inputs.map((t) => ({
      name: t.name,
      shape: t.shape,
      datatype: t.datatype,
      parameters: { [BINARY_DATA_SIZE]: t.bytes.length },
    })),
    outputs: req.outputs.map((o): RequestOutputJson =>
      o.binary ? { name: o.name, parameters: { [BINARY_DATA]: true } } : { name: o.name },
    ),
  };
  return body(
    json,
    req.inputs.map((t) => t.bytes),
  );
}

/** An inference response: outputs marked binary after the JSON, the others as JSON data. */
export function encodeInferResponse(res: {
  modelName: string;
  modelVersion?: string;
  id?: string;
  outputs: (Tensor & { binary: boolean })[];
}): EncodedBody {
  const binary: Buffer[] = [];
  const outputs = res.outputs.map((t): ResponseOutputJson => {
    const head = { name: t.name, shape: t.shape, datatype: t.datatype };
    if (!t.binary) return { ...head, data: tensorToJson(t) };
    const bytes = tensorToBytes(t);
    binary.push(bytes);
    return { ...head, parameters: { [BINARY_DATA_SIZE]: bytes.length } };
  });
  const json: InferResponseJson = {
    model_name: res.modelName,
    ...(res.modelVersion === undefined ? {} : { model_version: res.modelVersion }),
    ...(res.id === undefined ? {} : { id: res.id }),
    outputs,
  };
  return body(json, binary);
}

/**
 * Splits a body into its JSON object (each tensor's `data` left as a JsonData, to read as its
 * tensor is decoded) and the binary data after it.
 */
function* splitBody(raw: Buffer, headerLength: string | undefined): Steps<{ json: object; binary: Buffer }> {
  let jsonEnd = raw.length;
  if (headerLength !== undefined) {
    if (!/^\d+$/.test(headerLength.trim()))
      throw new ProtocolError(`Inference-Header-Content-Length '${headerLength}' is not a byte count`);
    jsonEnd = Number(headerLength);
    if (jsonEnd > raw.length)
      throw new ProtocolError(
        `Inference-Header-Content-Length ${jsonEnd} is beyond the body's ${raw.length} bytes`,
      );
  }
  const json = yield* parseJson(raw.subarray(0, jsonEnd));
  if (!json || typeof json !== 'object' || Array.isArray(json) || json instanceof JsonData)
    throw new ProtocolError('the body is not a JSON object');
  return { json, binary: raw.subarray(jsonEnd) };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parameters(v: unknown, what: string): Parameters {
  if (v === undefined) return {};
  if (!isObject(v)) throw new ProtocolError(`${what}: "parameters" is not an object`);
  for (const [k, x] of Object.entries(v))
    if (!['string', 'number', 'boolean'].includes(typeof x))
      throw new ProtocolError(`${what}: parameter '${k}' is not a string, number or boolean`);
  return v as Parameters;
}

/** A tensor as its JSON describes it, before its data is read. */
export interface TensorHeader {
  name: string;
  datatype: Datatype;
  shape: number[];
}

/**
 * Checks a tensor's header before its data is read (and its memory allocated); throws to refuse
 * it. A server uses it to refuse what its model does not take at the cost of reading a header.
 */
export type AcceptTensor = (t: TensorHeader) => void;

/**
 * Decodes each listed tensor, from its JSON `data` or, when it has `binary_data_size`, from the
 * next bytes of `binary`; every byte of `binary` must belong to a tensor.
 */
function* tensors(
  list: unknown,
  binary: Buffer,
  kind: 'input' | 'output',
  accept: AcceptTensor | undefined,
): Steps<Tensor[]> {
  if (!Array.isArray(list)) throw new ProtocolError(`"${kind}s" is not an array`);
  let at = 0;
  const out: Tensor[] = [];
  for (const [i, entry] of list.entries()) {
    if (!isObject(entry) || typeof entry.name !== 'string')
      throw new ProtocolError(`${kind} ${i} has no "name"`);
    const what = `${kind} '${entry.name}'`;
    if (!isDatatype(entry.datatype))
      throw new ProtocolError(
        `${what}: datatype ${JSON.stringify(entry.datatype)} is not a tensor data type`,
      );
    if (!Array.isArray(entry.shape)) throw new ProtocolError(`${what}: "shape" is not an array`);
    const shape = entry.shape as number[];
    elementCount(shape, what);
    const params = parameters(entry.parameters, what);
    accept?.({ name: entry.name, datatype: entry.datatype, shape });
    const size = params[BINARY_DATA_SIZE];
    if (size === undefined) {
      out.push(yield* tensorFromJson(entry.name, entry.datatype, shape, entry.data));
      continue;
    }
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw new ProtocolError(`${what}: ${BINARY_DATA_SIZE} ${JSON.stringify(size)} is not a byte count`);
    if (at + size > binary.length)
      throw new ProtocolError(
        `${what}: ${BINARY_DATA_SIZE} ${size} runs past the ${binary.length} bytes of binary data`,
      );
    const bytes = binary.subarray(at, at + size);
    at += size;
    out.push(tensorFromBytes(entry.name, entry.datatype, shape, bytes));
  }
  if (at !== binary.length)
    throw new ProtocolError(`${binary.length - at} bytes of binary data belong to no ${kind}`);
  return out;
}

function* inferRequest(
  raw: Buffer,
  headerLength: string | undefined,
  accept: AcceptTensor | undefined,
): Steps<DecodedRequest> {
  const { json, binary } = yield* splitBody(raw, headerLength);
  const req = json as Record<string, unknown>;
  if (req.id !== undefined && typeof req.id !== 'string') throw new ProtocolError('"id" is not a string');
  const params = parameters(req.parameters, 'the request');
  let outputs: RequestedOutput[] | undefined;
  const binaryOutput = params[BINARY_DATA_OUTPUT] === true;
  if (req.outputs !== undefined) {
    if (!Array.isArray(req.outputs)) throw new ProtocolError('"outputs" is not an array');
    outputs = req.outputs.map((o: unknown, i) => {
      if (!isObject(o) || typeof o.name !== 'string')
        throw new ProtocolError(`requested output ${i} has no "name"`);
      const b = parameters(o.parameters, `requested output '${o.name}'`)[BINARY_DATA];
      return { name: o.name, binary: b === undefined ? binaryOutput : b === true };
    });
  }
  return {
    id: req.id,
    parameters: params,
    inputs: yield* tensors(req.inputs, binary, 'input', accept),
    outputs,
    binaryOutput,
  };
}

/** What a server reads from an inference request's body, at once (`accept` sees each input first). */
export function decodeInferRequest(
  raw: Buffer,
  headerLength: string | undefined,
  accept?: AcceptTensor,
): DecodedRequest {
  return runSteps(inferRequest(raw, headerLength, accept));
}

/**
 * The same, letting the event loop run every SLICE_BYTES of JSON tensor data, so that a large
 * JSON body does not hold up other requests, timers and I/O while it is read.
 */
export function readInferRequest(
  raw: Buffer,
  headerLength: string | undefined,
  accept?: AcceptTensor,
): Promise<DecodedRequest> {
  return runStepsYielding(inferRequest(raw, headerLength, accept));
}

/** What a client reads from an inference response's body. */
export function decodeInferResponse(raw: Buffer, headerLength: string | undefined): DecodedResponse {
  return runSteps(
    (function* (): Steps<DecodedResponse> {
      const { json, binary } = yield* splitBody(raw, headerLength);
      const res = json as Record<string, unknown>;
      // Required by the protocol, yet Triton's own binary-data example leaves it out: not insisted on.
      return {
        modelName: typeof res.model_name === 'string' ? res.model_name : undefined,
        modelVersion: typeof res.model_version === 'string' ? res.model_version : undefined,
        id: typeof res.id === 'string' ? res.id : undefined,
        outputs: yield* tensors(res.outputs, binary, 'output', undefined),
      };
    })(),
  );
}
