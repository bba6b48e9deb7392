/**
 * MP4s made on request from a camera's recording (`remuxClip`), kept for repeat requests (a
 * player asks for byte ranges again and again) within a bound of bytes: the least recently
 * asked for go first. Each is written to a temporary file and renamed once whole, so a crash
 * never leaves half an MP4 to serve; at start the directory's MP4s and temporary files are
 * removed (the cache is only a cache).
 */
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

/** Remuxes at once, at most: more requests wait their turn. */
const MAX_MAKING = 2;

export interface CachedClip {
  file: FileHandle;
  size: number;
  /** Whether it was made for this request (false: served from the cache). */
  made: boolean;
}

export class ClipCache {
  /** Kept files by key, least recently used first, and their sizes. */
  private files = new Map<string, number>();
  private making = new Map<string, Promise<void>>();
  private running = 0;
  private waiting: (() => void)[] = [];
  private tmpSeq = 0;
  bytes = 0;
  made = 0;
  hits = 0;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
  ) {}

  /** Makes the directory (0700) and empties it of MP4s and temporary files. */
  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.dir))
      if (/\.mp4$|\.tmp$/.test(name)) await unlink(join(this.dir, name)).catch(() => undefined);
  }

  /**
   * The MP4 of `key`, opened (never through a link), with its size; made first by `make` (which
   * writes the path it is given) when not kept. The caller closes it. Rejects with `make`'s error.
   */
  async open(key: string, make: (tmp: string) => Promise<void>): Promise<CachedClip> {
    if (!/^[0-9a-f]{8,64}$/.test(key)) throw new Error(`bad clip key ${key}`);
    const path = join(this.dir, `${key}.mp4`);
    let made = false;
    while (!this.files.has(key)) {
      const inFlight = this.making.get(key);
      if (inFlight) {
        await inFlight;
        continue;
      }
      const job = this.make(key, path, make);
      this.making.set(key, job);
      try {
        await job;
        made = true;
      } finally {
        this.making.delete(key);
      }
    }
    const size = this.files.get(key)!;
    this.files.delete(key);
    this.files.set(key, size);
    if (!made) this.hits++;
    const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    return { file, size: (await file.stat()).size, made };
  }

  private async make(key: string, path: string, make: (tmp: string) => Promise<void>): Promise<void> {
    await this.turn();
    const tmp = join(this.dir, `${key}.${process.pid}.${this.tmpSeq++}.tmp`);
    try {
      await make(tmp);
      const size = (await stat(tmp)).size;
      await rename(tmp, path);
      this.files.set(key, size);
      this.bytes += size;
      this.made++;
      this.evict(key);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Waits for a remux's turn. */
  private async turn(): Promise<void> {
    if (this.running >= MAX_MAKING) await new Promise<void>((ok) => this.waiting.push(ok));
    this.running++;
  }

  /** Over the bound, the least recently asked for go (never `keep`, just made); an open file is still read whole. */
  private evict(keep: string): void {
    for (const [key, size] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      if (key === keep) continue;
      this.files.delete(key);
      this.bytes -= size;
      void unlink(join(this.dir, `${key}.mp4`)).catch(() => undefined);
    }
  }
}
