import { join } from 'node:path';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import type { Frame } from '../core/frame.js';
import { namedRecord, own } from '../core/names.js';
import { isoTime } from '../core/time.js';
import { healthOf, type CameraConfig, type CamerasNow, type HealthSettings } from '../config/index.js';
import { Publisher, type HealthPayload, type Output, type Topics } from '../publish/index.js';
import { JsonFile } from '../state/index.js';
import { greyOf, residual } from './grey.js';
import { bucketOf, HealthMonitor, type HealthReport, type Reference } from './monitor.js';
import { features, GRID, type Features } from './signals.js';

/** The file in the state directory. */
export const HEALTH_FILE = 'health.json';
/** The references of every camera: at most this many bytes (a bigger file is corrupt: learnt again). */
const MAX_BYTES = 16 << 20;
/** References adapt slowly: written at most this often (a crash loses at most that much). */
const SAVE_MS = 60_000;

export interface HealthDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  log: Logger;
  stateDir: string | undefined;
}

/** A camera's health as the metrics, the API and the page read it. */
export interface CameraHealthView {
  camera: string;
  report: HealthReport;
}

type Stored = Map<string, Map<number, Reference>>;

const round = (x: number): number => Math.round(x * 100) / 100;
const arr = (a: Float32Array): number[] => Array.from(a, round);

const featureSchema = z
  .object({
    w: z.number().int().positive(),
    h: z.number().int().positive(),
    ew: z.number().int().positive(),
    eh: z.number().int().positive(),
    luma: z.number(),
    spread: z.number(),
    uniformity: z.number(),
    chroma: z.number().optional(),
    mean: z.array(z.number()).length(GRID * GRID),
    contrast: z.array(z.number()).length(GRID * GRID),
    sharpness: z.array(z.number()).length(GRID * GRID),
    edges: z.array(z.number()),
    samples: z.number().int().positive(),
    at: z.number(),
  })
  .refine((f) => f.edges.length === f.ew * f.eh, { message: 'edges: not ew × eh numbers' });
const fileSchema = z.object({
  version: z.literal(1),
  cameras: z.record(z.string(), z.record(z.string().regex(/^\d{1,3}$/), featureSchema)),
});

/** The state file read back (exported for tests): keys are buckets, and bucket + `OTHER_MODE` for the other mode. */
export function parseStored(data: unknown): Stored {
  const f = fileSchema.parse(data);
  const out: Stored = new Map();
  for (const [camera, buckets] of Object.entries(f.cameras)) {
    const refs = new Map<number, Reference>();
    for (const [b, r] of Object.entries(buckets)) {
      const features: Features = {
        w: r.w,
        h: r.h,
        ew: r.ew,
        eh: r.eh,
        luma: r.luma,
        spread: r.spread,
        uniformity: r.uniformity,
        ...(r.chroma === undefined ? {} : { chroma: r.chroma }),
        mean: Float32Array.from(r.mean),
        contrast: Float32Array.from(r.contrast),
        sharpness: Float32Array.from(r.sharpness),
        edges: Float32Array.from(r.edges),
      };
      refs.set(Number(b), { features, samples: r.samples, at: r.at });
    }
    out.set(camera, refs);
  }
  return out;
}

/** The state file as written (exported for tests). */
export function serializeStored(s: Stored): unknown {
  const cameras = namedRecord<Record<string, unknown>>();
  for (const [camera, refs] of s) {
    const buckets = namedRecord<unknown>();
    for (const [b, { features: f, samples, at }] of refs)
      buckets[String(b)] = {
        w: f.w,
        h: f.h,
        ew: f.ew,
        eh: f.eh,
        luma: round(f.luma),
        spread: round(f.spread),
        uniformity: round(f.uniformity),
        ...(f.chroma === undefined ? {} : { chroma: round(f.chroma) }),
        mean: arr(f.mean),
        contrast: arr(f.contrast),
        sharpness: arr(f.sharpness),
        edges: arr(f.edges),
        samples,
        at,
      };
    cameras[camera] = buckets;
  }
  return { version: 1, cameras };
}

/** What the part keeps per camera between samples. */
interface Watch {
  monitor: HealthMonitor;
  settings: HealthSettings;
  /** When the last sample was taken (the frame's time). */
  sampledAt: number;
  /** The picture the last features were made of (the same buffer: the same features). */
  data: Buffer | undefined;
  features: Features | undefined;
  /** The last sample's thumbnail, or grey image where the frame had none. */
  previous: ArrayLike<number> | undefined;
}

/**
 * Camera health as a part (root/parts.ts): it samples each camera's frames (`sample_s`), makes
 * the signals of the picture ingest already decoded (health/signals.ts), judges them against the
 * camera's reference for the time of day (health/monitor.ts), and says each change on the
 * retained `…/cameras/<camera>/health` and in one log line. The references live in the state
 * directory (`health.json`, written crash-safely, a corrupt file learnt again). A fault changes
 * nothing else: detection goes on.
 */
export class CameraHealth {
  readonly name = 'health';
  private readonly watches = new Map<string, Watch>();
  private readonly mqtt: Publisher;
  private readonly store: JsonFile<Stored> | undefined;
  /** The references read at start, by camera, until each camera's monitor takes them. */
  private stored: Stored = new Map();
  /** The cameras whose retained topic holds a payload. */
  private readonly published = new Set<string>();
  private running = false;

