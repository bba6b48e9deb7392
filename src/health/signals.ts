import type { Grey } from './grey.js';

/**
 * Camera health's signals, as plain functions of grey images (grey.ts): what a picture is made
 * of (`features`), and how it differs from the camera's reference (`compare`). No single signal
 * tells the five faults apart (issue 49): a hash misses defocus, mean luma calls night
 * "covered", detail alone misses a move. So each measure is one a fault changes and the scene's
 * own variation (dusk, an IR switch, a crowd) does not:
 *
 * - per block of an 8×8 grid, its contrast (the luma's standard deviation) relative to the
 *   picture's mean luma: dimming the whole scene leaves it; a cloth or spray paint over a block
 *   takes it away;
 * - per block, its sharpness: mean |Laplacian| ÷ contrast, which no change of light or gain
 *   moves (both scale together) and sensor noise only raises, while defocus lowers it;
 * - the picture's shift against the reference, found by registration: the normalised
 *   correlation of their gradient images over every shift up to a quarter of the picture, coarse
 *   to fine (a camera turned 10 % matches its reference shifted 10 %; a crowd passing does not
 *   shift the background);
 * - mean luma and spread (a black or blown-out picture), and the share of the picture in one
 *   colour (spray paint, a cap), its tolerance following the light.
 */

/** The blocks of the grid, across and down. */
export const GRID = 8;

/** What a picture is made of, as health compares it. */
export interface Features {
  /** The grey image's size (a reference of another size is learnt again). */
  w: number;
  h: number;
  /** Mean luma, 0..255. */
  luma: number;
  /** The luma's standard deviation over the picture. */
  spread: number;
  /** The share of the picture within a small distance of its most common colour, 0..1. */
  uniformity: number;
  /**
   * How coloured the picture is: the largest, over the grid's blocks, of each block's mean
   * colour's distance from grey (levels). An IR (monochrome) picture is grey in every block
   * (sensor noise averages out over a block); one coloured block (a coloured on-screen text or
   * logo) makes it colour (docs/mqtt.md). Undefined in a reference stored before it was kept.
   */
  chroma?: number;
  /** The grey image itself (the current picture's only: references do not keep it). */
  image?: Float32Array;
  /** Per block (GRID×GRID, row by row): its mean luma. */
  mean: Float32Array;
  /** Per block: the luma's standard deviation. */
  contrast: Float32Array;
  /** Per block: mean |Laplacian| ÷ (contrast + 2). */
  sharpness: Float32Array;
  /** The gradient magnitude averaged over 2×2 cells: `ew`×`eh`, for registration. */
  edges: Float32Array;
  ew: number;
  eh: number;
}

/** How a picture differs from the reference. */
export interface Measures {
  luma: number;
  spread: number;
  uniformity: number;
  /**
   * The share of the reference's detailed blocks whose detail is gone: contrast below 30 % of it,
   * or blurred and darkened (or lightened) as a cloth near the lens makes it.
   */
  blank: number;
  /** The median of the remaining detailed blocks' sharpness ÷ the reference's (1: as sharp). */
  sharpness: number;
  /** The shift found by registration, as a share of the picture (the larger of x and y). */
  shift: number;
  /** The gradient images' correlation at that shift, and unshifted (−1..1). */
  match: number;
  match0: number;
  /**
   * `blank` with the shift found compensated: the reference's detailed blocks looked for where the
   * shift put them, those that left the view not counted (equal to `blank` without a shift).
   */
  blankShifted: number;
}

/** A block whose reference contrast is below this (levels) is flat (sky, a wall): it says nothing. */
export const DETAILED = 4;
/** A detailed block whose contrast falls below this share of the reference's (light allowed for) is lost. */
export const LOST = 0.3;
/**
 * A detailed block whose sharpness falls below this share of the reference's is lost too when its
 * brightness moved by more than `SHADED` of the reference's (or 20 levels): a cloth near the lens
 * is a dim blur, where defocus keeps each block's brightness.
 */
export const BLURRED = 0.5;
export const SHADED = 0.3;

/** Pixel ranges of block `i` of `n` over `size` pixels. */
const span = (i: number, n: number, size: number): [number, number] => [
  Math.floor((i * size) / n),
  Math.floor(((i + 1) * size) / n),
];

