import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, rmSync } from 'node:fs';
import { lstat, readFile, rename, writeFile } from 'node:fs/promises';
import { Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import { readdir, rm, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { TsSplitter, type TsPiece } from './mpegts.js';
import { DIR_ERRORS, RingDir } from './ring-dir.js';
import {
  RingIndex,
  type RingFault,
  type RingHold,
  type RingSettings,
  type Segment,
  type TimeRange,
} from './ring-index.js';
import { keptRanges, type KeptRange } from './kept.js';
import { SegmentWriter, type SegmentFile } from './segment-writer.js';
import { StreamClock } from './stream-clock.js';

export interface RingDeps {
  clock: Clock;
  log: Logger;
  /** The time ranges of the camera's recording that events need (kept across restarts). */
  ranges?: () => Iterable<TimeRange>;
  /**
   * Segments are about to be removed: what must be kept of them first (events' snapshot frames),
   * as a promise their files wait for, resolved with those that must stay listed after all (what
   * they hold could not be kept yet: tried again when they would be removed next); undefined
   * when nothing is. `final`: they go whatever it says (a segment short of its bytes).
   */
  rescue?: (segments: readonly Segment[], final: boolean) => Promise<readonly Segment[] | void> | undefined;
}

/** What a ring holds now, and has written and lost since it started. */
export interface RingStats {
  segments: number;
  bytes: number;
  /**
   * Of `bytes`, those of events' footage, those only recent (the pre-roll's margin), and those
   * kept only by continuous recording (`record: always`); a retired ring's (its camera removed or
   * its clips off: kept for its events until they age out) are all `retiredBytes`.
   */
  eventBytes?: number;
  /** Of `bytes`, those listed again for a snapshot frame's rescue still to come (no event's footage). */
  snapshotBytes?: number;
  recentBytes?: number;
  alwaysBytes?: number;
  retiredBytes?: number;
  bytesWritten: number;
  segmentsWritten: number;
  segmentsLost: number;
  bytesDropped: number;
  /** Why the ring's directory cannot be used now (naming it); absent while it can. */
  problem?: string;
}

/** The most a read of the pipe takes, into the run's one buffer. */
const READ_BYTES = 64 * 1024;

/** The two named pipes ffmpeg's runs write to in turn, in the camera's directory. */
const PIPES = ['in-a.fifo', 'in-b.fifo'];

/**
 * Opens a ring's pipe to read, without waiting for ffmpeg (and no end is seen before it opens).
 * A pipe gone, or a file in its place (ffmpeg makes one where the pipe is missing), is made again.
 */
function openPipe(path: string): number {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK;
  try {
    const fd = openSync(path, flags);
    if (fstatSync(fd).isFIFO()) return fd;
    closeSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  rmSync(path, { force: true });
  execFileSync('mkfifo', ['-m', '600', path]);
  return openSync(path, flags);
}

/** The name of a camera's directory in the ring's: camera names may not fit a file name. */
export const ringKey = (camera: string): string =>
  createHash('sha256').update(camera).digest('hex').slice(0, 16);

/**
 * One camera's ring of recent video: ffmpeg, besides decoding, copies the stream as the camera
 * sent it (`-c:v copy -f mpegts`) to a named pipe of Argus'; the ring cuts it at key frames into
 * segment files of about `segmentMs`, remembers where each key frame starts and when it arrived,
 * and removes segments older than `keepMs` unless a clip in the making holds them, and the
 * oldest beyond `maxBytes`. Argus, not ffmpeg, writes the files: a full or slow disk costs
 * segments (counted, and named in the clips that miss them), never the camera's frames. The
 * ring is the camera's one recording: segments are written once, each described in a `.json`
 * beside it once whole, and kept while an event's footage (`RingDeps.ranges`) or the recent
 * margin needs them; they outlive a restart (see `load`).
 */
export class Ring {
  /** The named pipes, once made. */
  private pipes: string[] = [];
  /** The segments' bookkeeping; this shell writes and removes their files. */
  private readonly index: RingIndex;
  /** The file of the segment being written (the index's `current`). */
  private current: SegmentFile<Segment> | undefined;
  private run = 0;
  private connection: Socket | undefined;
  private readonly writer = new SegmentWriter<Segment>({
    kept: (seg) => this.index.has(seg),
    lost: (seg, err) => this.lose(seg, err),
    closed: (seg) => this.describe(seg),
  });
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly ranges: () => Iterable<TimeRange>;
  private readonly rescue: (
    segments: readonly Segment[],
    final: boolean,
  ) => Promise<readonly Segment[] | void> | undefined;
  /** The segments begun and not yet described (being written, or closed and being described): a few. */
  private readonly undescribed = new Set<Segment>();
  /** Who waits for footage to be closed and described (`closed`). */
  private readonly closedWaiters = new Set<{ ts: number; done: () => void }>();
  /** Removals waiting for a rescue (their files still on disk). */
  private rescuing = new Set<Promise<void>>();
  /** Stopped without waiting for them (`stop(true)`): their files stay, for the next start to list. */
  private abandoned = false;
  /** The last time a segment was lost, and why. */
  lastFault: { fault: RingFault; at: number; message: string } | undefined;
  codec: string | undefined;
  /** The directory the ring writes in, checked and mended. */
  private readonly dir: RingDir;
  /** Stopped for good: only what events still need is kept (`retire`). */
  private retired = false;
  /** Its files taken over by a new ring of the camera (`handOver`): it frees nothing more. */
  private handedOver = false;
  /** The stop of a `retire` (its rescues in progress): a hand-over waits for it. */
  private stopping: Promise<void> = Promise.resolve();
  /** The last `prune`, which the next waits for. */
  private pruning: Promise<void> = Promise.resolve();

  constructor(
    readonly camera: string,
    private readonly settings: RingSettings,
    deps: RingDeps,
  ) {
    this.clock = deps.clock;
    this.ranges = deps.ranges ?? (() => []);
    this.rescue = deps.rescue ?? (() => undefined);
    this.log = deps.log.child({ camera, part: 'ring' });
    this.index = new RingIndex(settings);
    this.dir = new RingDir(settings.dir, {
      clock: this.clock,
      log: this.log,
      replaced: (message) => this.dropAll(message),
      refused: (error) => {
        this.lastFault = { fault: 'ring_unusable', at: this.clock.now(), message: error };
      },
    });
  }

  /** Why the ring's directory cannot be used now (it names the path); undefined while it can. */
  get unusable(): string | undefined {
    return this.dir.unusable;
  }

  /**
   * Makes the camera's directory (never through a symbolic link; see `checkDir`), lists the
   * segments an earlier run kept (`load`) and
   * makes its two named pipes (with `mkfifo`: Node has no call for it); a failure is logged, and
   * the ring has no video until the directory can be used and ffmpeg starts again. From then on
   * the directory is checked every `RING_CHECK_MS`, and mended or reported (`unusable`).
   */
  async start(): Promise<void> {
    const dir = this.settings.dir;
    await this.dir.start();
    if (this.dir.unusable === undefined)
      try {
        await this.load(dir);
        const pipes = PIPES.map((name) => join(dir, name));
        await promisify(execFile)('mkfifo', ['-m', '600', ...pipes]);
      } catch (err) {
        this.log.warn(
          { dir, err: (err as Error).message },
          'cannot keep recent video for clips; this camera has no clips until its directory can be used',
        );
      }
    this.pipes = PIPES.map((name) => join(dir, name));
    this.dir.watch();
  }

  /**
   * The segments an earlier run kept (each a `.ts` file whose `.json` names its key frames and
   * times, written once the file was whole): listed again, so events' footage outlives a restart.
   * A file without its description (a crash while it was written), or whose size is not the one
   * described, is removed, as are the pipes and temporary files; nothing else is touched.
   */
  private async load(dir: string): Promise<void> {
    const names = await readdir(dir);
    const kept: Segment[] = [];
    for (const name of names) {
      const m = /^(\d+)-(\d+)\.json$/.exec(name);
      if (!m) continue;
      const seg = await readSegment(join(dir, name), join(dir, `${m[1]}-${m[2]}.ts`));
      if (seg) kept.push(seg);
      else await unlink(join(dir, name)).catch(() => undefined);
    }
    const files = new Set(kept.map((s) => s.file));
    for (const name of names)
      if (
        (/^\d+-\d+\.ts$/.test(name) && !files.has(join(dir, name))) ||
        /^ring\.sock$|^in-[ab]\.fifo$|\.tmp$/.test(name)
      )
        await unlink(join(dir, name)).catch(() => undefined);
    kept.sort((a, b) => a.run - b.run || a.seq - b.seq);
    this.index.load(kept);
    this.run = Math.max(this.run, ...kept.map((s) => s.run));
    if (kept.length)
      this.log.info(
        { segments: kept.length, bytes: kept.reduce((n, s) => n + s.bytes, 0) },
        'recording kept from the last run',
      );
  }

  /** A segment written whole: its description beside it (written, then renamed: whole or none). */
  private async describe(seg: Segment): Promise<void> {
    const json = seg.file.replace(/\.ts$/, '.json');
    const tmp = `${json}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify({ ...seg, open: false }), { mode: 0o600, flag: 'wx' });
      await rename(tmp, json);
      seg.described = true;
      if (!this.index.has(seg)) await unlink(json).catch(() => undefined); // evicted meanwhile
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      this.lose(seg, err, true);
    }
    this.undescribed.delete(seg);
    this.checkClosed();
  }

  /**
   * Resolves once the footage up to `ts` lies in closed segments with their descriptions on disk:
   * a kill then loses none of it (a segment being written, or closed but not yet described, has
   * no description and goes at the next start). At once when it already does; at the ring's stop
   * whatever. Callers bound the wait (a camera that stops sending leaves its segment open).
   */
  closed(ts: number): Promise<void> {
    if (this.isClosed(ts)) return Promise.resolve();
    return new Promise((done) => this.closedWaiters.add({ ts, done }));
  }

  /** Whether no listed segment holding footage up to `ts` is open or undescribed. */
  private isClosed(ts: number): boolean {
    for (const s of this.undescribed)
      if (!this.index.has(s))
        this.undescribed.delete(s); // lost or evicted: off the list
      else if (s.start <= ts) return false;
    return true;
  }

  /** Resolves the waiters whose footage is now closed (`all`: every one, the ring stopping). */
  private checkClosed(all = false): void {
    for (const w of this.closedWaiters)
      if (all || this.isClosed(w.ts)) {
        this.closedWaiters.delete(w);
        w.done();
      }
  }

  /** Checks the ring's directory now (see `RingDir.check`). */
  check(): Promise<void> {
    return this.dir.check();
  }

  /** The directory's video is gone with it: every segment is dropped, the current one too. */
  private dropAll(message: string): void {
    this.index.dropAll();
    this.finish();
    this.fault('ring_removed', message, { dir: this.settings.dir });
  }

  /**
   * A new run of ffmpeg's is starting: the path it writes the stream to (`file:<path>`), with the
   * ring already reading it, or undefined when the ring does not run. The old run, if any, has
   * ended. Runs take the two pipes in turn, so what an old run left in its pipe never reaches the
   * new one. Called as ffmpeg is spawned, and not before: ffmpeg's open waits for a reader.
   */
  input(): string | undefined {
    const path = this.pipes[this.run % PIPES.length];
    if (!path) return undefined;
    if (this.dir.unusable !== undefined || this.dir.moved()) {
      // Never through a symbolic link: this run has no ring; a check mends the directory for the next.
      void this.dir.check();
      return undefined;
    }
    let fd: number | undefined;
    try {
      fd = openPipe(path);
      this.read(fd);
      return path;
    } catch (err) {
      if (fd !== undefined && this.connection === undefined) closeSync(fd);
      this.fault('write_failed', (err as Error).message, { file: path });
      return undefined;
    }
  }

  /**
   * Reads a run from the pipe `fd` into one buffer of its own, again and again: the stream's bytes
   * are copied out at once (into the segment being gathered), never kept as chunks for the
   * collector (a chunk allocated per read made Node collect every few seconds).
   */
  private read(fd: number): void {
    this.connection?.destroy();
    this.connection = undefined;
    this.finish();
    const run = ++this.run;
    const splitter = new TsSplitter();
    const clock = new StreamClock();
    const onread: OnReadOpts = {
      buffer: Buffer.allocUnsafeSlow(READ_BYTES),
      callback: (n: number, buf: Uint8Array) => {
        if (this.connection !== socket) return false;
        const now = this.clock.now();
        const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
        for (const piece of splitter.push(chunk)) this.take(piece, splitter, { run, clock }, now);
        return true;
      },
    };
    // `onread` is an option of the constructor (Node's docs); @types/node 20 lists it only for connect().
    const options: SocketConstructorOpts & { onread: OnReadOpts } = {
      fd,
      readable: true,
      writable: false,
      onread,
    };
    const socket = new Socket(options);
    this.connection = socket;
    const ended = (): void => {
      if (this.connection === socket) {
        this.connection = undefined;
        this.finish();
      }
    };
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', () => undefined);
  }

  private take(
    piece: TsPiece,
    splitter: TsSplitter,
    { run, clock }: { run: number; clock: StreamClock },
    now: number,
  ): void {
    let lower = false;
    for (const dts of piece.dts) lower = clock.see(dts, now) || lower;
    if (lower) this.index.restamp(run, clock, now);
    if (this.index.cuts(piece.keyframe, run, clock.epoch, now)) {
      const header = splitter.header();
      // Before the tables, nothing can be read: the stream's first key frame after them starts it.
      if (!header) return;
      this.finish();
      this.codec = splitter.codec;
      this.begin(run, now, header, splitter.codec ?? 'unknown');
    } else if (!this.index.continues(run)) return; // before the run's first key frame
    const current = this.current;
    if (!current) return; // the directory cannot take a segment now
    this.index.record(piece, clock, now);
    this.writer.append(current, piece.bytes);
  }

  private begin(run: number, now: number, header: Buffer, codec: string): void {
    if (this.dir.unusable !== undefined) return;
    if (this.dir.moved()) {
      // Deleted or replaced since the last check: no file is opened in it until the check has run.
      void this.dir.check();
      return;
    }
    const seg = this.index.begin(run, now, header.length, codec);
    this.undescribed.add(seg);
    this.current = this.writer.open(seg);
    this.writer.append(this.current, header);
    const evicted = this.index.evict(now, this.ranges());
    for (const { segment, held } of evicted)
      if (held)
        this.fault(
          'ring_full',
          `more than ${(this.settings.maxBytes / 1048576).toFixed(0)} MB of video is held (events.clips.ring_max_mb, max_gb)`,
          { file: segment.file },
        );
    void this.removeAfterRescue(evicted.map((e) => e.segment));
  }

  /**
   * Removes segments taken off the list, once what must be kept of them is (`RingDeps.rescue`:
   * an event's snapshot frame written as its own file): their files stay on disk until then, so
   * a kill meanwhile leaves them to the next run, which lists them again. Those the rescue says
   * must stay (what they hold could not be kept: the history's disk full) are listed again, their
   * files kept, and go through this again at the next removal. The rescue is bounded (one decode,
   * killed after 30 s); the hot path never waits for it. `relist` false: none is listed again
   * (a segment short of its bytes), whatever the rescue says.
   */
  private removeAfterRescue(segments: readonly Segment[], relist = true): Promise<void> {
    if (!segments.length) return Promise.resolve();
    let rescue: Promise<readonly Segment[] | void> | undefined;
    try {
      rescue = this.rescue(segments, !relist);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, "the recording's snapshot frames could not be kept");
    }
    if (!rescue) {
      for (const s of segments) removeSegment(s);
      return Promise.resolve();
    }
    const done = rescue
      .then(
        (stay) => {
          // Listed again at once, in the turn the rescue ends: a request waiting for it (second
          // review finding 2) must find them listed, not wait for the files of the others to go.
          const back = relist ? segments.filter((s) => stay?.includes(s)) : [];
          if (back.length && !this.abandoned) this.index.restore(back);
          return back;
        },
        (err: unknown) => {
          this.log.warn({ err: (err as Error).message }, "the recording's snapshot frames could not be kept");
          return [] as Segment[];
        },
      )
      .then(async (back) => {
        // Stopped without waiting, or handed to a new ring that has listed these files: they stay.
        if (this.abandoned || this.handedOver) return;
        for (const s of segments)
          if (!back.includes(s)) await removeFiles(s);
          else if (!(await isFile(s.file))) this.index.lose(s); // gone with its directory meanwhile
      });
    this.rescuing.add(done);
    void done.finally(() => this.rescuing.delete(done));
    return done;
  }

  /** The current segment is complete (a new key frame, or the run ended). */
  private finish(): void {
    const c = this.current;
    this.current = undefined;
    this.index.finish();
    if (c) this.writer.close(c);
  }

  /**
   * A segment that could not be written is dropped, its file removed; why is kept for the clips.
   * One closed may hold events' snapshot frames: its files go as an evicted one's do, once those
   * are rescued (`removeAfterRescue`). `whole`: its video is all on disk (only its description
   * failed), so it may be listed again for a rescue to retry; one whose data write failed is
   * short of its bytes and never is (listed, its clips would read past its end).
   */
  private lose(seg: Segment, err: unknown, whole = false): void {
    if (!this.index.lose(seg)) return;
    this.checkClosed();
    const code = (err as NodeJS.ErrnoException).code;
    if (DIR_ERRORS.includes(code ?? '')) this.dir.distrust();
    const fault: RingFault =
      code === 'ENOSPC' || code === 'EDQUOT' ? 'disk_full' : code === 'SLOW' ? 'disk_slow' : 'write_failed';
    this.fault(fault, (err as Error).message, { file: seg.file });
    if (seg.open) removeSegment(seg);
    else void this.removeAfterRescue([seg], whole);
  }

  /** Keeps why video was lost, for the clips that miss it; logged when the reason changes. */
  private fault(fault: RingFault, message: string, detail: Record<string, unknown>): void {
    if (this.lastFault?.fault !== fault)
      this.log.warn({ ...detail, err: message }, 'recent video lost: clips that need it will be shorter');
    this.lastFault = { fault, at: this.clock.now(), message };
  }

  /** Holds the segments that end at or after `from`, until released. */
  hold(from: number): RingHold {
    return this.index.hold(from);
  }

  /** The segments kept, oldest first (the current one too, still growing). */
  list(): readonly Segment[] {
    return this.index.list();
  }

  /**
   * The stretches the ring holds that overlap `from`–`to` (absent: all), oldest first, each with
   * why it is kept: the events' footage (`footage`, this camera's, by event id), the recent
   * margin, continuous recording, or, retired, its events' footage only (`keptRanges`).
   */
  kept(footage: Iterable<{ id: string; range: TimeRange }>, from?: number, to?: number): KeptRange[] {
    const now = this.clock.now();
    const always = this.settings.alwaysMs;
    return keptRanges(this.index.list(), {
      footage,
      recentFrom: now - this.settings.keepMs,
      alwaysFrom: always === undefined ? Infinity : now - always,
      retired: this.retired,
      saved: (s) => this.index.isSaved(s),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
    });
  }

  /** Waits until what has been received so far is on disk (the current segment's writes). */
  async settle(): Promise<void> {
    await this.writer.settle(this.current);
  }

  stats(): RingStats {
    const by = this.index.bytesBy(this.ranges(), this.clock.now());
    return {
      segments: this.index.list().length,
      bytes: this.index.bytes(),
      ...(this.retired
        ? { retiredBytes: this.index.bytes() }
        : {
            eventBytes: by.held,
            snapshotBytes: by.snapshot,
            recentBytes: by.recent,
            alwaysBytes: by.always,
          }),
      bytesWritten: this.writer.bytesWritten,
      segmentsWritten: this.writer.segmentsWritten,
      ...this.index.counters,
      ...(this.dir.unusable !== undefined ? { problem: this.dir.unusable } : {}),
    };
  }

  /**
   * Stops reading the pipe and closes the current segment; the files stay for clips still being
   * made. Waits for the removals waiting for a rescue, unless `abandon` (Argus stopping: a decode
   * may take 30 s): then their files stay, and the next start lists them and rescues them again.
   */
  async stop(abandon = false): Promise<void> {
    await this.dir.stop();
    // The pipes go first: an ffmpeg that opens one after its reader is gone would wait forever.
    for (const path of this.pipes) rmSync(path, { force: true });
    this.pipes = [];
    this.connection?.destroy();
    this.connection = undefined;
    this.finish();
    await this.writer.settle();
    this.checkClosed(true);
    if (abandon) this.abandoned = true;
    else await Promise.all(this.rescuing);
  }

  /** Removes the camera's directory at once, whatever events still need of it. */
  async remove(): Promise<void> {
    await this.stop();
    await rm(this.settings.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  /** The most bytes the camera's segments may take now. */
  get maxBytes(): number {
    return this.settings.maxBytes;
  }

  /**
   * Changes the most bytes the camera's segments may take (`max_gb` shared again as cameras come
   * and go): the oldest beyond it go at the next segment (at once, for a retired ring).
   */
  setMaxBytes(bytes: number): void {
    if (bytes === this.settings.maxBytes) return;
    this.log.info(
      { max_mb: Math.round(bytes / 1048576), was_mb: Math.round(this.settings.maxBytes / 1048576) },
      "the recording's bound changed (max_gb shared among the cameras that record)",
    );
    this.settings.maxBytes = bytes;
    if (this.retired) void this.prune();
  }

  /**
   * Continuous recording's retention from now on (`record: always`, its `record_days`, in ms);
   * undefined: the ring keeps only what events need. Applies at the next segment.
   */
  setAlways(ms: number | undefined): void {
    if (ms === this.settings.alwaysMs) return;
    if (ms === undefined) delete this.settings.alwaysMs;
    else this.settings.alwaysMs = ms;
  }

  /**
   * The camera records again: a new ring takes over the files this retired one kept (it lists
   * them). This one frees nothing from now on — a retire still stopping does not prune, a prune
   * queued does nothing — and the promise waits for a prune in progress.
   */
  handOver(): Promise<void> {
    this.handedOver = true;
    this.retired = false;
    return Promise.all([this.stopping, this.pruning]).then(() => undefined);
  }

  /**
   * Argus stops: a retired ring frees nothing more (no prune starts, no decode), and the
   * removals waiting for a rescue leave their files for the next start, as `stop(true)` does.
   */
  abandon(): void {
    this.abandoned = true;
  }

  /** Whether the camera no longer records, its ring kept only for the footage events still need. */
  get isRetired(): boolean {
    return this.retired;
  }

  /**
   * The camera no longer records (removed, or its clips turned off): the ring stops and keeps
   * only the segments that events' footage (`RingDeps.ranges`), a clip in the making or
   * `retainMs` still want, freed as those let them go (`prune`); the directory goes with the
   * last. True when nothing was left to keep (the directory is removed at once).
   */
  async retire(): Promise<boolean> {
    this.stopping = this.stop();
    await this.stopping;
    if (this.handedOver || this.abandoned) return false;
    this.retired = true;
    return this.prune();
  }

  /**
   * A retired ring frees the segments nothing needs any more (a running ring does so at each new
   * segment); true once it holds none, its directory removed. Runs one at a time.
   */
  prune(): Promise<boolean> {
    if (!this.retired) return Promise.resolve(false);
    const next = this.pruning.then(async () => {
      if (!this.retired || this.abandoned) return false; // handed over, or Argus stopping
      const evicted = this.index.evict(this.clock.now(), this.ranges(), true);
      for (const { segment, held } of evicted)
        if (held)
          this.fault(
            'ring_full',
            `more than ${(this.settings.maxBytes / 1048576).toFixed(0)} MB of video is held (events.clips.ring_max_mb, max_gb)`,
            { file: segment.file },
          );
      await this.removeAfterRescue(evicted.map((e) => e.segment));
      if (this.index.list().length > 0) return false;
      await rm(this.settings.dir, { recursive: true, force: true }).catch(() => undefined);
      return true;
    });
    this.pruning = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }
}

/** Whether `path` is a plain file (not a link). */
const isFile = (path: string): Promise<boolean> =>
  lstat(path).then(
    (st) => st.isFile(),
    () => false,
  );

/** Removes a segment's file and its description. */
function removeSegment(seg: Segment): void {
  void removeFiles(seg);
}

/** Removes a segment's file, then its description (a kill between leaves a file the next run removes). */
async function removeFiles(seg: Segment): Promise<void> {
  await unlink(seg.file).catch(() => undefined);
  await unlink(seg.file.replace(/\.ts$/, '.json')).catch(() => undefined);
}

const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/**
 * A kept segment's description, checked: its file must be a plain file (not a link) of the size
 * described. Undefined when either is missing, unreadable or does not match.
 */
async function readSegment(json: string, file: string): Promise<Segment | undefined> {
  try {
    const d = JSON.parse(await readFile(json, 'utf8')) as Partial<Segment>;
    const st = await lstat(file);
    const keyframes = Array.isArray(d.keyframes) ? d.keyframes : [];
    if (
      !st.isFile() ||
      !isNum(d.run) ||
      !isNum(d.seq) ||
      !isNum(d.start) ||
      !isNum(d.end) ||
      !isNum(d.bytes) ||
      !isNum(d.headerBytes) ||
      typeof d.codec !== 'string' ||
      st.size !== d.bytes ||
      keyframes.some((k) => !isNum(k?.offset) || !isNum(k?.ts) || k.offset >= d.bytes!)
    )
      return undefined;
    return {
      file,
      run: d.run,
      seq: d.seq,
      start: d.start,
      end: d.end,
      ...(isNum(d.offset) ? { offset: d.offset } : {}),
      ...(isNum(d.epoch) ? { epoch: d.epoch } : {}),
      ...(isNum(d.lastDts) ? { lastDts: d.lastDts } : {}),
      bytes: d.bytes,
      headerBytes: d.headerBytes,
      keyframes: keyframes.map((k) => ({ offset: k.offset, ts: k.ts })),
      codec: d.codec,
      open: false,
      described: true,
    };
  } catch {
    return undefined;
  }
}
