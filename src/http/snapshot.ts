import sharp from 'sharp';
import type { Detection } from '../core/frame.js';
import type { Letterbox } from '../core/geometry.js';

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

const escapeXml = (s: string): string => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A JPEG of a frame as the model saw it (the letterbox padding cut away) with its detections
 * drawn: a box and a label per object. Boxes come in source pixels and are scaled to the image.
 */
export async function annotatedJpeg(
  rgb: Buffer,
  g: Letterbox,
  detections: readonly Detection[],
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
  return sharp(rgb, { raw: { width: g.dstW, height: g.dstH, channels: 3 } })
    .extract({ left: g.padLeft, top: g.padTop, width: w, height: h })
    .composite([{ input: svg, top: 0, left: 0 }])
    .jpeg({ quality: 80 })
    .toBuffer();
}
