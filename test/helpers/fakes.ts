import { pino, type Logger } from 'pino';
import type { Clock, Timer } from '../../src/core/clock.js';
import type { Frame } from '../../src/core/frame.js';
import { letterbox } from '../../src/core/geometry.js';
import type { FfmpegArgs } from '../../src/ingest/ffmpeg-args.js';
import type { FfmpegHandle, FfmpegHandlers, SpawnFfmpeg } from '../../src/ingest/ffmpeg-process.js';
import type { ObjectEvent } from '../../src/track/index.js';

/** A clock that moves only when told to. */
export class FakeClock implements Clock {
  private t = 1_000_000;
  private nextId = 1;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private setWaiters = new Set<() => void>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    for (const wake of this.setWaiters) wake();
    return id;
  }

  clearTimeout(timer: Timer): void {
    this.timers.delete(timer as number);
  }

  /** Runs every timer due within `ms`, in order, letting promises settle between them. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
      await flush();
    }
    this.t = end;
    await flush();
  }

  get pending(): number {
    return this.timers.size;
  }

  /**
   * Resolves once a timer is pending that is due in exactly `ms` (the clock unmoved), as code
   * running on real I/O (a socket, a child process) sets it; rejects after `timeoutMs` of real
   * time. A signal that the code waits on the clock now, not on I/O.
   */
  dueIn(ms: number, timeoutMs = 10_000): Promise<void> {
    const due = (): boolean => [...this.timers.values()].some((e) => e.at - this.t === ms);
    if (due()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const wake = (): void => {
        if (!due()) return;
        done();
        resolve();
      };
      const giveUp = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for a timer due in ${ms} ms`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(giveUp);
        this.setWaiters.delete(wake);
      };
      this.setWaiters.add(wake);
    });
  }

  /** Waits until a timer is due in exactly `ms` (dueIn), then moves the clock that far. */
  async advanceWhenDue(ms: number, timeoutMs?: number): Promise<void> {
    await this.dueIn(ms, timeoutMs);
    await this.advance(ms);
  }
}

/** Lets pending promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}

/**
 * Frames as ingest numbers them, 1, 2, 3… per camera, each timed by `clock`: `size`×`size` RGB24
 * pictures (letterboxed from a source of that size) with every byte `fill(seq)`, unless the
 * caller gives a fill.
 */
export class FrameSequence {
  private readonly seqs = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly size: number,
    private readonly fill: (seq: number) => number,
  ) {}

  /** The next frame from `camera`; `fill`, when given, sets every pixel byte instead. */
  next(camera: string, fill?: number): Frame {
    const seq = this.sent(camera) + 1;
    this.seqs.set(camera, seq);
    return {
      camera,
      seq,
      ts: this.clock.now(),
      data: Buffer.alloc(this.size * this.size * 3, fill ?? this.fill(seq)),
      geometry: letterbox(this.size, this.size, this.size),
    };
  }

  /** How many frames `camera` has sent so far. */
  sent(camera: string): number {
    return this.seqs.get(camera) ?? 0;
  }
}

export interface FakeProcess extends FfmpegHandle {
  args: FfmpegArgs;
  signals: string[];
  handlers: FfmpegHandlers;
  exited: boolean;
  exit(code: number | null, signal?: NodeJS.Signals | null): void;
}

/**
 * A scripted ffmpeg: tests feed its stdout and stderr and end it. `obeys` says which requests
 * make it exit by itself ('q' = quits when asked; 'SIGTERM'; 'SIGKILL' always works).
 */
export class FakeFfmpeg {
  readonly procs: FakeProcess[] = [];
  obeys: Set<'q' | 'SIGTERM'> = new Set(['q', 'SIGTERM']);
  private pid = 1000;

  spawn: SpawnFfmpeg = (args, handlers) => {
    const fake: FakeProcess = {
      args,
      handlers,
      signals: [],
      exited: false,
      pid: this.pid++,
      quit: () => {
        fake.signals.push('q');
        if (this.obeys.has('q')) setImmediate(() => fake.exit(0));
      },
      kill: (sig) => {
        fake.signals.push(sig);
        if (sig === 'SIGKILL' || (sig === 'SIGTERM' && this.obeys.has('SIGTERM')))
          setImmediate(() => fake.exit(null, sig));
      },
      exit: (code, signal = null) => {
        if (fake.exited) return;
        fake.exited = true;
        handlers.exit(code, signal);
      },
    };
    this.procs.push(fake);
    return fake;
  };

  get last(): FakeProcess {
    const p = this.procs.at(-1);
    if (!p) throw new Error('ffmpeg was never spawned');
    return p;
  }
}

export const silentLog = pino({ level: 'silent' });

/** A logger whose lines are kept to be looked at. */
export function recordingLog(): { log: Logger; lines: { msg: string; err?: string; file?: string }[] } {
  const lines: { msg: string; err?: string; file?: string }[] = [];
  const log = pino(
    { level: 'info' },
    { write: (s: string) => void lines.push(JSON.parse(s) as { msg: string }) },
  );
  return { log, lines };
}

/** A tracker's object event: a person in no zone, not moving, with `fields` over it. */
export const objectEvent = (type: ObjectEvent['type'], fields: Partial<ObjectEvent> = {}): ObjectEvent => ({
  type,
  id: 'o1',
  camera: 'gate',
  label: 'person',
  score: 0,
  box: [0, 0, 1, 1],
  startTs: 0,
  endTs: null,
  zones: [],
  currentZones: [],
  enteredZones: [],
  loiteringZones: [],
  zoneTimes: {},
  speed: null,
  stationary: false,
  ...fields,
});
