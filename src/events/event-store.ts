import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, readlink, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../config/index.js';
import { readOwnFile, syncDir, writeAtomic } from '../state/index.js';
import type { ClipPayload } from '../publish/index.js';

/** An event as the history keeps it: what it is filtered and ordered by, and what is answered. */
/** The event history's directory in the state directory. */
export const HISTORY_DIR = 'events';

export interface StoredEvent {
  id: string;
  camera: string;
  label: string;
  /** Every zone it has been in. */
  zones: string[];
  /** When it started (ms since the epoch): the history's order. */
  start: number;
  /** The event as the API answers it: its latest payload. */
  event: Record<string, unknown>;
}

export interface EventQuery {
  camera?: string;
  label?: string;
  /** Events that have been in this zone. */
  zone?: string;
  /** Events that started after this time (ms since the epoch). */
  after?: number;
  limit: number;
}

export interface EventStoreLimits {
  /** The most events kept; 0 keeps none (and writes nothing). */
  maxEvents: number;
  /** The most bytes kept, records, snapshots and clips together. */
  maxBytes: number;
  /** Events that started longer ago than this go (ms); 0: no limit. */
  maxAgeMs?: number;
}

export interface Snapshot {
  /** The frame with the object's box drawn. */
  full: Buffer;
  /** The object and a margin around it. */
  crop: Buffer;
}

const fileSchema = z.object({
  version: z.literal(1),
  id: z.string().min(1),
  camera: z.string(),
  label: z.string(),
  zones: z.array(z.string()),
  start: z.number(),
  event: z.record(z.string(), z.unknown()),
});

interface Entry extends StoredEvent {
  /** Its files' common name: `<key>.json`, `<key>.jpg`, `<key>.crop.jpg`. */
  key: string;
  /** Tie-break of `start` in the order: the order of arrival. */
  seq: number;
  recordBytes: number;
  fullBytes: number;
  cropBytes: number;
  clipBytes: number;
  /** This event's writes, one after another. */
  chain: Promise<void>;
  /** A write of its record is queued and has not begun: a change needs no other. */
  recordQueued: boolean;
  evicted: boolean;
}

const RECORD = '.json';
const SNAPSHOT_FILES = { full: '.jpg', crop: '.crop.jpg' } as const;
const CLIP = '.mp4';

/** A clip Argus stopped before writing: what a record still `recording` at start says instead (docs/mqtt.md, `clip`). */
export const STOPPED_CLIP: ClipPayload = {
  state: 'failed',
  error: 'Argus stopped before its clip was written',
  reasons: ['stream_ended'],
};

/** The event left the history (its bounds, or a DELETE): `code` EVICTED. */
const notKept = (): Error =>
  Object.assign(new Error('the event is no longer in the history'), { code: 'EVICTED' });
/** An event's files besides its record. */
const MEDIA = [SNAPSHOT_FILES.full, SNAPSHOT_FILES.crop, CLIP] as const;

/**
 * The names of the files Argus writes in the history's directory: `<key>.json`, `<key>.jpg`,
 * `<key>.crop.jpg`, and their temporary files (`.<name>.<pid>.tmp`, state/atomic.ts).
 */
const OWN_FILE = String.raw`[0-9a-f]{24}(?:\.json|\.jpg|\.crop\.jpg|\.mp4)`;
const OWN_NAME = new RegExp(String.raw`^(?:${OWN_FILE}|\.${OWN_FILE}\.\d+\.tmp)$`);
const isOwnName = (name: string): boolean => OWN_NAME.test(name);

/** Removes a file of Argus' if it is a regular file: a link or folder put in its place stays. */
async function removeOwnFile(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined);
  if (st?.isFile()) await unlink(path).catch(() => undefined);
}

/** Records read at once when loading. */
const LOAD_BATCH = 64;

/** An event's files' name: a hash of its id (ids hold camera names, which may not fit a file name). */
export const eventKey = (id: string): string => createHash('sha256').update(id).digest('hex').slice(0, 24);

