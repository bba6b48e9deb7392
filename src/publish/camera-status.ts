import type { OwnerOf } from '../core/owner.js';
import type { Logger } from 'pino';
import type { Clock, Timer } from '../core/clock.js';
import type { Result } from '../core/frame.js';
import { own } from '../core/names.js';
import { isoTime, isoTimeOrNull } from '../core/time.js';
import type { CameraConfig, CamerasNow } from '../config/index.js';
import type { CameraStatus } from '../ingest/index.js';
import type { ModelAvailability } from '../scheduler/index.js';
import type { Output } from './mqtt-output.js';
import { Publisher } from './publisher.js';
import { lagSeconds } from './stats.js';
import type { CameraStatusPayload, Topics } from './topics.js';

/** How often the cameras' lag is checked. */
const TICK_MS = 1000;

export interface CameraStatusesDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  log: Logger;
  /** A camera's current status, from its one owner (ingest). */
  cameraStatus: (camera: string) => CameraStatus | undefined;
  /** A model's availability, as the model decides it (models/ModelRegistry); undefined: always up. */
  availability?: (model: string) => ModelAvailability | undefined;
  /**
   * How far behind a camera's answers are (the scheduler's), checked every second, and
   * `scheduler.lagging_after_s`, which the status' message names.
   */
  lag?: {
    of(camera: string): { lagMs: number | null; lagging: boolean } | undefined;
    afterS: number;
  };
  /** With `fleet:`, the box that runs a camera and its epoch, which its status carries. */
  owner?: OwnerOf | undefined;
  /** The parts of a camera's events path that fail now (events/faults.ts); absent: none. */
  faults?: (camera: string) => readonly { part: string; message: string; since: number }[];
}

/**
 * Each camera's retained status (`<base>/cameras/<camera>/status`): ingest's status, or why the
 * camera gets no answers — its model unavailable (as the model says, since when it says), its
 * batches failing (the detector's error, until an analysed answer), or its answers lagging
 * `scheduler.lagging_after_s` behind its frames (checked every second).
 */
export class CameraStatuses {
  readonly name = 'camera statuses';
  private detectorErrors = new Map<string, { message: string; at: number }>();
  /** Whether each model was up in the statuses last published: a change is published once. */
  private shownUp = new Map<string, boolean>();
  /** Since when each lagging camera has been (while streaming: its status says so). */
  private laggingSince = new Map<string, number>();
  private timer: Timer | null = null;
  private readonly mqtt: Publisher;

  constructor(
    private readonly cameras: CamerasNow,
    private readonly deps: CameraStatusesDeps,
  ) {
    this.mqtt = new Publisher(deps.out);
  }

  /** Checks the cameras' lag every second. */
  start(): void {
    const tick = (): void => {
      this.tick(this.deps.clock.now());
      this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
    };
    this.timer = this.deps.clock.setTimeout(tick, TICK_MS);
  }

