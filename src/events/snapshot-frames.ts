import type { Logger } from 'pino';
import type { Letterbox } from '../core/geometry.js';
import { errorMessage } from '../core/errors.js';
import sharp from 'sharp';
import { annotatedJpeg, cropRegion } from '../draw/index.js';
import {
  decodeFrame,
  FRAME_AFTER_MS,
  FRAME_BEFORE_MS,
  planClip,
  planFrame,
  type Ring,
  type Segment,
} from '../record/index.js';
import type { SnapshotFrame } from './event-record.js';

/** Why no snapshot can be served: the HTTP status and the reason, in words. */
export interface NoSnapshot {
  status: 404 | 410 | 503;
  error: string;
}

/** The snapshots drawn on request kept for repeat requests: about a hundred 640×360 JPEGs. */
export const FRAME_CACHE_BYTES = 4 * 1024 * 1024;
/** Decodes at a time (requests and rescues together): each is one ffmpeg. */
export const FRAME_DECODES = 2;
/**
 * Requests that may wait for a decode: one past them is answered 503 at once (a client fetching
 * many snapshots must not queue decodes without end, nor hold back the rescues, which go first).
 */
export const FRAME_REQUESTS_WAITING = 16;
/**
 * Rescues that may wait for a decode (or run one) at once: a snapshot due past them, with no JPEG
 * in memory, is not queued without end (each decode takes up to 30 s, and the segments' files
 * wait for it, outside the ring's bytes); its segments stay listed by the ring (as a held
 * retry's do) and it is rescued at a later removal, never marked gone for the queue.
 */
export const RESCUE_QUEUE = 64;

/**
 * Why an operation failed, in a word fit for an HTTP body or a record: the error's code (an
 * errno: ENOENT, ENOSPC…), else `fallback`. Its message, which may name paths of the state
 * directory, is only logged.
 */
const codeOf = (err: unknown, fallback: string): string => {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code) ? code : fallback;
};

/** The files of `segments` a snapshot's frame at `ts` is drawn from (from its key frame; the stretch its crop is looked for in). */
const framesFiles = (segments: readonly Segment[], ts: number): Set<string> =>
  new Set(
    [
      ...(planFrame(segments, ts)?.parts ?? []),
      ...(planClip(segments, ts - FRAME_BEFORE_MS, ts + FRAME_AFTER_MS)?.parts ?? []),
    ].map((p) => p.file),
  );

/** The picture the snapshot is drawn on: `w`×`h`, no padding, its boxes in source pixels. */
const geometryOf = (f: SnapshotFrame): Letterbox => ({
  srcW: f.srcW,
  srcH: f.srcH,
  dstW: f.w,
  dstH: f.h,
  scale: f.w / f.srcW,
  innerW: f.w,
  innerH: f.h,
  padLeft: 0,
  padTop: 0,
});

/** Whether `segments` hold the frame at `ts` (it lies within one of them, from its key frame). */
const within = (segments: readonly Segment[], ts: number): boolean => {
  const s = segments.find((x) => x.keyframes[0] !== undefined && x.keyframes[0].ts <= ts + 1 && ts <= x.end);
  return s !== undefined;
};

/** A snapshot drawn, or being drawn (`bytes` 0 until it is), or why it could not be. */
interface CacheEntry {
  result: Promise<Buffer | NoSnapshot>;
  bytes: number;
}

/**
 * Whether the snapshot frame at `ts` must be rescued before `removed` go (`kept` stay): it lies in
 * them, or only they hold the stretch from its key frame.
 */
export const isDue = (removed: readonly Segment[], kept: readonly Segment[], ts: number): boolean =>
  within(removed, ts) || (!within(kept, ts) && planFrame(removed, ts) !== undefined);

/** Where the cameras' recordings are, and the ffmpeg that decodes them (the ingest stage). */
export interface FrameSource {
  ring(camera: string): Pick<Ring, 'list'> | undefined;
  readonly ffmpeg: string;
}

export interface SnapshotFramesDeps {
  /** The cameras' recordings (ingest, once it runs). */
  source: () => FrameSource | undefined;
  log: Logger;
}

