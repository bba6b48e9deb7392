import { letterbox } from '../../../src/core/geometry.js';
import type { Picture } from '../../../src/core/frame.js';
import { seededRandom } from '../../helpers/random.js';

/** Synthetic pictures for camera health's tests: a textured scene, and what tampering does to it. */
export const SIDE = 160;

/** A scene in scene coordinates (wider than the view, so a shifted view still shows scene). */
export function scene(seed = 1): (x: number, y: number) => number {
  const r = seededRandom(seed);
  const rects = Array.from({ length: 90 }, () => ({
    x: r() * 260 - 50,
    y: r() * 260 - 50,
    w: 6 + r() * 30,
    h: 6 + r() * 30,
    v: 30 + r() * 190,
  }));
  return (x, y) => {
    let v = 60 + 0.3 * x + 0.2 * y;
    for (const q of rects) if (x >= q.x && x < q.x + q.w && y >= q.y && y < q.y + q.h) v = q.v;
    return v;
  };
}

/** Options: light gain, sensor noise, a view shift, a box blur radius, a flat patch. */
export interface Shot {
  gain?: number;
  noise?: number;
  dx?: number;
  dy?: number;
  blur?: number;
  patch?: { x0: number; y0: number; x1: number; y1: number; v: number };
  seed?: number;
}

/** The view as a SIDE×SIDE letterboxed picture (grey RGB). */
export function picture(s: (x: number, y: number) => number, o: Shot = {}): Picture {
  const r = seededRandom(o.seed ?? 7);
  const plane = new Float32Array(SIDE * SIDE);
  for (let y = 0; y < SIDE; y++)
    for (let x = 0; x < SIDE; x++) plane[y * SIDE + x] = s(x + (o.dx ?? 0), y + (o.dy ?? 0));
  let img = plane;
  const k = o.blur ?? 0;
  if (k > 0) {
    img = new Float32Array(SIDE * SIDE);
    for (let y = 0; y < SIDE; y++)
      for (let x = 0; x < SIDE; x++) {
        let sum = 0;
        let n = 0;
        for (let yy = Math.max(0, y - k); yy <= Math.min(SIDE - 1, y + k); yy++)
          for (let xx = Math.max(0, x - k); xx <= Math.min(SIDE - 1, x + k); xx++, n++)
            sum += plane[yy * SIDE + xx]!;
        img[y * SIDE + x] = sum / n;
      }
  }
  const data = Buffer.alloc(SIDE * SIDE * 3);
  for (let y = 0; y < SIDE; y++)
    for (let x = 0; x < SIDE; x++) {
      const p = o.patch;
      let v = p && x >= p.x0 && x < p.x1 && y >= p.y0 && y < p.y1 ? p.v : img[y * SIDE + x]!;
      v = v * (o.gain ?? 1) + (o.noise ? (r() - 0.5) * 2 * o.noise : 0);
      const b = Math.max(0, Math.min(255, Math.round(v)));
      data.fill(b, (y * SIDE + x) * 3, (y * SIDE + x) * 3 + 3);
    }
  return { data, geometry: letterbox(SIDE, SIDE, SIDE) };
}

/** `p` coloured: red raised and blue lowered by `by` levels, the luma kept (a colour camera's day). */
export function tint(p: Picture, by = 20): Picture {
  const data = Buffer.from(p.data);
  for (let i = 0; i < data.length; i += 3) {
    data[i] = Math.min(255, data[i]! + by);
    data[i + 2] = Math.max(0, data[i + 2]! - by);
  }
  return { data, geometry: p.geometry };
}

/** `p` with each level mapped by `f` (grey stays grey): an IR switch's flatter, brighter picture. */
export function levels(p: Picture, f: (v: number) => number): Picture {
  const data = Buffer.from(p.data);
  for (let i = 0; i < data.length; i++) data[i] = Math.max(0, Math.min(255, Math.round(f(data[i]!))));
  return { data, geometry: p.geometry };
}
