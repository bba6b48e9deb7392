import { toModel, type Box, type Letterbox } from '../core/geometry.js';

/**
 * What the tracker reads of a frame's pixels (the picture the model saw: letterboxed RGB24, and
 * the geometry that maps source pixels into it), for two cheap checks on a box:
 *
 * - a colour histogram of the object (`colourHistogram`): its appearance, which tells apart two
 *   walkers whose boxes cross, or the one who comes back from behind a bus;
 * - a coarse picture of the box (`patchOf`): whether the place a stationary object stood in
 *   still shows what it showed (`patchChanged`), so a parked car the detector misses for a while
 *   is not ended, and one that drove off is.
 *
 * Both read a sparse grid of pixels (at most SAMPLES² of them), not the whole box: a few
 * microseconds per detection at any resolution.
 */
export interface Pixels {
  data: Uint8Array;
  geometry: Letterbox;
}

/** Levels per channel of the histogram: 4 × 4 × 4 = 64 bins. */
const LEVELS = 4;
export const BINS = LEVELS ** 3;
/** The grid read along each axis. */
const SAMPLES = 24;
/** The histogram reads the middle of the box (this fraction of its width and height): less background. */
const INNER_W = 0.6;
const INNER_H = 0.8;

/** The box (source pixels) in the picture's pixels, clipped to the picture; undefined when empty. */
function inPicture(p: Pixels, box: Readonly<Box>): Box | undefined {
  const g = p.geometry;
  if (p.data.length < g.dstW * g.dstH * 3) return undefined;
  const m = toModel(g, box);
  const x1 = Math.max(0, Math.floor(m[0]));
  const y1 = Math.max(0, Math.floor(m[1]));
  const x2 = Math.min(g.dstW, Math.ceil(m[2]));
  const y2 = Math.min(g.dstH, Math.ceil(m[3]));
  return x2 - x1 >= 2 && y2 - y1 >= 2 ? [x1, y1, x2, y2] : undefined;
}

/**
 * The object's colours: a 64-bin histogram (4 levels per channel) of the middle of its box,
 * summing to 1; undefined when the box is (almost) outside the picture.
 */
export function colourHistogram(p: Pixels, box: Readonly<Box>): Float32Array | undefined {
  const w = box[2] - box[0];
  const h = box[3] - box[1];
  const mx = (w * (1 - INNER_W)) / 2;
  const my = (h * (1 - INNER_H)) / 2;
  const r = inPicture(p, [box[0] + mx, box[1] + my, box[2] - mx, box[3] - my]);
  if (!r) return undefined;
  const hist = new Float32Array(BINS);
  const stride = p.geometry.dstW * 3;
  const nx = Math.min(SAMPLES, r[2] - r[0]);
  const ny = Math.min(SAMPLES, r[3] - r[1]);
  const shift = 8 - Math.log2(LEVELS);
  for (let j = 0; j < ny; j++) {
    const y = r[1] + Math.floor(((j + 0.5) * (r[3] - r[1])) / ny);
    for (let i = 0; i < nx; i++) {
      const x = r[0] + Math.floor(((i + 0.5) * (r[2] - r[0])) / nx);
      const o = y * stride + x * 3;
      const bin =
        ((p.data[o]! >> shift) * LEVELS + (p.data[o + 1]! >> shift)) * LEVELS + (p.data[o + 2]! >> shift);
      hist[bin]!++;
    }
  }
  const n = nx * ny;
  for (let b = 0; b < BINS; b++) hist[b]! /= n;
  return hist;
}

/** How alike two histograms are: their Bhattacharyya coefficient, 1 for the same, 0 for no colour in common. */
export function similarity(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.sqrt(a[i]! * b[i]!);
  return Math.min(1, s);
}

/** `into` moved towards `sample` by `rate` (a running mean of an object's looks), in place. */
export function blend(into: Float32Array, sample: Float32Array, rate: number): Float32Array {
  for (let i = 0; i < into.length; i++) into[i] = into[i]! * (1 - rate) + sample[i]! * rate;
  return into;
}

/** Cells of a patch along each axis: 8 × 8 mean brightnesses. */
export const PATCH = 8;
/** Samples per cell along each axis. */
const PER_CELL = 3;

/** The box as 8 × 8 cells of mean brightness ((r + 2g + b) / 4); undefined when outside the picture. */
export function patchOf(p: Pixels, box: Readonly<Box>): Uint8Array | undefined {
  const r = inPicture(p, box);
  if (!r) return undefined;
  const out = new Uint8Array(PATCH * PATCH);
  const stride = p.geometry.dstW * 3;
  const n = PATCH * PER_CELL;
  for (let cy = 0; cy < PATCH; cy++)
    for (let cx = 0; cx < PATCH; cx++) {
      let sum = 0;
      for (let j = 0; j < PER_CELL; j++) {
        const y = r[1] + Math.floor(((cy * PER_CELL + j + 0.5) * (r[3] - r[1])) / n);
        for (let i = 0; i < PER_CELL; i++) {
          const x = r[0] + Math.floor(((cx * PER_CELL + i + 0.5) * (r[2] - r[0])) / n);
          const o = y * stride + x * 3;
          sum += (p.data[o]! + 2 * p.data[o + 1]! + p.data[o + 2]!) / 4;
        }
      }
      out[cy * PATCH + cx] = Math.round(sum / (PER_CELL * PER_CELL));
    }
  return out;
}

/**
 * A cell has changed when its brightness moved by more than this (of 255), after the patch's
 * mean shift is taken out: compression noise and a cloud's shadow move no cell that far, a
 * passer-by in front or the object gone (the ground showing) move several.
 */
export const CELL_CHANGE = 24;
/** The place shows something else once more than this fraction of its cells changed. */
export const CHANGED_CELLS = 0.15;

/** A change of the patch's mean brightness beyond this is another thing there, whatever its cells say. */
export const SHIFT_CHANGE = 48;

/**
 * Whether `now` shows something else than `before` (two patches of one place), in the cells
 * `hidden` does not mark (where something else stands in front: `coveredCells`).
 */
export function patchChanged(before: Uint8Array, now: Uint8Array, hidden?: Uint8Array): boolean {
  let shift = 0;
  let n = 0;
  for (let i = 0; i < before.length; i++)
    if (!hidden?.[i]) {
      shift += now[i]! - before[i]!;
      n++;
    }
  if (n === 0) return false;
  shift /= n;
  if (Math.abs(shift) > SHIFT_CHANGE) return true;
  let changed = 0;
  for (let i = 0; i < before.length; i++)
    if (!hidden?.[i] && Math.abs(now[i]! - before[i]! - shift) > CELL_CHANGE) changed++;
  return changed > CHANGED_CELLS * n;
}

/** The cells of `box`'s patch (as patchOf divides it) that one of `others` overlaps (1): what may not show the object. */
export function coveredCells(box: Readonly<Box>, others: readonly (readonly number[])[]): Uint8Array {
  const out = new Uint8Array(PATCH * PATCH);
  const cw = (box[2] - box[0]) / PATCH;
  const ch = (box[3] - box[1]) / PATCH;
  for (let cy = 0; cy < PATCH; cy++)
    for (let cx = 0; cx < PATCH; cx++) {
      const [x1, y1] = [box[0] + cx * cw, box[1] + cy * ch];
      const [x2, y2] = [x1 + cw, y1 + ch];
      if (others.some((o) => o[0]! < x2 && o[2]! > x1 && o[1]! < y2 && o[3]! > y1)) out[cy * PATCH + cx] = 1;
    }
  return out;
}