/** The features of a grey image (at least 8×8). */
export function features(g: Grey): Features {
  const { w, h, luma: L } = g;
  let sum = 0;
  let sq = 0;
  for (let i = 0; i < L.length; i++) {
    sum += L[i]!;
    sq += L[i]! * L[i]!;
  }
  const mean = sum / L.length;
  const spread = Math.sqrt(Math.max(0, sq / L.length - mean * mean));

  const means = new Float32Array(GRID * GRID);
  const chromas = new Float32Array(GRID * GRID);
  const contrast = new Float32Array(GRID * GRID);
  const sharpness = new Float32Array(GRID * GRID);
  for (let by = 0; by < GRID; by++)
    for (let bx = 0; bx < GRID; bx++) {
      const [x0, x1] = span(bx, GRID, w);
      const [y0, y1] = span(by, GRID, h);
      let s = 0;
      let s2 = 0;
      let lap = 0;
      let n = 0;
      let nl = 0;
      let cr = 0;
      let cb = 0;
      for (let y = y0; y < y1; y++)
        for (let x = x0; x < x1; x++) {
          const v = L[y * w + x]!;
          cr += g.rgb[(y * w + x) * 3]! - v;
          cb += g.rgb[(y * w + x) * 3 + 2]! - v;
          s += v;
          s2 += v * v;
          n++;
          if (x > 0 && y > 0 && x < w - 1 && y < h - 1) {
            lap += Math.abs(
              4 * v - L[y * w + x - 1]! - L[y * w + x + 1]! - L[(y - 1) * w + x]! - L[(y + 1) * w + x]!,
            );
            nl++;
          }
        }
      const b = by * GRID + bx;
      const m = n ? s / n : 0;
      const sd = n ? Math.sqrt(Math.max(0, s2 / n - m * m)) : 0;
      means[b] = m;
      contrast[b] = sd;
      sharpness[b] = nl ? lap / nl / (sd + 2) : 0;
      chromas[b] = n ? Math.hypot(cr / n, cb / n) : 0;
    }
  chromas.sort();

  const ew = Math.max(1, w >> 1);
  const eh = Math.max(1, h >> 1);
  const edges = new Float32Array(ew * eh);
  for (let y = 1; y < h - 1; y++)
    for (let x = 1; x < w - 1; x++) {
      const gx = L[y * w + x + 1]! - L[y * w + x - 1]!;
      const gy = L[(y + 1) * w + x]! - L[(y - 1) * w + x]!;
      const ex = Math.min(ew - 1, x >> 1);
      const ey = Math.min(eh - 1, y >> 1);
      edges[ey * ew + ex]! += Math.abs(gx) + Math.abs(gy);
    }
  // Smoothed (3×3 box), so registration follows the scene's structure rather than its noise.
  const smooth = new Float32Array(ew * eh);
  for (let y = 0; y < eh; y++)
    for (let x = 0; x < ew; x++) {
      let s = 0;
      let n = 0;
      for (let yy = Math.max(0, y - 1); yy <= Math.min(eh - 1, y + 1); yy++)
        for (let xx = Math.max(0, x - 1); xx <= Math.min(ew - 1, x + 1); xx++, n++) s += edges[yy * ew + xx]!;
      smooth[y * ew + x] = s / n;
    }
  return {
    w,
    h,
    luma: mean,
    spread,
    // The tolerance follows the light: a dim scene's colours lie closer, and are not one colour.
    uniformity: uniformity(g.rgb, Math.max(4, (24 * (mean + 16)) / 144)),
    chroma: chromas[GRID * GRID - 1]!,
    image: L,
    mean: means,
    contrast,
    sharpness,
    edges: smooth,
    ew,
    eh,
  };
}

/**
 * The share of pixels (RGB triples) within `tolerance` levels (per channel, at most) of the most
 * common colour: the colours counted in 8 levels a channel, the fullest bin's mean colour taken.
 */
