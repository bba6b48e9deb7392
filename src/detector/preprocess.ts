import { fitsModel, type Picture } from '../core/frame.js';

/**
 * Converts letterboxed RGB24 pictures (HWC, uint8) into the model's float32 NCHW input, scaled
 * to [0, 1], in batch buffers that are reused rather than allocated per batch.
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
 * Batch input buffers for one model size. A buffer travels to a worker thread and back with
 * its batch (transferred, not copied) and returns here; every buffer is as large as the largest
 * batch seen, so a steady stream of batches allocates one buffer per batch in flight.
 */
export class InputPool {
  private free: Float32Array[] = [];
  private largest = 1;
  /** Buffers allocated so far. */
  allocated = 0;

  constructor(readonly size: number) {}

  /** Floats in one picture's slot. */
  get frameFloats(): number {
    return 3 * this.size * this.size;
  }

  /** A buffer holding `pictures` as NCHW floats, slot by slot. */
  pack(pictures: readonly Picture[]): Float32Array {
    const s = this.size;
    // Every picture is checked before a buffer is taken, so a bad one loses none.
    for (const p of pictures) {
      if (!fitsModel(p, s))
        throw new RangeError(`picture is ${p.geometry.dstW}x${p.geometry.dstH}, the model takes ${s}x${s}`);
    }
    this.largest = Math.max(this.largest, pictures.length);
    const need = pictures.length * this.frameFloats;
    let buf: Float32Array | undefined;
    while (!buf && this.free.length) {
      const b = this.free.pop()!;
      if (b.length >= need) buf = b;
    }
    if (!buf) {
      buf = new Float32Array(this.largest * this.frameFloats);
      this.allocated++;
    }
    pictures.forEach((p, i) => rgbToNchw(p.data, s, s, buf, i));
    return buf;
  }

  /** Gives a buffer back once its batch is done. */
  release(buf: Float32Array): void {
    if (this.free.length < KEEP) this.free.push(buf);
  }
}