/**
 * What a rescue does with each event (`SnapshotFrames.rescue`): `keep` its snapshot (rejects when
 * it cannot be written); a frame that cannot be read is `lost`; each kept or lost is `settled`
 * then, before the others are (one held or put off is not). One whose `keep` fails is `unkept`,
 * which says what then: `retry` (hold its segments for a later try: the history's fault, a full
 * disk), `lose` (it is `lost` too), `forget` (the event is gone meanwhile: nothing is counted).
 * One past the rescue queue's bound is put off (its segments held) while `defer` says so, else
 * lost (`rescue_busy`).
 */
export interface RescueHooks {
  /** Resolves true once written; false when the event is gone meanwhile (nothing counted). */
  keep: (e: FramedEvent, jpeg: Buffer) => Promise<boolean>;
  lost: (e: FramedEvent, why: string) => void;
  unkept?: (e: FramedEvent, jpeg: Buffer, err: unknown) => 'retry' | 'lose' | 'forget';
  settled?: (e: FramedEvent) => void;
  /** `first`: put off for the first time (counted once); `again`: still put off; false: lost. */
  defer?: (e: FramedEvent) => 'first' | 'again' | false;
}

/**
 * What `SnapshotFrames` counts: snapshots drawn from the recording, served from the cache, rescued
 * and marked gone; `rescuing`, the rescues waiting for a decode or running one now (at most
 * `rescueQueue`); and `deferred`, rescues put off past that bound (their segments kept for a
 * later removal).
 */
export interface SnapshotFrameCounts {
  drawn: number;
  hits: number;
  rescued: number;
  gone: number;
  rescuing: number;
  deferred: number;
}

/** An event whose snapshot is a frame of its camera's recording (the history's). */
export interface FramedEvent {
  id: string;
  key: string;
  frame: SnapshotFrame;
  /** Its crop (`<key>.crop.jpg`, of the same frame), by which the frame is told; undefined: none. */
  crop: () => Promise<Buffer | undefined>;
  /** Its snapshot, drawn by an earlier rescue whose write failed: written again, not drawn again. */
  drawn?: Buffer;
}

/**
 * How far a decoded frame is from the snapshot's crop (the same frame, cut when it was analysed):
 * the mean difference over the crop's region, every other pixel. Undefined when the crop cannot
 * be read or is not the region's size (then the frame is taken by its time alone).
 */
async function cropScore(
  frame: SnapshotFrame,
  crop: Buffer | undefined,
): Promise<((rgb: Buffer) => number) | undefined> {
  const box = frame.detections[0]?.box;
  if (!crop || !box) return undefined;
  const r = cropRegion(geometryOf(frame), box);
  const c = await sharp(crop)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true })
    .catch(() => undefined);
  if (!c || c.info.width !== r.width || c.info.height !== r.height || c.info.channels !== 3) return undefined;
  const want = c.data;
  return (rgb) => {
    let d = 0;
    for (let y = 0; y < r.height; y += 2)
      for (let x = 0; x < r.width; x += 2) {
        const i = ((r.top + y) * frame.w + r.left + x) * 3;
        const j = (y * r.width + x) * 3;
        d +=
          Math.abs(rgb[i]! - want[j]!) +
          Math.abs(rgb[i + 1]! - want[j + 1]!) +
          Math.abs(rgb[i + 2]! - want[j + 2]!);
      }
    return d;
  };
}

/**
 * Event snapshots kept as frames of their camera's recording (issue 47: the recording is stored
 * once): the snapshot is the frame decoded from the kept segments (`decodeFrame`: from the key
 * frame at or before it) and drawn as the published one is (`annotatedJpeg`, the same boxes,
 * size and quality), on request. Drawn snapshots are kept in a small LRU (`FRAME_CACHE_BYTES`,
 * a request being made shared by those that wait for it); at most `FRAME_DECODES` ffmpegs run at
 * once, requests and rescues together. `rescue`: segments about to be removed that hold events'
 * snapshot frames have those frames drawn first, for the history to keep as files.
 */
export class SnapshotFrames {
  private cache = new Map<string, CacheEntry>();
  private bytes = 0;
  private running = 0;
  /** Requests waiting for a decode (at most `FRAME_REQUESTS_WAITING`), and rescues: rescues go first. */
  private waiting: { request: (() => void)[]; rescue: (() => void)[] } = { request: [], rescue: [] };
  readonly counts: SnapshotFrameCounts = { drawn: 0, hits: 0, rescued: 0, gone: 0, rescuing: 0, deferred: 0 };

