import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import {
  BROWSER_CODECS,
  ClipCache,
  DROPPED,
  FootageRanges,
  MP4_CODECS,
  planClip,
  remuxClip,
  type ClipPlan,
  type KeptRange,
  type Ring,
} from '../record/index.js';
import type { ClipPayload } from '../publish/index.js';
import type { ObjectEvent } from '../track/index.js';
import type { EventStore } from './event-store.js';

/** Where the cameras' rings are, and the ffmpeg that makes clips of them (the ingest stage). */
export interface ClipSource {
  ring(camera: string): Ring | undefined;
  readonly ffmpeg: string;
}

export interface ClipsDeps {
  clock: Clock;
  log: Logger;
  history: EventStore | undefined;
  /** The rings, once ingest runs. */
  source: () => ClipSource | undefined;
  /** Whether a camera keeps clips (its `clips`, or `events.clips.enabled`). */
  keeps: (camera: string) => boolean;
  /** An event's footage is complete (or its clip has failed): the event's payload says so. */
  done: (id: string, clip: ClipPayload) => void;
  /** `http.public_url`, for `url`. */
  publicUrl?: string | undefined;
  /** The events' footage each camera's recording keeps (shared with the rings); absent: its own. */
  footage?: FootageRanges;
}

interface Pending {
  id: string;
  camera: string;
  /** The clip's time: from the pre-roll before the object was first seen to the post-roll (ms). */
  from: number;
  until: number | null;
  /** The clip described, or why not. */
  result: ClipPayload | null;
  making: boolean;
}

/** The event left the history before its footage was complete. */
const evicted = (): ClipPayload => ({
  state: 'failed',
  error: 'the event is no longer in the history (its bounds, events.history, or a DELETE)',
  reasons: ['evicted'],
});

/** A camera's failed clips are logged once in this long (ms); the others are counted. */
export const FAILURE_LOG_MS = 60_000;

/** A camera's clip failures since its last warning: how many more, and the last one's error. */
interface Failures {
  since: number;
  more: number;
  last: string;
}

/** After a clip's end, the ring is given this long to have its last bytes. */
const SETTLE_MS = 1500;
/** At a stop, the rings' last bytes are waited for this long (ms). */
const STOP_BUDGET_MS = 10_000;
/**
 * The longest a clip waits for the segment holding its end to close and be described (a segment
 * is cut at the first key frame 2 s after it began: a camera with a 10-s GOP closes it within 12 s).
 */
const CLOSED_WAIT_MS = 15_000;
/** How often events that left the history have their footage freed (ms). */
const PRUNE_MS = 10_000;
/** The longest range of a camera's recording one request may ask for (ms). */
export const MAX_RANGE_MS = 3600_000;

/** Why no MP4 can be served: the HTTP status and the reason, in words. */
export interface NoClip {
  status: 404 | 409 | 503;
  error: string;
}

export type OpenedClip = { file: FileHandle; size: number; made: boolean } | NoClip;

/**
 * Event clips as time ranges over each camera's one recording (its ring): at an event's `new`,
 * the ring keeps its video from `pre_capture_s` before the object was first seen; at its `end`
 * (or `max_clip_s` after the clip's start), once `post_capture_s` have passed, the clip is
 * described (`planClip`: from the key frame at or before its start, what it lacks and why) and
 * its payload published (`done`); nothing is copied. The footage stays while the event is in the
 * history and within `retain_days`; its MP4 is made on request (`open`) and cached, bounded.
 */
export class Clips {
  private pending = new Map<string, Pending>();
  private queue: Promise<void> = Promise.resolve();
  /** Clips waiting for their footage to close before they join the queue (`make`). */
  private readonly closing = new Set<Promise<void>>();
  /** Each camera's failed clips since its last warning. */
  private failures = new Map<string, Failures>();
  readonly footage: FootageRanges;
  private readonly cache: ClipCache | undefined;
  private lastPrune = -Infinity;

  constructor(
    private readonly cfg: Config['events']['clips'],
    private readonly deps: ClipsDeps,
  ) {
    this.footage = deps.footage ?? new FootageRanges();
    this.cache = cfg.ring_dir ? new ClipCache(cacheDir(cfg.ring_dir), cfg.cache_mb * 1048576) : undefined;
  }

  /**
   * Empties the MP4 cache, and keeps the footage of the events the history holds (from the last
   * run: their clips stay servable while their segments are kept).
   */
  async start(): Promise<void> {
    await this.cache
      ?.start()
      .catch((err: unknown) =>
        this.deps.log.warn(
          { err: errorMessage(err) },
          'the clip cache cannot be used: clips are made, not kept',
        ),
      );
    for (const e of this.deps.history?.clipRanges() ?? []) this.footage.set(e.camera, e.id, e.from, e.to);
  }

