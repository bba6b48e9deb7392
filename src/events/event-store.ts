import { unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { isoTime } from '../core/time.js';
import { HISTORY_DIR } from '../state/index.js';
import {
  eventKey,
  RECORD,
  recordText,
  SNAPSHOT_FILES,
  STOPPED_CLIP,
  type Snapshot,
  type SnapshotFrame,
  type StoredEvent,
} from './event-record.js';
import { frameFits, type Segment } from '../record/index.js';
import { isDue, type NoSnapshot, type SnapshotFrames } from './snapshot-frames.js';
import { newestMatching, type EventQuery } from './event-query.js';
import { HistoryDir } from './history-dir.js';

/** The event history's directory in the state directory (its name: state/layout.ts). */
export { HISTORY_DIR };

export interface EventStoreLimits {
  /** The most events kept; 0 keeps none (and writes nothing). */
  maxEvents: number;
  /** The most bytes kept, records, snapshots and clips together. */
  maxBytes: number;
  /** Events that started longer ago than this go (ms); 0: no limit. */
  maxAgeMs?: number;
}

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
  /** Its latest snapshot, not yet written (see SNAPSHOT_SAVE_MS); served from here meanwhile. */
  unsaved?: Snapshot;
  saveTimer?: NodeJS.Timeout;
  /** When its record was last written (performance.now()), and the timer of a write held back. */
  recordAt: number;
  recordTimer?: NodeJS.Timeout;
  /**
   * Its snapshot was rescued from segments about to go but could not be written (the history's
   * fault): since when (`now()`), and the JPEG drawn, written again at the next try (RESCUE_RETRY_MS).
   */
  unkept?: { since: number; jpeg: Buffer };
  /** The rescue in progress of its snapshot's frame (its segments off the ring's list). */
  rescue?: Promise<unknown>;
  /** Its rescue was first put off (the rescue queue full) at this `now()`: put off for RESCUE_RETRY_MS at most. */
  deferred?: number;
}

/**
 * An event's record is written at once when it is new, has its clip, or ends without a clip to
 * wait for (an end whose clip is being described is written with the clip, held back as an
 * update is, so a crash in its post-roll loses the end, never the record); its updates and
 * better snapshots are written at most once per this many ms, held back and written together (an
 * event on a busy scene had a dozen rewrites a minute, each a flushed 4-KiB page: as many bytes as
 * its snapshots; at 5 s, a still scene's four standing people still rewrote a third of all
 * records). Most events end within it, their changes written once with the end. A crash loses at
 * most this much of a record's changes, never the record: it is still written to a temporary
 * file and renamed. `flush` writes them at once.
 */
export const RECORD_SAVE_MS = 30_000;

/**
 * An event's snapshot is written once, when the event ends, not each time a better frame
 * replaces it (two or three times an event, each a full-frame JPEG: on a busy camera more bytes
 * than the video itself, issue 47); an event still going on after this long (ms) has its latest
 * written then, and again at most this often. A crash loses at most this much of a snapshot's
 * improvements, or the snapshot of an event younger than this (its record names it; served as
 * absent), never a whole file: each is still written to a temporary file and renamed.
 */
export const SNAPSHOT_SAVE_MS = 60_000;

/**
 * A snapshot rescued from segments about to go that the history cannot write (a full disk, a
 * directory it may not write in) has those segments kept, listed by their ring (so it is still
 * drawn from them), and its write tried again each time the ring would remove them, for this
 * long (ms) from the first failure; then its frame is marked gone with why, and they go. The
 * ring holds them beyond its bytes meanwhile. A history that is a symbolic link (not used) is
 * not waited for.
 */
export const RESCUE_RETRY_MS = 10 * 60_000;

const ended = (e: Entry): boolean => e.event.type === 'end';

/**
 * Its clip is still being described (`clip.state` "recording"): an event that ends so has its
 * end written with its clip, a post-roll later (`setFields`), in one write, not two (issue 47:
 * each record write is a new file of its own, 4 KiB of pages and its directory's metadata).
 */
const clipComing = (e: Entry): boolean =>
  (e.event.clip as { state?: unknown } | null | undefined)?.state === 'recording';

/** The event left the history (its bounds, or a DELETE): `code` EVICTED. */
const notKept = (): Error =>
  Object.assign(new Error('the event is no longer in the history'), { code: 'EVICTED' });

