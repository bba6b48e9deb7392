import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readOwnFile, syncDir, writeAtomic } from '../state/index.js';
import {
  CLIP,
  isOwnName,
  MEDIA,
  parseRecord,
  RECORD,
  SNAPSHOT_FILES,
  type StoredEvent,
} from './event-record.js';

/** Records read at once when loading. */
const LOAD_BATCH = 64;

/** Removes a file of Argus' if it is a regular file: a link or folder put in its place stays. */
async function removeOwnFile(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (st?.isFile()) await unlink(path).catch(() => undefined);
}

/** An event read from the history's directory, with its files' sizes. */
export interface FoundEvent {
  stored: StoredEvent;
  key: string;
  recordBytes: number;
  /** When its record was last written (ms since the epoch). */
  savedAt: number;
  fullBytes: number;
  cropBytes: number;
  clipBytes: number;
}

/** What reading the history's directory found, and how many files it removed or left alone. */
export interface FoundHistory {
  /** In the order they were read. */
  events: FoundEvent[];
  /** Records that did not parse, removed with their files. */
  corrupt: number;
  /** Argus' files removed: the corrupt records, and the files no record names. */
  leftovers: number;
  /** Files Argus did not write (other names, links, folders), left as they are. */
  others: number;
}

/**
 * Reads every record in the history's directory (`dir`, not a link: the caller checks) and tidies
 * it: a record that does not parse is logged and removed (with its snapshot and clip), as are
 * Argus' files no record names and temporary files left by a crash; one that cannot be read is
 * logged and left as it is, with its files; anything else is left as it is, logged in one line.
 * Undefined when the directory is not there (it is made at the first write) or cannot be read
 * (logged).
 */
async function readHistoryDir(dir: string, log: Logger): Promise<FoundHistory | undefined> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // made at the first write
    log.warn(
      { dir, err: (err as Error).message },
      'cannot open the event history; it is kept in memory only',
    );
    return undefined;
  }
  // Only regular files of Argus' names are Argus'; anything else is left as it is.
  const own: string[] = [];
  const others: string[] = [];
  for (const e of entries) (e.isFile() && isOwnName(e.name) ? own : others).push(e.name);
  const found: FoundEvent[] = [];
  const keep = new Set<string>();
  const corrupt: string[] = [];
  const read = async (name: string): Promise<void> => {
    const key = name.slice(0, -RECORD.length);
    const files = [name, ...MEDIA.map((m) => key + m)];
    let text: string;
    try {
      const data = await readOwnFile(join(dir, name));
      if (!data) throw Object.assign(new Error('not a regular file'), { code: 'ELOOP' });
      text = data.toString('utf8');
    } catch (err) {
      // Permissions, an I/O error, a link put in its place since: not ours to remove.
      for (const f of files) keep.add(f);
      log.warn(
        { file: join(dir, name), code: (err as NodeJS.ErrnoException).code },
        'cannot read an event of the history; left as it is, not listed',
      );
      return;
    }
    try {
      const stored = parseRecord(text, key);
      const size = (suffix: string): Promise<number> =>
        lstat(join(dir, key + suffix)).then(
          (s) => (s.isFile() ? s.size : 0),
          () => 0,
        );
      const [full, crop, clip] = await Promise.all(MEDIA.map(size));
      const savedAt = await lstat(join(dir, `${key}.json`)).then(
        (s) => s.mtimeMs,
        () => stored.start,
      );
      found.push({
        stored,
        key,
        recordBytes: Buffer.byteLength(text),
        savedAt,
        fullBytes: full!,
        cropBytes: crop!,
        clipBytes: clip ?? 0,
      });
      for (const f of files) keep.add(f);
    } catch (err) {
      corrupt.push(name);
      log.warn(
        { file: join(dir, name), err: (err as Error).message },
        'an event of the history is corrupt; removed',
      );
    }
  };
  // Something else in a record's place (a folder, a link): its snapshot files stay with it.
  for (const n of others)
    if (isOwnName(n) && n.endsWith(RECORD) && !n.startsWith('.'))
      for (const suffix of MEDIA) keep.add(n.slice(0, -RECORD.length) + suffix);
  const records = own.filter((n) => n.endsWith(RECORD) && !n.startsWith('.'));
  for (let i = 0; i < records.length; i += LOAD_BATCH)
    await Promise.all(records.slice(i, i + LOAD_BATCH).map(read));
  // Argus' files no record names: snapshots of evicted or corrupt events, writes a crash cut short.
  const leftovers = own.filter((n) => !keep.has(n));
  await Promise.all(leftovers.map((n) => removeOwnFile(join(dir, n))));
  await syncDir(dir);
  if (others.length)
    log.warn(
      { dir, files: others.length, names: others.slice(0, 10) },
      'files in the event history that Argus did not write (other names, links, folders) are left as they are',
    );
  return { events: found, corrupt: corrupt.length, leftovers: leftovers.length, others: others.length };
}

