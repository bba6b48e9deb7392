/**
 * Boxes and letterbox geometry, the words every stage uses for "where" — ingest (ffmpeg's
 * scale/pad filters), the detector (boxes back to source pixels), publish (zones, tracking).
 *
 * Letterboxing is computed as Ultralytics does: scale the source to fit a `dstW`×`dstH` model
 * input keeping its aspect ratio, centre it, pad the rest (with grey 114).
 */
export interface Letterbox {
  srcW: number;
  srcH: number;
  dstW: number;
  dstH: number;
  scale: number;
  /** Size of the scaled image inside the padded input. */
  innerW: number;
  innerH: number;
  padLeft: number;
  padTop: number;
}

export type Box = [x1: number, y1: number, x2: number, y2: number];

export const LETTERBOX_PAD = 114;

export function letterbox(srcW: number, srcH: number, dstW: number, dstH: number = dstW): Letterbox {
  if (!(srcW > 0 && srcH > 0 && dstW > 0 && dstH > 0)) {
    throw new RangeError(`letterbox needs positive sizes, got ${srcW}x${srcH} -> ${dstW}x${dstH}`);
  }
  const scale = Math.min(dstW / srcW, dstH / srcH);
  const innerW = Math.min(dstW, Math.max(1, Math.round(srcW * scale)));
  const innerH = Math.min(dstH, Math.max(1, Math.round(srcH * scale)));
  const dw = (dstW - innerW) / 2;
  const dh = (dstH - innerH) / 2;
  // Ultralytics rounds (d - 0.1) for the leading side, so an odd pad puts the extra pixel after.
  const padLeft = Math.max(0, Math.round(dw - 0.1));
  const padTop = Math.max(0, Math.round(dh - 0.1));
  return { srcW, srcH, dstW, dstH, scale, innerW, innerH, padLeft, padTop };
}

/** Maps a box in model-input pixels to source pixels, clipped to the source image. */
export function toSource(g: Letterbox, box: Readonly<Box>): Box {
  const sx = g.innerW / g.srcW;
  const sy = g.innerH / g.srcH;
  const clip = (v: number, max: number): number => Math.min(max, Math.max(0, v));
  return [
    clip((box[0] - g.padLeft) / sx, g.srcW),
    clip((box[1] - g.padTop) / sy, g.srcH),
    clip((box[2] - g.padLeft) / sx, g.srcW),
    clip((box[3] - g.padTop) / sy, g.srcH),
  ];
}

/** Maps a box in source pixels into model-input pixels (the inverse of `toSource`, unclipped). */
export function toModel(g: Letterbox, box: Readonly<Box>): Box {
  const sx = g.innerW / g.srcW;
  const sy = g.innerH / g.srcH;
  return [box[0] * sx + g.padLeft, box[1] * sy + g.padTop, box[2] * sx + g.padLeft, box[3] * sy + g.padTop];
}

export type Point = readonly [x: number, y: number];

export const centre = (b: Readonly<Box>): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
export const diagonal = (b: Readonly<Box>): number => Math.hypot(b[2] - b[0], b[3] - b[1]);
export const area = (b: Readonly<Box>): number => Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);

/** The box of centre (`cx`, `cy`) and size `w`×`h`: a model's or a filter's centre/size as corners. */
export const fromCentre = (cx: number, cy: number, w: number, h: number): Box => [
  cx - w / 2,
  cy - h / 2,
  cx + w / 2,
  cy + h / 2,
];

/** The straight-line distance between two points. */
export const distance = (p: Point, q: Point): number => Math.hypot(q[0] - p[0], q[1] - p[1]);

/** Which point of a box stands for the object: its centre, or its bottom centre (where it stands). */
export type Anchor = 'center' | 'bottom_center';

/** The point of `box` that `anchor` names. */
export const anchorPoint = (b: Readonly<Box>, anchor: Anchor): [number, number] =>
  anchor === 'center' ? centre(b) : [(b[0] + b[2]) / 2, b[3]];

/** Intersection over union of two boxes (0 when they do not overlap). */
export function iou(p: Readonly<Box>, q: Readonly<Box>): number {
  const ix = Math.min(p[2], q[2]) - Math.max(p[0], q[0]);
  const iy = Math.min(p[3], q[3]) - Math.max(p[1], q[1]);
  if (ix <= 0 || iy <= 0) return 0;
  const inter = ix * iy;
  const union = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
  return union > 0 ? inter / union : 0;
}
