/**
 * Perceptual hash of a model-ready RGB24 frame (pHash): average the frame down to a 32×32 grey
 * image, take its 2-D DCT, and set one bit per low-frequency coefficient (the top-left 8×8)
 * that is above their median. Frames that look alike have hashes a few bits apart; noise and
 * compression barely move them, a real change of the scene moves many.
 */
const N = 32;
const K = 8;

/** cos((2x + 1) u π / 2N) for u < K, x < N: the only DCT terms pHash needs. */
const COS = new Float64Array(K * N);
for (let u = 0; u < K; u++)
  for (let x = 0; x < N; x++) COS[u * N + x] = Math.cos(((2 * x + 1) * u * Math.PI) / (2 * N));

export type Hash = Uint32Array;

/** Averages `size`×`size` RGB24 into an N×N grey image (luma ≈ (r + 2g + b) / 4). */
function shrink(rgb: Uint8Array, size: number, out: Float64Array): void {
  out.fill(0);
  const block = size / N;
  for (let y = 0; y < size; y++) {
    const row = Math.min(N - 1, Math.floor(y / block)) * N;
    let i = y * size * 3;
    for (let x = 0; x < size; x++, i += 3) {
      out[row + Math.min(N - 1, Math.floor(x / block))]! += rgb[i]! + 2 * rgb[i + 1]! + rgb[i + 2]!;
    }
  }
}

/** The 64-bit pHash of a `size`×`size` RGB24 frame, as two 32-bit words. */
export function phash(rgb: Uint8Array, size: number): Hash {
  const grey = new Float64Array(N * N);
  shrink(rgb, size, grey);
  // Separable DCT, low frequencies only: rows first (N×K), then columns (K×K).
  const rows = new Float64Array(N * K);
  for (let y = 0; y < N; y++) {
    for (let u = 0; u < K; u++) {
      let s = 0;
      for (let x = 0; x < N; x++) s += grey[y * N + x]! * COS[u * N + x]!;
      rows[y * K + u] = s;
    }
  }
  const coeffs = new Float64Array(K * K);
  for (let v = 0; v < K; v++) {
    for (let u = 0; u < K; u++) {
      let s = 0;
      for (let y = 0; y < N; y++) s += rows[y * K + u]! * COS[v * N + y]!;
      coeffs[v * K + u] = s;
    }
  }
  // The median leaves out the DC term, which only says how bright the frame is overall.
  const sorted = Float64Array.from(coeffs.subarray(1)).sort();
  const median = (sorted[31]! + sorted[32]!) / 2;
  const hash = new Uint32Array(2);
  for (let i = 0; i < 64; i++) if (coeffs[i]! > median) hash[i >> 5]! |= 1 << (i & 31);
  return hash;
}

function popcount(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export function hamming(a: Hash, b: Hash): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += popcount((a[i]! ^ b[i]!) >>> 0);
  return d;
}
