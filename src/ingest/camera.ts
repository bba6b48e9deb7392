import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import type { Clock, Timer } from '../core/clock.js';
import { THUMB_SIZE, type Frame } from '../core/frame.js';
import { letterbox, type Letterbox } from '../core/geometry.js';
import type { CameraConfig, Config } from '../config/index.js';
import { redactUrl, scrub } from '../redact.js';
import { backoffDelay, type BackoffPolicy } from '../backoff.js';
import { buildFfmpegArgs, type FfmpegOptionNames } from './ffmpeg-args.js';
import type { FfmpegHandle, SpawnFfmpeg } from './ffmpeg-process.js';
import { FrameImages, type FrameImage } from './frame-images.js';
import { PnmError, PnmSplitter } from './pnm.js';
import { FrameStamps, SteadyTime } from './stamps.js';
import { classifyExit, lastErrorLine, parsePadLine, parseScaleLine, type FailureCause } from './stderr.js';
import { StderrRing } from '../stderr-ring.js';
import { needsRelay, type RelayFailure } from './rtsp-relay.js';

export type CameraState = 'connecting' | 'streaming' | 'backoff' | 'offline' | 'disabled' | 'stopped';

export interface CameraError {
  cause: FailureCause;
  message: string;
  at: number;
}

/** A camera's state and counters, as published and served. */
export interface CameraStatus {
  camera: string;
  state: CameraState;
  since: number;
  restarts: number;
  framesReceived: number;
  bytesReceived: number;
  lastFrameAt: number | null;
  lastError: CameraError | null;
  /** When the next connection attempt is due (backoff and offline only). */
  retryAt: number | null;
  source: { width: number; height: number } | null;
}

/** A camera's counts, which only go up: Ingest keeps them by name across the camera's restarts. */
export type ReceivedCounts = Pick<CameraStatus, 'restarts' | 'framesReceived' | 'bytesReceived'>;

export const receivedCounts = (): ReceivedCounts => ({ restarts: 0, framesReceived: 0, bytesReceived: 0 });

/** A stream that ran this long before failing restarts the backoff from its first step. */
export const STABLE_AFTER_MS = 30_000;
/** The stall timeout is at least this many of the camera's frame intervals (`ffmpeg.stall_timeout_s` or longer). */
export const STALL_FRAMES = 3;

/** One camera's settings: its config section, the ffmpeg section, and what ingest found out. */
export interface CameraSettings {
  name: string;
  camera: CameraConfig;
  ffmpeg: Config['ffmpeg'];
  /** Model input size: every frame comes out size × size. */
  size: number;
  /** The binary's names for options that were renamed. */
  names: FfmpegOptionNames;
  /** Values to scrub from stderr and errors besides URL passwords (`LoadedConfig.secrets`). */
  secrets: readonly string[];
  /** With the frame cache on, ffmpeg sends every frame's thumbnail, and pixels only when they changed. */
  cache: Pick<Config['cache'], 'enabled' | 'picture_threshold'>;
}

export interface CameraDeps {
  spawn: SpawnFfmpeg;
  clock: Clock;
  random: () => number;
  /** Turns the URL's host name into an address ffmpeg can use; rejects when it cannot be resolved. */
  resolveHost: (url: string) => Promise<string>;
  log: Logger;
  onFrame: (frame: Frame) => void;
  onStatus: (status: CameraStatus) => void;
  /** Where ffmpeg writes the stream for the camera's ring of recent video (clips), when it keeps one: called as it starts. */
  ringInput?: () => string | undefined;
  /** Where its counts go on (its earlier runs' totals); absent, they start at 0. */
  counts?: ReceivedCounts;
  /** Its steady clock, kept across camera objects of the same name (a restart for new settings). */
  steady?: SteadyTime;
  /**
   * Makes the camera's relay (`rtsp-relay.ts`), through which ffmpeg opens an RTSP camera whose URL
   * holds credentials or secrets, so that its command line holds none. Absent: ffmpeg gets the URL.
   */
  relay?: (log: Logger, onFailure: (failure: RelayFailure) => void) => LocalRelay;
}

/** What a camera needs of its relay (`RtspRelay`). */
export interface LocalRelay {
  start(): Promise<void>;
  /** The URL ffmpeg opens to reach the camera at `url`. */
  target(url: string): string;
  stop(): Promise<void>;
}

