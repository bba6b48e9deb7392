/**
 * A minimal protobuf wire-format reader and writer: just enough to read an ONNX model's
 * metadata and graph signature without parsing its weights, and to write small models.
 * Field numbers and types follow onnx/onnx.proto3.
 */

export const WireType = { Varint: 0, Fixed64: 1, Bytes: 2, Fixed32: 5 } as const;

export class ProtoError extends Error {}

export interface Field {
  no: number;
  wire: number;
  /** For varints (as bigint, since ONNX uses int64), else undefined. */
  varint?: bigint;
  /** For length-delimited fields: a view into the source buffer (no copy). */
  bytes?: Uint8Array;
  /** For fixed32 fields. */
  fixed32?: number;
  /** For fixed64 fields: the 8 raw bytes (a view, no copy). */
  fixed64?: Uint8Array;
}

/** Iterates the fields of one message. Nested messages are left as byte views. */
/** Reads the varint at `pos`; returns it and the position after it. */
export function readVarint(buf: Uint8Array, pos: number): [value: bigint, next: number] {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new ProtoError('truncated varint');
    const b = buf[pos++]!;
    result |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) return [result, pos];
    shift += 7n;
    if (shift > 70n) throw new ProtoError('varint too long');
  }
}

/** Every varint in a packed repeated field's bytes. */
export function readPackedVarints(buf: Uint8Array): bigint[] {
  const out: bigint[] = [];
  for (let pos = 0; pos < buf.length;) {
    const [v, next] = readVarint(buf, pos);
    out.push(v);
    pos = next;
  }
  return out;
}

export function* readFields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const varint = (): bigint => {
    const [v, next] = readVarint(buf, pos);
    pos = next;
    return v;
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (no === 0) throw new ProtoError('field number 0');
    switch (wire) {
      case WireType.Varint:
        yield { no, wire, varint: varint() };
        break;
      case WireType.Fixed64:
        if (pos + 8 > buf.length) throw new ProtoError('truncated fixed64');
        yield { no, wire, fixed64: buf.subarray(pos, pos + 8) };
        pos += 8;
        break;
      case WireType.Bytes: {
        const len = Number(varint());
        if (pos + len > buf.length) throw new ProtoError('length-delimited field runs past the end');
        yield { no, wire, bytes: buf.subarray(pos, pos + len) };
        pos += len;
        break;
      }
      case WireType.Fixed32:
        if (pos + 4 > buf.length) throw new ProtoError('truncated fixed32');
        yield { no, wire, fixed32: view.getFloat32(pos, true) };
        pos += 4;
        break;
      default:
        throw new ProtoError(`unsupported wire type ${wire}`);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });
export const decodeString = (b: Uint8Array | undefined): string => (b ? utf8.decode(b) : '');

/** Growable output buffer for encoding one message. */
export class ProtoWriter {
  private chunks: number[] = [];
  private parts: Uint8Array[] = [];

  private flush(): void {
    if (this.chunks.length) {
      this.parts.push(Uint8Array.from(this.chunks));
      this.chunks = [];
    }
  }

  private rawVarint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.chunks.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.chunks.push(Number(x));
  }

  private key(no: number, wire: number): void {
    this.rawVarint(BigInt((no << 3) | wire));
  }

  varint(no: number, v: number | bigint): this {
    this.key(no, WireType.Varint);
    this.rawVarint(BigInt(v));
    return this;
  }

  bytes(no: number, b: Uint8Array): this {
    this.key(no, WireType.Bytes);
    this.rawVarint(BigInt(b.length));
    this.flush();
    this.parts.push(b);
    return this;
  }

  string(no: number, s: string): this {
    return this.bytes(no, new TextEncoder().encode(s));
  }

  message(no: number, m: ProtoWriter): this {
    return this.bytes(no, m.finish());
  }

  float(no: number, f: number): this {
    this.key(no, WireType.Fixed32);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.flush();
    this.parts.push(b);
    return this;
  }

  /** Re-emits a field exactly as it was read. */
  field(f: Field): this {
    switch (f.wire) {
      case WireType.Varint:
        return this.varint(f.no, f.varint ?? 0n);
      case WireType.Bytes:
        return this.bytes(f.no, f.bytes ?? new Uint8Array(0));
      case WireType.Fixed32:
        return this.float(f.no, f.fixed32 ?? 0);
      default:
        this.key(f.no, WireType.Fixed64);
        this.flush();
        this.parts.push(f.fixed64 ?? new Uint8Array(8));
        return this;
    }
  }

  packedInt64(no: number, values: readonly number[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.rawVarint(BigInt(v));
    return this.bytes(no, inner.finish());
  }

  finish(): Uint8Array {
    this.flush();
    const total = this.parts.reduce((n, p) => n + p.length, 0);
    const out = new Uint8Array(total);
    let off = 0;
    for (const p of this.parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
}
