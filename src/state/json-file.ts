import { lstat, mkdir, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { readOwnFile, writeAtomic } from './atomic.js';

export interface JsonFileOptions<T> {
  /** Checks what was read; throws (with a message naming what is wrong) when it is not a T. */
  parse: (data: unknown) => T;
  /** The JSON document of a value, made when it is written; default: the value itself. */
  serialize?: (value: T) => unknown;
  /** A value that serialises to more than this is not written (logged once); a bigger file is corrupt. */
  maxBytes: number;
  /** Saves within this long of the first change after the last write: a crash loses at most this much. */
  delayMs: number;
  clock: Clock;
  log: Logger;
}

/**
 * One JSON document in the state directory, written crash-safely: to a temporary file in the
 * same directory, flushed to disk, then renamed over the old one (and the directory flushed),
 * so a crash or power cut leaves either the old document or the new one, never a mix.
 *
 * Writes are batched (`delayMs`) and never throw: a full disk or a read-only directory is
 * logged once, and the value is written again at the next change or `flush()`. A missing file
 * reads as nothing; a corrupt one (or one over `maxBytes`) is logged, kept aside as
 * `<name>.corrupt` for inspection, and reads as nothing. A file that exists but cannot be read
 * (permissions, an I/O error), or a symbolic link or anything else in its place, is never read
 * through or written over: that run keeps its values in memory only. Temporary files a crash
 * left behind (regular files of their names) are removed when the file is read.
 */
export class JsonFile<T> {
  private pending: T | undefined;
  private timer: Timer | null = null;
  private writing: Promise<void> = Promise.resolve();
  private lastError = '';
  /** Why the last value saved is not on disk; undefined once it is. */
  private unsaved: string | undefined;
  /** Set when the file exists but could not be read: it is not written over. */
  private unreadable = false;

  constructor(
    readonly path: string,
    private readonly opts: JsonFileOptions<T>,
  ) {}

  private get tmpPrefix(): string {
    return `.${basename(this.path)}.`;
  }

  async load(): Promise<T | undefined> {
    await this.removeLeftovers();
    let text: string;
    try {
      // Never through a symbolic link: one in the file's place is left as it is.
      const st = await lstat(this.path);
      const notFile = (): Error =>
        Object.assign(new Error('not a file'), { code: st.isSymbolicLink() ? 'ELOOP' : 'EISDIR' });
      if (!st.isFile()) throw notFile();
      const size = st.size;
      if (size > this.opts.maxBytes)
        return await this.keepAside(`${size} bytes is over the limit of ${this.opts.maxBytes}`);
      const data = await readOwnFile(this.path);
      if (!data) throw notFile();
      text = data.toString('utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      this.unreadable = true;
      this.opts.log.warn(
        { file: this.path, code },
        'cannot read the state file: this run keeps its values in memory only, and leaves the file as it is',
      );
      return undefined;
    }
    try {
      return this.opts.parse(JSON.parse(text));
    } catch (err) {
      return this.keepAside((err as Error).message);
    }
  }

  private async keepAside(why: string): Promise<undefined> {
    const aside = `${this.path}.corrupt`;
    this.opts.log.warn(
      { file: this.path, kept_as: aside, err: why },
      'the state file is corrupt; starting afresh',
    );
    await rename(this.path, aside).catch(() => undefined);
    return undefined;
  }

  /** Temporary files of writes a crash interrupted. */
  private async removeLeftovers(): Promise<void> {
    const dir = dirname(this.path);
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names)
      if (name.startsWith(this.tmpPrefix) && name.endsWith('.tmp')) {
        const st = await lstat(join(dir, name)).catch(() => undefined);
        if (st?.isFile()) await unlink(join(dir, name)).catch(() => undefined);
      }
  }

  /** Schedules `value` to be written. */
  save(value: T): void {
    this.pending = value;
    if (this.timer) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.timer = null;
      void this.write();
    }, this.opts.delayMs);
  }

  /** Writes what is pending now (a value whose write failed included), and waits for every write to end. */
  async flush(): Promise<void> {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.write();
  }

  /**
   * Writes what is pending now (as `flush`) and says whether the last value saved is on disk:
   * undefined when it is, else why not (it is written again at the next change or flush, where
   * a retry can succeed).
   */
  async saved(): Promise<string | undefined> {
    await this.flush();
    return this.unsaved;
  }

  private write(): Promise<void> {
    this.writing = this.writing.then(async () => {
      const value = this.pending;
      this.pending = undefined;
      if (value === undefined) return;
      const failed = await this.writeNow(value);
      this.unsaved = failed?.why;
      // A value that could not be written is written again next time, unless a newer one came.
      if (failed?.retry) this.pending ??= value;
    });
    return this.writing;
  }

  /**
   * Writes the value; undefined when it is on disk, else why not, and whether a retry may succeed
   * (not for a value too big, or a file that is not ours to write).
   */
  private async writeNow(value: T): Promise<{ why: string; retry: boolean } | undefined> {
    if (this.unreadable)
      return { why: 'the file could not be read at start, so it is left as it is', retry: false };
    const text = `${JSON.stringify(this.opts.serialize ? this.opts.serialize(value) : value)}\n`;
    const bytes = Buffer.byteLength(text);
    if (bytes > this.opts.maxBytes) {
      const why = `${bytes} bytes is over the limit of ${this.opts.maxBytes}`;
      this.report(why, 'not written');
      return { why, retry: false };
    }
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o750 });
      await writeAtomic(this.path, text);
      if (this.lastError) this.opts.log.info({ file: this.path }, 'state file written again');
      this.lastError = '';
      return undefined;
    } catch (err) {
      const why = (err as Error).message;
      this.report(why, 'cannot write the state file; will try again at the next change');
      return { why, retry: true };
    }
  }

  /** Logs a failure once, not at every change while it lasts. */
  private report(why: string, msg: string): void {
    if (why === this.lastError) return;
    this.lastError = why;
    this.opts.log.warn({ file: this.path, err: why }, msg);
  }
}