/** An event's ready clip's range (from its record's `clip.start` and `clip.end`). */
function rangeOf(e: Entry): { id: string; camera: string; from: number; to: number } | undefined {
  const clip = e.event.clip as { state?: unknown; start?: unknown; end?: unknown } | null | undefined;
  if (clip?.state !== 'ready' || typeof clip.start !== 'string' || typeof clip.end !== 'string')
    return undefined;
  const from = Date.parse(clip.start);
  const to = Date.parse(clip.end);
  return Number.isFinite(from) && Number.isFinite(to) ? { id: e.id, camera: e.camera, from, to } : undefined;
}

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
 * (`HistoryDir`, history-dir.ts, does what is done in the directory; this, the bounds and the order.)
 */
export class EventStore {
  /** Oldest first. */
  private order: Entry[] = [];
  private byId = new Map<string, Entry>();
  private seq = 0;
  private bytes = 0;
  /** Writes in progress or queued, evicted events' removals included. */
  private pending = new Set<Promise<void>>();
  private readonly files: HistoryDir;
  /** Snapshots kept as frames of their camera's recording, drawn on request (set when clips run). */
  private frames: SnapshotFrames | undefined;
  /** A snapshot kept as a frame is rescued before its footage goes (`events.snapshots.outlive_footage`). */
  private outliveFootage = true;

  constructor(
    readonly dir: string,
    private readonly limits: EventStoreLimits,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.files = new HistoryDir(dir, log);
  }

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

  /** Reads what the last run kept (within today's limits) and tidies the directory (history-dir.ts). */
  async load(): Promise<void> {
    if (!this.enabled) return;
    const found = await this.files.read();
    if (!found) return;
    const savedAt = new Map<Entry, number>();
    const loaded = found.events.map((f) => {
      const e = this.entry(f.stored, f.key, f.recordBytes, f.fullBytes, f.cropBytes, f.clipBytes);
      savedAt.set(e, f.savedAt);
      return e;
    });
    loaded.sort((a, b) => a.start - b.start || a.seq - b.seq);
    for (const e of loaded) this.insert(e);
    // A clip being recorded when Argus stopped (or was killed) never will be; an event not ended
    // then (killed while it went on, or in its post-roll, its end held for its clip) never will
    // be either: it ends when its record was last written (a stop writes every end).
    for (const e of loaded) {
      const recording = clipComing(e);
      const open = !ended(e);
      if (!recording && !open) continue;
      e.event = {
        ...e.event,
        ...(recording ? { clip: STOPPED_CLIP } : {}),
        ...(open ? { type: 'end', end_ts: isoTime(Math.max(e.start, savedAt.get(e) ?? e.start)) } : {}),
      };
      this.writeRecord(e);
    }
    this.evict();
    this.log.info(
      {
        dir: this.dir,
        events: this.order.length,
        bytes: this.bytes,
        removed_corrupt: found.corrupt,
        removed_leftovers: found.leftovers - found.corrupt,
        left_alone: found.others,
      },
      'event history loaded',
    );
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
      recordAt: 0,
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
    this.writeRecord(entry, !ended(entry) ? 'update' : clipComing(entry) ? 'clip' : false);
    if (ended(entry)) this.saveSnapshot(entry);
  }

  /**
   * Gives an event its snapshot (replacing any before), and sets `fields` of its record (what
   * names the snapshot). The JPEGs may still be in the making: the event's later writes, and
   * reads of its snapshot, wait for them. A snapshot that fails is not kept (its maker says why).
   */
  setSnapshot(
    id: string,
    jpegs: Promise<Snapshot>,
    fields: Record<string, unknown>,
    frame?: SnapshotFrame,
  ): void {
    const entry = this.byId.get(id);
    if (!entry) return;
    entry.event = { ...entry.event, ...fields };
    // Its camera records: the snapshot is a frame of the recording, named by its record (one
    // that already has `<key>.jpg`, its camera recording since, keeps its file up to date).
    if (frame && entry.fullBytes === 0) entry.frame = frame;
    else delete entry.frame;
    const made = jpegs.catch(() => undefined);
    this.enqueue(entry, async () => {
      const snap = await made;
      if (!snap || entry.evicted) return;
      entry.unsaved = snap;
      this.resize(entry, { fullBytes: entry.frame ? 0 : snap.full.length, cropBytes: snap.crop.length });
      if (entry.evicted) return;
      if (ended(entry)) this.saveSnapshot(entry);
      else entry.saveTimer ??= setTimeout(() => this.saveSnapshot(entry), SNAPSHOT_SAVE_MS).unref();
    });
    this.writeRecord(entry, entry.event.type === 'update' && 'update');
  }