  /** An event about to be published: what its `clip` field says. */
  onEvent(e: ObjectEvent): ClipPayload | null {
    let p = this.pending.get(e.id);
    if (!p) {
      if (e.type !== 'new' || !this.deps.history || !this.deps.keeps(e.camera)) return null;
      const from = e.startTs - this.cfg.pre_capture_s * 1000;
      p = { id: e.id, camera: e.camera, from, until: null, result: null, making: false };
      this.pending.set(e.id, p);
      this.footage.set(e.camera, e.id, from, Infinity);
    }
    if (e.type === 'end' && p.until === null) {
      p.until = (e.endTs ?? e.startTs) + this.cfg.post_capture_s * 1000;
      if (!p.result && !p.making) this.footage.set(p.camera, p.id, p.from, this.endOf(p).until);
    }
    const clip = p.result ?? { state: 'recording' };
    if (e.type === 'end' && p.result) this.pending.delete(e.id);
    return clip;
  }

  /** The clip's end: the event's end and post-roll, or `max_clip_s` from its start. */
  private endOf(p: Pending): { until: number; capped: boolean } {
    const cap = p.from + this.cfg.max_clip_s * 1000;
    const until = p.until ?? Infinity;
    return until <= cap ? { until, capped: false } : { until: cap, capped: true };
  }

  /**
   * A clip failed: the camera's first failure in `FAILURE_LOG_MS` is logged, the others counted,
   * and said in one line when the interval is over (a full disk fails every clip).
   */
  private failed(p: Pending, error: string, now: number): void {
    const f = this.failures.get(p.camera);
    if (f && now < f.since + FAILURE_LOG_MS) {
      f.more++;
      f.last = error;
      return;
    }
    if (f) this.summarise(p.camera, f);
    this.failures.set(p.camera, { since: now, more: 0, last: error });
    this.deps.log.warn({ id: p.id, camera: p.camera, err: error }, 'no clip for this event');
  }

  /** The failures counted since a camera's last warning, in one line. */
  private summarise(camera: string, f: Failures): void {
    if (f.more > 0)
      this.deps.log.warn(
        { camera, clips: f.more, seconds: Math.round(FAILURE_LOG_MS / 1000), err: f.last },
        'more clips failed since the last warning',
      );
  }

  /** Describes the clips due at `now`; frees the footage of events gone from the history or past retention. */
  tick(now: number): void {
    for (const [camera, f] of this.failures)
      if (now >= f.since + FAILURE_LOG_MS) {
        this.summarise(camera, f);
        this.failures.delete(camera);
      }
    for (const p of this.pending.values()) {
      if (p.making || p.result) continue;
      if (now >= this.endOf(p).until + SETTLE_MS) this.make(p, this.endOf(p));
    }
    if (now >= this.lastPrune + PRUNE_MS) {
      this.lastPrune = now;
      this.prune(now);
    }
  }

  /**
   * Footage no event needs any more is released: the event left the history, or is past
   * `retain_days`. An event that left the history (its own limits) takes its cached MP4 along.
   */
  private prune(now: number): void {
    const history = this.deps.history;
    const oldest = this.cfg.retain_days > 0 ? now - this.cfg.retain_days * 86_400_000 : -Infinity;
    for (const { id, range } of [...this.footage.entries()])
      if (!this.pending.has(id) && (!history?.has(id) || range[1] < oldest)) this.footage.release(id);
    // Also when its footage went first (past retain_days).
    for (const id of this.cache?.tags() ?? [])
      if (!this.pending.has(id) && !history?.has(id)) void this.dropEvent(id);
  }

  /**
   * Describes `p`'s clip, in turn with the others. First (`whole`, not at a stop: the rings have
   * stopped) it waits, `CLOSED_WAIT_MS` at most, for its footage to be in closed segments with
   * their descriptions (`Ring.closed`): a clip said ready then keeps every second of it through
   * a kill, which loses the segment still being written.
   */
  private make(p: Pending, end: { until: number; capped: boolean }, whole = true): void {
    p.making = true;
    const ring = whole ? this.deps.source()?.ring(p.camera) : undefined;
    const closed = ring ? this.within(ring.closed(end.until), CLOSED_WAIT_MS) : Promise.resolve();
    const queued = closed.then(() => {
      const job = this.queue.then(() => this.write(p, end.until, end.capped));
      this.queue = job.catch(() => undefined);
    });
    this.closing.add(queued);
    void queued.finally(() => this.closing.delete(queued));
  }

