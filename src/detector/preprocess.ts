import { fitsModel, type Picture } from '../core/frame.js';

/**
 * Converts letterboxed RGB24 pictures (HWC, uint8) into the model's float32 NCHW input, scaled
 * to [0, 1]: the daemon packs the bytes into pooled batch buffers, and the worker thread that
 * runs the batch converts them into a float buffer of its own. Neither is allocated per batch.
 */
const LUT = new Float32Array(256);
for (let i = 0; i < 256; i++) LUT[i] = i / 255;

/**
 * Writes one `w`×`h` RGB24 frame into `dst` at batch slot `slot` (NCHW). `dst` must hold at
 * least (slot + 1) × 3 × w × h floats.
 */
export function rgbToNchw(src: Uint8Array, w: number, h: number, dst: Float32Array, slot: number): void {
  const plane = w * h;
  if (src.length < plane * 3) throw new RangeError(`frame has ${src.length} bytes, expected ${plane * 3}`);
  const base = slot * 3 * plane;
  if (dst.length < base + 3 * plane) throw new RangeError('batch buffer too small for slot ' + slot);
  const r = base;
  const g = base + plane;
  const b = base + 2 * plane;
  for (let i = 0, j = 0; i < plane; i++, j += 3) {
    dst[r + i] = LUT[src[j]!]!;
    dst[g + i] = LUT[src[j + 1]!]!;
    dst[b + i] = LUT[src[j + 2]!]!;
  }
}

/** Free buffers kept beyond those in flight; more are let go. */
const KEEP = 8;

/**
 * Batch input buffers for one model size: the pictures' RGB bytes, one after another. A buffer
 * travels to a worker thread and back with its batch (transferred, not copied) and returns
 * here; every buffer is as large as the largest batch seen, so a steady stream of batches
 * allocates one buffer per batch in flight. The worker converts the bytes to the model's
 * floats (`NchwBatch`): the daemon's event loop only copies them, a quarter of the bytes and
 * none of the arithmetic (1–2 ms a 640 picture on this machine's cores).
 */
export class InputPool {
  private free: Uint8Array[] = [];
  private largest = 1;
  /** Buffers allocated so far. */
  allocated = 0;

  constructor(readonly size: number) {}

  /** Bytes in one picture's slot. */
  get frameBytes(): number {
    return 3 * this.size * this.size;
  }

  /** A buffer holding `pictures`' RGB bytes, slot by slot. */
  pack(pictures: readonly Picture[]): Uint8Array {
    const s = this.size;
    // Every picture is checked before a buffer is taken, so a bad one loses none.
    for (const p of pictures) {
      if (!fitsModel(p, s))
        throw new RangeError(`picture is ${p.geometry.dstW}x${p.geometry.dstH}, the model takes ${s}x${s}`);
    }
    this.largest = Math.max(this.largest, pictures.length);
    const need = pictures.length * this.frameBytes;
    let buf: Uint8Array | undefined;
    while (!buf && this.free.length) {
      const b = this.free.pop()!;
      if (b.length >= need) buf = b;
    }
    if (!buf) {
      buf = new Uint8Array(this.largest * this.frameBytes);
      this.allocated++;
    }
    pictures.forEach((p, i) => buf.set(p.data, i * this.frameBytes));
    return buf;
  }

  /** Gives a buffer back once its batch is done. */
  release(buf: Uint8Array): void {
    if (this.free.length < KEEP) this.free.push(buf);
  }
}

/**
 * A worker's model input: one float buffer, grown to the largest batch and reused for every
 * run (a run holds it until `session.run` resolves, and a worker runs one batch at a time).
 */
export class NchwBatch {
  private floats = new Float32Array(0);

  constructor(readonly size: number) {}

  /**
   * Pictures `first`…`first + n − 1` of `rgb` (RGB bytes, slot by slot) as `slots` NCHW slots
   * of floats in [0, 1]; slots past `n` (a static batch's padding) are zeros.
   */
  convert(rgb: Uint8Array, first: number, n: number, slots: number): Float32Array {
    const s = this.size;
    const plane = 3 * s * s;
    if (this.floats.length < slots * plane) this.floats = new Float32Array(slots * plane);
    const out = this.floats.subarray(0, slots * plane);
    for (let i = 0; i < n; i++)
      rgbToNchw(rgb.subarray((first + i) * plane, (first + i + 1) * plane), s, s, out, i);
    out.fill(0, n * plane);
    return out;
  }
}