  /** Writes an event's snapshot kept in memory, after its writes queued so far. */
  private saveSnapshot(entry: Entry): void {
    clearTimeout(entry.saveTimer);
    entry.saveTimer = undefined;
    if (!entry.unsaved) return;
    this.enqueue(entry, async () => {
      const snap = entry.unsaved;
      if (!snap || entry.evicted) return;
      // The recording must hold the frame (a full disk or a failing ring loses segments): else
      // the snapshot is written as its own file, as for a camera that does not record.
      // So is one too large to be decoded (a model whose fixed input is past MAX_FRAME_SIDE).
      const f = entry.frame;
      if (f && (!frameFits(f.w, f.h) || !this.frames?.holds(entry.camera, f.ts))) {
        delete entry.frame;
        this.writeRecord(entry);
      }
      if (entry.frame) this.resize(entry, { fullBytes: 0 });
      else {
        await this.files.write(entry.key + SNAPSHOT_FILES.full, snap.full);
        this.resize(entry, { fullBytes: snap.full.length });
      }
      await this.files.write(entry.key + SNAPSHOT_FILES.crop, snap.crop);
      if (entry.unsaved === snap) entry.unsaved = undefined;
    });
  }

  /**
   * Writes an event's record; `hold`: a change that may wait — an update, a better snapshot
   * (`update`: until RECORD_SAVE_MS after the last write), an end whose clip is being described
   * (`clip`: until the clip, at most RECORD_SAVE_MS) — while its clip, and an end with none to
   * wait for, are written at once (with what was held back), so a clip announced ready is found
   * ready after a crash.
   */
  private writeRecord(entry: Entry, hold: false | 'update' | 'clip' = false): void {
    if (entry.recordQueued) {
      if (!hold && entry.recordTimer) this.queueRecord(entry);
      return;
    }
    entry.recordQueued = true;
    const wait = hold === 'clip' ? RECORD_SAVE_MS : entry.recordAt + RECORD_SAVE_MS - performance.now();
    if (hold && entry.recordAt > 0 && wait > 0)
      entry.recordTimer = setTimeout(() => this.queueRecord(entry), wait).unref();
    else this.queueRecord(entry);
  }

