import type { Clock, Timer } from '../core/clock.js';
import type { StampProbe } from './ffmpeg-args.js';
import { StreamClock } from '../record/index.js';

/**
 * How long a frame waits for its probe line (ms). ffmpeg logs the line before it encodes and
 * writes the frame, so the line is in the stderr pipe before the frame's last byte is in the
 * stdout pipe, and Node reads both in the same turn of its loop, however late; the wait only
 * covers the order in which that turn reads the two pipes, and a line that never comes.
 */
export const STAMP_WAIT_MS = 50;
/** Decoded frames remembered for the fps slots still to come (about 40 s at 25 frames/s). */
const DECODED_MAX = 1000;
/** Output frames whose stamp came before the frame (normally one or two). */
const AHEAD_MAX = 64;

/** A probe's line: its time base, or a frame it saw. */
export type ProbeLine =
  | { probe: StampProbe; tb: [number, number] }
  | { probe: StampProbe; n: number; pts: number | null }
  | { probe: StampProbe };

const PROBE = /^\[showinfo@(source|paced|frame) @ [^\]]*\] ?(.*)$/;

/** A line of the probes of ffmpeg-args.ts (`STAMP_PROBES`), or undefined for any other line. */
export function parseProbeLine(line: string): ProbeLine | undefined {
  const m = PROBE.exec(line);
  if (!m) return undefined;
  const probe = m[1] as StampProbe;
  const rest = m[2]!;
  const tb = /^config in time_base: (\d+)\/(\d+)/.exec(rest);
  if (tb)
    return Number(tb[1]) > 0 && Number(tb[2]) > 0 ? { probe, tb: [Number(tb[1]), Number(tb[2])] } : { probe };
  const f = /^n:\s*(\d+) pts:\s*(-?\d+|NOPTS)\b/.exec(rest);
  if (f) return { probe, n: Number(f[1]), pts: f[2] === 'NOPTS' ? null : Number(f[2]) };
  return { probe };
}

/** Rounds half away from zero, as av_rescale_q_rnd's AV_ROUND_NEAR_INF (fps's default). */
function roundNear(x: number): number {
  return x >= 0 ? Math.floor(x + 0.5) : -Math.floor(-x + 0.5);
}

interface Decoded {
  n: number;
  /** The stream's time, ms (`source`). */
  streamMs: number | null;
  /** The time fps paces by, in the `paced` probe's time base (RTSP), else the `source`'s. */
  paced: number | null;
}

interface Waiting {
  index: number;
  arrival: number;
  deliver: (ts: number, steady: number) => void;
  timer: Timer | null;
}

/** Counters of one run's stamps, for tests and the debug log. */
export interface StampCounts {
  /** Frames stamped from the stream's time. */
  stamped: number;
  /** Frames given their arrival time: no probe line in time, or no time in it. */
  arrival: number;
}

/** A step of the stream's clock beyond its frames' times' step by more than this (ms) is a jump, not time. */
const STEADY_JUMP_MS = 1000;
/** How fast the steady clock closes on the frames' times: this share of each interval, at most. */
const STEADY_SLEW = 0.01;

/**
 * A camera's clock for intervals (ms), across its ffmpeg runs (one per camera, kept by Ingest).
 * Frames' times (`ts`) follow the least delay seen so far, which falls over a connection's first
 * seconds (ffmpeg holds them, then writes them at once): those intervals are squeezed, and a speed
 * measured over them reads high. The recording keeps the same mapping and restamps what it wrote
 * (`StreamClock`), so `ts` stays on the recording's time, for clips and event times; the tracker's
 * filters and speeds run on this clock instead (issue 42 item 5).
 *
 * Between frames of one run and epoch (`key`), it advances by the stream's own interval from the
 * last frame that had a stream time (a frame between without one, its probe line late or its time
 * unknown, is given the last interval: one frame's guess, not a shift of all that follow). A step
 * of the stream beyond the step of the times by over STEADY_JUMP_MS is the camera's clock jumping,
 * not time passing: the times' step is taken. Across runs and epochs, the times' step. It never
 * goes back, and closes on `ts` by at most STEADY_SLEW of each interval (a burst's 3 s in about
 * 300 s; a camera clock off by 0.01 % is followed), so it stays within a burst of `ts`.
 */
