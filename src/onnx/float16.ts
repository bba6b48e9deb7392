/** IEEE half precision, by hand: `model prepare --precision fp16` stores weights this way. */

/** Rounds float32 values to IEEE half precision (round to nearest even), as bit patterns. */
export function toFloat16Bits(values: Float32Array): Uint16Array {
  const out = new Uint16Array(values.length);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < values.length; i++) {
    f32[0] = values[i]!;
    const x = u32[0]!;
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) {
      out[i] = sign | 0x7c00 | (mant ? 0x200 : 0);
      continue;
    }
    let e = exp - 127 + 15;
    if (e >= 0x1f) {
      out[i] = sign | 0x7c00;
      continue;
    }
    if (e <= 0) {
      if (e < -10) {
        out[i] = sign;
        continue;
      }
      mant |= 0x800000;
      const shift = 14 - e;
      const half = 1 << (shift - 1);
      const rest = mant & ((1 << shift) - 1);
      let m = mant >>> shift;
      if (rest > half || (rest === half && m & 1)) m++;
      out[i] = sign | m;
      continue;
    }
    let m = mant >>> 13;
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && m & 1)) {
      m++;
      if (m === 0x400) {
        m = 0;
        e++;
        if (e >= 0x1f) {
          out[i] = sign | 0x7c00;
          continue;
        }
      }
    }
    out[i] = sign | (e << 10) | m;
  }
  return out;
}

/** Half-precision bit patterns back to numbers. */
export function fromFloat16Bits(bits: Uint16Array): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) {
    const h = bits[i]!;
    const sign = h & 0x8000 ? -1 : 1;
    const e = (h >>> 10) & 0x1f;
    const m = h & 0x3ff;
    if (e === 0) out[i] = sign * m * 2 ** -24;
    else if (e === 0x1f) out[i] = m ? NaN : sign * Infinity;
    else out[i] = sign * (1 + m / 1024) * 2 ** (e - 15);
  }
  return out;
}
