import type { Logger } from 'pino';
import type { Clock } from '../../src/core/clock.js';
import type { OwnerOf } from '../../src/core/owner.js';
import type { Result } from '../../src/core/frame.js';
import type { CameraConfig, Config } from '../../src/config/index.js';
import { EventStore, ObjectEvents } from '../../src/events/index.js';
import type { CameraStatus } from '../../src/ingest/index.js';
import { Parts, type Part } from '../../src/root/index.js';
import {
  CameraStatuses,
  DetectionsPublisher,
  PublishLatency,
  type Discovery,
  type Output,
  type Topics,
} from '../../src/publish/index.js';
import type { ModelAvailability } from '../../src/scheduler/index.js';
import { CamerasBox } from './cameras-now.js';

export interface ReporterDeps {
  out: Output;
  topics: Topics;
  clock: Clock;
  cameraStatus: (camera: string) => CameraStatus | undefined;
  log: Logger;
  /** The cameras that run, when the test holds them itself (a Discovery it made reads them too). */
  box?: CamerasBox;
  /** Line counts and the event history are kept here. */
  stateDir?: string;
  homeAssistant?: Discovery;
  /** Why a model is away now, or undefined while it is up. */
  modelUnavailable?: (model: string) => string | undefined;
  lag?: { of(camera: string): { lagMs: number | null; lagging: boolean } | undefined; afterS: number };
  detections: Config['mqtt']['detections'];
  /** With `fleet:`: a camera's owner now, which detections, events and statuses carry. */
  owner?: OwnerOf;
}

/**
 * The parts that publish what the pipeline found, put together as the daemon lists them
 * (src/daemon.ts: discovery, detections, events, camera statuses, latency) and driven as one:
 * what the tests of the MQTT side of results, statuses and reloads talk to.
 */
export class Reporter {
  readonly events: ObjectEvents;
  readonly statuses: CameraStatuses;
  readonly latencies: PublishLatency;
  readonly history: EventStore | undefined;
  /** The cameras that run: the parts read them here (as they read the root's RunningConfig). */
  readonly box: CamerasBox;
  private readonly parts: Parts;

  constructor(
    cameras: Record<string, CameraConfig>,
    events: Config['events'],
    private readonly deps: ReporterDeps,
  ) {
    const { out, topics, clock, log, stateDir, homeAssistant } = deps;
    this.box = deps.box ?? new CamerasBox(cameras);
    const now = this.box.now;
    this.history = EventStore.inStateDir(stateDir, events.history, log, clock);
    const detections = new DetectionsPublisher(now, deps.detections, { out, topics, owner: deps.owner });
    this.events = new ObjectEvents(now, events, {
      out,
      topics,
      clock,
      log,
      stateDir,
      history: this.history,
      defaultLabels: () => homeAssistant?.defaultLabels() ?? [],
      // Each frame as tracking saw it, to the detections topic: a data dependency, not the list's order.
      onTracked: (tracked) => detections.onTracked(tracked),
      owner: deps.owner,
    });
    this.statuses = new CameraStatuses(now, {
      out,
      topics,
      clock,
      log,
      cameraStatus: deps.cameraStatus,
      availability: (model) => this.availability(model),
      ...(deps.lag ? { lag: deps.lag } : {}),
      owner: deps.owner,
    });
    this.latencies = new PublishLatency(now, clock);
    const list: Part[] = [
      ...(homeAssistant ? [homeAssistant] : []),
      detections,
      this.events,
      this.statuses,
      this.latencies,
    ];
    this.parts = new Parts(list, log, clock);
  }

  /** A model's availability as a remote model reports it: away while `modelUnavailable` says why. */
  private availability(model: string): ModelAvailability {
    const message = this.deps.modelUnavailable?.(model);
    return { model, up: message === undefined, message: message ?? null, since: this.deps.clock.now() };
  }

  start(): Promise<void> {
    return this.parts.start();
  }

  stop(): Promise<void> {
    return this.parts.stop();
  }

  onResult(r: Result): void {
    this.parts.tell('onResult', r);
  }

  onCameraStatus(s: CameraStatus): void {
    this.parts.tell('onCameraStatus', s);
  }

  onDetectorError(camera: string, message: string): void {
    this.parts.tell('onDetectorError', camera, message);
  }

  onModelAvailability(model: string): void {
    this.parts.tell('onModelAvailability', this.availability(model));
  }

  /** A reload or a runtime change: the cameras that run are these from now on, and the parts hear of it. */
  setCameras(cameras: Record<string, CameraConfig>): void {
    const before = this.box.now();
    this.box.set(cameras);
    this.parts.tell('camerasChanged', before);
  }

  /** What the parts' one-second timers do, at time `now`: snapshots due, then the cameras' lag. */
  tick(now: number): void {
    this.events.tick(now);
    this.statuses.tick(now);
  }

  countsOf(camera: string): ReturnType<ObjectEvents['countsOf']> {
    return this.events.countsOf(camera);
  }

  latency(): ReturnType<PublishLatency['latency']> {
    return this.latencies.latency();
  }
}