const sizeOf = (e: Entry): number => e.recordBytes + e.fullBytes + e.cropBytes + e.clipBytes;

const before = (a: Entry, b: Entry): boolean => a.start < b.start || (a.start === b.start && a.seq < b.seq);

/**
 * The event history: the latest events with their snapshots, bounded by count and bytes (the
 * oldest go first, with their files), kept across restarts in a directory of the state directory.
 *
 * Each event is three files: `<key>.json` (its record: the latest payload and what it is found
 * by), `<key>.jpg` and `<key>.crop.jpg` (its snapshot), each written to a temporary file, flushed
 * and renamed (state/atomic.ts). A crash or power cut leaves every file whole: an event's old
 * record or its new one, its old snapshot or its new one; what it loses is the writes not yet
 * done (the events in flight). Writes of one event run one after another, a record's changes
 * queued behind a write in progress coalescing into one; measured here, a new event with its
 * snapshot cost 4 ms of flushes (median; an update 2 ms), in libuv's threads, not the event loop.
 *
 * Only regular files of those names are Argus': loading reads every record; one that does not
 * parse is logged and removed (with its snapshot), as are Argus' files no record names and
 * temporary files left by a crash; one that cannot be read (permissions, an I/O error) is logged
 * and left as it is. Anything else (other names, symbolic links, folders) is left as it is, and
 * logged in one line. No symbolic link is followed: a snapshot that is one is not served, and a
 * directory that is one is not used (logged; the history is kept in memory, without snapshots).
 * A directory that cannot be read or made leaves the history in memory (logged): it never stops
 * Argus. The directory is made at the first write.
 * Writes never throw: a failure is logged once per reason, and the next change writes again.
 */
export class EventStore {
  /** Oldest first. */
  private order: Entry[] = [];
  private byId = new Map<string, Entry>();
  private seq = 0;
  private bytes = 0;
  /** Writes in progress or queued, evicted events' removals included. */
  private pending = new Set<Promise<void>>();
  private lastError = '';
  /** The directory is a symbolic link: nothing is read or written there. */
  private refused = false;