/**
 * The event history's directory: the files of its events (event-record.ts names them), read,
 * written and removed there, never through a symbolic link. Each file is written to a temporary
 * file, flushed and renamed (state/atomic.ts): a crash or power cut leaves every file whole.
 * A directory that is a symbolic link is not used (logged; the history is kept in memory, without
 * snapshots). The directory is made at the first write. Writes never throw: a failure is logged
 * once per reason, and the next change writes again.
 */
export class HistoryDir {
  private lastError = '';
  /** The directory is a symbolic link: nothing is read or written there. */
  private refused = false;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  /** Reads every event the directory holds and tidies it (see `readHistoryDir`); undefined when it has none to read. */
  async read(): Promise<FoundHistory | undefined> {
    if (await this.isLink()) return undefined;
    return readHistoryDir(this.dir, this.log);
  }

  /**
   * Whether the history's directory is a symbolic link: then it is not used (logged once), so
   * that nothing where it points is read, written or removed; the history is kept in memory.
   */
  async isLink(): Promise<boolean> {
    if (this.refused) return true;
    const st = await lstat(this.dir).catch(() => undefined);
    if (!st?.isSymbolicLink()) return false;
    this.refused = true;
    const target = await readlink(this.dir).catch(() => '?');
    this.log.warn(
      { dir: this.dir, target },
      'the event history directory is a symbolic link; Argus does not follow it, and keeps the history in memory only (without snapshots)',
    );
    return true;
  }

  /** Writes a file of the directory; a failure is logged (once while its cause lasts), never thrown. */
  async write(name: string, data: string | Buffer): Promise<void> {
    await this.writeOrThrow(name, data).catch(() => undefined);
  }

  /**
   * Writes a file of the directory, or rejects saying why not (logged as `write` logs it): for a
   * file that must not be lost unnoticed (a snapshot rescued from a segment about to go). A
   * directory that is a symbolic link, not used, rejects with `code` REFUSED.
   */
  async writeOrThrow(name: string, data: string | Buffer): Promise<void> {
    if (await this.isLink())
      throw Object.assign(new Error('the event history directory is a symbolic link, not used'), {
        code: 'REFUSED',
      });
    const path = join(this.dir, name);
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o750 });
      await writeAtomic(path, data);
      if (this.lastError) this.log.info({ dir: this.dir }, 'event history written again');
      this.lastError = '';
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      if (why !== this.lastError)
        this.log.warn({ file: path, err: (err as Error).message }, 'cannot write the event history');
      this.lastError = why;
      throw err;
    }
  }

  /** Removes an event's files (record first: a crash in between leaves media files, which loading removes). */
  async remove(key: string): Promise<void> {
    if (this.refused) return;
    for (const suffix of [RECORD, ...MEDIA]) await removeOwnFile(join(this.dir, key + suffix));
  }

  /** A temporary file for an event's clip, which loading removes if a crash leaves it; undefined when the directory is not used. */
  async clipTemp(key: string): Promise<string | undefined> {
    if (await this.isLink()) return undefined;
    await mkdir(this.dir, { recursive: true, mode: 0o750 });
    const tmp = join(this.dir, `.${key}${CLIP}.${process.pid}.tmp`);
    await removeOwnFile(tmp);
    return tmp;
  }

  /** Keeps a clip written to `tmp` as the event's: flushed, then renamed (a crash leaves it whole or none). Its size. */
  async keepClip(tmp: string, key: string): Promise<number> {
    const f = await open(tmp, constants.O_RDONLY | constants.O_NOFOLLOW);
    let bytes: number;
    try {
      await f.chmod(0o640); // as the history's other files (ffmpeg made it by its umask)
      await f.sync();
      bytes = (await f.stat()).size;
    } finally {
      await f.close();
    }
    await rename(tmp, join(this.dir, key + CLIP));
    await syncDir(this.dir);
    return bytes;
  }

  /** An event's clip, opened for reading (never through a link), with its size; undefined when there is none. */
  async openClip(key: string): Promise<{ file: FileHandle; size: number } | undefined> {
    if (this.refused) return undefined;
    const file = await open(
      join(this.dir, key + CLIP),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    ).catch(() => undefined);
    if (!file) return undefined;
    const st = await file.stat();
    if (!st.isFile()) {
      await file.close();
      return undefined;
    }
    return { file, size: st.size };
  }

  /** An event's snapshot JPEG; undefined when it has none. */
  async snapshot(key: string, which: 'full' | 'crop'): Promise<Buffer | undefined> {
    if (this.refused) return undefined;
    // Never through a link: a snapshot file that is one is not served.
    return readOwnFile(join(this.dir, key + SNAPSHOT_FILES[which])).catch(() => undefined);
  }
}
