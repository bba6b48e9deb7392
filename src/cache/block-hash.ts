import { THUMB_SIZE } from '../core/frame.js';

/**
 * The frame cache's perceptual hash: the frame averaged down to a 32×32 grey thumbnail
 * (luma ≈ (r + 2g + b) / 4, per cell). The distance between two hashes is the number of cells
 * whose brightness differs by more than a threshold: compression noise moves no cell that far,
 * a person walking through moves several, a light switching on moves them all.
 *
 * Measured against a 64-bit pHash and imghash's blockhash on real clips (bench/hash.ts): those
 * global hashes barely change when small objects move (pHash called 81% of the frames of a
 * street with walking pedestrians "unchanged" at distance 4), which would hide exactly what
 * cameras are for; this one called none of them unchanged and every frame of a still camera
 * unchanged, for about pHash's cost (0.67 ms a 320×320 frame, 2.9 ms at 640; docs/performance.md).
 *
 * A camera's frames come with a thumbnail from ffmpeg (ingest/ffmpeg-args.ts): the same letterbox
 * at 32×32, each pixel the mean of the source pixels of its cell. Its hash (one pixel per cell)
 * is this hash up to rounding, for a read of 3 KB instead of the whole frame.
 */
export const GRID = THUMB_SIZE;

export type BlockHash = Uint8Array;

const columnTables = new Map<number, Uint16Array>();
function columns(size: number): Uint16Array {
  let t = columnTables.get(size);
  if (!t) {
    t = new Uint16Array(size);
    for (let x = 0; x < size; x++) t[x] = Math.min(GRID - 1, Math.floor((x * GRID) / size));
    columnTables.set(size, t);
  }
  return t;
}

/** Hash of a `size`×`size` RGB24 frame (size ≥ 32). */
export function blockHash(rgb: Uint8Array, size: number): BlockHash {
  if (size < GRID) throw new RangeError(`frame size ${size} is below the hash grid of ${GRID}`);
  const sums = new Uint32Array(GRID * GRID);
  const counts = new Uint32Array(GRID * GRID);
  const col = columns(size);
  for (let y = 0; y < size; y++) {
    const row = Math.min(GRID - 1, Math.floor((y * GRID) / size)) * GRID;
    let i = y * size * 3;
    for (let x = 0; x < size; x++, i += 3) {
      const c = row + col[x]!;
      sums[c]! += rgb[i]! + 2 * rgb[i + 1]! + rgb[i + 2]!;
      counts[c]!++;
    }
  }
  const out = new Uint8Array(GRID * GRID);
  for (let c = 0; c < out.length; c++) out[c] = Math.round(sums[c]! / (4 * counts[c]!));
  return out;
}

/**
 * Number of cells whose brightness differs by more than `threshold` (0..255), leaving out the
 * cells `ignore` marks (a camera's `cache_mask`, see cellMask).
 */
export function blockDistance(a: BlockHash, b: BlockHash, threshold: number, ignore?: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (!ignore?.[i] && Math.abs(a[i]! - b[i]!) > threshold) n++;
  return n;
}
