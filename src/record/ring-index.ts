/**
 * A ring's bookkeeping, pure: its segments (which file, which run, when each key frame was sent),
 * the segment being written, their times stamped and stamped again by the stream's clock, holds,
 * and what eviction removes. Plain values in and out: no files, no pipes, no timers (the shell,
 * `ring.ts`, writes and removes the files this decides on).
 */
import { join } from 'node:path';
import type { TsPiece } from './mpegts.js';
import type { StreamClock } from './stream-clock.js';

/**
 * A key frame in a segment: where it starts in the file, and when the camera sent it (ms since
 * the epoch: its timestamp on the stream's clock, mapped to the wall clock; see `StreamClock`).
 */
export interface Keyframe {
  offset: number;
  ts: number;
  /** Its presentation time on the stream's clock (ms), when the stream has one. */
  pts?: number;
}

/** A file of the ring: a run of the stream from a key frame, as the camera sent it. */
export interface Segment {
  file: string;
  /** Which connection of ffmpeg's (a new one after each restart: a gap between runs). */
  run: number;
  /** Its number in its run: a missing number is a gap (a segment lost or removed). */
  seq: number;
  /** When its first key frame and its last frame were sent (ms since the epoch). */
  start: number;
  end: number;
  /** The stream's clock mapped to the wall clock for it: wall = stream time + offset. */
  offset?: number;
  /** Which stretch of the run's clock (a jump in the stream's timestamps starts another). */
  epoch?: number;
  /** The decode time of its last frame on the stream's clock (ms). */
  lastDts?: number;
  bytes: number;
  /** The PAT and PMT the file starts with, before its first key frame. */
  headerBytes: number;
  keyframes: Keyframe[];
  codec: string;
  /** Still being written. */
  open: boolean;
  /**
   * Its description (`<run>-<n>.json`) is on disk (renamed into place; true for one loaded at
   * start): a closed segment without one is lost to a kill (`Ring.load` removes it).
   */
  described?: boolean;
}

/** How much a ring keeps, and how it cuts. */
export interface RingSettings {
  /** The camera's directory of segments. */
  dir: string;
  /** Segments are kept at least this long (ms) after they end: the pre-roll, and a margin. */
  keepMs: number;
  /** The most bytes the camera's segments may take; the oldest go first, held or not. */
  maxBytes: number;
  /** A segment is cut at the first key frame after it has lasted this long (ms). */
  segmentMs: number;
  /** Segments that ended longer ago than this (ms) go, held or not (`events.clips.retain_days`); absent: no limit. */
  retainMs?: number;
  /**
   * Continuous recording (`record: always`): every segment that ended less than this long ago
   * (ms) stays, events or not (`maxBytes` still bounds it); absent: only what events need.
   */
  alwaysMs?: number;
}

/**
 * A hold on the segments that overlap `from`–`to` (ms since the epoch; `to` Infinity while the
 * range's end is not known): they stay until released (or `maxBytes`, or `retainMs`).
 */
export interface RingHold {
  from: number;
  to: number;
  /** The range's end is known now. */
  until(to: number): void;
  release(): void;
}

/** A time range of a camera's recording that something needs (ms since the epoch). */
export type TimeRange = readonly [from: number, to: number];

/** The ranges merged where they overlap, by start: what `evict` walks the segments against. */
export function mergeRanges(ranges: Iterable<TimeRange>): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [from, to] of sorted) {
    const last = out.at(-1);
    if (last && from <= last[1]) last[1] = Math.max(last[1], to);
    else out.push([from, to]);
  }
  return out;
}

/** Why a stretch of the ring is missing, for the clip that needed it. */
export type RingFault =
  | 'disk_full'
  | 'write_failed'
  | 'disk_slow'
  | 'ring_full'
  /** The ring's directory was deleted or replaced under Argus: what it held is gone. */
  | 'ring_removed'
  /** The ring's directory cannot be used (a symbolic link, another user's, not writable). */
  | 'ring_unusable';

/** A segment eviction removed; `held`: it was still wanted (kept time or a hold): the ring is full. */
export interface Evicted {
  segment: Segment;
  held: boolean;
}

/** The stream's clock as a run's pieces have set it. */
export type RunClock = Pick<StreamClock, 'offset' | 'epoch'>;

/** How far back (ms) segments are stamped again when the offset is found to be less. */
export const RESTAMP_MS = 30_000;

/** Stamps a segment's times from its stream times and offset (those without stay as they are). */
function stamp(seg: Segment): void {
  if (seg.offset === undefined) return;
  for (const k of seg.keyframes) if (k.pts !== undefined) k.ts = k.pts + seg.offset;
  if (seg.keyframes[0]) seg.start = seg.keyframes[0].ts;
  if (seg.lastDts !== undefined) seg.end = Math.max(seg.start, seg.lastDts + seg.offset);
}