interface Run {
  handle: FfmpegHandle;
  splitter: PnmSplitter;
  ring: StderrRing;
  /** Each frame's time, from ffmpeg's probe lines. */
  stamps: FrameStamps;
  startedAt: number;
  streamingSince: number | null;
  lastFrameAt: number | null;
  /** Set when Argus itself ended the run (stall, unreadable output or stop), to classify the exit. */
  killedFor: 'stall' | 'output' | 'stop' | null;
  /** Why the output could not be read. */
  outputError: string | null;
  /** Why the relay could not serve this run's connection (it says more than ffmpeg can). */
  relayFailure: RelayFailure | null;
  exited: Promise<void>;
  markExited: () => void;
}

/**
 * Supervises one camera's ffmpeg: connecting → streaming; on exit or stall → backoff (or
 * offline after repeated authentication failures) → connecting again, with exponential backoff
 * and jitter; disabled; stopped. It never throws into its caller: every failure becomes a state.
 */
export class Camera {
  private status: Omit<CameraStatus, keyof ReceivedCounts>;
  private readonly counts: ReceivedCounts;
  private run: Run | null = null;
  private timer: Timer | null = null;
  private watchdog: Timer | null = null;
  private attempt = 0;
  private authFailures = 0;
  private seq = 0;
  /** Time for intervals across this camera's runs (ingest/stamps.ts). */
  private readonly steadyTime: SteadyTime;
  private geometry: Letterbox;
  private stopping = false;
  private relay: { relay: LocalRelay; started: Promise<void> } | null = null;
  private pendingSource: { srcW: number; srcH: number } | null = null;
  private readonly log: Logger;
  private readonly backoff: BackoffPolicy;

  constructor(
    readonly settings: CameraSettings,
    private readonly deps: CameraDeps,
  ) {
    this.log = deps.log.child({ camera: settings.name });
    const f = settings.ffmpeg;
    this.backoff = { initialMs: f.backoff_initial_s * 1000, maxMs: f.backoff_max_s * 1000, factor: 2 };
    this.geometry = letterbox(settings.size, settings.size, settings.size);
    this.counts = deps.counts ?? receivedCounts();
    this.steadyTime = deps.steady ?? new SteadyTime();
    this.status = {
      camera: settings.name,
      state: 'stopped',
      since: deps.clock.now(),
      lastFrameAt: null,
      lastError: null,
      retryAt: null,
      source: null,
    };
  }

  get name(): string {
    return this.settings.name;
  }

  snapshot(): CameraStatus {
    const { restarts, framesReceived, bytesReceived } = this.counts;
    return {
      ...this.status,
      restarts,
      framesReceived,
      bytesReceived,
      lastError: this.status.lastError && { ...this.status.lastError },
    };
  }

  get pid(): number | undefined {
    return this.run?.handle.pid;
  }

  /**
   * SIGKILLs its ffmpeg at once, through its own process handle (a hurried stop: its `stop()`
   * then sees the exit and settles in `stopped`). The process id killed; undefined when none runs.
   */
  killNow(): number | undefined {
    const run = this.run;
    if (!run) return undefined;
    run.handle.kill('SIGKILL');
    return run.handle.pid;
  }

  start(): void {
    this.stopping = false;
    if (!this.settings.camera.enabled) {
      this.setState('disabled');
      return;
    }
    this.connect();
  }

  private setState(state: CameraState, retryAt: number | null = null): void {
    const changed = this.status.state !== state;
    this.status.state = state;
    this.status.retryAt = retryAt;
    if (changed) this.status.since = this.deps.clock.now();
    this.deps.onStatus(this.snapshot());
  }

  private connect(): void {
    this.timer = null;
    this.setState('connecting');
    this.deps.resolveHost(this.settings.camera.url).then(
      (url) => {
        if (this.stopping || this.status.state !== 'connecting') return;
        this.viaRelay(url).then(
          (local) => {
            if (this.stopping || this.status.state !== 'connecting') return;
            this.spawn(local);
          },
          (err: unknown) => {
            if (this.stopping) return;
            this.fail('exited', `the camera relay could not start: ${errorMessage(err)}`, null);
          },
        );
      },
      (err: unknown) => {
        if (this.stopping) return;
        this.fail('unreachable', errorMessage(err), null);
      },
    );
  }

  /** The URL ffmpeg opens: the camera's, or its relay's when the camera's holds credentials. */
  private async viaRelay(url: string): Promise<string> {
    const make = this.deps.relay;
    if (!make || !needsRelay(url, this.settings.secrets)) return url;
    if (!this.relay) {
      const relay = make(this.log, (failure) => {
        if (this.run) this.run.relayFailure = failure;
      });
      this.relay = { relay, started: relay.start() };
    }
    const { relay, started } = this.relay;
    try {
      await started;
    } catch (err) {
      this.relay = null;
      throw err;
    }
    return relay.target(url);
  }