  private async write(p: Pending, until: number, capped: boolean): Promise<void> {
    const result = await this.describe(p, until, capped).catch((err: unknown): ClipPayload => ({
      state: 'failed',
      error: errorMessage(err),
      reasons: ['write_failed'],
    }));
    p.result = result;
    p.making = false;
    if (result.state === 'failed') {
      this.footage.release(p.id);
      this.failed(p, result.error, this.deps.clock.now());
    } else if (result.state === 'ready' && result.missing)
      this.deps.log.info(
        { id: p.id, camera: p.camera, missing: result.missing },
        'a clip is shorter than asked',
      );
    if (this.deps.history?.has(p.id)) this.deps.history.setFields(p.id, { clip: result });
    // An event already ended is done with; one still going on carries the clip until its end.
    if (p.until !== null) this.pending.delete(p.id);
    this.deps.done(p.id, result);
  }

  /**
   * The clip of `p.from`–`until` as the ring holds it: which stretch, from which key frame, what
   * it lacks and why. Its footage stays kept; nothing is written but the event's record.
   */
  private async describe(p: Pending, until: number, capped: boolean): Promise<ClipPayload> {
    const ring = this.deps.source()?.ring(p.camera);
    if (!ring)
      return {
        state: 'failed',
        error: "the camera's ring of recent video is not running (see the log)",
        reasons: ['no_ring'],
      };
    // The ring's last bytes on disk; a disk that hangs gets SETTLE_MS, then the clip has what is there.
    await this.within(ring.settle(), SETTLE_MS);
    const plan = planClip(ring.list(), p.from, until, ring.lastFault?.fault);
    // The codec the stream's tables name now, and that of the video kept (with or without one).
    const codec = [ring.codec, plan?.codec].find((c) => c !== undefined && !MP4_CODECS.includes(c));
    if (codec !== undefined)
      return {
        state: 'failed',
        error: `the camera's ${codec} cannot be copied into an MP4`,
        reasons: ['codec'],
      };
    if (!plan) {
      // A ring whose directory is gone or cannot be used says which, and where.
      const fault = ring.lastFault;
      const where = fault && (fault.fault === 'ring_removed' || fault.fault === 'ring_unusable');
      return {
        state: 'failed',
        error: ring.unusable ?? `the ring holds no video of this time${where ? `: ${fault.message}` : ''}`,
        reasons: [ring.unusable !== undefined ? 'ring_unusable' : (fault?.fault ?? 'not_recorded_yet')],
      };
    }
    if (!this.deps.history?.has(p.id)) return evicted();
    this.footage.set(p.camera, p.id, plan.start, plan.end);
    const path = `/api/events/${encodeURIComponent(p.id)}/clip.mp4`;
    return {
      state: 'ready',
      path,
      ...(this.deps.publicUrl ? { url: this.deps.publicUrl.replace(/\/+$/, '') + path } : {}),
      start: isoTime(plan.start),
      end: isoTime(plan.end),
      duration_s: Math.round((plan.end - plan.start) / 100) / 10,
      codec: plan.codec,
      browser_plays: BROWSER_CODECS.includes(plan.codec),
      ...(plan.missing.reasons.length ? { missing: plan.missing } : {}),
      ...(capped ? { capped: true as const } : {}),
    };
  }

  /**
   * An event's clip as an MP4, made from the camera's recording (or taken from the cache), opened
   * for reading; or why there is none. The caller closes it. Its payload's `start`–`end` planned
   * again is the plan it was described with (`planClip`); the cache keeps it by the event and
   * that range, so every request is the same MP4 while it is cached, even after the ring has
   * stamped its segments again (a stream's clock finding a smaller delay moves their times by
   * milliseconds, and the plan with them). It is cached as the event's: `dropEvent` removes it.
   */
  async open(id: string): Promise<OpenedClip> {
    const clip = this.deps.history?.clipRange(id);
    if (!clip) return { status: 404, error: 'no clip for this event' };
    return this.openRange(clip.camera, clip.from, clip.to, { id, key: eventClipKey(id, clip.from, clip.to) });
  }

  /**
   * An event deleted (DELETE /api/events/<id>): its MP4s made on request leave the cache now,
   * not when evicted (one being made, once made).
   */
  dropEvent(id: string): Promise<void> {
    return this.cache?.drop(id) ?? Promise.resolve();
  }