export class RingIndex {
  private segments: Segment[] = [];
  private cur: Segment | undefined;
  private seq = 0;
  private holds = new Set<RingHold>();
  /** Segments listed again for a snapshot frame's rescue still to come (`restore`). */
  private saved = new WeakSet<Segment>();
  /** When each segment's first bytes arrived. */
  private arrivals = new WeakMap<Segment, number>();
  /** Segments lost (not written, or gone with their directory) and their bytes. */
  readonly counters = { segmentsLost: 0, bytesDropped: 0 };

  constructor(private readonly limits: RingSettings) {}

  /** The segment being written, if any. */
  get current(): Segment | undefined {
    return this.cur;
  }

  /**
   * Whether a piece of run `run` arriving at `now` starts a segment: a key frame, when there is
   * none being written, or it is another run's or another epoch's, or it has lasted `segmentMs`.
   */
  cuts(keyframe: boolean, run: number, epoch: number, now: number): boolean {
    const cur = this.cur;
    return (
      keyframe &&
      (!cur || cur.run !== run || cur.epoch !== epoch || this.wallStart(cur) <= now - this.limits.segmentMs)
    );
  }

  /** Whether a piece of `run` that starts no segment belongs to the one being written (not before the run's first key frame). */
  continues(run: number): boolean {
    return this.cur?.run === run;
  }

  /** A segment of `run` begins at `now` (the one before must be finished): listed, and being written. */
  begin(run: number, now: number, headerBytes: number, codec: string): Segment {
    const seq = this.seq++;
    const seg: Segment = {
      file: join(this.limits.dir, `${run}-${seq}.ts`),
      run,
      seq,
      start: now,
      end: now,
      bytes: 0,
      headerBytes,
      keyframes: [],
      codec,
      open: true,
    };
    this.segments.push(seg);
    this.cur = seg;
    this.arrivals.set(seg, now);
    return seg;
  }

  /** The segment being written is complete (a new key frame, or the run ended): returned, closed. */
  finish(): Segment | undefined {
    const seg = this.cur;
    this.cur = undefined;
    if (seg) seg.open = false;
    return seg;
  }

