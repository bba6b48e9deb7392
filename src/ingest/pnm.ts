/**
 * Cuts ffmpeg's `image2pipe` output into images: PGM (P5, grey), PPM (P6, RGB) and PAM (P7),
 * each a short text header and its raw pixels. The headers say which stream an image is from
 * (its type and size), so one pipe carries several streams (ingest/ffmpeg-args.ts).
 *
 * An image wholly inside one chunk is a view of that chunk (no copy); one split across chunks is
 * assembled once into its own buffer.
 */

export interface PnmImage {
  format: 'P5' | 'P6' | 'P7';
  width: number;
  height: number;
  /** Bytes per pixel: 1 for P5, 3 for P6, the header's DEPTH for P7. */
  depth: number;
  data: Buffer;
}

/** The stream is not what ffmpeg writes: out of step, or an image larger than allowed. */
export class PnmError extends Error {}

/** ffmpeg's headers are under 80 bytes; more without an end means the stream is out of step. */
export const MAX_HEADER = 128;

type Header = Omit<PnmImage, 'data'>;

/**
 * Parses the header at the start of `text` (latin1): the header and its length in bytes, or
 * undefined when more bytes are needed. Throws PnmError for anything ffmpeg does not write:
 * another magic number, comments, a MAXVAL other than 255.
 */
export function parsePnmHeader(text: string): { header: Header; length: number } | undefined {
  if (text.length < 2) return undefined;
  const magic = text.slice(0, 2);
  if (magic === 'P5' || magic === 'P6') {
    // "P6\n640 640\n255\n": magic, width, height, maxval, then one whitespace byte.
    const m = /^P[56]\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(text);
    if (!m) {
      if (/^P[56](\s+\d*){0,3}$/.test(text) && text.length < MAX_HEADER) return undefined;
      throw new PnmError(`unreadable ${magic} header: ${JSON.stringify(text.slice(0, 32))}`);
    }
    if (m[3] !== '255') throw new PnmError(`${magic} image with maxval ${m[3]}, expected 255`);
    const depth = magic === 'P5' ? 1 : 3;
    const header: Header = { format: magic, width: Number(m[1]), height: Number(m[2]), depth };
    return { header, length: m[0].length };
  }
  if (magic === 'P7') {
    const end = text.indexOf('\nENDHDR\n');
    if (end < 0) {
      if (text.length < MAX_HEADER) return undefined;
      throw new PnmError('P7 header without ENDHDR');
    }
    const fields: Record<string, string> = {};
    for (const line of text.slice(3, end).split('\n')) {
      const [key, ...value] = line.split(' ');
      fields[key!] = value.join(' ');
    }
    if (fields.MAXVAL !== '255') throw new PnmError(`P7 image with MAXVAL ${fields.MAXVAL}, expected 255`);
    const [width, height, depth] = [fields.WIDTH, fields.HEIGHT, fields.DEPTH].map(Number);
    if (!(width! > 0 && height! > 0 && depth! > 0)) throw new PnmError('P7 header without a size');
    return { header: { format: 'P7', width: width!, height: height!, depth: depth! }, length: end + 8 };
  }
  throw new PnmError(`not a PNM image: ${JSON.stringify(text.slice(0, 16))}`);
}

export class PnmSplitter {
  /** Header bytes of the next image, while they arrive in pieces. */
  private headerText = '';
  private header: Header | undefined;
  private partial: Buffer | undefined;
  private filled = 0;

  /** `maxBytes`: the largest image (its pixels) accepted. */
  constructor(
    private readonly maxBytes: number,
    private readonly onImage: (image: PnmImage) => void,
  ) {}

  /** Feeds stdout bytes; throws PnmError when they are not a PNM stream. */
  push(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      if (!this.header) {
        const before = this.headerText.length;
        const text = this.headerText + chunk.toString('latin1', off, off + MAX_HEADER - before);
        const parsed = parsePnmHeader(text);
        if (!parsed) {
          this.headerText = text;
          return;
        }
        const bytes = parsed.header.width * parsed.header.height * parsed.header.depth;
        if (bytes > this.maxBytes)
          throw new PnmError(`${parsed.header.width}x${parsed.header.height} image is larger than expected`);
        this.header = parsed.header;
        this.headerText = '';
        off += parsed.length - before;
      }
      const need = this.header.width * this.header.height * this.header.depth;
      if (!this.partial && chunk.length - off >= need) {
        this.emit(chunk.subarray(off, off + need));
        off += need;
        continue;
      }
      this.partial ??= Buffer.allocUnsafe(need);
      const take = Math.min(need - this.filled, chunk.length - off);
      chunk.copy(this.partial, this.filled, off, off + take);
      this.filled += take;
      off += take;
      if (this.filled < need) return;
      const data = this.partial;
      this.partial = undefined;
      this.filled = 0;
      this.emit(data);
    }
  }

  private emit(data: Buffer): void {
    const header = this.header!;
    this.header = undefined;
    this.onImage({ ...header, data });
  }

  /** Bytes of an incomplete image held back (discarded when the stream ends). */
  get pending(): number {
    return this.headerText.length + this.filled;
  }
}