  constructor(
    private readonly deps: SnapshotFramesDeps,
    private readonly maxBytes = FRAME_CACHE_BYTES,
    private readonly decodes = FRAME_DECODES,
    private readonly rescueQueue = RESCUE_QUEUE,
  ) {}

  /**
   * The snapshot of event `key` of `camera`, drawn on its frame of the recording; or why there is
   * none. Requests for a snapshot being drawn wait for it and get what it gets, the drawn JPEG or
   * the same 503 (the failure's reason and code; its message, naming files, is only logged).
   */
  async view(
    key: string,
    camera: string,
    frame: SnapshotFrame,
    crop: () => Promise<Buffer | undefined> = () => Promise.resolve(undefined),
  ): Promise<Buffer | NoSnapshot> {
    const id = `${key}@${frame.ts}`;
    const hit = this.cache.get(id);
    if (hit) {
      this.cache.delete(id); // most recently used: last in the map's order
      this.cache.set(id, hit);
      this.counts.hits++;
      return hit.result;
    }
    const source = this.deps.source();
    const ring = source?.ring(camera);
    if (!source || !ring)
      return { status: 410, error: `the snapshot's frame is gone: camera ${camera} keeps no recording now` };
    const segments = ring.list();
    if (!planFrame(segments, frame.ts))
      return {
        status: 410,
        error: `the snapshot's frame is gone: the recording of ${camera} no longer holds ${new Date(frame.ts).toISOString()}`,
      };
    if (this.running >= this.decodes && this.waiting.request.length >= FRAME_REQUESTS_WAITING)
      return {
        status: 503,
        error: `the snapshot could not be made from the recording now: ${this.waiting.request.length} are waiting to be decoded (busy)`,
      };
    const began = performance.now();
    const entry: CacheEntry = { result: Promise.resolve({ status: 503, error: '' }), bytes: 0 };
    entry.result = this.limit('request', () => this.draw(source.ffmpeg, segments, frame, crop)).then(
      (jpeg) => {
        this.counts.drawn++;
        this.deps.log.debug(
          { camera, ts: frame.ts, ms: Math.round(performance.now() - began), bytes: jpeg.length },
          "an event's snapshot drawn from its frame of the recording",
        );
        if (this.cache.get(id) === entry) {
          entry.bytes = jpeg.length;
          this.bytes += jpeg.length;
          this.trim(id);
        }
        return jpeg;
      },
      (err: unknown): NoSnapshot => {
        this.drop(id, entry);
        this.deps.log.warn(
          { camera, err: errorMessage(err) },
          "an event's snapshot could not be drawn from the recording",
        );
        return {
          status: 503,
          error: `the snapshot could not be made from the recording (${codeOf(err, 'decode_failed')})`,
        };
      },
    );
    this.cache.set(id, entry);
    return entry.result;
  }

  /**
   * Whether `camera`'s recording holds the frame at `ts` now, in a segment described (its
   * description renamed into place: one still being written, or closed with its description not
   * yet written, is lost to a kill, `Ring.load`), not lost to a full disk.
   */
  holds(camera: string, ts: number): boolean {
    const ring = this.deps.source()?.ring(camera);
    return (
      !!ring &&
      planFrame(
        ring.list().filter((s) => !s.open && s.described === true),
        ts,
      ) !== undefined
    );
  }