export class SteadyTime {
  private last: { ts: number; steady: number; key: unknown } | null = null;
  /** The last frame with a stream time, in the run and epoch `key`. */
  private anchor: { steady: number; streamMs: number; key: unknown; interval: number } | null = null;

  /** The steady time of a frame of time `ts`, stream time `streamMs` (null: none), in run and epoch `key`. */
  next(ts: number, streamMs: number | null, key: unknown): number {
    const l = this.last;
    if (!l) {
      this.last = { ts, steady: ts, key };
      if (streamMs !== null) this.anchor = { steady: ts, streamMs, key, interval: 0 };
      return ts;
    }
    const a = this.anchor?.key === key ? this.anchor : null;
    const tsStep = Math.max(0, ts - l.ts);
    let step: number;
    if (streamMs !== null && a && streamMs >= a.streamMs) {
      const since = streamMs - a.streamMs;
      const fromAnchor = a.steady + since - l.steady;
      step = since - (l.steady - a.steady) > tsStep + STEADY_JUMP_MS ? tsStep : Math.max(0, fromAnchor);
    } else if (streamMs === null && a && l.key === key) step = a.interval;
    else step = tsStep;
    // Close on the times, by a small share of the step.
    const ahead = l.steady + step - ts;
    step -= Math.sign(ahead) * Math.min(Math.abs(ahead), STEADY_SLEW * step);
    const steady = l.steady + step;
    if (streamMs !== null) {
      const interval = a && streamMs >= a.streamMs ? streamMs - a.streamMs : 0;
      this.anchor = { steady, streamMs, key, interval: interval > 0 ? interval : (a?.interval ?? 0) };
    }
    this.last = { ts, steady, key };
    return steady;
  }
}

/**
 * Each frame's time for one ffmpeg run: when the camera took (or sent) the picture on the stream's
 * own clock, mapped to the wall clock by the least delay (`StreamClock`), from the probe lines of
 * ffmpeg's stderr; frames and lines are paired by their count. A frame whose line does not come
 * within STAMP_WAIT_MS gets its arrival time, and later lines still pair with their own frames.
 * Each frame also gets its time on the camera's `SteadyTime` (shared by its runs), for intervals.
 * Frames come out in the order they came in. Until the run's `frame` probe has said its time base,
 * frames are not held (an ffmpeg without the probes, or a fake in tests): they get their arrival.
 */
export class FrameStamps {
  private tb: Partial<Record<StampProbe, [number, number]>> = {};
  private decoded: Decoded[] = [];
  /** Output frames of earlier graph configurations (ffmpeg counts from 0 in each). */
  private base = 0;
  private lastN = -1;
  /** Stream ms by output index (null: no time known), for frames not yet read. */
  private ahead = new Map<number, number | null>();
  private waiting: Waiting[] = [];
  private probed = false;
  private lastTs = -Infinity;
  private readonly mapping = new StreamClock();
  /** This run's epoch, as `SteadyTime` tells runs and epochs apart. */
  private key: object = {};
  private keyEpoch = 0;
  readonly counts: StampCounts = { stamped: 0, arrival: 0 };

  constructor(
    private readonly clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>,
    private readonly steady = new SteadyTime(),
  ) {}

  /** Takes a probe line (true), or leaves any other line to its caller (false). */
  line(text: string): boolean {
    const p = parseProbeLine(text);
    if (!p) return false;
    if ('tb' in p) this.configured(p.probe, p.tb);
    else if ('n' in p) this.saw(p.probe, p.n, p.pts);
    return true;
  }

  /**
   * Output frame `index` (0, 1, 2… in this run) arrived at `arrival`; `deliver` gets its time and
   * its steady time, in order.
   */
  frame(index: number, arrival: number, deliver: (ts: number, steady: number) => void): void {
    const w: Waiting = { index, arrival, deliver, timer: null };
    this.waiting.push(w);
    if (!this.probed) return this.release();
    w.timer = this.clock.setTimeout(() => {
      w.timer = null;
      this.release(w);
    }, STAMP_WAIT_MS);
    this.release();
  }

