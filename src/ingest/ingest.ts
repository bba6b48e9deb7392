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
    private opts: IngestOptions,
    private readonly deps: IngestDeps,
  ) {}

  private spawn: SpawnFfmpeg | undefined;
  private rtspTimeoutOption: 'stimeout' | 'timeout' = 'timeout';

  async start(): Promise<void> {
    const path = this.opts.ffmpeg.path ?? (await defaultFfmpegPath());
    this.rtspTimeoutOption = await probeRtspTimeoutOption(path);
    this.spawn = this.deps.spawn ?? fluentSpawner(path);
    this.deps.log
      .child({ stage: 'ingest' })
      .info({ ffmpeg: path, cameras: Object.keys(this.opts.cameras).length }, 'starting cameras');
    for (const [name, c] of Object.entries(this.opts.cameras)) this.startCamera(name, c);
  }

  private startCamera(name: string, c: CameraConfig): void {
    const f = this.opts.ffmpeg;
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
        rtspTimeoutOption: this.rtspTimeoutOption,
        secrets: this.opts.secrets,
      },
      {
        spawn: this.spawn!,
        clock: this.deps.clock ?? systemClock,
        random: Math.random,
        resolveHost: (url) => resolveUrlHost(url),
        log: this.deps.log.child({ stage: 'ingest' }),
        onFrame: this.deps.onFrame,
        onStatus: this.deps.onStatus,
      },
    );
    this.cameras.set(name, camera);
    camera.start();
  }

  /**
   * Brings the running cameras in line with a new camera section: new ones start, removed ones
   * stop, changed ones restart, and unchanged ones are not touched (they keep streaming).
   */
  async reconcile(
    cameras: Record<string, CameraConfig>,
    secrets: readonly string[],
  ): Promise<{ added: string[]; removed: string[]; restarted: string[]; unchanged: string[] }> {
    const before = this.opts.cameras;
    this.opts = { ...this.opts, cameras, secrets };
    const same = (a: CameraConfig, b: CameraConfig): boolean => JSON.stringify(a) === JSON.stringify(b);
    const removed = Object.keys(before).filter((n) => !(n in cameras));
    const restarted = Object.keys(cameras).filter((n) => n in before && !same(before[n]!, cameras[n]!));
    const added = Object.keys(cameras).filter((n) => !(n in before));
    const unchanged = Object.keys(cameras).filter((n) => n in before && same(before[n]!, cameras[n]!));
    await Promise.all(
      [...removed, ...restarted].map(async (n) => {
        const cam = this.cameras.get(n);
        this.cameras.delete(n);
        await cam?.stop();
      }),
    );
    for (const n of [...restarted, ...added]) this.startCamera(n, cameras[n]!);
    return { added, removed, restarted, unchanged };
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
