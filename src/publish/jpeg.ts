import sharp, { type Sharp } from 'sharp';
import type { Detection } from '../core/frame.js';
import type { Box, Letterbox } from '../core/geometry.js';

/**
 * JPEGs of frames as the model saw them: the live page's annotated frames (http) and event
 * snapshots (snapshots.ts). Frames are letterboxed RGB at the model's input size; the JPEGs are
 * the picture inside the padding, at that scale. Boxes come in source pixels.
 */

const COLOURS = [
  '#ff3838',
  '#ff9d97',
  '#ff701f',
  '#ffb21d',
  '#cff231',
  '#48f90a',
  '#92cc17',
  '#3ddb86',
  '#1a9334',
  '#00d4bb',
];

/** Each side of a crop reaches this fraction of the box's size beyond it: the object with some context. */
export const CROP_MARGIN = 0.15;

const escapeXml = (s: string): string => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The letterboxed picture as sharp input. */
const picture = (rgb: Buffer, g: Letterbox): Sharp =>
  sharp(rgb, { raw: { width: g.dstW, height: g.dstH, channels: 3 } });

/**
 * A JPEG of a frame as the model saw it (the letterbox padding cut away) with its detections
 * drawn: a box and a label per object. Boxes come in source pixels and are scaled to the image.
 */
export async function annotatedJpeg(
  rgb: Buffer,
  g: Letterbox,
  detections: readonly Detection[],
  quality = 80,
): Promise<Buffer> {
  const w = g.innerW;
  const h = g.innerH;
  const sx = w / g.srcW;
  const sy = h / g.srcH;
  const shapes = detections.map((d, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const x = Math.round(d.box[0] * sx);
    const y = Math.round(d.box[1] * sy);
    const bw = Math.max(1, Math.round((d.box[2] - d.box[0]) * sx));
    const bh = Math.max(1, Math.round((d.box[3] - d.box[1]) * sy));
    const text = `${escapeXml(d.label)} ${d.score.toFixed(2)}`;
    return `<rect x="${x}" y="${y}" width="${bw}" height="${bh}" fill="none" stroke="${colour}" stroke-width="2"/><text x="${x + 2}" y="${Math.max(10, y - 3)}" font-family="sans-serif" font-size="11" fill="${colour}">${text}</text>`;
  });
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${shapes.join('')}</svg>`,
  );
  return picture(rgb, g)
    .extract({ left: g.padLeft, top: g.padTop, width: w, height: h })
    .composite([{ input: svg, top: 0, left: 0 }])
    .jpeg({ quality })
    .toBuffer();
}

/**
 * Where the crop of a box (source pixels) lies in the picture inside the padding: the box grown
 * by CROP_MARGIN of its size on each side, kept within the picture, at least 1×1.
 */
export function cropRegion(
  g: Letterbox,
  box: Readonly<Box>,
): { left: number; top: number; width: number; height: number } {
  const sx = g.innerW / g.srcW;
  const sy = g.innerH / g.srcH;
  const mx = (box[2] - box[0]) * CROP_MARGIN;
  const my = (box[3] - box[1]) * CROP_MARGIN;
  const clip = (v: number, max: number): number => Math.min(max, Math.max(0, v));
  const left = clip(Math.floor((box[0] - mx) * sx), g.innerW - 1);
  const top = clip(Math.floor((box[1] - my) * sy), g.innerH - 1);
  const right = clip(Math.ceil((box[2] + mx) * sx), g.innerW);
  const bottom = clip(Math.ceil((box[3] + my) * sy), g.innerH);
  return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
}

/** A JPEG of the object in a box (source pixels) and a margin around it, nothing drawn. */
export function croppedJpeg(rgb: Buffer, g: Letterbox, box: Readonly<Box>, quality = 80): Promise<Buffer> {
  const r = cropRegion(g, box);
  return picture(rgb, g)
    .extract({ ...r, left: r.left + g.padLeft, top: r.top + g.padTop })
    .jpeg({ quality })
    .toBuffer();
}