  /**
   * The stream's clock `clock` of run `run` has seen a piece's frames at `now`; when its offset
   * went down (frames came with less delay than any before), the run's recent segments of the
   * same epoch were stamped late, and are stamped again.
   */
  restamp(run: number, clock: RunClock, now: number): void {
    const offset = clock.offset;
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const seg = this.segments[i]!;
      if (seg.run !== run || seg.epoch !== clock.epoch || seg.offset === undefined) continue;
      if (seg.lastDts !== undefined && seg.lastDts + offset < now - RESTAMP_MS) break;
      if (offset < seg.offset) {
        seg.offset = offset;
        stamp(seg);
      }
    }
  }

  /**
   * Notes a piece about to be appended to the segment being written at `now`: its key frame
   * (where it starts: the segment's bytes so far), its frames' times; the segment is stamped.
   */
  record(piece: Pick<TsPiece, 'keyframe' | 'pts' | 'dts'>, clock: RunClock, now: number): void {
    const seg = this.cur;
    if (!seg) return;
    if (seg.keyframes.length === 0 && Number.isFinite(clock.offset)) {
      seg.offset = clock.offset;
      seg.epoch = clock.epoch;
    }
    if (piece.keyframe)
      seg.keyframes.push({
        offset: seg.bytes,
        ts: now,
        pts: seg.offset === undefined ? undefined : piece.pts,
      });
    const last = piece.dts.at(-1);
    if (last !== undefined && seg.offset !== undefined) seg.lastDts = Math.max(seg.lastDts ?? last, last);
    seg.end = now;
    stamp(seg);
  }

  /**
   * The segments no longer needed at `now`, taken off the list, oldest first: those that ended
   * before `keepMs` ago and overlap no hold (the ring's own, or `ranges`: the events' footage
   * kept across restarts), those past `retainMs`, then the oldest while the ring is over
   * `maxBytes` (`held`: still wanted; the ring is full). The newest segment always stays, unless
   * the ring is `retired` (its camera removed, or its clips turned off): then only what a hold
   * or `ranges` needs stays, with no recent margin.
   */
  evict(now: number, ranges: Iterable<TimeRange> = [], retired = false): Evicted[] {
    const held = mergeRanges([...[...this.holds].map((h): TimeRange => [h.from, h.to]), ...ranges]);
    const recent = retired ? Infinity : now - this.limits.keepMs;
    const retainFrom = this.limits.retainMs === undefined ? -Infinity : now - this.limits.retainMs;
    const alwaysFrom = retired || this.limits.alwaysMs === undefined ? Infinity : now - this.limits.alwaysMs;
    let total = this.bytes();
    const out: Evicted[] = [];
    const kept: Segment[] = [];
    let r = 0;
    const last = retired ? undefined : this.segments.at(-1);
    for (const s of this.segments) {
      const start = s.keyframes[0]?.ts ?? s.start;
      while (r < held.length && held[r]![1] < start) r++;
      const hold = held[r];
      const wanted = s.end >= recent || (hold !== undefined && hold[0] <= s.end);
      if (s === last || s.open || (wanted && s.end >= retainFrom) || s.end >= alwaysFrom) kept.push(s);
      else {
        out.push({ segment: s, held: false });
        total -= s.bytes;
      }
    }
    while (kept.length > (retired ? 0 : 1) && total > this.limits.maxBytes && !kept[0]!.open) {
      const s = kept.shift()!;
      out.push({ segment: s, held: true });
      total -= s.bytes;
    }
    this.segments = kept;
    out.sort((a, b) => a.segment.start - b.segment.start);
    return out;
  }

  /**
   * Segments kept on disk by an earlier run (oldest first; none may be open), listed before the
   * first of this run. Their runs must differ from this run's.
   */
  load(segments: readonly Segment[]): void {
    this.segments = [...segments, ...this.segments];
  }

  /**
   * Segments taken off the list (`evict`) that must stay after all (what they hold could not be
   * kept yet): listed again, in their place.
   */
  restore(segments: readonly Segment[]): void {
    const back = segments.filter((s) => !this.segments.includes(s));
    for (const s of back) this.saved.add(s);
    this.segments = [...back, ...this.segments].sort((a, b) => a.run - b.run || a.seq - b.seq);
  }

  /** Whether `seg` was listed again (`restore`): kept for a snapshot frame's rescue still to come. */
  isSaved(seg: Segment): boolean {
    return this.saved.has(seg);
  }

  /**
   * The bytes of the segments listed that overlap `ranges` (the events' footage, `held`), those
   * listed again for a snapshot frame's rescue still to come (`snapshot`), those kept only by
   * continuous recording (`always`: past the recent margin), and the rest (`recent`).
   */
  bytesBy(
    ranges: Iterable<TimeRange>,
    now: number,
  ): { held: number; snapshot: number; recent: number; always: number } {
    const held = mergeRanges([...[...this.holds].map((h): TimeRange => [h.from, h.to]), ...ranges]);
    const recent = now - this.limits.keepMs;
    let r = 0;
    const out = { held: 0, snapshot: 0, recent: 0, always: 0 };
    for (const s of this.segments) {
      const start = s.keyframes[0]?.ts ?? s.start;
      while (r < held.length && held[r]![1] < start) r++;
      const hold = held[r];
      if (hold !== undefined && hold[0] <= s.end) out.held += s.bytes;
      else if (this.saved.has(s)) out.snapshot += s.bytes;
      else if (this.limits.alwaysMs !== undefined && s.end < recent) out.always += s.bytes;
      else out.recent += s.bytes;
    }
    return out;
  }

  /** A segment that could not be written is taken off the list and counted; false when it was not listed. */
  lose(seg: Segment): boolean {
    const i = this.segments.indexOf(seg);
    if (i < 0) return false;
    this.segments.splice(i, 1);
    this.count(seg);
    return true;
  }

  /** Every segment is gone (with its directory): all are taken off the list, and counted. */
  dropAll(): Segment[] {
    const lost = this.segments;
    this.segments = [];
    for (const s of lost) this.count(s);
    return lost;
  }

  private count(seg: Segment): void {
    this.counters.segmentsLost++;
    this.counters.bytesDropped += seg.bytes;
  }

  /** Holds the segments that overlap `from`–`to`, until released. */
  hold(from: number, to = Infinity): RingHold {
    const h: RingHold = {
      from,
      to,
      until: (end) => {
        h.to = end;
      },
      release: () => {
        this.holds.delete(h);
      },
    };
    this.holds.add(h);
    return h;
  }

  /** The segments kept, oldest first (the one being written too, still growing). */
  list(): readonly Segment[] {
    return this.segments;
  }

  /** Whether `seg` is still listed (not lost, evicted or dropped). */
  has(seg: Segment): boolean {
    return this.segments.includes(seg);
  }

  /** The bytes of the segments listed. */
  bytes(): number {
    return this.segments.reduce((n, s) => n + s.bytes, 0);
  }

  /** When a segment began, on the wall clock as it arrived (segments are cut by this). */
  private wallStart(seg: Segment): number {
    return this.arrivals.get(seg) ?? seg.start;
  }
}
