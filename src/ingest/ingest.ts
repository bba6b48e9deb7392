import { lstat, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { errorMessage } from '../core/errors.js';
import { systemClock, type Clock } from '../core/clock.js';
import type { Frame } from '../core/frame.js';
import type { CameraChanges, CameraConfig, Config } from '../config/index.js';
import { Tallies } from '../core/tallies.js';
import { scrub } from '../redact.js';
import { Camera, receivedCounts, type CameraStatus, type ReceivedCounts } from './camera.js';
import { SteadyTime } from './stamps.js';
import type { FfmpegOptionNames } from './ffmpeg-args.js';
import {
  defaultFfmpegPath,
  fluentSpawner,
  probeCapabilities,
  probeOptionNames,
  type SpawnFfmpeg,
} from './ffmpeg-process.js';
import { decodableCameras, deviceExists, type FfmpegCapabilities } from './hwaccel.js';
import { resolveUrlHost } from './resolve.js';
import { RtspRelay } from './rtsp-relay.js';
import { Ring, ringKey, type FootageRanges, type RingStats } from '../record/index.js';

export interface IngestConfig {
  cameras: Record<string, CameraConfig>;
  ffmpeg: Config['ffmpeg'];
  /** The input size of the camera's model: its frames come out size × size. */
  size: (camera: CameraConfig) => number;
  secrets: readonly string[];
  /** With the frame cache on, ffmpeg sends every frame's thumbnail, and pixels only when they changed. */
  cache: Config['cache'];
  /** Event clips: which cameras keep a ring of recent video, where, how much (absent: none). */
  clips?: Config['events']['clips'];
  /**
   * How late a frame may be analysed (`scheduler.max_frame_age_ms`), and how many frames confirm an
   * object (`events.min_frames`): an event's `new` can come this much after its object was first
   * seen, and the ring keeps its pre-roll that much longer.
   */
  scheduler?: Pick<Config['scheduler'], 'max_frame_age_ms'>;
  events?: Pick<Config['events'], 'min_frames'>;
  /**
   * The state directory, whose `ring/` is this Argus' alone (`StateDirectory=`): the recordings
   * there that no camera and no event needs are removed at start. A `ring_dir` elsewhere (a
   * tmpfs other configs may share) is only told of.
   */
  state_dir?: string;
  /**
   * Every camera of the config, run here or not (with `fleet:`, `cameras` are those the fleet
   * gives this box, none at start): a left recording of one that records is never touched.
   */
  configured?: Record<string, CameraConfig>;
}

/** Whether `path` is a directory (not a link to one). */
const isDir = (path: string): Promise<boolean> =>
  lstat(path).then(
    (st) => st.isDirectory(),
    () => false,
  );

/** Whether a camera keeps a ring of recent video for clips. */
export function keepsClips(camera: CameraConfig, clips: Config['events']['clips']): boolean {
  return camera.enabled && (camera.clips ?? clips.enabled) && !camera.url.toLowerCase().startsWith('lavfi:');
}

/** How long a camera with `record: always` keeps its whole recording (ms); undefined for `record: events`. */
export function alwaysMs(camera: CameraConfig, clips: Config['events']['clips']): number | undefined {
  return camera.record === 'always' ? (camera.record_days ?? clips.record_days) * 86_400_000 : undefined;
}

/** Whether a camera's ffmpeg command line holds a secret even with the relay (see `Ingest.warnArgv`). */
export function argvHoldsSecret(camera: CameraConfig, secrets: readonly string[]): boolean {
  const args = [...camera.input_args, ...camera.hwaccel_args];
  if (args.some((a) => scrub(a, secrets) !== a)) return true;
  const scheme = camera.url.slice(0, camera.url.indexOf(':')).toLowerCase();
  if (scheme === 'rtsp' || scheme === 'rtsps' || scheme === 'lavfi' || scheme === 'file') return false;
  return scrub(camera.url, secrets) !== camera.url;
}

/** The ring's segments are cut at the first key frame after this long. */
const SEGMENT_MS = 2000;
/** How often retired rings (cameras that no longer record) free the footage events let go. */
const RETIRED_PRUNE_MS = 60_000;

export interface IngestDeps {
  log: Logger;
  onFrame: (frame: Frame) => void;
  /** A camera's status changed (state, error, source geometry). */
  onStatus: (status: CameraStatus) => void;
  clock?: Clock;
  /** Replaces the real ffmpeg (tests). */
  spawn?: SpawnFfmpeg;
  /** Whether a device node is there (tests); default: the file system's answer. */
  exists?: (path: string) => boolean;
  /** The events' footage each camera's recording keeps (events/clips); absent: the recent margin only. */
  footage?: FootageRanges;
}

/**
 * The ingest stage: one supervised ffmpeg per configured camera, and the one owner of every
 * camera's status (state, restarts, last error, source size).
 */
export class Ingest {
  private cameras = new Map<string, Camera>();
  /** Each camera's counts, kept by name across its restarts (a new fps, enabled off and on, a reload). */
  private readonly counts = new Tallies<ReceivedCounts>(receivedCounts);
  /** Each camera's steady clock, kept when it restarts for new settings: its tracker goes on. */
  private readonly steadyTimes = new Tallies<SteadyTime>(() => new SteadyTime());
  private rings = new Map<string, Ring>();
  /** Rings of cameras that no longer record, kept while events need their footage. */
  private retired = new Map<string, Ring>();
  private pruneTimer: NodeJS.Timeout | undefined;
  /** The rings were set once: the recordings an earlier run left were looked for. */
  private ringsSet = false;
  private ffmpegPath = '';
  private spawn: SpawnFfmpeg | undefined;
  private names: FfmpegOptionNames = { rtspTimeout: 'timeout', fpsMode: 'fps_mode' };
  private caps: FfmpegCapabilities = { hwaccels: new Set(), filters: new Set() };
  private readonly log: Logger;

  constructor(
    private cfg: IngestConfig,
    private readonly deps: IngestDeps,
  ) {
    this.log = deps.log.child({ stage: 'ingest' });
  }

  async start(): Promise<void> {
    const path = this.cfg.ffmpeg.path ?? (await defaultFfmpegPath());
    this.ffmpegPath = path;
    this.names = await probeOptionNames(path);
    this.spawn = this.deps.spawn ?? fluentSpawner(path);
    this.caps = await probeCapabilities(path);
    this.warnSoftware(Object.entries(this.cfg.cameras));
    this.warnArgv(Object.entries(this.cfg.cameras));
    this.log.info({ ffmpeg: path, cameras: Object.keys(this.cfg.cameras).length }, 'starting cameras');
    await this.setRings(this.cfg.cameras);
    for (const [name, camera] of Object.entries(this.cfg.cameras)) this.startCamera(name, camera);
  }

  /** The ffmpeg binary the cameras run (clips are made with it too). */
  get ffmpeg(): string {
    return this.ffmpegPath;
  }

  /**
   * A camera's ring of recent video, when it keeps clips and its ring runs, or the footage a
   * camera that no longer records kept for its events.
   */
  ring(camera: string): Ring | undefined {
    return this.rings.get(camera) ?? this.retired.get(camera);
  }

  /** How long after its object was first seen a camera's event may start (see IngestConfig). */
  private lateMs(camera: CameraConfig): number {
    const age = this.cfg.scheduler?.max_frame_age_ms ?? 0;
    const confirm = ((this.cfg.events?.min_frames ?? 1) / camera.fps) * 1000;
    return Math.ceil(age + confirm);
  }

  /**
   * Starts the rings of cameras that keep clips and have none, and retires those of cameras that
   * no longer do (removed, or their clips turned off): a retired ring keeps the footage events
   * still need, and goes when they let it go (`pruneRetired`). `max_gb` is shared again. The
   * first time, the recordings an earlier run left of cameras that do not record now are retired
   * or removed (`adoptLeftRecordings`).
   */
  private async setRings(cameras: Record<string, CameraConfig>): Promise<void> {
    const clips = this.cfg.clips;
    for (const [name, ring] of this.rings)
      if (!clips || !Object.hasOwn(cameras, name) || !keepsClips(cameras[name]!, clips)) {
        this.rings.delete(name);
        this.retire(name, ring);
      }
    this.pruneTimer ??= setInterval(() => void this.pruneRetired(), RETIRED_PRUNE_MS).unref();
    if (!clips) return;
    const first = !this.ringsSet;
    this.ringsSet = true;
    if (first) await this.adoptLeftRecordings(cameras, clips);
    for (const [name, camera] of Object.entries(cameras)) {
      this.rings.get(name)?.setAlways(alwaysMs(camera, clips));
      if (this.rings.has(name) || !keepsClips(camera, clips)) continue;
      // Recording again: the new ring takes over what the retired one kept (it lists the files).
      const old = this.retired.get(name);
      this.retired.delete(name);
      await old?.handOver();
      const ring = this.newRing(name, camera, cameras, clips);
      await ring.start();
      this.rings.set(name, ring);
    }
    this.shareOut();
    if (
      Object.entries(cameras).some(
        ([, c]) => c.enabled && c.clips === undefined && clips.enabled && !keepsClips(c, clips),
      )
    )
      this.log.info('lavfi: cameras send no encoded stream: they have no clips');
  }

  /**
   * At the first start of the rings: the recordings an earlier run left of cameras that do not
   * record now — in the config at all: with `fleet:`, a camera of the config that records may be
   * given to this box at any moment, and its recording is not touched. Only in the state
   * directory's `ring/` (this Argus' alone; a `ring_dir` elsewhere, a tmpfs another config may
   * share, is only told of, its directories named in one warning): those of cameras whose events
   * the history holds (or whose footage is known) are retired (listed, serving the events' clips
   * and snapshots, freed through the rescue as they age out, after start-up: `retire`), and the
   * other camera directories no camera records in and no event needs are removed.
   */
  private async adoptLeftRecordings(
    cameras: Record<string, CameraConfig>,
    clips: Config['events']['clips'],
  ): Promise<void> {
    const root = clips.ring_dir ?? 'ring';
    const configured = { ...this.cfg.configured, ...cameras };
    const recording = new Set(
      Object.entries(configured)
        .filter(([, c]) => keepsClips(c, clips))
        .map(([n]) => ringKey(n)),
    );
    const names = await readdir(root).catch(() => [] as string[]);
    const left: string[] = [];
    for (const n of names)
      if (/^[0-9a-f]{16}$/.test(n) && !recording.has(n) && (await isDir(join(root, n)))) left.push(n);
    if (!left.length) return;
    const own = this.cfg.state_dir !== undefined && resolve(root) === resolve(this.cfg.state_dir, 'ring');
    if (!own) {
      this.log.warn(
        { ring_dir: root, directories: left },
        'ring_dir holds recordings of cameras that do not record here (another config may own them): they are left as they are; remove them to free the space',
      );
      return;
    }
    // The cameras the history holds events of, and those whose events' footage is known.
    const footage = this.deps.footage;
    const held = new Set(footage?.cameras?.() ?? []);
    for (const n of Object.keys(configured)) if (footage && [...footage.of(n)].length > 0) held.add(n);
    const adopted = new Set<string>();
    for (const name of held) {
      const key = ringKey(name);
      if (!left.includes(key) || this.retired.has(name) || this.rings.has(name)) continue;
      const ring = this.newRing(name, configured[name], cameras, clips);
      await ring.start();
      this.retire(name, ring);
      adopted.add(key);
    }
    const unneeded = left.filter((n) => !adopted.has(n));
    for (const n of unneeded)
      await rm(join(root, n), { recursive: true, force: true }).catch(() => undefined);
    if (unneeded.length)
      this.log.info(
        { directories: unneeded.length },
        'recordings of cameras that do not record and that no event needs were removed',
      );
  }

  /**
   * Retires a camera's ring (`Ring.retire`), kept while its events need footage of it: listed as
   * retired at once (its events' snapshots and clips are drawn from it meanwhile), its pruning
   * — which may wait for rescues' decodes — run in the background, not by the reload or start.
   */
  private retire(name: string, ring: Ring): void {
    this.retired.set(name, ring);
    void ring.retire().then(
      (empty) => {
        if (this.retired.get(name) !== ring) return; // recording again: handed over
        if (empty) {
          this.retired.delete(name);
          this.shareOut();
          return;
        }
        this.log.info(
          { camera: name, segments: ring.list().length },
          'the camera no longer records: its footage that events still need is kept until they age out',
        );
      },
      (err: unknown) =>
        this.log.warn({ camera: name, err: errorMessage(err) }, "a camera's recording could not be retired"),
    );
  }

  /** A camera's ring, not started. */
  private newRing(
    name: string,
    camera: CameraConfig | undefined,
    cameras: Record<string, CameraConfig>,
    clips: Config['events']['clips'],
  ): Ring {
    return new Ring(
      name,
      {
        dir: join(clips.ring_dir ?? 'ring', ringKey(name)),
        keepMs: (clips.pre_capture_s + 2) * 1000 + 2 * SEGMENT_MS + (camera ? this.lateMs(camera) : 0),
        maxBytes: this.share(cameras),
        segmentMs: SEGMENT_MS,
        ...(clips.retain_days > 0 ? { retainMs: clips.retain_days * 86_400_000 } : {}),
        ...(camera?.record === 'always' ? { alwaysMs: alwaysMs(camera, clips) } : {}),
      },
      {
        clock: this.deps.clock ?? systemClock,
        log: this.log,
        ranges: () => this.deps.footage?.of(name) ?? [],
        rescue: (segments, final) => this.deps.footage?.rescue?.(name, segments, final),
      },
    );
  }

  /**
   * Each ring's bound: `ring_max_mb`, and `max_gb` shared equally among the rings on disk (those
   * of the cameras that record, and retired ones while they keep footage).
   */
  private share(cameras: Record<string, CameraConfig> = this.cfg.cameras): number {
    const clips = this.cfg.clips;
    if (!clips) return Infinity;
    const recording = Object.values(cameras).filter((c) => keepsClips(c, clips)).length;
    const rings = recording + this.retired.size;
    const share = clips.max_gb > 0 ? (clips.max_gb * 1073741824) / Math.max(1, rings) : Infinity;
    return Math.min(clips.ring_max_mb * 1024 * 1024, share);
  }

  /** Gives every ring its bound again (a camera added or removed changes `max_gb`'s share). */
  private shareOut(): void {
    const bytes = this.share();
    for (const ring of [...this.rings.values(), ...this.retired.values()]) ring.setMaxBytes(bytes);
  }

  /**
   * Retired rings free the footage no event needs any more (events aged out, deleted); one that
   * holds nothing goes, its directory with it, and the others' share of `max_gb` grows.
   */
  async pruneRetired(): Promise<void> {
    let gone = false;
    for (const [name, ring] of [...this.retired])
      if ((await ring.prune()) && this.retired.get(name) === ring) {
        this.retired.delete(name);
        gone = true;
      }
    if (gone) this.shareOut();
  }

  private startCamera(name: string, config: CameraConfig): void {
    const camera = new Camera(
      {
        name,
        camera: this.decodable(name, config),
        ffmpeg: this.cfg.ffmpeg,
        size: this.cfg.size(config),
        names: this.names,
        secrets: this.cfg.secrets,
        cache: this.cfg.cache,
      },
      {
        spawn: this.spawn!,
        clock: this.deps.clock ?? systemClock,
        random: Math.random,
        resolveHost: (url) => resolveUrlHost(url),
        log: this.log,
        onFrame: this.deps.onFrame,
        onStatus: this.deps.onStatus,
        ringInput: () => this.rings.get(name)?.input(),
        counts: this.counts.of(name),
        steady: this.steadyTimes.of(name),
        relay: (log, onFailure) =>
          new RtspRelay(this.cfg.secrets, {
            log,
            connectTimeoutMs: this.cfg.ffmpeg.timeout_s * 1000,
            onFailure,
          }),
      },
    );
    this.cameras.set(name, camera);
    camera.start();
  }

  /** One warning per GPU decoding preset that cannot run here, naming its cameras. */
  private warnSoftware(cameras: [string, CameraConfig][]): void {
    for (const f of decodableCameras(cameras, this.caps, this.deps.exists ?? deviceExists).fallbacks)
      this.log.warn({ cameras: f.cameras, hwaccel: f.hwaccel, reason: f.reason }, f.message);
  }

  /**
   * One warning naming the cameras whose secrets ffmpeg's command line still holds: credentials
   * in a URL of another scheme than RTSP (the relay speaks RTSP only), secrets in `input_args`
   * or `hwaccel_args`. Any local user can read a command line where /proc is not mounted with
   * `hidepid` (docs/config.md, "Secrets").
   */
  private warnArgv(cameras: [string, CameraConfig][]): void {
    const exposed = cameras
      .filter(([, c]) => c.enabled && argvHoldsSecret(c, this.cfg.secrets))
      .map(([n]) => n);
    if (exposed.length > 0)
      this.log.warn(
        { cameras: exposed },
        "these cameras' secrets are in ffmpeg's command line, readable by local users unless /proc has hidepid (docs/config.md, Secrets)",
      );
  }

  /** The camera as its ffmpeg runs it: decoding in software when its `hwaccel` cannot run here. */
  private decodable(name: string, config: CameraConfig): CameraConfig {
    return decodableCameras([[name, config]], this.caps, this.deps.exists ?? deviceExists).cameras[0]![1];
  }

  /**
   * Brings the running cameras in line with a reloaded camera section: new ones start, removed
   * ones stop, changed ones restart, and unchanged and moved ones (to another model of the same
   * input size) are not touched: they keep streaming.
   */
  async setCameras(
    cameras: Record<string, CameraConfig>,
    changes: CameraChanges,
    secrets: readonly string[],
  ): Promise<void> {
    this.cfg = { ...this.cfg, cameras, secrets };
    this.warnSoftware([...changes.changed, ...changes.added].map((n) => [n, cameras[n]!]));
    this.warnArgv([...changes.changed, ...changes.added].map((n) => [n, cameras[n]!]));
    await Promise.all(
      [...changes.removed, ...changes.changed].map(async (n) => {
        const cam = this.cameras.get(n);
        this.cameras.delete(n);
        await cam?.stop();
      }),
    );
    await this.setRings(cameras);
    for (const n of [...changes.changed, ...changes.added]) this.startCamera(n, cameras[n]!);
  }

  /** Stops every camera at once; each escalates q → SIGTERM → SIGKILL on its own. */
  async stop(): Promise<void> {
    const cams = [...this.cameras.values()];
    this.cameras.clear();
    await Promise.all(cams.map((c) => c.stop()));
    clearInterval(this.pruneTimer);
    this.pruneTimer = undefined;
    // The rings' files stay: clips in the making still read them, and the next start lists them
    // (those waiting for a rescue too: not waited for).
    await Promise.all([...this.rings.values()].map((r) => r.stop(true)));
    for (const r of this.retired.values()) r.abandon();
  }

  /** A running camera's status; undefined for names not (or no longer) configured. */
  status(name: string): CameraStatus | undefined {
    return this.cameras.get(name)?.snapshot();
  }

  statuses(): CameraStatus[] {
    return [...this.cameras.values()].map((c) => c.snapshot());
  }

  /**
   * Each clip-keeping camera's ring: what it holds, has written and has lost; and the retired
   * rings of cameras that no longer record, while they keep footage.
   */
  ringStats(): Record<string, RingStats> {
    return Object.fromEntries([...this.retired, ...this.rings].map(([name, ring]) => [name, ring.stats()]));
  }

  /** The running cameras, as a hurried stop kills their ffmpeg (read before they are stopped). */
  killable(): { killNow(): number | undefined }[] {
    return [...this.cameras.values()];
  }

  /** ffmpeg process ids currently running (for operations and tests). */
  pids(): number[] {
    return [...this.cameras.values()].map((c) => c.pid).filter((p): p is number => p !== undefined);
  }
}
