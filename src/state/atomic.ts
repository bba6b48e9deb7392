import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a file crash-safely: to a temporary file in the same directory (`.<name>.<pid>.tmp`),
 * flushed to disk, then renamed over `path`, and the directory flushed, so a crash or power cut
 * leaves the old file or the new one, never a mix. The directory must exist. Throws when the
 * write fails, the temporary file removed.
 */
export async function writeAtomic(path: string, data: string | Buffer): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.tmp`);
  try {
    const f = await open(tmp, 'w', 0o640);
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

/** Whether a file name is one of writeAtomic's temporary files (left behind by a crash). */
export const isTemporary = (name: string): boolean => name.startsWith('.') && name.endsWith('.tmp');

/** Flushes a directory's entries (a rename, an unlink) to disk; not every file system allows it. */
export async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r').catch(() => undefined);
  if (!d) return;
  await d.sync().catch(() => undefined);
  await d.close();
}