  /** Queues the write of an event's record (held back by `writeRecord`, or at once). */
  private queueRecord(entry: Entry): void {
    clearTimeout(entry.recordTimer);
    entry.recordTimer = undefined;
    this.enqueue(entry, async () => {
      entry.recordQueued = false;
      if (entry.evicted) return;
      entry.recordAt = performance.now();
      const text = recordText(entry);
      await this.files.write(entry.key + RECORD, text);
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
    clearTimeout(e.saveTimer);
    e.saveTimer = undefined;
    e.unsaved = undefined;
    clearTimeout(e.recordTimer);
    e.recordTimer = undefined;
    this.enqueue(e, () => this.files.remove(e.key));
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
    if (!entry) return undefined;
    return this.files.clipTemp(entry.key);
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
          const bytes = await this.files.keepClip(tmp, entry.key);
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
    if (entry.evicted || entry.clipBytes === 0) return undefined;
    return this.files.openClip(entry.key);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** An event's clip as a range of its camera's recording (ms since the epoch); undefined without a ready one. */
  clipRange(id: string): { id: string; camera: string; from: number; to: number } | undefined {
    const entry = this.byId.get(id);
    return entry && !entry.evicted ? rangeOf(entry) : undefined;
  }

  /** Every event's clip that is a range of its camera's recording (the footage to keep). */
  clipRanges(): { id: string; camera: string; from: number; to: number }[] {
    return this.order.flatMap((e) => rangeOf(e) ?? []);
  }

  /** The camera of an event the history holds; undefined when it holds none of that id. */
  cameraOf(id: string): string | undefined {
    return this.byId.get(id)?.camera;
  }

  /** The cameras the history holds events of (those of other configs and removed cameras too). */
  cameras(): string[] {
    return [...new Set(this.order.map((e) => e.camera))].sort();
  }

  /** The events that match, newest first (by start), at most `limit`. */
  list(q: EventQuery): Record<string, unknown>[] {
    return newestMatching(this.order, q);
  }

  /**
   * An event's snapshot JPEG, once its writes in progress are done; undefined when it has none.
   * An event of a recording camera has its snapshot drawn on its frame of the recording (issue
   * 47), or says why it cannot be (`NoSnapshot`); one with `<key>.jpg` (written before, or its
   * frame rescued before its footage went) is served from the file. A frame whose segments are
   * being removed, their rescue in progress, is answered once the rescue is done.
   */
  snapshotOrWhy(id: string, which: 'full' | 'crop'): Promise<Buffer | NoSnapshot | undefined> {
    return this.answer(id, which, false);
  }

  /** `snapshotOrWhy`; `waited`: the rescues in progress were waited for once (not again). */
  private async answer(
    id: string,
    which: 'full' | 'crop',
    waited: boolean,
  ): Promise<Buffer | NoSnapshot | undefined> {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    await entry.chain;
    if (entry.evicted) return undefined;
    // Not yet saved; or rescued and not yet written (the history's fault: kept for a retry).
    const memory = entry.unsaved?.[which] ?? (which === 'full' ? entry.unkept?.jpeg : undefined);
    if (memory) return memory;
    const frame = entry.frame;
    if (which === 'crop' || entry.fullBytes > 0 || !frame) return this.files.snapshot(entry.key, which);
    if (frame.gone !== undefined)
      return { status: 410, error: `the snapshot's frame is gone: ${frame.gone}` };
    if (!this.frames) return { status: 503, error: 'the recording is not read yet (Argus is starting)' };
    const view = await this.frames.view(entry.key, entry.camera, frame, () => this.cropOf(entry));
    // Its segments taken off the ring's list, their rescue not yet done: what the rescue leaves
    // (the file written, the segments kept for a retry, or the frame marked gone) answers.
    const rescue = entry.rescue;
    if (waited || Buffer.isBuffer(view)) return view;
    // Its frame rescued as <key>.jpg (or marked gone) while the request waited for a decode whose
    // segments then went: the record answers now (second review finding 10), not the decode's 503.
    if (entry.frame !== frame) return this.answer(id, which, true);
    if (view.status !== 410 || !rescue) return view;
    await rescue;
    return this.answer(id, which, true);
  }

  /** An event's snapshot JPEG (`snapshotOrWhy`); undefined when it has none, or none can be made now. */
  async snapshot(id: string, which: 'full' | 'crop'): Promise<Buffer | undefined> {
    const jpeg = await this.snapshotOrWhy(id, which);
    return Buffer.isBuffer(jpeg) ? jpeg : undefined;
  }

  /** An event's crop: in memory until written, then its file. */
  private async cropOf(entry: Entry): Promise<Buffer | undefined> {
    return entry.unsaved?.crop ?? this.files.snapshot(entry.key, 'crop');
  }

  /** Draws snapshots kept as frames of the recording (`SnapshotFrames`), and rescues them before their footage goes. */
  useFrames(frames: SnapshotFrames, opts: { outliveFootage?: boolean } = {}): void {
    this.frames = frames;
    this.outliveFootage = opts.outliveFootage ?? true;
  }

  /**
   * Segments of `camera`'s recording are about to be removed (`kept`: those that stay): the
   * snapshots of events still kept whose frame lies in them are written as `<key>.jpg` first
   * (drawn from memory when not yet saved, else from the segments; temporary file, flush,
   * rename), then their records name the file instead of the frame; a frame that cannot be read
   * is marked gone, with why; one that cannot be written (the history's fault: a full disk) keeps
   * the segments it needs, tried again when they would go next, for RESCUE_RETRY_MS. Undefined
   * when no snapshot lies in them; else the work, which resolves once each is written, held or
   * marked (the segments' files wait for it), with the segments of `removed` that must stay.
   */
  rescueFrames(
    camera: string,
    removed: readonly Segment[],
    kept: readonly Segment[],
    final = false,
  ): Promise<readonly Segment[]> | undefined {
    // outlive_footage off: a snapshot kept as a frame goes with its footage (410, the crop stays).
    if (!this.frames || !this.outliveFootage) return undefined;
    const due = this.order.filter(
      (e) =>
        e.camera === camera &&
        e.frame !== undefined &&
        e.frame.gone === undefined &&
        e.fullBytes === 0 &&
        !e.evicted &&
        isDue(removed, kept, e.frame.ts),
    );
    if (!due.length) return undefined;
    const framed = due.map((e) => {
      // In memory (not yet saved, or a write that failed): written as it is, no decode.
      const drawn = e.unkept?.jpeg ?? e.unsaved?.full;
      return {
        id: e.id,
        key: e.key,
        frame: e.frame!,
        crop: () => this.cropOf(e),
        ...(drawn ? { drawn } : {}),
      };
    });
    // One wait an event (second review finding 4): a request waits for its own snapshot's
    // rescue, not the batch's decodes; one held or put off (its segments listed again as the
    // batch ends, or its JPEG served from memory) waits for the batch.
    const ends = new Map<string, () => void>();
    const waits = due.map((entry) => ({
      entry,
      mine: new Promise<void>((resolve) => ends.set(entry.id, resolve)),
    }));
    const work = this.frames.rescue(camera, removed, kept, framed, {
      keep: (f, jpeg) => this.keepRescued(f.id, f.frame, jpeg),
      lost: (f, why) => {
        const entry = this.byId.get(f.id);
        if (!entry || entry.frame !== f.frame) return;
        entry.frame = { ...f.frame, gone: why };
        entry.unkept = undefined;
        delete entry.deferred;
        this.writeRecord(entry);
      },
      // `final`: the segments go whatever (a segment short of its bytes): nothing can be held.
      unkept: (f, jpeg, err) => this.retryRescue(f.id, f.frame, jpeg, err, final),
      settled: (f) => ends.get(f.id)?.(),
      defer: (f) => {
        if (final) return false;
        const entry = this.byId.get(f.id);
        if (!entry) return 'again'; // gone meanwhile: its next rescue does not list it
        if (entry.deferred === undefined) {
          entry.deferred = this.now();
          return 'first';
        }
        return this.now() - entry.deferred < RESCUE_RETRY_MS ? 'again' : false;
      },
    });
    if (!work) return undefined;
    for (const { entry, mine } of waits) {
      entry.rescue = mine;
      void mine.then(() => {
        if (entry.rescue === mine) delete entry.rescue;
      });
    }
    const all = (): void => ends.forEach((end) => end());
    void work.then(all, all);
    return work;
  }

  /**
   * A rescued snapshot the history could not write: `retry` (keep its segments and try again,
   * within RESCUE_RETRY_MS of the first failure, the JPEG kept meanwhile), else `lose` (it is
   * marked gone); `forget` when the event is gone meanwhile (deleted, aged out: nothing is lost).
   * A history that is a symbolic link (`REFUSED`: not used) is not waited for, nor are segments
   * that go whatever (`final`).
   */
  private retryRescue(
    id: string,
    frame: SnapshotFrame,
    jpeg: Buffer,
    err: unknown,
    final: boolean,
  ): 'retry' | 'lose' | 'forget' {
    const entry = this.byId.get(id);
    if (!entry || entry.evicted || entry.frame !== frame) return 'forget';
    if ((err as NodeJS.ErrnoException).code === 'REFUSED' || final) return 'lose';
    const now = this.now();
    if (!entry.unkept) {
      entry.unkept = { since: now, jpeg };
      this.log.warn(
        { dir: this.dir, id, err: String(err) },
        'event history: a snapshot rescued from the recording cannot be written; its segments are kept, and it is tried again',
      );
    }
    return now - entry.unkept.since < RESCUE_RETRY_MS ? 'retry' : 'lose';
  }

  /**
   * Keeps a rescued snapshot as `<key>.jpg` (resolved true once it is on disk, whole; false when
   * the event or its frame is gone meanwhile: nothing to keep), then writes the
   * record without its frame: a kill between leaves the file, which is served first. Rejects with
   * why when the file cannot be written (the directory not used too).
   */
  private keepRescued(id: string, frame: SnapshotFrame, jpeg: Buffer): Promise<boolean> {
    const entry = this.byId.get(id);
    if (!entry) return Promise.resolve(false);
    return new Promise((resolve, reject) => {
      this.enqueue(entry, async () => {
        try {
          if (entry.evicted || entry.frame !== frame) return resolve(false);
          // Not yet saved: the published picture itself, no decode's generation.
          const full = entry.unsaved?.full ?? jpeg;
          await this.files.writeOrThrow(entry.key + SNAPSHOT_FILES.full, full);
          delete entry.frame;
          entry.unkept = undefined;
          delete entry.deferred;
          this.resize(entry, { fullBytes: full.length });
          resolve(true);
          if (!entry.evicted) this.writeRecord(entry);
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    });
  }

  /** How many events, and their bytes on disk. */
  stats(): { events: number; bytes: number } {
    return { events: this.order.length, bytes: this.bytes };
  }

  /** Waits for every write queued so far. */
  async flush(): Promise<void> {
    for (;;) {
      while (this.pending.size) await Promise.all(this.pending);
      const held = this.order.filter((e) => e.recordTimer);
      const unsaved = this.order.filter((e) => e.unsaved);
      if (!held.length && !unsaved.length) return;
      for (const e of held) this.queueRecord(e);
      for (const e of unsaved) this.saveSnapshot(e);
    }
  }
}
