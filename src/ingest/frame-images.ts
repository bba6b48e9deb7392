import { THUMB_SIZE } from '../core/frame.js';
import { PnmError, type PnmImage } from './pnm.js';

/** A frame's pixels, and its thumbnail when ffmpeg makes them. */
export interface FrameImage {
  data: Buffer;
  thumb?: Buffer;
  /** The frame's count among the frames ffmpeg sent (0, 1, 2…), with those that made no frame. */
  index: number;
}

/**
 * Reads ffmpeg's images as the frames they make (the streams of ffmpeg-args.ts). Without
 * thumbnails, each picture is a frame. With them, a picture is the pixels of the frame whose
 * thumbnail follows, and a thumbnail ends a frame, with the last picture sent (ffmpeg sends
 * none for a frame it found unchanged); ticks are ignored.
 */
export class FrameImages {
  private pixels: Buffer | undefined;
  private ended = 0;

  constructor(
    private readonly size: number,
    private readonly thumbnails: boolean,
  ) {}

  /** The frame `image` ends, if any; throws PnmError for an image the stream should not hold. */
  take(image: PnmImage): FrameImage | undefined {
    const is = (format: PnmImage['format'], side: number, depth: number): boolean =>
      image.format === format && image.width === side && image.height === side && image.depth === depth;
    if (is('P6', this.size, 3)) {
      if (!this.thumbnails) return { data: image.data, index: this.ended++ };
      this.pixels = image.data;
      return undefined;
    }
    if (this.thumbnails && is('P7', THUMB_SIZE, 3)) {
      const index = this.ended++;
      // ffmpeg sends the first frame's picture whatever it shows (mpdecimate keeps a first frame).
      return this.pixels && { data: this.pixels, thumb: image.data, index };
    }
    if (this.thumbnails && image.format === 'P5') return undefined;
    throw new PnmError(`unexpected ${image.format} image of ${image.width}x${image.height}`);
  }
}
