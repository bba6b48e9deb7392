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

/** The smallest and largest width `annotatedJpeg` draws at. */
export const MIN_WIDTH = 64;
export const MAX_WIDTH = 1920;

/** Label height on screen when the image is shown at the width it was drawn for (CSS px). */
export const LABEL_PX = 13;

/**
 * The label's font size, in pixels of an image `width` pixels wide that is shown `shownWidth`
 * pixels wide: LABEL_PX on screen. Without a display width (snapshots, shown anywhere from a
 * phone to a dashboard card) it is a 32nd of the image's width, never under LABEL_PX, so a
 * 640-pixel frame shown 400 pixels wide still has 12-pixel labels.
 */
export function labelSize(width: number, shownWidth?: number): number {
  if (shownWidth !== undefined) return (LABEL_PX * width) / shownWidth;
  return Math.max(LABEL_PX, Math.round(width / 32));
}

export interface AnnotateOptions {
  quality?: number;
  /**
   * The width it is shown at (clamped to MIN_WIDTH–MAX_WIDTH): labels are drawn to be LABEL_PX
   * there. The frame is scaled down to it, never up: enlarging costs far more to encode than
   * the browser's scaling, and shows nothing the model saw.
   */
  width?: number;
}

/**
 * A JPEG of a frame as the model saw it (the letterbox padding cut away) with its detections
 * drawn: a box and a label per object, the label's text dark on a band of the box's colour so it
 * reads over any scene. Boxes come in source pixels and are scaled to the image.
 */
export function annotatedJpeg(
  rgb: Buffer,
  g: Letterbox,
  detections: readonly Detection[],
  opts: AnnotateOptions = {},
): Promise<Buffer> {
  const shown = opts.width === undefined ? undefined : Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, opts.width));
  const w = shown === undefined ? g.innerW : Math.round(Math.min(shown, g.innerW));
  const h = w === g.innerW ? g.innerH : Math.max(1, Math.round((g.innerH * w) / g.innerW));
  const sx = w / g.srcW;
  const sy = h / g.srcH;
  const font = labelSize(w, shown);
  const stroke = Math.max(1, Math.round(font / 6));
  const shapes = detections.map((d, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    const x = Math.round(d.box[0] * sx);
    const y = Math.round(d.box[1] * sy);
    const bw = Math.max(1, Math.round((d.box[2] - d.box[0]) * sx));
    const bh = Math.max(1, Math.round((d.box[3] - d.box[1]) * sy));
    const text = `${d.label} ${d.score.toFixed(2)}`;
    // Sans-serif glyphs average under 0.6 em; the band is a little wider than the text.
    const band = { w: Math.ceil(text.length * font * 0.6 + 4), h: Math.round(font * 1.3) };
    // Above the box when there is room, else just inside its top; never past the image's edges.
    const bx = Math.max(0, Math.min(x, w - band.w));
    const by = y - band.h >= 0 ? y - band.h : Math.min(y, h - band.h);
    return (
      `<rect x="${x}" y="${y}" width="${bw}" height="${bh}" fill="none" stroke="${colour}" stroke-width="${stroke}"/>` +
      `<rect x="${bx}" y="${by}" width="${band.w}" height="${band.h}" fill="${colour}"/>` +
      `<text x="${bx + 2}" y="${by + Math.round(font * 1.02)}" font-family="sans-serif" font-size="${font.toFixed(1)}" fill="#000">${escapeXml(text)}</text>`
    );
  });
  const svg = Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${shapes.join('')}</svg>`,
  );
  // sharp extracts before it resizes, and composites last, over the resized picture.
  const img = picture(rgb, g).extract({ left: g.padLeft, top: g.padTop, width: g.innerW, height: g.innerH });
  return (w === g.innerW ? img : img.resize(w, h))
    .composite([{ input: svg, top: 0, left: 0 }])
    .jpeg({ quality: opts.quality ?? 80 })
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