  /**
   * `from`–`to` of a camera's recording as an MP4 (from the key frame at or before `from`), made
   * from its kept segments without re-encoding; or why there is none. `event`: the clip is that
   * event's, cached under its key.
   */
  async openRange(
    camera: string,
    from: number,
    to: number,
    event?: { id: string; key: string },
  ): Promise<OpenedClip> {
    const source = this.deps.source();
    const ring = source?.ring(camera);
    if (!source || !ring) return { status: 404, error: `camera ${camera} keeps no recording` };
    const plan = planClip(ring.list(), from, to);
    if (!plan)
      return {
        status: 404,
        error: `the recording of ${camera} holds nothing of ${isoTime(from)} to ${isoTime(to)} (not recorded, or past retention: events.clips.retain_days, ring_max_mb, max_gb)`,
      };
    return this.openPlan(source.ffmpeg, camera, plan, event);
  }

  /**
   * The stretches a camera's recording holds that overlap `from`–`to` (absent: all), each with
   * why it is kept (the events whose footage it is, by id); undefined when it keeps none.
   */
  kept(camera: string, from?: number, to?: number): KeptRange[] | undefined {
    const ring = this.deps.source()?.ring(camera);
    if (!ring) return undefined;
    const footage = [...this.footage.entries()].filter((e) => e.camera === camera);
    return ring.kept(footage, from, to);
  }

  /** The MP4 of a clip's plan (an event's, when given), from the cache or made now; or why there is none. */
  private async openPlan(
    ffmpeg: string,
    camera: string,
    plan: ClipPlan,
    event?: { id: string; key: string },
  ): Promise<OpenedClip> {
    if (!MP4_CODECS.includes(plan.codec))
      return { status: 409, error: `the camera's ${plan.codec} cannot be copied into an MP4` };
    if (!this.cache) return { status: 503, error: 'clips are not kept (events.clips.ring_dir)' };
    const durationS = (plan.end - plan.start) / 1000;
    try {
      return await this.cache.open(
        event?.key ?? clipKey(camera, plan),
        (tmp) => remuxClip(ffmpeg, plan, tmp, durationS),
        event?.id,
      );
    } catch (err) {
      // Its event deleted while the clip was made, or between finding its file and opening it.
      if (event && (errorMessage(err) === DROPPED || (err as NodeJS.ErrnoException).code === 'ENOENT'))
        return { status: 404, error: 'no clip for this event: it was deleted' };
      this.deps.log.warn({ camera, err: errorMessage(err) }, 'a clip could not be made');
      return { status: 503, error: `the clip could not be made: ${errorMessage(err)}` };
    }
  }

  /** The MP4 cache's bytes, and how many were made and served again. */
  cacheStats(): { bytes: number; made: number; hits: number } {
    return { bytes: this.cache?.bytes ?? 0, made: this.cache?.made ?? 0, hits: this.cache?.hits ?? 0 };
  }

  /** Waits for `work`, `ms` at most (on the injected clock). */
  private async within(work: Promise<void>, ms: number): Promise<void> {
    let timer: Timer | undefined;
    const late = new Promise<void>((resolve) => {
      timer = this.deps.clock.setTimeout(resolve, ms);
    });
    await Promise.race([work, late]);
    this.deps.clock.clearTimeout(timer!);
  }

  /**
   * On shutdown (the cameras have stopped): every clip not yet described is, from what the
   * ring holds: events ended or still going on, their footage finished where the stream
   * stopped, the rest named `stream_ended` (a clip of an event going on asks for its post-roll
   * from now).
   */
  async stop(): Promise<void> {
    const now = this.deps.clock.now();
    for (const p of this.pending.values())
      if (!p.making && !p.result) {
        if (p.until === null) p.until = now + this.cfg.post_capture_s * 1000;
        this.make(p, this.endOf(p), false);
      }
    // Those still waiting for their footage to close (the rings have stopped: not for long) first.
    await this.within(
      Promise.all(this.closing).then(() => this.queue),
      STOP_BUDGET_MS,
    );
    this.pending.clear();
    for (const [camera, f] of this.failures) this.summarise(camera, f);
    this.failures.clear();
  }
}

/** The MP4 cache's directory, beside the cameras' recordings. */
export const cacheDir = (ringDir: string): string => `${ringDir.replace(/\/+$/, '')}/mp4`;

/** An event's clip's name in the cache: the event and the range its payload names. */
const eventClipKey = (id: string, from: number, to: number): string =>
  createHash('sha256')
    .update(JSON.stringify(['event', id, from, to]))
    .digest('hex')
    .slice(0, 32);

/** A clip's name in the cache: its camera, its parts and its time. */
const clipKey = (camera: string, plan: ClipPlan): string =>
  createHash('sha256')
    .update(JSON.stringify([camera, plan.start, plan.end, plan.parts.map((p) => [p.file, p.offset])]))
    .digest('hex')
    .slice(0, 32);
