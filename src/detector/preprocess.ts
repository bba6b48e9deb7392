/**
 * Converts letterboxed RGB24 frames (HWC, uint8) into the model's float32 NCHW input,
 * scaled to [0, 1], written in place into a caller-owned batch buffer.
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
