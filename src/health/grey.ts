import type { Picture } from '../core/frame.js';

/**
 * The small grey image camera health looks at: the content of a frame's picture (the letterbox
 * padding left out), averaged down by a whole step to about `GREY_SIDE` on its long side, luma
 * ≈ (r + 2g + b) / 4 as the cache's block hash counts it. Made from the picture Argus already
 * decoded and letterboxed for the model: no extra decode.
 */
export interface Grey {
  w: number;
  h: number;
  /** Luma 0..255, row by row. */
  luma: Float32Array;
  /** Each pixel's colour (r, g, b means), for the one-colour measure. */
  rgb: Float32Array;
}

/** The long side the grey image is averaged down to, about (a whole step of the picture's pixels). */
export const GREY_SIDE = 160;

/**
 * The grey image of a picture: its content region (`geometry.innerW`×`innerH` at `padLeft`,
 * `padTop`), each output pixel the mean of a `step`×`step` cell of it.
 */
export function greyOf(p: Picture, side = GREY_SIDE): Grey {
  const g = p.geometry;
  const stride = g.dstW * 3;
  const step = Math.max(1, Math.round(Math.max(g.innerW, g.innerH) / side));
  const w = Math.max(1, Math.floor(g.innerW / step));
  const h = Math.max(1, Math.floor(g.innerH / step));
  const luma = new Float32Array(w * h);
  const rgb = new Float32Array(w * h * 3);
  const n = step * step;
  const d = p.data;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      let r = 0;
      let gr = 0;
      let b = 0;
      for (let yy = 0; yy < step; yy++) {
        let i = (g.padTop + y * step + yy) * stride + (g.padLeft + x * step) * 3;
        for (let xx = 0; xx < step; xx++, i += 3) {
          r += d[i]!;
          gr += d[i + 1]!;
          b += d[i + 2]!;
        }
      }
      const o = y * w + x;
      rgb[o * 3] = r / n;
      rgb[o * 3 + 1] = gr / n;
      rgb[o * 3 + 2] = b / n;
      luma[o] = (r + 2 * gr + b) / (4 * n);
    }
  return { w, h, luma, rgb };
}

/**
 * How much a picture changed from the one before, sensor noise included: the mean absolute
 * difference of two images of the same size (a thumbnail's RGB bytes, or grey images), in levels.
 * A frozen stream decodes the very same pixels again (0); a live camera's noise, however still
 * its scene, moves some of them.
 */
export function residual(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length || a.length === 0) return Infinity;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
  return s / a.length;
}
