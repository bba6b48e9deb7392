/**
 * An editable view of an ONNX model: its header, nodes, initializers and the graph's signature
 * are decoded, everything else is carried through byte for byte. Decoding takes any model; what
 * passes cannot edit is kept as read, and `checkEditable` names it. `argus model prepare` edits
 * models read with it, model-info reads their signature from it, and the fixture model is made
 * with it from scratch.
 * Field numbers follow onnx/onnx.proto3.
 */
import {
  decodeString,
  type Field,
  ProtoError,
  ProtoWriter,
  readFields,
  readPackedVarints,
  WireType,
} from './proto.js';

export class GraphEditError extends Error {}

export const DataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  BFLOAT16: 16,
} as const;

export const ELEMENT_BYTES: Record<number, number> = {
  1: 4,
  2: 1,
  3: 1,
  4: 2,
  5: 2,
  6: 4,
  7: 8,
  9: 1,
  10: 2,
  11: 8,
  12: 4,
  13: 8,
  16: 2,
};

export const AttrType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, GRAPH: 5, INTS: 7, GRAPHS: 10 } as const;

/** A tensor with its data normalised to little-endian bytes (what `raw_data` holds). */
export interface Tensor {
  name: string;
  dims: number[];
  dataType: number;
  /**
   * When decoded, a view into the model's bytes at whatever offset the field had (no copy), so
   * those bytes must not change while the model is in use. Passes replace it, never write to it.
   */
  data: Uint8Array;
  /**
   * Set when the data cannot be read here (an external file, strings, an unknown type, a length
   * that does not fit the shape): why, and the tensor as read, which is written back unchanged.
   * `data` is then empty; `checkEditable` refuses a graph holding one.
   */
  opaque?: { reason: string; raw: Uint8Array };
}

export interface Attribute {
  name: string;
  type: number;
  /** The attribute as read, re-emitted unchanged; a pass that edits the attribute drops it. */
  raw?: Uint8Array;
  int?: bigint;
  ints?: bigint[];
  tensor?: Tensor;
}

export interface Node {
  name: string;
  op: string;
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: Attribute[];
}

/** One dimension: a number when fixed, a name (e.g. "batch") when symbolic, null when unknown. */
export type Dim = number | string | null;

export interface ValueInfo {
  name: string;
  elemType: number;
  shape: Dim[] | undefined;
  /** As read; used when the value is not a plain tensor type. */
  raw?: Uint8Array;
}

export interface Graph {
  name: string;
  nodes: Node[];
  initializers: Tensor[];
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  valueInfo: ValueInfo[];
  /** Fields carried through unchanged: doc string, quantization annotations, sparse initializers. */
  other: Field[];
}

export interface Opset {
  domain: string;
  version: number;
}

export interface Model {
  irVersion: number;
  producer: string;
  producerVersion: string;
  opsets: Opset[];
  graph: Graph;
  metadata: Map<string, string>;
  /** Model fields not decoded above, in their original order. */
  other: Field[];
}

// ---- decoding ---------------------------------------------------------------------------------

/** A repeated integer field, packed or not. */
function varints(f: Field): bigint[] {
  if (f.wire === WireType.Varint) return [f.varint ?? 0n];
  return f.bytes ? readPackedVarints(f.bytes) : [];
}

function decodeTensor(buf: Uint8Array): Tensor {
  let name = '';
  const dims: number[] = [];
  let dataType = 0;
  let raw: Uint8Array | undefined;
  const floats: Uint8Array[] = [];
  const ints32: bigint[] = [];
  const ints64: bigint[] = [];
  const uints64: bigint[] = [];
  const doubles: Uint8Array[] = [];
  let external = false;
  let strings = false;
  for (const f of readFields(buf)) {
    switch (f.no) {
      case 1:
        dims.push(...varints(f).map(Number));
        break;
      case 2:
        dataType = Number(f.varint ?? 0n);
        break;
      case 4:
        if (f.bytes) floats.push(f.bytes);
        else if (f.fixed32 !== undefined) {
          const b = new Uint8Array(4);
          new DataView(b.buffer).setFloat32(0, f.fixed32, true);
          floats.push(b);
        }
        break;
      case 5:
        ints32.push(...varints(f));
        break;
      case 7:
        ints64.push(...varints(f));
        break;
      case 8:
        name = decodeString(f.bytes);
        break;
      case 9:
        raw = f.bytes;
        break;
      case 10:
        if (f.bytes) doubles.push(f.bytes);
        else if (f.fixed64) doubles.push(f.fixed64);
        break;
      case 11:
        uints64.push(...varints(f));
        break;
      case 13:
      case 14: // external_data; data_location (0 DEFAULT, 1 EXTERNAL)
        if (f.no === 13 || f.varint === 1n) external = true;
        break;
      case 6:
        strings = true;
        break;
      default:
        break;
    }
  }
  const opaque = (why: string): Tensor => ({
    name,
    dims,
    dataType,
    data: new Uint8Array(0),
    opaque: { reason: `tensor '${name}' ${why}`, raw: buf },
  });
  if (external) return opaque('keeps its data in an external file, which is not supported');
  if (strings) return opaque('holds strings, which is not supported');
  const size = ELEMENT_BYTES[dataType];
  if (size === undefined) return opaque(`has unsupported data type ${dataType}`);
  let data: Uint8Array;
  if (raw) data = raw;
  else if (floats.length) data = concat(floats);
  else if (doubles.length) data = concat(doubles);
  else {
    const values = ints32.length ? ints32 : ints64.length ? ints64 : uints64;
    data = new Uint8Array(values.length * size);
    const view = new DataView(data.buffer);
    values.forEach((v, i) => {
      if (size === 8) view.setBigInt64(i * 8, BigInt.asIntN(64, v), true);
      else if (size === 4) view.setInt32(i * 4, Number(BigInt.asIntN(32, v)), true);
      else if (size === 2) view.setUint16(i * 2, Number(BigInt.asUintN(16, v)), true);
      else view.setUint8(i, Number(BigInt.asUintN(8, v)));
    });
  }
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count * size) {
    return opaque(`has ${data.length} bytes of data for shape [${dims.join(', ')}]`);
  }
  // Weights are most of a model's bytes; reading its signature must not copy them. A plain
  // Uint8Array even over a Buffer, whose views are Buffers.
  return { name, dims, dataType, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
}

