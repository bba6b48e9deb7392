import { unlink } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { isoTime } from '../core/time.js';
import type { Config } from '../config/index.js';
import {
  BROWSER_CODECS,
  MP4_CODECS,
  planClip,
  remuxClip,
  type Ring,
  type RingHold,
} from '../record/index.js';
import type { ClipPayload } from '../publish/index.js';
import type { ObjectEvent } from '../track/index.js';
import type { EventStore } from './event-store.js';
import { STOPPED_CLIP } from './event-record.js';

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
  /** A clip is written (or has failed): the event's payload says so. */
  done: (id: string, clip: ClipPayload) => void;
  /** `http.public_url`, for `url`. */
  publicUrl?: string | undefined;
}

interface Pending {
  id: string;
  camera: string;
  /** The clip's time: from the pre-roll before the object was first seen to the post-roll (ms). */
  from: number;
  until: number | null;
  hold: RingHold | undefined;
  /** The clip written, or why not. */
  result: ClipPayload | null;
  making: boolean;
}

/** The event left the history before its clip was kept in it. */
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
/** At a stop, clips are begun for this long (ms); the one being written then is finished. */
const STOP_BUDGET_MS = 10_000;

/**
 * Event clips: at an event's `new`, the camera's ring holds its video from `pre_capture_s`
 * before the object was first seen; at its `end` (or `max_clip_s` after the clip's start), once
 * `post_capture_s` have passed, the clip is cut from the ring at the key frame at or before its
 * start and written as an MP4, one at a time, into the event history (flushed, then renamed:
 * never half a clip). The event's payload then names it (`done`).
 */
export class Clips {
  private pending = new Map<string, Pending>();
  private queue: Promise<void> = Promise.resolve();
  /** Stopping, out of time: clips not begun are not made. */
  private abandoned = false;
  /** Each camera's failed clips since its last warning. */
  private failures = new Map<string, Failures>();

  constructor(
    private readonly cfg: Config['events']['clips'],
    private readonly deps: ClipsDeps,
  ) {}

  /** An event about to be published: what its `clip` field says. */
  onEvent(e: ObjectEvent): ClipPayload | null {
    let p = this.pending.get(e.id);
    if (!p) {
      if (e.type !== 'new' || !this.deps.history || !this.deps.keeps(e.camera)) return null;
      const from = e.startTs - this.cfg.pre_capture_s * 1000;
      p = {
        id: e.id,
        camera: e.camera,
        from,
        until: null,
        hold: this.deps.source()?.ring(e.camera)?.hold(from),
        result: null,
        making: false,
      };
      this.pending.set(e.id, p);
    }
    if (e.type === 'end' && p.until === null)
      p.until = (e.endTs ?? e.startTs) + this.cfg.post_capture_s * 1000;
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

  /** Makes the clips due at `now`. */
  tick(now: number): void {
    for (const [camera, f] of this.failures)
      if (now >= f.since + FAILURE_LOG_MS) {
        this.summarise(camera, f);
        this.failures.delete(camera);
      }
    for (const p of this.pending.values()) {
      if (p.making || p.result) continue;
      if (now >= this.endOf(p).until + SETTLE_MS) this.make(p, now);
    }
  }

  private make(p: Pending, now: number): void {
    p.making = true;
    const { until, capped } = this.endOf(p);
    const job = this.queue.then(() => this.write(p, Math.min(until, now), capped));
    this.queue = job.catch(() => undefined);
  }

  private async write(p: Pending, until: number, capped: boolean): Promise<void> {
    const result: ClipPayload = this.abandoned
      ? STOPPED_CLIP
      : await this.cut(p, until, capped).catch((err: unknown): ClipPayload => ({
          state: 'failed',
          error: errorMessage(err),
          reasons: ['write_failed'],
        }));
    p.hold?.release();
    p.result = result;
    p.making = false;
    if (result.state === 'failed') {
      this.failed(p, result.error, this.deps.clock.now());
      this.deps.history?.setFields(p.id, { clip: result });
    } else if (result.state === 'ready' && result.missing)
      this.deps.log.info(
        { id: p.id, camera: p.camera, missing: result.missing },
        'a clip is shorter than asked',
      );
    // An event already ended is done with; one still going on carries the clip until its end.
    if (p.until !== null) this.pending.delete(p.id);
    this.deps.done(p.id, result);
  }

  private async cut(p: Pending, until: number, capped: boolean): Promise<ClipPayload> {
    const source = this.deps.source();
    const ring = source?.ring(p.camera);
    if (!source || !ring)
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
    const history = this.deps.history!;
    const tmp = await history.clipTemp(p.id);
    if (!tmp)
      return history.has(p.id)
        ? {
            state: 'failed',
            error: 'the event history keeps no files (see the log)',
            reasons: ['write_failed'],
          }
        : evicted();
    const durationS = (plan.end - plan.start) / 1000;
    try {
      await remuxClip(source.ffmpeg, plan, tmp, durationS);
    } catch (err) {
      await unlink(tmp).catch(() => undefined); // the part written
      throw err;
    }
    const path = `/api/events/${encodeURIComponent(p.id)}/clip.mp4`;
    const describe = (bytes: number): ClipPayload => ({
      state: 'ready',
      path,
      ...(this.deps.publicUrl ? { url: this.deps.publicUrl.replace(/\/+$/, '') + path } : {}),
      start: isoTime(plan.start),
      end: isoTime(plan.end),
      duration_s: Math.round(durationS * 10) / 10,
      bytes,
      codec: plan.codec,
      browser_plays: BROWSER_CODECS.includes(plan.codec),
      ...(plan.missing.reasons.length ? { missing: plan.missing } : {}),
      ...(capped ? { capped: true as const } : {}),
    });
    let clip: ClipPayload | undefined;
    try {
      await history.adoptClip(p.id, tmp, (bytes) => ({ clip: (clip = describe(bytes)) }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EVICTED') return evicted();
      throw err;
    }
    return clip!;
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
   * On shutdown: the clips of ended events are made from what the ring holds (their post-roll
   * may be cut short), and waited for; those of events still going on are not made.
   */
  async stop(): Promise<void> {
    const now = this.deps.clock.now();
    for (const p of this.pending.values()) if (!p.making && !p.result && p.until !== null) this.make(p, now);
    // Within the stop's time (systemd's TimeoutStopSec is 30 s): clips not begun by then are not made.
    await this.within(this.queue, STOP_BUDGET_MS);
    const left = [...this.pending.values()].filter((x) => x.making).length;
    if (left) {
      this.abandoned = true;
      this.deps.log.warn({ clips: left }, 'stopping: clips not begun in time are not made');
    }
    // The clip being written is finished, within the stop's time too.
    await this.within(this.queue, STOP_BUDGET_MS);
    for (const p of this.pending.values()) p.hold?.release();
    this.pending.clear();
    for (const [camera, f] of this.failures) this.summarise(camera, f);
    this.failures.clear();
  }
}
