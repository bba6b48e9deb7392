import { randomBytes } from 'node:crypto';
import { constants, readFileSync } from 'node:fs';
import { link, lstat, mkdir, open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { readOwnFile, syncDir, writeAtomic } from './atomic.js';
import type { StateDirSource } from './dir.js';
import { LOCK_FILE, OWNER_FILE } from './layout.js';

/** What the lock file holds: who holds the directory. No secret: a pid, a path, times. */
export interface LockHolder {
  version: 1;
  pid: number;
  /** The config file's real path. */
  config: string;
  /** When it took the directory (ISO 8601). */
  since: string;
  /** The kernel's boot id and the process' start time (clock ticks after boot): a pid used again after a reboot or an exit is not the holder. */
  boot?: string;
  start?: string;
  /** Tells two holders in one process apart (tests): only its taker removes the lock. */
  token: string;
}

/** How a process is told apart from another that got its pid later; Linux's /proc where there is one. */
export interface Processes {
  /** Whether a process of that id exists. */
  exists(pid: number): boolean;
  /** The kernel's boot id; undefined where it cannot be read. */
  bootId(): string | undefined;
  /** When the process started (clock ticks after boot); undefined where it cannot be read. */
  startOf(pid: number): string | undefined;
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export const systemProcesses: Processes = {
  exists(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM'; // there, another user's
    }
  },
  bootId: () => readText('/proc/sys/kernel/random/boot_id')?.trim(),
  startOf(pid) {
    // Field 22 of /proc/<pid>/stat; the name (field 2, in parentheses) may hold spaces.
    const stat = readText(`/proc/${pid}/stat`);
    const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields?.[19];
  },
};

/** Whether the holder of a lock still runs: its pid is there, and is the same process (same boot, same start). */
export function holderRuns(h: Pick<LockHolder, 'pid' | 'boot' | 'start'>, procs: Processes): boolean {
  if (!procs.exists(h.pid)) return false;
  const boot = procs.bootId();
  if (h.boot && boot && h.boot !== boot) return false;
  const start = procs.startOf(h.pid);
  return !(h.start && start && h.start !== start);
}

/** The state directory is held by a running Argus: `argus run` refuses to start. */
export class StateDirInUse extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder,
    mine: string,
  ) {
    super(
      holder.config === mine
        ? `the state directory ${dir} is in use by another Argus (pid ${holder.pid}) running this same config, ${mine}; stop that one first`
        : `the state directory ${dir} is in use by another Argus (pid ${holder.pid}) running config ${holder.config}; ` +
            `config ${mine} cannot share it (its history, line counts and control.json would mix): stop that one, or give this config its own state_dir`,
    );
  }
}

/** A lock file that does not parse and is younger than this may be in the making (a file system without hard links). */
const YOUNG_MS = 5_000;
const TRIES = 20;
/** The temporary files of taking the lock (`LOCK_FILE`'s): `.argus.lock.<pid>.<token>.tmp` and `.stale`. */
const LEFTOVER = /^\.argus\.lock\.(\d+)\.[0-9a-f]+\.(?:tmp|stale)$/;

function parseHolder(text: string): LockHolder | undefined {
  try {
    const h = JSON.parse(text) as Partial<LockHolder>;
    if (typeof h.pid === 'number' && Number.isInteger(h.pid) && h.pid > 0 && typeof h.config === 'string')
      return { version: 1, since: '', token: '', ...h } as LockHolder;
  } catch {
    // not a lock of ours: stale
  }
  return undefined;
}