/** One part (a packed field) is returned as it is. */
function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function decodeAttribute(buf: Uint8Array): Attribute {
  const a: Attribute = { name: '', type: 0, raw: buf };
  for (const f of readFields(buf)) {
    if (f.no === 1) a.name = decodeString(f.bytes);
    else if (f.no === 20) a.type = Number(f.varint ?? 0n);
    // int64 on the wire as its two's complement: -1 (e.g. axis) is ten bytes of varint.
    else if (f.no === 3 && f.varint !== undefined) a.int = BigInt.asIntN(64, f.varint);
    else if (f.no === 8) (a.ints ??= []).push(...varints(f).map((v) => BigInt.asIntN(64, v)));
    else if (f.no === 5 && f.bytes) a.tensor = decodeTensor(f.bytes);
  }
  return a;
}

function decodeNode(buf: Uint8Array): Node {
  const n: Node = { name: '', op: '', domain: '', inputs: [], outputs: [], attributes: [] };
  for (const f of readFields(buf)) {
    if (f.no === 1) n.inputs.push(decodeString(f.bytes));
    else if (f.no === 2) n.outputs.push(decodeString(f.bytes));
    else if (f.no === 3) n.name = decodeString(f.bytes);
    else if (f.no === 4) n.op = decodeString(f.bytes);
    else if (f.no === 7) n.domain = decodeString(f.bytes);
    else if (f.no === 5 && f.bytes) n.attributes.push(decodeAttribute(f.bytes));
  }
  return n;
}

function decodeValueInfo(buf: Uint8Array): ValueInfo {
  const v: ValueInfo = { name: '', elemType: 0, shape: undefined, raw: buf };
  for (const f of readFields(buf)) {
    if (f.no === 1) v.name = decodeString(f.bytes);
    if (f.no !== 2 || !f.bytes) continue;
    for (const t of readFields(f.bytes)) {
      if (t.no !== 1 || !t.bytes) continue;
      // A field of the wrong wire type is skipped: protobuf parsers treat it as unknown.
      for (const tt of readFields(t.bytes)) {
        if (tt.no === 1 && tt.varint !== undefined) v.elemType = Number(tt.varint);
        if (tt.no === 2 && tt.bytes) {
          v.shape = [];
          for (const d of readFields(tt.bytes)) {
            if (d.no !== 1 || !d.bytes) continue;
            let dim: Dim = null;
            for (const x of readFields(d.bytes)) {
              if (x.no === 1 && x.varint !== undefined) dim = Number(x.varint);
              if (x.no === 2 && x.bytes) dim = decodeString(x.bytes);
            }
            v.shape.push(dim);
          }
        }
      }
    }
  }
  return v;
}

function decodeGraph(buf: Uint8Array): Graph {
  const g: Graph = {
    name: '',
    nodes: [],
    initializers: [],
    inputs: [],
    outputs: [],
    valueInfo: [],
    other: [],
  };
  for (const f of readFields(buf)) {
    if (f.no === 1 && f.bytes) g.nodes.push(decodeNode(f.bytes));
    else if (f.no === 2 && f.bytes) g.name = decodeString(f.bytes);
    else if (f.no === 5 && f.bytes) g.initializers.push(decodeTensor(f.bytes));
    else if (f.no === 11 && f.bytes) g.inputs.push(decodeValueInfo(f.bytes));
    else if (f.no === 12 && f.bytes) g.outputs.push(decodeValueInfo(f.bytes));
    else if (f.no === 13 && f.bytes) g.valueInfo.push(decodeValueInfo(f.bytes));
    else g.other.push(f);
  }
  return g;
}