export function uniformity(rgb: Float32Array, tolerance = 24): number {
  const n = Math.floor(rgb.length / 3);
  if (n === 0) return 0;
  const bins = new Uint32Array(512);
  const q = (v: number): number => Math.min(7, Math.floor(v / 32));
  for (let i = 0; i < n; i++) bins[q(rgb[i * 3]!) * 64 + q(rgb[i * 3 + 1]!) * 8 + q(rgb[i * 3 + 2]!)]!++;
  let best = 0;
  for (let b = 1; b < 512; b++) if (bins[b]! > bins[best]!) best = b;
  let r = 0;
  let gr = 0;
  let bl = 0;
  for (let i = 0; i < n; i++)
    if (q(rgb[i * 3]!) * 64 + q(rgb[i * 3 + 1]!) * 8 + q(rgb[i * 3 + 2]!) === best) {
      r += rgb[i * 3]!;
      gr += rgb[i * 3 + 1]!;
      bl += rgb[i * 3 + 2]!;
    }
  const c = bins[best]!;
  r /= c;
  gr /= c;
  bl /= c;
  let near = 0;
  for (let i = 0; i < n; i++)
    if (
      Math.abs(rgb[i * 3]! - r) <= tolerance &&
      Math.abs(rgb[i * 3 + 1]! - gr) <= tolerance &&
      Math.abs(rgb[i * 3 + 2]! - bl) <= tolerance
    )
      near++;
  return near / n;
}

/** Normalised correlation of `a` and `b` (w×h) where `a` shifted by (dx, dy) overlaps `b`. */
function ncc(a: Float32Array, b: Float32Array, w: number, h: number, dx: number, dy: number): number {
  const x0 = Math.max(0, dx);
  const x1 = Math.min(w, w + dx);
  const y0 = Math.max(0, dy);
  const y1 = Math.min(h, h + dy);
  let n = 0;
  let sa = 0;
  let sb = 0;
  let saa = 0;
  let sbb = 0;
  let sab = 0;
  for (let y = y0; y < y1; y++) {
    let ia = (y - dy) * w + (x0 - dx);
    let ib = y * w + x0;
    for (let x = x0; x < x1; x++, ia++, ib++) {
      const va = a[ia]!;
      const vb = b[ib]!;
      sa += va;
      sb += vb;
      saa += va * va;
      sbb += vb * vb;
      sab += va * vb;
      n++;
    }
  }
  if (n === 0) return 0;
  const cov = sab - (sa * sb) / n;
  const va = saa - (sa * sa) / n;
  const vb = sbb - (sb * sb) / n;
  return va > 1e-6 && vb > 1e-6 ? cov / Math.sqrt(va * vb) : 0;
}

/** `a` (w×h) averaged over 2×2 cells. */
function halve(a: Float32Array, w: number, h: number): { a: Float32Array; w: number; h: number } {
  const hw = Math.max(1, w >> 1);
  const hh = Math.max(1, h >> 1);
  const out = new Float32Array(hw * hh);
  for (let y = 0; y < hh * 2 && y < h; y++)
    for (let x = 0; x < hw * 2 && x < w; x++) out[(y >> 1) * hw + (x >> 1)]! += a[y * w + x]! / 4;
  return { a: out, w: hw, h: hh };
}

/** Where `cur` matches `ref` best: its shift in pixels of the images given, and the correlations. */
export interface Registration {
  dx: number;
  dy: number;
  match: number;
  match0: number;
}

/**
 * Registration of `cur` against `ref` (both w×h): every shift up to `maxShare` of the picture
 * on images halved once, then ±1 pixel around the best at full size. A shift must leave at least
 * half of each side overlapping.
 */