  constructor(
    readonly dir: string,
    private readonly limits: EventStoreLimits,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The history in its directory of the state directory, bounded as `events.history` says; none
   * without a state directory. `clock` is the daemon's (the age of events, `max_days`).
   */
  static inStateDir(
    stateDir: string | undefined,
    cfg: Config['events']['history'],
    log: Logger,
    clock: { now(): number } = { now: Date.now },
  ): EventStore | undefined {
    if (stateDir === undefined) return undefined;
    return new EventStore(
      join(stateDir, HISTORY_DIR),
      { maxEvents: cfg.max_events, maxBytes: cfg.max_mb * 1024 * 1024, maxAgeMs: cfg.max_days * 86_400_000 },
      log,
      () => clock.now(),
    );
  }

  private get enabled(): boolean {
    return this.limits.maxEvents > 0;
  }

  /** Reads what the last run kept (within today's limits) and tidies the directory. */
  async load(): Promise<void> {
    if (!this.enabled) return;
    if (await this.isLink()) return;
    let entries: Dirent[];
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // made at the first write
      this.log.warn(
        { dir: this.dir, err: (err as Error).message },
        'cannot open the event history; it is kept in memory only',
      );
      return;
    }
    // Only regular files of Argus' names are Argus'; anything else is left as it is.
    const own: string[] = [];
    const others: string[] = [];
    for (const e of entries) (e.isFile() && isOwnName(e.name) ? own : others).push(e.name);
    const loaded: Entry[] = [];
    const keep = new Set<string>();
    const corrupt: string[] = [];
    const read = async (name: string): Promise<void> => {
      const key = name.slice(0, -RECORD.length);
      const files = [name, ...MEDIA.map((m) => key + m)];
      let text: string;
      try {
        const data = await readOwnFile(join(this.dir, name));
        if (!data) throw Object.assign(new Error('not a regular file'), { code: 'ELOOP' });
        text = data.toString('utf8');
      } catch (err) {
        // Permissions, an I/O error, a link put in its place since: not ours to remove.
        for (const f of files) keep.add(f);
        this.log.warn(
          { file: join(this.dir, name), code: (err as NodeJS.ErrnoException).code },
          'cannot read an event of the history; left as it is, not listed',
        );
        return;
      }
      try {
        const { id, camera, label, zones, start, event } = fileSchema.parse(JSON.parse(text));
        if (eventKey(id) !== key) throw new Error(`holds event ${id}, whose file is another`);
        const size = (suffix: string): Promise<number> =>
          lstat(join(this.dir, key + suffix)).then(
            (s) => (s.isFile() ? s.size : 0),
            () => 0,
          );
        const [full, crop, clip] = await Promise.all(MEDIA.map(size));
        const stored = { id, camera, label, zones, start, event };
        loaded.push(this.entry(stored, key, Buffer.byteLength(text), full!, crop!, clip));
        for (const f of files) keep.add(f);
      } catch (err) {
        corrupt.push(name);
        this.log.warn(
          { file: join(this.dir, name), err: (err as Error).message },
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
    await Promise.all(leftovers.map((n) => removeOwnFile(join(this.dir, n))));
    await syncDir(this.dir);
    if (others.length)
      this.log.warn(
        { dir: this.dir, files: others.length, names: others.slice(0, 10) },
        'files in the event history that Argus did not write (other names, links, folders) are left as they are',
      );
    loaded.sort((a, b) => a.start - b.start || a.seq - b.seq);
    for (const e of loaded) this.insert(e);
    // A clip being recorded when Argus stopped (or was killed) never will be.
    for (const e of loaded)
      if ((e.event.clip as { state?: unknown } | null | undefined)?.state === 'recording') {
        e.event = { ...e.event, clip: STOPPED_CLIP };
        this.writeRecord(e);
      }
    this.evict();
    this.log.info(
      {
        dir: this.dir,
        events: this.order.length,
        bytes: this.bytes,
        removed_corrupt: corrupt.length,
        removed_leftovers: leftovers.length - corrupt.length,
        left_alone: others.length,
      },
      'event history loaded',
    );
  }

  /**
   * Whether the history's directory is a symbolic link: then it is not used (logged once), so
   * that nothing where it points is read, written or removed; the history is kept in memory.
   */
  private async isLink(): Promise<boolean> {
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

  private entry(
    e: StoredEvent,
    key: string,
    recordBytes: number,
    fullBytes: number,
    cropBytes: number,
    clipBytes = 0,
  ): Entry {
    return {
      ...e,
      key,
      seq: this.seq++,
      recordBytes,
      fullBytes,
      cropBytes,
      clipBytes,
      chain: Promise.resolve(),
      recordQueued: false,
      evicted: false,
    };
  }

  private insert(e: Entry): void {
    let i = this.order.length;
    while (i > 0 && before(e, this.order[i - 1]!)) i--;
    this.order.splice(i, 0, e);
    this.byId.set(e.id, e);
    this.bytes += sizeOf(e);
  }

  /** Adds a new event (the newest usually), evicting the oldest beyond the limits. */
  add(e: StoredEvent): void {
    if (!this.enabled) return;
    if (this.byId.has(e.id)) return this.update(e);
    const entry = this.entry(e, eventKey(e.id), 0, 0, 0);
    this.insert(entry);
    this.writeRecord(entry);
    this.evict();
  }

  /** Replaces an event's record; an event not kept (never added, or evicted) is ignored. */
  update(e: StoredEvent): void {
    const entry = this.byId.get(e.id);
    if (!entry) return;
    Object.assign(entry, { camera: e.camera, label: e.label, zones: e.zones, event: e.event });
    this.writeRecord(entry);
  }

  /**
   * Gives an event its snapshot (replacing any before), and sets `fields` of its record (what
   * names the snapshot). The JPEGs may still be in the making: the event's later writes, and
   * reads of its snapshot, wait for them. A snapshot that fails is not kept (its maker says why).
   */
  setSnapshot(id: string, jpegs: Promise<Snapshot>, fields: Record<string, unknown>): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    entry.event = { ...entry.event, ...fields };
    const made = jpegs.catch(() => undefined);
    this.enqueue(entry, async () => {
      const snap = await made;
      if (!snap || entry.evicted) return;
      await this.write(join(this.dir, entry.key + SNAPSHOT_FILES.full), snap.full);
      await this.write(join(this.dir, entry.key + SNAPSHOT_FILES.crop), snap.crop);
      this.resize(entry, { fullBytes: snap.full.length, cropBytes: snap.crop.length });
    });
    this.writeRecord(entry);
  }

  private writeRecord(entry: Entry): void {
    if (entry.recordQueued) return;
    entry.recordQueued = true;
    this.enqueue(entry, async () => {
      entry.recordQueued = false;
      if (entry.evicted) return;
      const { id, camera, label, zones, start, event } = entry;
      const text = `${JSON.stringify({ version: 1, id, camera, label, zones, start, event })}\n`;
      await this.write(join(this.dir, entry.key + RECORD), text);
      this.resize(entry, { recordBytes: Buffer.byteLength(text) });
    });
  }

  private resize(
    entry: Entry,
    sizes: Partial<Pick<Entry, 'recordBytes' | 'fullBytes' | 'cropBytes' | 'clipBytes'>>,
  ): void {
    if (entry.evicted) return;
    const was = sizeOf(entry);
    Object.assign(entry, sizes);
    this.bytes += sizeOf(entry) - was;
    this.evict();
  }

  private enqueue(entry: Entry, step: () => Promise<void>): void {
    const next = entry.chain.then(step).catch((err: unknown) => {
      this.log.warn({ dir: this.dir, err: String(err) }, 'event history: a write failed');
    });
    entry.chain = next;
    this.pending.add(next);
    void next.finally(() => this.pending.delete(next));
  }

  /** Writes a file; a failure is logged (once while its cause lasts), never thrown. */
  private async write(path: string, data: string | Buffer): Promise<void> {
    if (await this.isLink()) return;
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
    }
  }

  /**
   * Removes the oldest events while over a limit (count, bytes; the newest stays, however big)
   * and those older than `maxAgeMs`.
   */
  private evict(): void {
    const maxAge = this.limits.maxAgeMs ?? 0;
    const oldest = maxAge > 0 ? this.now() - maxAge : -Infinity;
    while (
      this.order.length > this.limits.maxEvents ||
      (this.order.length > 1 && this.bytes > this.limits.maxBytes) ||
      (this.order.length > 0 && this.order[0]!.start < oldest)
    )
      this.drop(this.order[0]!);
  }

  /** Forgets an event and removes its files (record first: a crash in between leaves media files, which loading removes). */
  private drop(e: Entry): void {
    this.order.splice(this.order.indexOf(e), 1);
    this.byId.delete(e.id);
    this.bytes -= sizeOf(e);
    e.evicted = true;
    this.enqueue(e, async () => {
      if (this.refused) return;
      for (const suffix of [RECORD, ...MEDIA]) await removeOwnFile(join(this.dir, e.key + suffix));
    });
  }

  /** Drops the events past their age (`events.history.max_days`); called every second or so. */
  expire(): void {
    if (this.order.length) this.evict();
  }

  /** Deletes an event with its snapshot and clip; false when the history holds no such event. */
  async remove(id: string): Promise<boolean> {
    const entry = this.byId.get(id);
    if (!entry) return false;
    this.drop(entry);
    await entry.chain;
    return true;
  }

  /**
   * Where a clip of the event may be written before it is kept (`adoptClip`): a temporary file in
   * the history's directory, which loading removes if a crash leaves it. Undefined when the
   * event is not kept, or the history is in memory only.
   */
  async clipTemp(id: string): Promise<string | undefined> {
    const entry = this.byId.get(id);
    if (!entry || (await this.isLink())) return undefined;
    await mkdir(this.dir, { recursive: true, mode: 0o750 });
    const tmp = join(this.dir, `.${entry.key}${CLIP}.${process.pid}.tmp`);
    await removeOwnFile(tmp);
    return tmp;
  }

  /**
   * Keeps a clip written to `tmp` as the event's (flushed, then renamed: a crash leaves the clip
   * whole or none), and sets `fields` of its record. Resolves with its size; rejects (the file
   * removed) when it cannot be kept, or the event is no longer kept.
   */
  async adoptClip(
    id: string,
    tmp: string,
    fields: (bytes: number) => Record<string, unknown>,
  ): Promise<number> {
    const entry = this.byId.get(id);
    if (!entry) {
      await unlink(tmp).catch(() => undefined);
      throw notKept();
    }
    return new Promise((resolve, reject) => {
      this.enqueue(entry, async () => {
        try {
          if (entry.evicted) throw notKept();
          const f = await open(tmp, constants.O_RDONLY | constants.O_NOFOLLOW);
          let bytes: number;
          try {
            await f.chmod(0o640); // as the history's other files (ffmpeg made it by its umask)
            await f.sync();
            bytes = (await f.stat()).size;
          } finally {
            await f.close();
          }
          await rename(tmp, join(this.dir, entry.key + CLIP));
          await syncDir(this.dir);
          entry.event = { ...entry.event, ...fields(bytes) };
          this.resize(entry, { clipBytes: bytes });
          // Its clip may have taken it past the history's bounds: then it went, clip and all.
          if (entry.evicted) throw notKept();
          this.writeRecord(entry);
          resolve(bytes);
        } catch (err) {
          await unlink(tmp).catch(() => undefined);
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /** Sets fields of an event's record (a clip that failed says why). */
  setFields(id: string, fields: Record<string, unknown>): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    entry.event = { ...entry.event, ...fields };
    this.writeRecord(entry);
  }

  /**
   * An event's clip, opened for reading (never through a link), with its size; undefined when it
   * has none. The caller closes it.
   */
  async openClip(id: string): Promise<{ file: FileHandle; size: number } | undefined> {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    await entry.chain;
    if (entry.evicted || this.refused || entry.clipBytes === 0) return undefined;
    const file = await open(
      join(this.dir, entry.key + CLIP),
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

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** The events that match, newest first (by start), at most `limit`. */
  list(q: EventQuery): Record<string, unknown>[] {
    const out: Record<string, unknown>[] = [];
    for (let i = this.order.length - 1; i >= 0 && out.length < q.limit; i--) {
      const e = this.order[i]!;
      if (q.after !== undefined && e.start <= q.after) break;
      if (q.camera !== undefined && e.camera !== q.camera) continue;
      if (q.label !== undefined && e.label !== q.label) continue;
      if (q.zone !== undefined && !e.zones.includes(q.zone)) continue;
      out.push(e.event);
    }
    return out;
  }

  /** An event's snapshot JPEG, once its writes in progress are done; undefined when it has none. */
  async snapshot(id: string, which: keyof Snapshot): Promise<Buffer | undefined> {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    await entry.chain;
    if (entry.evicted || this.refused) return undefined;
    // Never through a link: a snapshot file that is one is not served.
    return readOwnFile(join(this.dir, entry.key + SNAPSHOT_FILES[which])).catch(() => undefined);
  }

  /** How many events, and their bytes on disk. */
  stats(): { events: number; bytes: number } {
    return { events: this.order.length, bytes: this.bytes };
  }

  /** Waits for every write queued so far. */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }
}