function decodeOpset(buf: Uint8Array): Opset {
  const o: Opset = { domain: '', version: 0 };
  for (const f of readFields(buf)) {
    if (f.no === 1) o.domain = decodeString(f.bytes);
    if (f.no === 2 && f.varint !== undefined) o.version = Number(f.varint);
  }
  return o;
}

export function decodeModel(buf: Uint8Array): Model {
  const model: Model = {
    irVersion: 0,
    producer: '',
    producerVersion: '',
    opsets: [],
    graph: undefined as unknown as Graph,
    metadata: new Map(),
    other: [],
  };
  try {
    for (const f of readFields(buf)) {
      if (f.no === 1 && f.varint !== undefined) model.irVersion = Number(f.varint);
      else if (f.no === 2 && f.bytes) model.producer = decodeString(f.bytes);
      else if (f.no === 3 && f.bytes) model.producerVersion = decodeString(f.bytes);
      else if (f.no === 7 && f.bytes) model.graph = decodeGraph(f.bytes);
      else if (f.no === 8 && f.bytes) model.opsets.push(decodeOpset(f.bytes));
      else if (f.no === 14 && f.bytes) {
        let key = '';
        let value = '';
        for (const e of readFields(f.bytes)) {
          if (e.no === 1) key = decodeString(e.bytes);
          if (e.no === 2) value = decodeString(e.bytes);
        }
        model.metadata.set(key, value);
      } else model.other.push(f);
    }
  } catch (err) {
    if (err instanceof ProtoError) throw new GraphEditError(`not a valid ONNX model (${err.message})`);
    throw err;
  }
  if (!model.graph) throw new GraphEditError('not a valid ONNX model (no graph)');
  return model;
}

// ---- encoding ---------------------------------------------------------------------------------

export function encodeTensor(t: Tensor): Uint8Array {
  if (t.opaque) return t.opaque.raw;
  const w = new ProtoWriter();
  if (t.dims.length) w.packedInt64(1, t.dims);
  return w.varint(2, t.dataType).string(8, t.name).bytes(9, t.data).finish();
}

/** Attributes still holding `raw` are re-emitted verbatim; a pass that edits one drops `raw`. */
function encodeAttribute(a: Attribute): Uint8Array {
  if (a.raw) return a.raw;
  // Fields in number order (the type, 20, last), as protobuf writers put them.
  const w = new ProtoWriter().string(1, a.name);
  if (a.type === AttrType.INT) w.varint(3, a.int ?? 0n);
  else if (a.type === AttrType.INTS) w.packedInt64(8, (a.ints ?? []).map(Number));
  else if (a.type === AttrType.TENSOR && a.tensor) w.bytes(5, encodeTensor(a.tensor));
  else throw new GraphEditError(`cannot encode attribute '${a.name}' of type ${a.type}`);
  return w.varint(20, a.type).finish();
}

function encodeNode(n: Node): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  if (n.name) w.string(3, n.name);
  w.string(4, n.op);
  for (const a of n.attributes) w.bytes(5, encodeAttribute(a));
  if (n.domain) w.string(7, n.domain);
  return w;
}

/** Value infos still holding `raw` are re-emitted verbatim; a pass that edits one drops `raw`. */
export function encodeValueInfo(v: ValueInfo): Uint8Array {
  if (v.raw) return v.raw;
  const w = new ProtoWriter().string(1, v.name);
  const tensorType = new ProtoWriter().varint(1, v.elemType);
  if (v.shape) {
    const shape = new ProtoWriter();
    for (const d of v.shape) {
      const dim = new ProtoWriter();
      if (typeof d === 'number') dim.varint(1, d);
      else if (typeof d === 'string') dim.string(2, d);
      shape.message(1, dim);
    }
    tensorType.message(2, shape);
  }
  return w.message(2, new ProtoWriter().message(1, tensorType)).finish();
}

function encodeGraph(g: Graph): ProtoWriter {
  const w = new ProtoWriter();
  for (const n of g.nodes) w.message(1, encodeNode(n));
  if (g.name) w.string(2, g.name);
  for (const f of g.other) w.field(f);
  for (const t of g.initializers) w.bytes(5, encodeTensor(t));
  for (const v of g.inputs) w.bytes(11, encodeValueInfo(v));
  for (const v of g.outputs) w.bytes(12, encodeValueInfo(v));
  for (const v of g.valueInfo) w.bytes(13, encodeValueInfo(v));
  return w;
}

export function encodeModel(m: Model): Uint8Array {
  const w = new ProtoWriter();
  if (m.irVersion) w.varint(1, m.irVersion);
  if (m.producer) w.string(2, m.producer);
  if (m.producerVersion) w.string(3, m.producerVersion);
  for (const f of m.other) w.field(f);
  w.message(7, encodeGraph(m.graph));
  for (const o of m.opsets) w.message(8, new ProtoWriter().string(1, o.domain).varint(2, o.version));
  for (const [key, value] of m.metadata) w.message(14, new ProtoWriter().string(1, key).string(2, value));
  return w.finish();
}
