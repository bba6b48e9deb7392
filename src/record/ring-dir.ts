/**
 * A camera's ring directory, checked under a running daemon: what stands at its path (never
 * following a symbolic link), and making it usable again where Argus can (a directory deleted, a
 * file in its place, its mode changed).
 */
import { constants } from 'node:fs';
import { chmod, lstat, mkdir, open, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Which directory: a deleted one made again, or one put in its place, is another. */
export interface DirId {
  dev: number;
  ino: number;
}

/** The directory after a check: usable (which one, whether Argus made or mended it), or why not. */
export type DirCheck =
  | { ok: true; id: DirId; mended: string | undefined }
  | { ok: false; error: string; code: string | undefined; id?: DirId };

/** Errors of a file in the ring's directory that say the directory itself is gone or unusable. */
export const DIR_ERRORS: readonly string[] = ['ENOENT', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS', 'ELOOP'];

const code = (err: unknown): string | undefined => (err as NodeJS.ErrnoException).code;

/** The file a check creates and removes, to learn whether the directory takes new files. */
const PROBE = '.probe';

/**
 * Makes `dir` a directory of Argus' own that takes new files, or says why it cannot be: missing,
 * it is made (its parent, `events.clips.ring_dir`, too); a file (or a pipe…) in its place is
 * removed first (the path is Argus', named after the camera); a symbolic link is refused, never
 * followed or removed (someone put it there: they are told); a directory another user owns is
 * refused; its mode, if changed, is set back to 0700. With `probe`, a file is created and removed
 * in it (as root, a mode does not stop writes: `chattr +i` or a read-only mount does).
 */
export async function checkDir(dir: string, probe: boolean): Promise<DirCheck> {
  let mended: string | undefined;
  let id: DirId | undefined;
  try {
    let st = await lstat(dir).catch((err: unknown) => {
      if (code(err) === 'ENOENT') return undefined;
      throw err;
    });
    if (st?.isSymbolicLink())
      return {
        ok: false,
        code: 'ELOOP',
        error: `the ring directory ${dir} is a symbolic link: Argus does not follow it (remove it; to keep the ring elsewhere, set events.clips.ring_dir)`,
      };
    if (st && !st.isDirectory()) {
      await unlink(dir);
      mended = 'a file stood in its place: removed';
      st = undefined;
    }
    if (!st) {
      await mkdir(dirname(dir), { recursive: true, mode: 0o700 });
      await mkdir(dir, { mode: 0o700 });
      mended ??= 'it was missing: made again';
      st = await lstat(dir);
      if (!st.isDirectory())
        return { ok: false, code: 'ENOTDIR', error: `the ring directory ${dir} changed as it was made` };
    }
    id = { dev: st.dev, ino: st.ino };
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid)
      return {
        ok: false,
        code: 'EPERM',
        id,
        error: `the ring directory ${dir} belongs to user ${st.uid}, not to Argus (user ${uid}): not used`,
      };
    if ((st.mode & 0o777) !== 0o700) {
      await chmod(dir, 0o700);
      mended ??= `its mode was ${(st.mode & 0o777).toString(8).padStart(4, '0')}: set back to 0700`;
    }
    if (probe) {
      const path = join(dir, PROBE);
      await unlink(path).catch(() => undefined);
      const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
      try {
        await (await open(path, flags, 0o600)).close();
        await unlink(path);
      } catch (err) {
        // A full disk is the ring's `disk_full`, not a directory at fault.
        if (!['ENOSPC', 'EDQUOT'].includes(code(err) ?? '')) throw err;
      }
    }
    return { ok: true, id, mended };
  } catch (err) {
    return {
      ok: false,
      code: code(err),
      ...(id ? { id } : {}),
      error: `the ring directory ${dir} cannot be used: ${(err as Error).message}`,
    };
  }
}

/** Whether two checks found the same directory. */
export const sameDir = (a: DirId | undefined, b: DirId): boolean => a?.dev === b.dev && a.ino === b.ino;