  private spawn(url: string): void {
    const s = this.settings;
    const args = buildFfmpegArgs(s.camera, s.ffmpeg, {
      url,
      size: s.size,
      names: s.names,
      cache: s.cache,
      ring: this.deps.ringInput?.(),
    });
    const stamps = new FrameStamps(this.deps.clock, this.steadyTime);
    const ring = new StderrRing(100, s.secrets, (line) => stamps.line(line));
    const images = new FrameImages(s.size, s.cache.enabled);
    let markExited!: () => void;
    const exited = new Promise<void>((r) => (markExited = r));
    const run: Run = {
      handle: undefined as unknown as FfmpegHandle,
      splitter: new PnmSplitter(Math.max(s.size, THUMB_SIZE) ** 2 * 3, (image) => {
        const frame = images.take(image);
        if (frame) this.onFrameData(run, frame);
      }),
      ring,
      stamps,
      startedAt: this.deps.clock.now(),
      streamingSince: null,
      lastFrameAt: null,
      killedFor: null,
      outputError: null,
      relayFailure: null,
      exited,
      markExited,
    };
    this.run = run;
    this.pendingSource = null;
    run.handle = this.deps.spawn(args, {
      stdout: (chunk) => {
        if (this.run !== run || run.killedFor === 'output') return;
        this.counts.bytesReceived += chunk.length;
        try {
          run.splitter.push(chunk);
        } catch (err) {
          if (!(err instanceof PnmError)) throw err;
          this.unreadable(run, err.message);
        }
      },
      stderr: (text) => {
        for (const line of run.ring.push(text)) this.onStderrLine(run, line);
      },
      exit: (code, signal, error) => this.onExit(run, code, signal, error),
    });
    this.log.debug(
      {
        pid: run.handle.pid,
        url: redactUrl(this.settings.camera.url),
        relay: url !== this.settings.camera.url,
      },
      'ffmpeg started',
    );
    this.armWatchdog(run);
  }

  private onStderrLine(run: Run, line: string): void {
    if (this.run !== run) return;
    const scale = parseScaleLine(line);
    if (scale) {
      this.pendingSource = scale;
      return;
    }
    const pad = parsePadLine(line);
    if (pad && this.pendingSource) {
      const size = this.settings.size;
      this.geometry = {
        srcW: this.pendingSource.srcW,
        srcH: this.pendingSource.srcH,
        dstW: size,
        dstH: size,
        scale: Math.min(size / this.pendingSource.srcW, size / this.pendingSource.srcH),
        ...pad,
      };
      const prev = this.status.source;
      this.status.source = { width: this.geometry.srcW, height: this.geometry.srcH };
      if (prev && (prev.width !== this.geometry.srcW || prev.height !== this.geometry.srcH)) {
        this.log.info({ from: prev, to: this.status.source }, 'stream resolution changed');
        this.deps.onStatus(this.snapshot());
      }
    }
  }

  /** ffmpeg's output is not what its command line asks for: this run ends, and another starts. */
  private unreadable(run: Run, why: string): void {
    if (run.killedFor) return;
    run.killedFor = 'output';
    run.outputError = why;
    this.log.debug({ why }, "ffmpeg's output cannot be read; terminating ffmpeg");
    void this.terminate(run, false);
  }

  private onFrameData(run: Run, image: FrameImage): void {
    const now = this.deps.clock.now();
    this.counts.framesReceived++;
    this.status.lastFrameAt = now;
    if (run.streamingSince === null) {
      run.streamingSince = now;
      this.authFailures = 0;
      this.log.info({ source: this.status.source }, 'streaming');
      this.setState('streaming');
    }
    run.lastFrameAt = now;
    const geometry = this.geometry;
    run.stamps.frame(image.index, now, (ts, steady) => {
      const frame: Frame = {
        camera: this.settings.name,
        seq: ++this.seq,
        ts,
        steady,
        data: image.data,
        geometry,
      };
      if (image.thumb) frame.thumb = image.thumb;
      this.deps.onFrame(frame);
    });
  }

  /**
   * Restarts ffmpeg when no frame arrived for the stall timeout. One timer per run, not one per
   * frame: when it fires after recent frames it simply waits out the rest of the timeout.
   */
  private get stallTimeoutMs(): number {
    // Never shorter than three frames: a camera at 0.1 fps is quiet 10 s between frames.
    return Math.max(
      this.settings.ffmpeg.stall_timeout_s * 1000,
      STALL_FRAMES * (1000 / this.settings.camera.fps),
    );
  }