  stop(): void {
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  /** An analysed answer ends a camera's detector error; any answer may end its lag, at once. */
  onResult(r: Result): void {
    if (!r.cached && this.detectorErrors.delete(r.camera)) this.publishOf(r.camera);
    if (this.laggingSince.has(r.camera)) this.checkLag(r.camera, this.deps.clock.now());
  }

  /** The parts of a camera's events path that fail changed: its status says so at once. */
  faultsChanged(camera: string): void {
    this.publishOf(camera);
  }

  /** A camera's status changed (ingest). */
  onCameraStatus(s: CameraStatus): void {
    this.publish(s);
  }

  /**
   * A batch with this camera's frames failed (missed deadline, detector error). While its model
   * is unavailable its status already says so: each batch refused meanwhile publishes nothing.
   */
  onDetectorError(camera: string, message: string): void {
    this.detectorErrors.set(camera, { message, at: this.deps.clock.now() });
    if (!this.away(camera)) this.publishOf(camera);
  }

  /**
   * A model became unavailable (a remote model's server cannot be reached) or available again:
   * each camera on it publishes its status once (`detector_unavailable`, or its own state, the
   * batches refused meanwhile forgotten). Told again without a change, nothing is sent.
   */
  onModelAvailability(a: ModelAvailability): void {
    if ((this.shownUp.get(a.model) ?? true) === a.up) return;
    this.shownUp.set(a.model, a.up);
    for (const [camera, cfg] of Object.entries(this.cameras())) {
      if (cfg.model !== a.model) continue;
      if (a.up) this.detectorErrors.delete(camera);
      this.publishOf(camera);
    }
  }

  /** Why the camera's model is unavailable now, and since when; undefined while it is not. */
  private away(camera: string): { message: string; at: number } | undefined {
    const model = own(this.cameras(), camera)?.model;
    const a = model === undefined ? undefined : this.deps.availability?.(model);
    if (a) this.shownUp.set(a.model, a.up);
    if (!a || a.up) return undefined;
    return { message: a.message ?? `model ${a.model} is unavailable`, at: a.since };
  }

  private publishOf(camera: string): void {
    const s = this.deps.cameraStatus(camera);
    if (s) this.publish(s);
  }

  private publish(s: CameraStatus): void {
    const camera = s.camera;
    const det = this.detectorErrors.get(camera);
    const away = this.away(camera);
    const lagS = lagSeconds(this.deps.lag?.of(camera)?.lagMs ?? null);
    // Lagging is a streaming camera's: a camera gone offline says why itself, at once.
    const laggingAt = s.state === 'streaming' ? this.laggingSince.get(camera) : undefined;
    const lastError: CameraStatusPayload['last_error'] = away
      ? { cause: 'detector_unavailable', message: away.message, at: isoTime(away.at) }
      : det
        ? { cause: 'detector', message: det.message, at: isoTime(det.at) }
        : laggingAt !== undefined
          ? {
              cause: 'lagging',
              message: `its newest answered frame is ${lagS} s old (over scheduler.lagging_after_s: ${this.deps.lag?.afterS} s): the detector cannot keep up`,
              at: isoTime(laggingAt),
            }
          : s.lastError && {
              cause: s.lastError.cause,
              message: s.lastError.message,
              at: isoTime(s.lastError.at),
            };
    const owner = this.deps.owner?.(camera);
    this.mqtt.state(this.deps.topics.cameraStatus(camera), {
      camera,
      ...(owner ? { owner } : {}),
      state: s.state,
      since: isoTime(s.since),
      restarts: s.restarts,
      frames_received: s.framesReceived,
      last_frame: isoTimeOrNull(s.lastFrameAt),
      source: s.source,
      last_error: lastError,
      retry_at: isoTimeOrNull(s.retryAt),
      lag_s: lagS,
      event_faults: (this.deps.faults?.(camera) ?? []).map((f) => ({
        part: f.part,
        message: f.message,
        since: isoTime(f.since),
      })),
    });
  }

  /** Checks each camera's lag at time `now`. */
  tick(now: number): void {
    for (const camera of Object.keys(this.cameras())) this.checkLag(camera, now);
  }

  /**
   * A streaming camera whose answers fell `lagging_after_s` behind its frames turns `lagging`
   * (unless its model is unavailable: its status says so already), and back when they catch up:
   * one log line and one status each way. Its objects and counts hold meanwhile (Tracker); the
   * status tells a subscriber they are not fresh.
   */
  private checkLag(camera: string, now: number): void {
    const lag = this.deps.lag?.of(camera);
    const streaming = this.deps.cameraStatus(camera)?.state === 'streaming';
    // A model that is away already says why the camera gets no answer.
    const lagging = streaming && lag?.lagging === true && !this.away(camera);
    if (lagging === this.laggingSince.has(camera)) return;
    const lagS = lagSeconds(lag?.lagMs ?? null);
    if (lagging) {
      this.laggingSince.set(camera, now);
      this.deps.log.warn(
        { camera, lag_s: lagS },
        'camera lagging: its frames get no answer in time (the detector cannot keep up); its objects and counts hold',
      );
    } else {
      this.laggingSince.delete(camera);
      const why = !streaming
        ? `camera no longer lagging: it is ${this.deps.cameraStatus(camera)?.state ?? 'gone'}`
        : lag?.lagging
          ? 'camera no longer lagging: its model is unavailable (its status says so)'
          : 'camera answered in time again';
      this.deps.log.info({ camera, lag_s: lagS }, why);
    }
    this.publishOf(camera);
  }

  /**
   * A reloaded camera section: removed and disabled cameras stop lagging; a camera moved to
   * another model publishes its status again when either model is unavailable.
   */
  camerasChanged(before: Record<string, CameraConfig>): void {
    const cameras = this.cameras();
    for (const camera of this.laggingSince.keys())
      if (!own(cameras, camera)?.enabled) this.laggingSince.delete(camera);
    const unavailable = (model: string | undefined): boolean =>
      model !== undefined && this.deps.availability?.(model)?.up === false;
    for (const [camera, c] of Object.entries(cameras)) {
      const was = own(before, camera)?.model;
      if (was !== undefined && was !== c.model && (unavailable(was) || unavailable(c.model)))
        this.publishOf(camera);
    }
  }
}