  constructor(
    private readonly cameras: CamerasNow,
    private readonly defaults: HealthSettings,
    private readonly deps: HealthDeps,
  ) {
    this.mqtt = new Publisher(deps.out);
    this.store =
      deps.stateDir === undefined
        ? undefined
        : new JsonFile(join(deps.stateDir, HEALTH_FILE), {
            parse: parseStored,
            serialize: serializeStored,
            maxBytes: MAX_BYTES,
            delayMs: SAVE_MS,
            clock: deps.clock,
            log: deps.log,
          });
  }

  async start(): Promise<void> {
    this.stored = (await this.store?.load()) ?? new Map<string, Map<number, Reference>>();
    this.running = true;
    this.sync();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.watches.size) this.save();
    await this.store?.flush();
  }

  /** The cameras changed: settings follow, cameras gone (or with health off) are forgotten. */
  camerasChanged(): void {
    if (this.running) this.sync();
  }

  private settingsOf(cam: CameraConfig): HealthSettings {
    const settings = healthOf(this.defaults, cam.health);
    // A `lavfi:` camera is a generated picture: a still one is no frozen camera (its own
    // `health.still` says otherwise where set).
    return cam.url.toLowerCase().startsWith('lavfi:') && cam.health?.still === undefined
      ? { ...settings, still: true }
      : settings;
  }

  private sync(): void {
    const cams = this.cameras();
    for (const [name, cam] of Object.entries(cams)) {
      const settings = this.settingsOf(cam);
      const w = this.watches.get(name);
      if (!settings.enabled) {
        if (w) this.forget(name);
        continue;
      }
      if (w) {
        w.settings = settings;
        w.monitor.configure(settings);
        continue;
      }
      const now = this.deps.clock.now();
      const monitor = new HealthMonitor(settings, now, this.stored.get(name));
      this.stored.delete(name);
      this.watches.set(name, {
        monitor,
        settings,
        sampledAt: -Infinity,
        data: undefined,
        features: undefined,
        previous: undefined,
      });
      this.publish(name, monitor.current());
    }
    for (const name of [...this.watches.keys()]) if (!own(cams, name)) this.forget(name);
    for (const name of [...this.published]) if (!this.watches.has(name)) this.clear(name);
  }

  private forget(name: string): void {
    this.watches.delete(name);
    this.save();
  }

  /** A received frame: sampled at most once every `sample_s`, by the frame's own time. */
  onFrame(f: Frame): void {
    const w = this.watches.get(f.camera);
    if (!w || f.ts - w.sampledAt < w.settings.sample_s * 1000 - 1) return;
    w.sampledAt = f.ts;
    // ffmpeg sends a still camera's same picture again (the frame cache's mpdecimate): its
    // features are those already made; its thumbnail is its own.
    let grey: ArrayLike<number> | undefined;
    if (f.data !== w.data || !w.features) {
      const g = greyOf(f);
      w.features = features(g);
      w.data = f.data;
      grey = g.luma;
    }
    const now = f.thumb ?? grey ?? w.previous;
    const change = w.monitor.observe({
      ts: f.ts,
      bucket: bucketOf(f.ts, w.settings.bucket_hours),
      features: w.features,
      // A picture sent again without a thumbnail is the very same picture: nothing changed.
      residual:
        w.previous === undefined || now === undefined
          ? undefined
          : now === w.previous
            ? 0
            : residual(now, w.previous),
    });
    w.previous = f.thumb ? Uint8Array.from(f.thumb) : now;
    if (w.monitor.takeDirty()) this.save();
    if (change) {
      this.said(f.camera, change.before, change.report);
      this.publish(f.camera, change.report);
    }
  }

  /** Forgets the camera's references: it learns them again from now on. False: health is off for it. */
  relearn(camera: string): boolean {
    const w = this.watches.get(camera);
    if (!w) return false;
    const change = w.monitor.reset(this.deps.clock.now());
    w.monitor.takeDirty();
    this.save();
    if (change) {
      this.said(camera, change.before, change.report);
      this.publish(camera, change.report);
    }
    return true;
  }

  /** Every watched camera's health now. */
  states(): CameraHealthView[] {
    return [...this.watches].map(([camera, w]) => ({ camera, report: w.monitor.current() }));
  }

  /** One camera's health now; undefined when it is off for it. */
  stateOf(camera: string): HealthReport | undefined {
    return this.watches.get(camera)?.monitor.current();
  }

  private said(camera: string, before: string, r: HealthReport): void {
    if (r.state === before) return;
    if (r.state === 'ok')
      this.deps.log.info({ camera, was: before }, `camera health: ${camera} is ok again (was ${before})`);
    else
      this.deps.log.warn(
        { camera, fault: r.state, measure: r.measure, faults: r.faults },
        `camera health: ${camera} is ${r.state} (detection goes on)`,
      );
  }

  private publish(camera: string, r: HealthReport): void {
    const payload: HealthPayload = {
      state: r.state,
      since: isoTime(r.since),
      ...(r.measure === undefined ? {} : { measure: r.measure }),
      faults: [...r.faults],
      learning: r.learning,
    };
    this.mqtt.state(this.deps.topics.health(camera), payload);
    this.published.add(camera);
  }

  private clear(camera: string): void {
    this.mqtt.clear(this.deps.topics.health(camera));
    this.published.delete(camera);
  }

  private save(): void {
    if (!this.store) return;
    const all: Stored = new Map(this.stored);
    for (const [name, w] of this.watches) all.set(name, new Map(w.monitor.references()));
    // Cameras no longer configured are not kept: the file stays bounded by the cameras that run.
    for (const name of [...all.keys()]) if (!own(this.cameras(), name)) all.delete(name);
    this.store.save(all);
  }
}
