import type { Logger } from 'pino';
import type { CameraConfig } from '../config/schema.js';
import type { Config } from '../config/schema.js';
import { Camera, type CameraStatus } from './camera.js';
import { systemClock, type Clock } from './clock.js';
import {
  defaultFfmpegPath,
  fluentSpawner,
  probeRtspTimeoutOption,
  type SpawnFfmpeg,
} from './ffmpeg-process.js';
import type { Frame } from './frames.js';
import { resolveUrlHost } from './resolve.js';

export interface IngestOptions {
  cameras: Record<string, CameraConfig>;
  ffmpeg: Config['ffmpeg'];
  /** Model input size: every frame comes out size × size. */
  size: number;
  secrets: readonly string[];
}

export interface IngestDeps {
  log: Logger;
  onFrame: (frame: Frame) => void;
  onStatus: (status: CameraStatus) => void;
  clock?: Clock;
  /** Replaces the real ffmpeg (tests). */
  spawn?: SpawnFfmpeg;
}

/** The ingest stage: one supervised ffmpeg per configured camera. */
export class Ingest {
  private cameras = new Map<string, Camera>();

  constructor(
    private readonly opts: IngestOptions,
    private readonly deps: IngestDeps,
  ) {}

  async start(): Promise<void> {
    const path = this.opts.ffmpeg.path ?? (await defaultFfmpegPath());
    const rtspTimeoutOption = await probeRtspTimeoutOption(path);
    const spawn = this.deps.spawn ?? fluentSpawner(path);
    const log = this.deps.log.child({ stage: 'ingest' });
    log.info({ ffmpeg: path, cameras: Object.keys(this.opts.cameras).length }, 'starting cameras');
    const f = this.opts.ffmpeg;
    for (const [name, c] of Object.entries(this.opts.cameras)) {
      const camera = new Camera(
        {
          name,
          url: c.url,
          enabled: c.enabled,
          fps: c.fps,
          size: this.opts.size,
          rtspTransport: c.rtsp_transport,
          inputArgs: c.input_args,
          hwaccelArgs: c.hwaccel_args,
          timeoutS: f.timeout_s,
          stallTimeoutMs: f.stall_timeout_s * 1000,
          backoff: { initialMs: f.backoff_initial_s * 1000, maxMs: f.backoff_max_s * 1000, factor: 2 },
          authFailuresBeforeOffline: f.auth_failures_before_offline,
          stableAfterMs: 30_000,
          stopGraceMs: f.stop_grace_s * 1000,
          rtspTimeoutOption,
          secrets: this.opts.secrets,
        },
        {
          spawn,
          clock: this.deps.clock ?? systemClock,
          random: Math.random,
          resolveHost: (url) => resolveUrlHost(url),
          log,
          onFrame: this.deps.onFrame,
          onStatus: this.deps.onStatus,
        },
      );
      this.cameras.set(name, camera);
      camera.start();
    }
  }

  /** Stops every camera at once; each escalates q → SIGTERM → SIGKILL on its own. */
  async stop(): Promise<void> {
    const cams = [...this.cameras.values()];
    this.cameras.clear();
    await Promise.all(cams.map((c) => c.stop()));
  }

  statuses(): CameraStatus[] {
    return [...this.cameras.values()].map((c) => c.snapshot());
  }

  /** ffmpeg process ids currently running (for operations and tests). */
  pids(): number[] {
    return [...this.cameras.values()].map((c) => c.pid).filter((p): p is number => p !== undefined);
  }
}
