import sharp from 'sharp';
import { errorMessage } from '../core/errors.js';
import type { Picture } from '../core/frame.js';
import { letterbox, LETTERBOX_PAD } from '../core/geometry.js';

/** An image that cannot be decoded; the message names it. */
export class ImageError extends Error {}

/**
 * Decodes an image (file path or bytes) of any format sharp reads, applies its EXIF orientation,
 * and letterboxes it to `size`×`size` RGB with the same geometry ffmpeg uses for camera frames:
 * the picture a camera frame would be.
 */
export async function loadLetterboxed(
  source: string | Buffer,
  size: number,
  name = typeof source === 'string' ? source : 'image',
): Promise<Picture> {
  try {
    const oriented = sharp(source, { failOn: 'error' }).rotate();
    const meta = await oriented.metadata();
    if (!meta.width || !meta.height) throw new Error('no image dimensions');
    const swap = (meta.orientation ?? 1) >= 5;
    const srcW = swap ? meta.height : meta.width;
    const srcH = swap ? meta.width : meta.height;
    const g = letterbox(srcW, srcH, size);
    const pad = { r: LETTERBOX_PAD, g: LETTERBOX_PAD, b: LETTERBOX_PAD };
    const { data, info } = await sharp(source, { failOn: 'error' })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .resize(g.innerW, g.innerH, { fit: 'fill', kernel: 'linear' })
      .extend({
        top: g.padTop,
        left: g.padLeft,
        bottom: size - g.innerH - g.padTop,
        right: size - g.innerW - g.padLeft,
        background: pad,
      })
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.width !== size || info.height !== size || info.channels !== 3) {
      throw new Error(
        `decoder produced ${info.width}x${info.height}x${info.channels}, expected ${size}x${size}x3`,
      );
    }
    return { data, geometry: g };
  } catch (err) {
    const msg = errorMessage(err);
    throw new ImageError(`${name}: cannot read the image (${msg.split('\n')[0]})`);
  }
}