  /**
   * Segments of `camera` about to be removed (`removed`; `kept`, those that stay): the events of
   * `events` whose snapshot frame lies in them, each with its snapshot drawn from them (or its
   * `drawn` JPEG) and kept (`hooks.keep`). Undefined when none lies in them; else the work, which
   * resolves, once every one is kept, held, put off or lost, with the segments of `removed` the
   * held and put-off ones need (to stay listed, their files on disk). See `RescueHooks`.
   */
  rescue(
    camera: string,
    removed: readonly Segment[],
    kept: readonly Segment[],
    events: readonly FramedEvent[],
    hooks: RescueHooks,
  ): Promise<Segment[]> | undefined {
    const { keep, lost } = hooks;
    const unkept = hooks.unkept ?? (() => 'lose');
    const settled = hooks.settled ?? (() => undefined);
    const defer = hooks.defer ?? ((): 'first' => 'first');
    const due = events.filter((e) => isDue(removed, kept, e.frame.ts));
    if (!due.length) return undefined;
    const ffmpeg = this.deps.source()?.ffmpeg;
    // The frames around each one's time may reach into the segments that stay.
    const inOrder = [...removed, ...kept].sort((a, b) => a.run - b.run || a.seq - b.seq);
    const held = new Set<string>();
    const gone = (e: FramedEvent, why: string, err: unknown): void => {
      this.counts.gone++;
      this.deps.log.warn({ camera, id: e.id, err: errorMessage(err) }, "an event's snapshot frame is lost");
      lost(e, why);
      settled(e);
    };
    const hold = (e: FramedEvent): void => {
      for (const f of framesFiles(inOrder, e.frame.ts)) held.add(f);
    };
    return Promise.all(
      due.map(async (e) => {
        let jpeg: Buffer;
        if (e.drawn) jpeg = e.drawn;
        else if (this.counts.rescuing >= this.rescueQueue) {
          // Not lost for the queue: its segments stay listed, rescued at a later removal (within
          // the bound `defer` keeps: the ring holds them beyond its bytes meanwhile).
          const put = defer(e);
          if (!put)
            return gone(
              e,
              'its segment of the recording was removed while the rescues were busy (rescue_busy)',
              new Error('the rescue queue stayed full'),
            );
          if (put === 'first') this.counts.deferred++;
          return hold(e);
        } else
          try {
            this.counts.rescuing++;
            if (ffmpeg === undefined) throw new Error('ffmpeg is not known (the cameras are not running)');
            jpeg = await this.limit('rescue', () => this.draw(ffmpeg, inOrder, e.frame, e.crop));
          } catch (err) {
            const why = `its segment of the recording was removed and could not be read (${codeOf(err, 'decode_failed')})`;
            return gone(e, why, err);
          } finally {
            this.counts.rescuing--;
          }
        try {
          if (await keep(e, jpeg)) this.counts.rescued++;
          settled(e);
        } catch (err) {
          const then = unkept(e, jpeg, err);
          if (then === 'retry') hold(e);
          else if (then === 'lose')
            gone(e, `it could not be written to the event history (${codeOf(err, 'write_failed')})`, err);
          else settled(e); // the event itself is gone (deleted, aged out): nothing lost, nothing to keep
        }
      }),
    ).then(() => removed.filter((s) => held.has(s.file)));
  }

  /**
   * The snapshot drawn on the frame of `segments` at `frame.ts`: of the frames around it, the one
   * its crop shows (`cropScore`; the camera's frame times and its recording's differ by the
   * decode's delay), else the one at its time.
   */
  private async draw(
    ffmpeg: string,
    segments: readonly Segment[],
    frame: SnapshotFrame,
    crop: () => Promise<Buffer | undefined>,
  ): Promise<Buffer> {
    const score = await cropScore(frame, await crop().catch(() => undefined));
    const rgb = await decodeFrame(ffmpeg, segments, frame.ts, frame.w, frame.h, score);
    return annotatedJpeg(rgb, geometryOf(frame), frame.detections, { quality: frame.quality });
  }

  /**
   * Runs `work` when fewer than `decodes` run; else it waits, rescues before requests (a rescue
   * put off too long loses a snapshot; a request can be asked again), each kind in the order
   * asked: a decode that ends hands its place to the first waiting (one asked meanwhile cannot
   * take it first and push that one back).
   */
  private async limit<T>(kind: 'request' | 'rescue', work: () => Promise<T>): Promise<T> {
    if (this.running >= this.decodes) await new Promise<void>((go) => this.waiting[kind].push(go));
    else this.running++;
    try {
      return await work();
    } finally {
      const next = this.waiting.rescue.shift() ?? this.waiting.request.shift();
      if (next) next();
      else this.running--;
    }
  }

  private drop(id: string, entry: { bytes: number }): void {
    if (this.cache.get(id) !== entry) return;
    this.cache.delete(id);
    this.bytes -= entry.bytes;
  }

  /** The least recently used go while over the bound (`keep`, the newest, stays however big). */
  private trim(keep: string): void {
    for (const [id, entry] of this.cache) {
      if (this.bytes <= this.maxBytes) return;
      if (id !== keep && entry.bytes > 0) this.drop(id, entry);
    }
  }

  /** The snapshots cached and their bytes. */
  stats(): { snapshots: number; bytes: number } {
    return { snapshots: this.cache.size, bytes: this.bytes };
  }
}
