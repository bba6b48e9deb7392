import { endianness } from 'node:os';
import { fromFloat16Bits, toFloat16Bits } from '../onnx/index.js';
import { DATATYPE_SIZES, type Datatype } from './protocol.js';

/**
 * Tensors as the Open Inference Protocol carries them: as JSON arrays ("Tensor Data": row-major,
 * nested or flat) or as binary data (Triton's binary tensor data extension: "little-endian byte
 * order, row major, without stride or padding between elements"; BOOL one byte, 1 or 0; BYTES
 * each element a 4-byte unsigned little-endian length, then its bytes).
 */

export type NumericArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | BigInt64Array
  | BigUint64Array;

export interface Tensor {
  name: string;
  datatype: Datatype;
  shape: number[];
  /** FP16 is decoded to float32; BOOL is 0/1 bytes; BYTES are the elements' bytes. */
  data: NumericArray | Buffer[];
}

/** A body, header or tensor that breaks the protocol; the message says which and how. */
export class ProtocolError extends Error {}

// Typed arrays read and write in the host's byte order; the wire is little-endian.
if (endianness() !== 'LE') throw new Error('the KServe binary tensor codec needs a little-endian host');

type Ctor = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): NumericArray };

const ARRAYS: Record<Exclude<Datatype, 'BYTES'>, Ctor> = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
};

/** The range JSON integers of each type must fall in (64-bit ones: what a JSON number holds exactly). */
export const INT_RANGES: Partial<Record<Datatype, [number, number]>> = {
  UINT8: [0, 0xff],
  UINT16: [0, 0xffff],
  UINT32: [0, 0xffffffff],
  UINT64: [0, Number.MAX_SAFE_INTEGER],
  INT8: [-0x80, 0x7f],
  INT16: [-0x8000, 0x7fff],
  INT32: [-0x80000000, 0x7fffffff],
  INT64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

/** Elements in a tensor of `shape`; every dimension a whole number ≥ 0, their product too. */
export function elementCount(shape: readonly unknown[], what: string): number {
  let n = 1;
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0)
      throw new ProtocolError(`${what}: shape [${shape.join(', ')}] is not a list of whole numbers ≥ 0`);
    n *= d;
  }
  if (!Number.isSafeInteger(n))
    throw new ProtocolError(`${what}: shape [${shape.join(', ')}] has more elements than can be counted`);
  return n;
}

/** A zeroed array of `count` elements of a numeric datatype (FP16: its 16-bit patterns). */
export function typedArray(datatype: Exclude<Datatype, 'BYTES'>, count: number): NumericArray {
  const ctor = ARRAYS[datatype] as unknown as { new (length: number): NumericArray };
  return new ctor(count);
}

/** Bytes a tensor of `count` elements takes as binary data (not for BYTES, whose size varies). */
export const byteSize = (datatype: Exclude<Datatype, 'BYTES'>, count: number): number =>
  DATATYPE_SIZES[datatype] * count;

/** A typed array over `bytes`, copied first when they are not aligned for it. */
function view(ctor: Ctor, bytes: Uint8Array, size: number): NumericArray {
  const src = bytes.byteOffset % size === 0 ? bytes : Uint8Array.from(bytes);
  return new ctor(src.buffer, src.byteOffset, src.byteLength / size);
}

/** Decodes one tensor's binary data. */
export function tensorFromBytes(
  name: string,
  datatype: Datatype,
  shape: number[],
  bytes: Uint8Array,
): Tensor {
  const what = `tensor '${name}'`;
  const count = elementCount(shape, what);
  if (datatype === 'BYTES') return { name, datatype, shape, data: bytesElements(bytes, count, what) };
  const need = byteSize(datatype, count);
  if (bytes.length !== need)
    throw new ProtocolError(
      `${what}: ${bytes.length} bytes of binary data; ${datatype} [${shape.join(', ')}] takes ${need}`,
    );
  const raw = view(ARRAYS[datatype], bytes, DATATYPE_SIZES[datatype]);
  if (datatype === 'FP16') return { name, datatype, shape, data: fromFloat16Bits(raw as Uint16Array) };
  if (datatype === 'BOOL')
    return { name, datatype, shape, data: (raw as Uint8Array).map((b) => (b ? 1 : 0)) };
  return { name, datatype, shape, data: raw };
}

function bytesElements(bytes: Uint8Array, count: number, what: string): Buffer[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > buf.length) throw new ProtocolError(`${what}: BYTES element ${i} has no 4-byte length`);
    const len = buf.readUInt32LE(at);
    if (at + 4 + len > buf.length)
      throw new ProtocolError(`${what}: BYTES element ${i} of ${len} bytes runs past the tensor's data`);
    out.push(buf.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  if (at !== buf.length)
    throw new ProtocolError(`${what}: ${buf.length - at} bytes left after its ${count} BYTES elements`);
  return out;
}

/** A tensor's binary data: what `tensorFromBytes` reads back. */
export function tensorToBytes(t: Tensor): Buffer {
  if (t.datatype === 'BYTES') {
    const parts = (t.data as Buffer[]).flatMap((b) => {
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      return [len, b];
    });
    return Buffer.concat(parts);
  }
  let data = t.data as NumericArray;
  if (t.datatype === 'FP16') data = toFloat16Bits(data as Float32Array);
  if (t.datatype === 'BOOL') data = (data as Uint8Array).map((b) => (b ? 1 : 0));
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** A tensor's elements as a flat JSON array (64-bit integers as JSON numbers; BYTES as UTF-8 text). */
export function tensorToJson(t: Tensor): (number | boolean | string)[] {
  if (t.datatype === 'BYTES') return (t.data as Buffer[]).map((b) => b.toString('utf8'));
  if (t.datatype === 'BOOL') return Array.from(t.data as Uint8Array, (b) => b !== 0);
  const data = t.data as NumericArray;
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) return Array.from(data, Number);
  return Array.from(data as Float32Array);
}
