import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** What the writer needs of a segment: its file, and its size so far (counted here, written or not). */
export interface SegmentTarget {
  file: string;
  bytes: number;
}

/** A segment's file being written: its writes in order, and the bytes not yet handed to them. */
export interface SegmentFile<T extends SegmentTarget> {
  readonly seg: T;
  readonly file: Promise<FileHandle | undefined>;
  chain: Promise<void>;
  /** Bytes gathered (`used` of them) for the next write. */
  gather: Buffer | undefined;
  used: number;
}

/** What the writer asks of the ring it writes for. */
export interface WriterHooks<T> {
  /** Whether the segment is still kept: a lost or removed one's bytes go nowhere. */
  kept(seg: T): boolean;
  /** Its file could not be opened or written, or the disk fell behind: the segment is lost. */
  lost(seg: T, err: unknown): void;
  /** Its file is written whole and closed (what the ring keeps of it is written next). */
  closed?(seg: T): Promise<void>;
}

/**
 * Bytes gathered before they are written: a segment is written in a few large writes (at its
 * end, or each 512 KiB), not one per chunk ffmpeg sends (each a trip through libuv's threads),
 * into buffers the writer reuses.
 */
const GATHER_BYTES = 512 * 1024;
/** Gather buffers kept for reuse (one filling, one being written). */
const SPARE_BUFFERS = 2;

/** Bytes queued for the disk, beyond which a segment is given up (a disk slower than the camera). */
const MAX_QUEUED = 16 * 1024 * 1024;

/**
 * Writes a ring's segment files, one after another: each segment's writes follow the previous
 * segment's writes and close, so `settle()` waits for everything received so far. A full,
 * failing or slow disk costs the segment (through `lost`), never the caller's time.
 */
export class SegmentWriter<T extends SegmentTarget> {
  private queued = 0;
  private spares: Buffer[] = [];
  /** The last closed segment's writes and close. */
  private closing: Promise<void> = Promise.resolve();
  bytesWritten = 0;
  segmentsWritten = 0;

  constructor(private readonly hooks: WriterHooks<T>) {}

  /**
   * Opens a new segment's file (it must not exist, and a symbolic link in its place is not
   * followed); its writes come after the last segment's.
   */
  open(seg: T): SegmentFile<T> {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const file = open(seg.file, flags, 0o600).catch((err: unknown) => {
      this.hooks.lost(seg, err);
      return undefined;
    });
    return { seg, file, chain: this.closing, gather: undefined, used: 0 };
  }

  append(f: SegmentFile<T>, bytes: Buffer): void {
    f.seg.bytes += bytes.length;
    if (!this.hooks.kept(f.seg)) return;
    if (this.queued + bytes.length > MAX_QUEUED) {
      this.hooks.lost(
        f.seg,
        Object.assign(new Error('the disk is slower than the camera'), { code: 'SLOW' }),
      );
      return;
    }
    this.queued += bytes.length;
    if (f.used + bytes.length > GATHER_BYTES) this.flush(f);
    if (bytes.length >= GATHER_BYTES) {
      // Larger than a gather buffer (never from ffmpeg's writes): written on its own.
      this.write(f, Buffer.from(bytes), false);
      return;
    }
    f.gather ??= this.spares.pop() ?? Buffer.allocUnsafeSlow(GATHER_BYTES);
    bytes.copy(f.gather, f.used);
    f.used += bytes.length;
  }

  /** The segment is complete: its last bytes are written, then its file closed. */
  close(f: SegmentFile<T>): void {
    this.flush(f);
    f.chain = f.chain.then(async () => {
      const handle = await f.file;
      await handle?.close().catch(() => undefined);
      if (handle && this.hooks.kept(f.seg)) {
        this.segmentsWritten++;
        await this.hooks.closed?.(f.seg);
      }
    });
    this.closing = f.chain;
  }

  /** Waits until what was appended so far is on disk: the closed segments', and `f`'s. */
  async settle(f?: SegmentFile<T>): Promise<void> {
    if (f) this.flush(f);
    await Promise.all([this.closing, f?.chain]);
  }

  /** Hands the bytes gathered to the segment's writes. */
  private flush(f: SegmentFile<T>): void {
    if (!f.gather || f.used === 0) return;
    const data = f.gather.subarray(0, f.used);
    f.gather = undefined;
    f.used = 0;
    this.write(f, data, true);
  }

  /** Writes `data` after the segment's earlier writes; a gather buffer goes back to the spares. */
  private write(f: SegmentFile<T>, data: Buffer, spare: boolean): void {
    f.chain = f.chain.then(async () => {
      try {
        const handle = await f.file;
        if (!handle || !this.hooks.kept(f.seg)) return;
        for (let at = 0; at < data.length;) {
          const { bytesWritten } = await handle.write(data, at, data.length - at);
          if (bytesWritten <= 0) throw new Error('the disk took no bytes');
          at += bytesWritten;
        }
        this.bytesWritten += data.length;
      } catch (err) {
        this.hooks.lost(f.seg, err);
      } finally {
        this.queued -= data.length;
        if (spare && this.spares.length < SPARE_BUFFERS)
          this.spares.push(Buffer.from(data.buffer, data.byteOffset, GATHER_BYTES));
      }
    });
  }
}