  /** Delivers the frames still waiting, with what is known; the run ended. */
  close(): void {
    this.release(this.waiting.at(-1));
  }

  private configured(probe: StampProbe, tb: [number, number]): void {
    // ffmpeg configured the graph (again, when the stream's size changed): fps starts afresh,
    // every probe counts from 0 again, and says its time base before the first frame.
    this.decoded = [];
    if (probe === 'frame') {
      if (this.probed) this.base += this.lastN + 1;
      this.lastN = -1;
      this.probed = true;
    }
    this.tb[probe] = tb;
  }

  private saw(probe: StampProbe, n: number, pts: number | null): void {
    if (probe === 'source') {
      const tb = this.tb.source;
      const streamMs = pts === null || !tb ? null : (pts * 1000 * tb[0]) / tb[1];
      this.decoded.push({ n, streamMs, paced: pts });
      if (this.decoded.length > DECODED_MAX) this.decoded.shift();
    } else if (probe === 'paced') {
      // The same frame as the `source` line of the same count (setpts keeps every frame).
      for (let i = this.decoded.length - 1; i >= 0; i--) {
        const d = this.decoded[i]!;
        if (d.n === n) {
          d.paced = pts;
          break;
        }
        if (d.n < n) break;
      }
    } else {
      this.lastN = n;
      this.ahead.set(this.base + n, this.streamTime(pts));
      if (this.ahead.size > AHEAD_MAX) this.ahead.delete(this.ahead.keys().next().value!);
      this.release();
    }
  }

  /**
   * The stream time of the output frame in slot `slot`: the last decoded frame whose paced time,
   * rounded to the output's time base, is not past the slot (the frame fps sent for it). Without
   * decoded frames (a GPU decoder), the slot's own time.
   */
  private streamTime(slot: number | null): number | null {
    const out = this.tb.frame;
    if (slot === null || !out) return null;
    const paced = this.tb.paced ?? this.tb.source;
    if (!paced) return (slot * 1000 * out[0]) / out[1];
    let found = -1;
    for (let i = 0; i < this.decoded.length; i++) {
      const p = this.decoded[i]!.paced;
      if (p === null) continue;
      if (roundNear((p * paced[0] * out[1]) / (paced[1] * out[0])) <= slot) found = i;
      else break;
    }
    if (found < 0) return null;
    // Earlier frames cannot be the picture of a later slot.
    this.decoded.splice(0, found);
    return this.decoded[0]!.streamMs;
  }

  /** Delivers waiting frames from the first, while each has its stamp, or has waited long enough (up to `upTo`). */
  private release(upTo?: Waiting): void {
    let expired = upTo ? this.waiting.indexOf(upTo) : -1;
    while (this.waiting.length > 0) {
      const w = this.waiting[0]!;
      const known = this.ahead.has(w.index);
      const later = [...this.ahead.keys()].some((k) => k > w.index);
      if (!known && this.probed && expired < 0 && !later) return;
      this.waiting.shift();
      expired--;
      if (w.timer) this.clock.clearTimeout(w.timer);
      const streamMs = this.ahead.get(w.index) ?? null;
      for (const k of this.ahead.keys()) if (k <= w.index) this.ahead.delete(k);
      const ts = this.stamp(streamMs, w.arrival);
      if (this.mapping.epoch !== this.keyEpoch) {
        this.keyEpoch = this.mapping.epoch;
        this.key = {};
      }
      w.deliver(ts, this.steady.next(ts, streamMs, this.key));
    }
  }

  /** A frame's time: its stream time mapped to the wall clock, else its arrival; never before the last. */
  private stamp(streamMs: number | null, arrival: number): number {
    let ts = arrival;
    if (streamMs === null) this.counts.arrival++;
    else {
      this.mapping.see(streamMs, arrival);
      ts = streamMs + this.mapping.offset;
      this.counts.stamped++;
    }
    this.lastTs = Math.max(this.lastTs, ts);
    return this.lastTs;
  }
}
