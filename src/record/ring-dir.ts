/**
 * A camera's ring directory, checked under a running daemon: what stands at its path (never
 * following a symbolic link), and making it usable again where Argus can (a directory deleted, a
 * file in its place, its mode changed); `RingDir` checks it every `RING_CHECK_MS` for its ring.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { chmod, lstat, mkdir, open, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';

/** How often (ms) the ring's directory is checked, besides at once when a file in it fails. */
export const RING_CHECK_MS = 2000;

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
/** What `checkDir` says of a directory it found missing and made. */
const MADE = 'it was missing: made again';

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
      mended ??= MADE;
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

export interface RingDirDeps {
  clock: Clock;
  /** The ring's logger. */
  log: Logger;
  /** The directory was removed or replaced under Argus: the video listed in it is lost. */
  replaced: (message: string) => void;
  /** The directory cannot be used (`error` names it): the ring writes nothing until it can. */
  refused: (error: string) => void;
}

/**
 * A ring's directory, watched: checked at start, every `RING_CHECK_MS` once watched, and at once
 * when a file in it fails; mended where Argus can, else `unusable`. Held open while usable.
 */
export class RingDir {
  /** Why the directory cannot be used now (it names the path); undefined while it can. */
  unusable: string | undefined;
  /** The directory as last checked (a deleted or replaced one is another). */
  private dirId: DirId | undefined;
  /** The directory held open: a deleted one's number is not given to the next made (ext4 reuses them). */
  private dirFd: number | undefined;
  /** A file in the directory failed as if the directory had: the next check tries a write. */
  private suspect = false;
  private checking: Promise<void> | undefined;
  private timer: Timer | undefined;
  private stopped = true;
  /** A check has found the directory usable: from then on a missing one was removed under Argus. */
  private found = false;

  constructor(
    readonly dir: string,
    private readonly deps: RingDirDeps,
  ) {}

  /** Checks the directory for the first time (mending it where it can). */
  async start(): Promise<void> {
    this.stopped = false;
    await this.check();
  }

  /** Checks the directory again after `RING_CHECK_MS`, until stopped. */
  watch(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      void this.check().finally(() => this.watch());
    }, RING_CHECK_MS);
  }

  /**
   * Checks the ring's directory (one check at a time): missing, a file in its place or its mode
   * changed, it is mended; another directory in its place is taken, and the video the ring
   * listed is dropped (its files went with the old one); one that cannot be used (a symbolic
   * link, another user's, one that takes no file) is `unusable`, and nothing is written until a
   * later check finds it usable.
   */
  check(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.checking ??= this.inspect().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  /** A file in the directory failed as if the directory had: checks now, with a write. */
  distrust(): void {
    this.suspect = true;
    void this.check();
  }

  private async inspect(): Promise<void> {
    const dir = this.dir;
    const probe = this.suspect || this.unusable !== undefined || this.dirId === undefined;
    this.suspect = false;
    const r = await checkDir(dir, probe);
    if (this.stopped) return;
    const id = r.id;
    if (this.dirId !== undefined && (id === undefined || !sameDir(this.dirId, id)))
      this.deps.replaced(
        `the ring directory ${dir} was removed or replaced under Argus: the video in it is lost`,
      );
    if (!r.ok) {
      if (this.unusable !== r.error)
        this.deps.log.error(
          { dir, err: r.error },
          "the ring directory cannot be used: this camera's clips are refused",
        );
      this.unusable = r.error;
      this.dirId = undefined;
      this.holdDir(undefined);
      this.deps.refused(r.error);
      return;
    }
    if (!sameDir(this.dirId, r.id)) this.holdDir(r.id);
    this.dirId = r.id;
    // A fresh state directory has none yet: made at the first check, nothing changed under Argus.
    if (r.mended === MADE && !this.found) this.deps.log.debug({ dir }, 'the ring directory was made');
    else if (r.mended)
      this.deps.log.warn({ dir, mended: r.mended }, 'the ring directory was changed under Argus: mended');
    this.found = true;
    if (this.unusable !== undefined) {
      this.deps.log.info({ dir }, 'the ring directory can be used again: clips resume');
      this.unusable = undefined;
    }
  }

  /** Holds the directory `id` open (the one checked: never through a link), and lets the last go. */
  private holdDir(id: DirId | undefined): void {
    if (this.dirFd !== undefined) closeSync(this.dirFd);
    this.dirFd = undefined;
    if (!id) return;
    try {
      const fd = openSync(this.dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      if (sameDir(id, fstatSync(fd))) this.dirFd = fd;
      else closeSync(fd); // replaced since: the next check sees it
    } catch {
      // Gone since: the next check sees it.
    }
  }

  /** Whether the directory is not (or no longer) the one last checked: read at once, without waiting. */
  moved(): boolean {
    try {
      const st = lstatSync(this.dir);
      return !st.isDirectory() || !sameDir(this.dirId, st);
    } catch {
      return true;
    }
  }

  /** Stops the checks (waiting for one under way) and lets the directory go. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.deps.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.checking;
    this.holdDir(undefined);
  }
}