export function register(
  cur: Float32Array,
  ref: Float32Array,
  w: number,
  h: number,
  maxShare = 0.25,
): Registration {
  const c = halve(cur, w, h);
  const r = halve(ref, w, h);
  const mx = Math.max(1, Math.round(c.w * maxShare));
  const my = Math.max(1, Math.round(c.h * maxShare));
  let best = { dx: 0, dy: 0, m: -Infinity };
  for (let dy = -my; dy <= my; dy++)
    for (let dx = -mx; dx <= mx; dx++) {
      const m = ncc(c.a, r.a, c.w, c.h, dx, dy);
      if (m > best.m) best = { dx, dy, m };
    }
  let fine = { dx: 0, dy: 0, m: -Infinity };
  for (let dy = best.dy * 2 - 1; dy <= best.dy * 2 + 1; dy++)
    for (let dx = best.dx * 2 - 1; dx <= best.dx * 2 + 1; dx++) {
      const m = ncc(cur, ref, w, h, dx, dy);
      if (m > fine.m) fine = { dx, dy, m };
    }
  const match0 = ncc(cur, ref, w, h, 0, 0);
  // A shift of a pixel or less is no shift: the unshifted match stands.
  if (Math.max(Math.abs(fine.dx), Math.abs(fine.dy)) <= 1) return { dx: 0, dy: 0, match: match0, match0 };
  return { dx: fine.dx, dy: fine.dy, match: fine.m, match0 };
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Whether a detailed reference block (contrast `rc`, mean `rm`) lost its detail in the picture. */
function lostBlock(
  contrast: number,
  mean: number,
  sharpRatio: number,
  rc: number,
  rm: number,
  light: number,
): boolean {
  const shaded = Math.abs(mean - rm) > Math.max(20, SHADED * rm);
  return (contrast * light) / rc < LOST || (sharpRatio < BLURRED && shaded);
}

/** A block must keep at least this share of its pixels in view, shifted, to be judged. */
const IN_VIEW = 0.75;

/**
 * `blank` with the view's shift compensated: each detailed reference block looked for in `image`
 * (w×h) where a shift of (sx, sy) grey pixels put it (reference pixel x is the picture's x − sx),
 * its contrast and mean there; a block with less than `IN_VIEW` of it left in the picture left the
 * view and is not counted. Sharpness is not judged here (the blocks straddle the grid).
 */
function blankShifted(
  image: Float32Array,
  ref: Features,
  w: number,
  h: number,
  sx: number,
  sy: number,
  light: number,
): number {
  let judged = 0;
  let lost = 0;
  for (let by = 0; by < GRID; by++)
    for (let bx = 0; bx < GRID; bx++) {
      const b = by * GRID + bx;
      const rc = ref.contrast[b]!;
      if (rc < DETAILED) continue;
      const [rx0, rx1] = span(bx, GRID, w);
      const [ry0, ry1] = span(by, GRID, h);
      const x0 = Math.max(0, rx0 - sx);
      const x1 = Math.min(w, rx1 - sx);
      const y0 = Math.max(0, ry0 - sy);
      const y1 = Math.min(h, ry1 - sy);
      const n = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
      if (n < IN_VIEW * (rx1 - rx0) * (ry1 - ry0)) continue;
      let s = 0;
      let s2 = 0;
      for (let y = y0; y < y1; y++)
        for (let x = x0; x < x1; x++) {
          const v = image[y * w + x]!;
          s += v;
          s2 += v * v;
        }
      const m = s / n;
      judged++;
      if (lostBlock(Math.sqrt(Math.max(0, s2 / n - m * m)), m, 1, rc, ref.mean[b]!, light)) lost++;
    }
  return judged ? lost / judged : 0;
}

/** How `cur` differs from `ref` (features of the same size). */
export function compare(cur: Features, ref: Features): Measures {
  // Contrast relative to the light: a scene dimmed to a third keeps its blocks' relative contrast.
  const light = (ref.luma + 16) / (cur.luma + 16);
  let detailed = 0;
  let lost = 0;
  const sharp: number[] = [];
  for (let b = 0; b < GRID * GRID; b++) {
    const rc = ref.contrast[b]!;
    if (rc < DETAILED) continue;
    detailed++;
    const sharpRatio = ref.sharpness[b]! > 0 ? cur.sharpness[b]! / ref.sharpness[b]! : 1;
    if (lostBlock(cur.contrast[b]!, cur.mean[b]!, sharpRatio, rc, ref.mean[b]!, light)) lost++;
    else sharp.push(sharpRatio);
  }
  const reg = register(cur.edges, ref.edges, cur.ew, cur.eh);
  const blank = detailed ? lost / detailed : 0;
  // The edge images are the grey image halved: a shift of one of their pixels is two grey pixels.
  const sx = Math.round((reg.dx * cur.w) / cur.ew);
  const sy = Math.round((reg.dy * cur.h) / cur.eh);
  return {
    luma: cur.luma,
    spread: cur.spread,
    uniformity: cur.uniformity,
    blank,
    // Too few blocks left to judge (most of the view lost): as sharp as it was.
    sharpness: sharp.length >= Math.max(3, detailed / 5) ? median(sharp) : 1,
    shift: Math.max(Math.abs(reg.dx) / cur.ew, Math.abs(reg.dy) / cur.eh),
    match: reg.match,
    match0: reg.match0,
    blankShifted:
      (sx !== 0 || sy !== 0) && cur.image && cur.image.length === cur.w * cur.h
        ? blankShifted(cur.image, ref, cur.w, cur.h, sx, sy, light)
        : blank,
  };
}
