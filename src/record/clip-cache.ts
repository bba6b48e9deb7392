/**
 * MP4s made on request from a camera's recording (`remuxClip`), kept for repeat requests (a
 * player asks for byte ranges again and again) within a bound of bytes: the least recently
 * asked for go first. Each is written to a temporary file and renamed once whole, so a crash
 * never leaves half an MP4 to serve; at start the directory's MP4s and temporary files are
 * removed (the cache is only a cache). An MP4 may be made for a tag (an event's id): `drop` removes
 * that tag's MP4s at once (the event was deleted), and one being made for it once made.
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

/** Why the requests of an MP4 whose tag was dropped while it was made are refused. */
export const DROPPED = 'its event was deleted while the clip was made';

/** A kept MP4: its size, and the tag it was made for (absent: none). */
interface Kept {
  size: number;
  tag: string | undefined;
}

export class ClipCache {
  /** Kept files by key, least recently used first. */
  private files = new Map<string, Kept>();
  /** The MP4s being made, by key, with their tags. */
  private making = new Map<string, { job: Promise<void>; tag: string | undefined }>();
  /** MP4s being made whose tag was dropped meanwhile: removed once made, never kept. */
  private dropped = new Set<string>();
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
   * writes the path it is given) when not kept, for `tag` (see `drop`). The caller closes it.
   * Rejects with `make`'s error, or when `drop` took its tag while it was made.
   */
  async open(key: string, make: (tmp: string) => Promise<void>, tag?: string): Promise<CachedClip> {
    if (!/^[0-9a-f]{8,64}$/.test(key)) throw new Error(`bad clip key ${key}`);
    const path = join(this.dir, `${key}.mp4`);
    let made = false;
    while (!this.files.has(key)) {
      const inFlight = this.making.get(key);
      if (inFlight) {
        await inFlight.job;
        continue;
      }
      const job = this.make(key, path, make, tag);
      this.making.set(key, { job, tag });
      await job;
      made = true;
    }
    const kept = this.files.get(key)!;
    this.files.delete(key);
    this.files.set(key, kept);
    if (!made) this.hits++;
    const file = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    return { file, size: (await file.stat()).size, made };
  }

  private async make(
    key: string,
    path: string,
    make: (tmp: string) => Promise<void>,
    tag: string | undefined,
  ): Promise<void> {
    await this.turn();
    const tmp = join(this.dir, `${key}.${process.pid}.${this.tmpSeq++}.tmp`);
    try {
      // Dropped while it waited its turn: not made at all.
      if (this.dropped.has(key)) throw new Error(DROPPED);
      await make(tmp);
      const size = (await stat(tmp)).size;
      await rename(tmp, path);
      if (this.dropped.has(key)) {
        await unlink(path).catch(() => undefined);
        throw new Error(DROPPED);
      }
      this.files.set(key, { size, tag });
      this.bytes += size;
      this.made++;
      this.evict(key);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    } finally {
      // Both at once: a `drop` after this finds neither, so it cannot mark a key whose make is over.
      this.making.delete(key);
      this.dropped.delete(key);
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
    for (const [key, { size }] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      if (key === keep) continue;
      this.files.delete(key);
      this.bytes -= size;
      void unlink(join(this.dir, `${key}.mp4`)).catch(() => undefined);
    }
  }

  /** The tags (events) of the MP4s kept. */
  tags(): Set<string> {
    return new Set([...this.files.values()].flatMap((f) => (f.tag === undefined ? [] : [f.tag])));
  }

  /**
   * Removes the MP4s made for `tag` (an event deleted); one being made for it is removed once
   * made, and its requests rejected. An open file is still read whole.
   */
  async drop(tag: string): Promise<void> {
    for (const [key, m] of this.making) if (m.tag === tag) this.dropped.add(key);
    const gone: Promise<void>[] = [];
    for (const [key, kept] of this.files) {
      if (kept.tag !== tag) continue;
      this.files.delete(key);
      this.bytes -= kept.size;
      gone.push(unlink(join(this.dir, `${key}.mp4`)).catch(() => undefined));
    }
    await Promise.all(gone);
  }
}