/** The config that last ran with a state directory (its owner record); undefined when it has none. */
export async function readOwner(dir: string): Promise<string | undefined> {
  const data = await readOwnFile(join(dir, OWNER_FILE)).catch(() => undefined);
  if (!data) return undefined;
  try {
    const { config } = JSON.parse(data.toString('utf8')) as { config?: unknown };
    return typeof config === 'string' ? config : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The state directory, held for one running Argus: `argus.lock` in it names the process and its
 * config (pid, the config file's real path, when; no secret), made atomically (written to a
 * temporary file, then hard-linked to its name, which fails when there is one), and removed at
 * stop. A lock whose process runs is another Argus' directory: start is refused naming both
 * configs and the directory (StateDirInUse). A lock of a process that is gone (a crash, a kill,
 * a reboot: its pid gone, or now another process') is taken over, logged.
 *
 * `owner.json` records which config's state the directory holds (written crash-safely when it
 * changes): the shared directory of old keeps its config (legacy.ts), and a directory that
 * another config used before says so in the log.
 */
export class StateLock {
  readonly name = 'state';
  private readonly token = randomBytes(8).toString('hex');
  private held = false;

  constructor(
    readonly dir: string,
    /** The config file's real path. */
    private readonly config: string,
    private readonly from: StateDirSource,
    private readonly log: Logger,
    private readonly procs: Processes = systemProcesses,
  ) {}

  private get path(): string {
    return join(this.dir, LOCK_FILE);
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o750 });
    await this.removeLeftovers();
    await this.take();
    await this.recordOwner();
  }

  /** Removes the lock, if it is still this one's. */
  async stop(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    const holder = parseHolder((await readOwnFile(this.path).catch(() => undefined))?.toString('utf8') ?? '');
    if (holder?.token === this.token) await unlink(this.path).catch(() => undefined);
  }

  /** Temporary files of taking the lock that a crash left (`.argus.lock.<pid>.<token>.tmp`/`.stale`), of processes gone. */
  private async removeLeftovers(): Promise<void> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      const pid = LEFTOVER.exec(name)?.[1];
      if (pid !== undefined && !this.procs.exists(Number(pid))) {
        const st = await lstat(join(this.dir, name)).catch(() => undefined);
        if (st?.isFile()) await unlink(join(this.dir, name)).catch(() => undefined);
      }
    }
  }

  private holderText(): string {
    const holder: LockHolder = {
      version: 1,
      pid: process.pid,
      config: this.config,
      since: new Date().toISOString(),
      token: this.token,
    };
    const boot = this.procs.bootId();
    const start = this.procs.startOf(process.pid);
    if (boot) holder.boot = boot;
    if (start) holder.start = start;
    return `${JSON.stringify(holder)}\n`;
  }

  private async take(): Promise<void> {
    const text = this.holderText();
    for (let i = 0; i < TRIES; i++) {
      if (await this.create(text)) {
        this.held = true;
        return;
      }
      const found = await readOwnFile(this.path).catch(() => undefined);
      if (!found) {
        if (
          await lstat(this.path).then(
            (s) => !s.isFile(),
            () => false,
          )
        )
          throw new Error(
            `${this.path} is not a regular file; remove it, or give this config another state_dir`,
          );
        continue; // gone since: try again
      }
      const holder = parseHolder(found.toString('utf8'));
      if (holder && holderRuns(holder, this.procs)) throw new StateDirInUse(this.dir, holder, this.config);
      if (!holder && (await this.young())) {
        await new Promise((r) => setTimeout(r, 100)); // being written, without hard links
        continue;
      }
      if (await this.removeStale(found))
        this.log.warn(
          { dir: this.dir, pid: holder?.pid, config: holder?.config },
          holder
            ? 'the state directory was locked by an Argus that is no longer running; lock taken over'
            : 'the state directory held a lock file that does not parse; taken over',
        );
    }
    throw new Error(
      `cannot lock the state directory ${this.dir}: its lock file changed ${TRIES} times while taking it`,
    );
  }

  /** Makes the lock file holding `text`, all at once; false when there is one. */
  private async create(text: string): Promise<boolean> {
    const tmp = join(this.dir, `.${LOCK_FILE}.${process.pid}.${this.token}.tmp`);
    await unlink(tmp).catch(() => undefined);
    const f = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o640,
    );
    try {
      await f.writeFile(text);
      await f.sync();
    } finally {
      await f.close();
    }
    try {
      await link(tmp, this.path);
      await syncDir(this.dir);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS')
        return this.createWithoutLink(text);
      throw err;
    } finally {
      await unlink(tmp).catch(() => undefined);
    }
  }

  /** A file system without hard links: made exclusively, then written (a reader may see it empty for a moment). */
  private async createWithoutLink(text: string): Promise<boolean> {
    let f;
    try {
      f = await open(
        this.path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o640,
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    try {
      await f.writeFile(text);
      await f.sync();
    } finally {
      await f.close();
    }
    return true;
  }

  private async young(): Promise<boolean> {
    const st = await lstat(this.path).catch(() => undefined);
    return !!st && Date.now() - st.mtimeMs < YOUNG_MS;
  }

  /**
   * Removes a stale lock, if it is still the one read: it is renamed aside first (one rename
   * wins), and a lock that another Argus made in between is put back. True when removed.
   */
  private async removeStale(seen: Buffer): Promise<boolean> {
    const aside = join(this.dir, `.${LOCK_FILE}.${process.pid}.${this.token}.stale`);
    try {
      await rename(this.path, aside);
    } catch {
      return false; // gone, or taken: the next try says
    }
    const moved = await readOwnFile(aside).catch(() => undefined);
    if (moved && !moved.equals(seen)) await link(aside, this.path).catch(() => undefined);
    await unlink(aside).catch(() => undefined);
    return !!moved?.equals(seen);
  }

  /** Records this config as the directory's owner (when it is not already), saying whose it was. */
  private async recordOwner(): Promise<void> {
    const before = await readOwner(this.dir);
    if (before === this.config) return;
    if (this.from === 'legacy')
      this.log.info(
        { dir: this.dir, config: this.config },
        'the shared state directory of earlier versions holds state of this config’s cameras: this config keeps it; other configs without state_dir get their own (docs/config.md, "state_dir")',
      );
    else if (before !== undefined)
      this.log.warn(
        { dir: this.dir, config: this.config, before },
        'the state directory was last used by another config; state of cameras this config does not have is kept, not shown',
      );
    try {
      await writeAtomic(
        join(this.dir, OWNER_FILE),
        `${JSON.stringify({ version: 1, config: this.config })}\n`,
      );
    } catch (err) {
      this.log.warn(
        { dir: this.dir, err: (err as Error).message },
        'cannot record the state directory’s config',
      );
    }
  }
}
