import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';

export interface JsonFileOptions<T> {
  /** Checks what was read; throws (with a message naming what is wrong) when it is not a T. */
  parse: (data: unknown) => T;
  /** A value that serialises to more than this is not written (logged once instead). */
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
 * Writes are batched (`delayMs`) and never throw: a full disk or a read-only directory is
 * logged and retried on the next change. A missing file reads as nothing; a corrupt one is
 * logged, kept aside as `<name>.corrupt` for inspection, and reads as nothing.
 */
export class JsonFile<T> {
  private pending: T | undefined;
  private timer: Timer | null = null;
  private writing: Promise<void> = Promise.resolve();
  private lastError = '';

  constructor(
    readonly path: string,
    private readonly opts: JsonFileOptions<T>,
  ) {}

  async load(): Promise<T | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT')
        this.opts.log.warn({ file: this.path, code }, 'cannot read the state file; starting afresh');
      return undefined;
    }
    try {
      return this.opts.parse(JSON.parse(text));
    } catch (err) {
      const aside = `${this.path}.corrupt`;
      this.opts.log.warn(
        { file: this.path, kept_as: aside, err: (err as Error).message },
        'the state file is corrupt; starting afresh',
      );
      await rename(this.path, aside).catch(() => undefined);
      return undefined;
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

  /** Writes what is pending now, and waits for every write to end. */
  async flush(): Promise<void> {
    if (this.timer) this.opts.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.write();
  }

  private write(): Promise<void> {
    const value = this.pending;
    this.pending = undefined;
    this.writing = this.writing.then(() => (value === undefined ? undefined : this.writeNow(value)));
    return this.writing;
  }

  private async writeNow(value: T): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    const bytes = Buffer.byteLength(text);
    if (bytes > this.opts.maxBytes) {
      this.report(`${bytes} bytes is over the limit of ${this.opts.maxBytes}`, 'not written');
      return;
    }
    const dir = dirname(this.path);
    const tmp = join(dir, `.${basename(this.path)}.${process.pid}.tmp`);
    try {
      await mkdir(dir, { recursive: true, mode: 0o750 });
      const f = await open(tmp, 'w', 0o640);
      try {
        await f.writeFile(text);
        await f.sync();
      } finally {
        await f.close();
      }
      await rename(tmp, this.path);
      await syncDir(dir);
      if (this.lastError) this.opts.log.info({ file: this.path }, 'state file written again');
      this.lastError = '';
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      this.report((err as Error).message, 'cannot write the state file; will retry on the next change');
    }
  }

  /** Logs a failure once, not at every change while it lasts. */
  private report(why: string, msg: string): void {
    if (why === this.lastError) return;
    this.lastError = why;
    this.opts.log.warn({ file: this.path, err: why }, msg);
  }
}

/** Flushes a directory's entries (the rename) to disk; not every file system allows it. */
async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r').catch(() => undefined);
  if (!d) return;
  await d.sync().catch(() => undefined);
  await d.close();
}
