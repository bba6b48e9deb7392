/**
 * Cuts a byte stream into frames of exactly `frameBytes`. A frame wholly inside one chunk is
 * a view of that chunk (no copy); a frame split across chunks is assembled once into its own
 * buffer.
 */
export class FrameSplitter {
  private partial: Buffer | undefined;
  private filled = 0;

  constructor(
    readonly frameBytes: number,
    private readonly onFrame: (data: Buffer) => void,
  ) {
    if (!(frameBytes > 0)) throw new RangeError('frameBytes must be positive');
  }

  push(chunk: Buffer): void {
    let off = 0;
    if (this.partial) {
      const take = Math.min(this.frameBytes - this.filled, chunk.length);
      chunk.copy(this.partial, this.filled, 0, take);
      this.filled += take;
      off = take;
      if (this.filled < this.frameBytes) return;
      const done = this.partial;
      this.partial = undefined;
      this.filled = 0;
      this.onFrame(done);
    }
    while (chunk.length - off >= this.frameBytes) {
      this.onFrame(chunk.subarray(off, off + this.frameBytes));
      off += this.frameBytes;
    }
    if (off < chunk.length) {
      this.partial = Buffer.allocUnsafe(this.frameBytes);
      this.filled = chunk.copy(this.partial, 0, off);
    }
  }

  /** Bytes of an incomplete frame held back (discarded when the stream ends). */
  get pending(): number {
    return this.filled;
  }

  reset(): void {
    this.partial = undefined;
    this.filled = 0;
  }
}