  private armWatchdog(run: Run, delay = this.stallTimeoutMs): void {
    this.watchdog = this.deps.clock.setTimeout(() => {
      this.watchdog = null;
      if (this.run !== run || this.stopping) return;
      const quiet = this.deps.clock.now() - (run.lastFrameAt ?? run.startedAt);
      if (quiet < this.stallTimeoutMs) return this.armWatchdog(run, this.stallTimeoutMs - quiet);
      run.killedFor = 'stall';
      this.log.debug('no frame within the stall timeout; terminating ffmpeg');
      void this.terminate(run, false);
    }, delay);
  }

  private onExit(run: Run, code: number | null, signal: NodeJS.Signals | null, error?: Error): void {
    run.markExited();
    run.stamps.close();
    if (this.run !== run) return;
    this.run = null;
    if (this.watchdog) {
      this.deps.clock.clearTimeout(this.watchdog);
      this.watchdog = null;
    }
    if (this.stopping || run.killedFor === 'stop') return;
    const lines = run.ring.get();
    let cause: FailureCause;
    let message: string;
    if (run.killedFor === 'output') {
      cause = 'exited';
      message = `ffmpeg's output could not be read: ${run.outputError}`;
    } else if (run.relayFailure) {
      ({ cause, message } = run.relayFailure);
    } else if (run.killedFor === 'stall') {
      cause = 'stall';
      const secs = Math.round(this.stallTimeoutMs / 1000);
      message =
        run.streamingSince === null ? `no frame within ${secs} s of starting` : `no frame for ${secs} s`;
    } else if (error) {
      cause = 'exited';
      message = `ffmpeg could not start: ${error.message}`;
    } else {
      cause = classifyExit(lines, code, signal, run.streamingSince !== null);
      const last = lastErrorLine(lines);
      if (cause === 'unreachable' && last?.includes('Invalid data found'))
        message = `the camera accepted the connection but sent no answer it could read (timeout ${this.settings.ffmpeg.timeout_s} s)`;
      else if (code === 0 && cause === 'unreachable')
        message = 'stream ended: the camera closed the connection';
      else message = last ?? (signal ? `ffmpeg killed by ${signal}` : `ffmpeg exited with code ${code}`);
    }
    this.fail(cause, message, run, { code, signal, stderr: lines.slice(-15) });
  }

  private fail(
    cause: FailureCause,
    message: string,
    run: Run | null,
    detail: Record<string, unknown> = {},
  ): void {
    const now = this.deps.clock.now();
    if (run?.streamingSince != null && now - run.streamingSince >= STABLE_AFTER_MS) this.attempt = 0;
    this.authFailures = cause === 'auth' ? this.authFailures + 1 : 0;
    this.counts.restarts++;
    // Published and served: scrubbed here, whether ffmpeg, the resolver or the spawn wrote it.
    const shown = scrub(message, this.settings.secrets);
    this.status.lastError = { cause, message: shown, at: now };
    const offline = this.authFailures >= this.settings.ffmpeg.auth_failures_before_offline;
    const delay = offline ? this.backoff.maxMs : backoffDelay(this.attempt++, this.backoff, this.deps.random);
    this.log.warn({ cause, error: shown, retryInMs: delay, ...detail }, `camera failed (${cause}): ${shown}`);
    this.setState(offline ? 'offline' : 'backoff', now + delay);
    this.timer = this.deps.clock.setTimeout(() => this.connect(), delay);
  }

  /** Ends a run: 'q' (when `polite`), then SIGTERM, then SIGKILL, each after the grace period. */
  private async terminate(run: Run, polite: boolean): Promise<void> {
    const grace = this.settings.ffmpeg.stop_grace_s * 1000;
    const waitExit = (ms: number): Promise<boolean> =>
      new Promise((resolve) => {
        const t = this.deps.clock.setTimeout(() => resolve(false), ms);
        void run.exited.then(() => {
          this.deps.clock.clearTimeout(t);
          resolve(true);
        });
      });
    if (polite) {
      run.handle.quit();
      if (await waitExit(grace)) return;
    }
    run.handle.kill('SIGTERM');
    if (await waitExit(grace)) return;
    this.log.warn({ pid: run.handle.pid }, 'ffmpeg ignored SIGTERM; killing it');
    run.handle.kill('SIGKILL');
    await run.exited;
  }

  /** Stops ffmpeg (asking it to quit, then SIGTERM, then SIGKILL) and settles in `stopped`. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    if (this.watchdog) this.deps.clock.clearTimeout(this.watchdog);
    this.timer = null;
    this.watchdog = null;
    const run = this.run;
    if (run) {
      run.killedFor = 'stop';
      await this.terminate(run, true);
      this.run = null;
    }
    const relay = this.relay;
    this.relay = null;
    if (relay) await relay.started.then(() => relay.relay.stop()).catch(() => undefined);
    this.setState('stopped');
  }
}
