import { constants } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Opening never follows a symbolic link in the file's place (ELOOP instead). */
const NOFOLLOW = constants.O_NOFOLLOW;

/**
 * Writes a file crash-safely: to a temporary file in the same directory (`.<name>.<pid>.tmp`),
 * flushed to disk, then renamed over `path`, and the directory flushed, so a crash or power cut
 * leaves the old file or the new one, never a mix. The temporary file is made afresh (a link or
 * file left in its place is removed, never written through), and the rename replaces `path`
 * itself, never what a link there points to. The directory must exist. Throws when the write
 * fails, the temporary file removed.
 */
export async function writeAtomic(path: string, data: string | Buffer): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  const create = (): Promise<FileHandle> =>
    open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o640);
  try {
    let f: FileHandle;
    try {
      f = await create();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      await unlink(tmp);
      f = await create();
    }
    try {
      await f.writeFile(data);
      await f.sync();
    } finally {
      await f.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await syncDir(dir);
}

/**
 * A regular file's contents, never through a symbolic link: undefined when `path` is missing, a
 * link, or not a regular file. Other errors (permissions, I/O) are thrown.
 */
export async function readOwnFile(path: string): Promise<Buffer | undefined> {
  let f: FileHandle;
  try {
    f = await open(path, constants.O_RDONLY | NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return undefined;
    throw err;
  }
  try {
    if (!(await f.stat()).isFile()) return undefined;
    return await f.readFile();
  } finally {
    await f.close();
  }
}

/** Flushes a directory's entries (a rename, an unlink) to disk; not every file system allows it. */
export async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r').catch(() => undefined);
  if (!d) return;
  await d.sync().catch(() => undefined);
  await d.close();
}
