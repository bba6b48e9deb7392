import type { Logger } from 'pino';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import type { Frame, Result } from '../core/frame.js';
import type { CameraConfig, CamerasNow, Config } from '../config/index.js';
import { FrameFit, ObjectEvents, type ClipSource, type EventStore } from '../events/index.js';
import type { FootageRanges } from '../record/index.js';
import type { CameraStatus } from '../ingest/index.js';
import {
  CameraStatuses,
  DetectionsPublisher,
  Discovery,
  PublishLatency,
  type CameraStatusesDeps,
  type DiscoveryDeps,
  type Inbox,
  type Output,
  type Topics,
} from '../publish/index.js';
import type { ModelAvailability } from '../scheduler/index.js';
import type { TrackedResult } from '../track/index.js';

/**
 * A part of Argus that reacts to what the pipeline does: answered frames, camera statuses,
 * failed batches, models going and coming back, reloaded cameras. As zigbee2mqtt's extensions:
 * its constructor only stores what it is given; `start` and `stop` are the root's lifecycle;
 * each method is optional, and each call is made on its own (a part that throws is logged and
 * the others still hear).
 */
export interface Part {
  readonly name: string;
  start?(): unknown;
  stop?(): unknown;
  /** A received frame (ingest's, before the scheduler): the health part samples them. */
  onFrame?(f: Frame): void;
  onResult?(r: Result): void;
  /** An answered frame as tracking saw it (the events part makes it, before this is heard). */
  onTracked?(t: TrackedResult): void;
  onCameraStatus?(s: CameraStatus): void;
  onDetectorError?(camera: string, message: string): void;
  onModelAvailability?(a: ModelAvailability): void;
  /**
   * The cameras that run changed (a reload, a runtime change, a mode): `before` is what ran until
   * now; what runs now is read where it is kept (RunningConfig, through the part's CamerasNow).
   */
  camerasChanged?(before: Record<string, CameraConfig>): void;
}

type Hook = Exclude<keyof Part, 'name' | 'start' | 'stop'>;
type HookArgs<H extends Hook> = Parameters<NonNullable<Part[H]>>;

/** A part that keeps throwing is logged once a minute, not at every frame. */
const RELOG_MS = 60_000;

/**
 * The parts, in the order they hear of things: started in that order (Home Assistant discovery
 * before the events, whose counts start at 0 for the labels it announces), stopped in reverse.
 */
export class Parts {
  private readonly loggedAt = new Map<string, number>();

  constructor(
    readonly list: readonly Part[],
    private readonly log: Logger,
    private readonly clock: Clock,
  ) {}

  async start(): Promise<void> {
    for (const p of this.list) {
      try {
        await p.start?.();
      } catch (err) {
        this.log.error(
          { part: p.name, err: errorMessage(err) },
          `${p.name} failed to start; the other parts go on`,
        );
      }
    }
  }

  async stop(): Promise<void> {
    for (const p of [...this.list].reverse()) {
      try {
        await p.stop?.();
      } catch (err) {
        this.log.error({ part: p.name, err: errorMessage(err) }, `${p.name} failed to stop`);
      }
    }
  }

  /** Calls `hook` of every part that has it, each on its own. */
  tell<H extends Hook>(hook: H, ...args: HookArgs<H>): void {
    for (const p of this.list) {
      const fn = p[hook] as ((...a: HookArgs<H>) => void) | undefined;
      if (!fn) continue;
      try {
        fn.apply(p, args);
      } catch (err) {
        this.failed(p, hook, err);
      }
    }
  }

  private failed(p: Part, hook: Hook, err: unknown): void {
    const key = `${p.name} ${hook}`;
    const now = this.clock.now();
    const at = this.loggedAt.get(key);
    if (at !== undefined && now - at < RELOG_MS) return;
    this.loggedAt.set(key, now);
    this.log.error(
      { part: p.name, hook, err: errorMessage(err) },
      `${p.name} failed on ${hook}; the other parts go on`,
    );
  }
}

export interface ReportingDeps extends Pick<
  CameraStatusesDeps,
  'cameraStatus' | 'availability' | 'lag' | 'owner'
> {
  out: Output & Inbox;
  topics: Topics;
  clock: Clock;
  log: Logger;
  /** The cameras that run now (the root's RunningConfig): the parts read them, keeping no copy. */
  cameras: CamerasNow;
  /** The event history, handed in (the root opens it in the state directory); none without one. */
  history: EventStore | undefined;
  /** The arming modes' names now, for discovery's select (a reload may change them). */
  modes?: () => readonly string[];
  /** With `fleet:`, this box and every camera of the file, for discovery (ha-discovery.ts). */
  fleet?: DiscoveryDeps['fleet'];
  /** The cameras' rings of recent video (ingest), for event clips; absent: no clips. */
  clipSource?: () => ClipSource | undefined;
  /** The events' footage each camera's recording keeps (shared with ingest's rings). */
  footage?: FootageRanges;
  /** Each answered frame as tracking saw it (the root hands it to the parts' onTracked). */
  onTracked?: (t: TrackedResult) => void;
  /** A camera's event faults changed (the root tells its status: `statuses.faultsChanged`). */
  onFault?: (camera: string) => void;
  /** A camera's line counts changed (with `fleet:`, the root has them written to etcd). */
  onLineCounts?: (camera: string) => void;
}

/** The parts that publish what the pipeline found, each reachable by name. */
export interface Reporting {
  discovery: Discovery;
  detections: DetectionsPublisher;
  events: ObjectEvents;
  statuses: CameraStatuses;
  /** Warns of zones, lines and masks that lie outside a camera's picture, once it streams. */
  frameFit: FrameFit;
  /** Last: it measures the time to publish of all the others. */
  latency: PublishLatency;
}

/**
 * Builds the parts that publish: Home Assistant discovery, detections, object events (with
 * counts, line counts, snapshots and history), camera statuses and the publish latency, in the
 * order the root lists them.
 */
export function reportingParts(
  config: Pick<Config, 'events' | 'home_assistant' | 'mqtt' | 'control' | 'modes'> & {
    state_dir?: string | undefined;
    http?: Pick<Config['http'], 'public_url'>;
    health?: Config['health'];
  },
  deps: ReportingDeps,
): Reporting {
  const { out, topics, clock, log, modes, cameras } = deps;
  const discovery = new Discovery(config, cameras, {
    ...{ out, topics, clock, modes },
    fleet: deps.fleet,
    log: log.child({ stage: 'discovery' }),
  });
  const events = new ObjectEvents(cameras, config.events, {
    out,
    topics,
    clock,
    log: log.child({ stage: 'events' }),
    stateDir: config.state_dir,
    history: deps.history,
    defaultLabels: () => discovery.defaultLabels(),
    clipSource: deps.clipSource,
    ...(deps.footage ? { footage: deps.footage } : {}),
    publicUrl: config.http?.public_url,
    onFault: deps.onFault,
    onTracked: deps.onTracked,
    owner: deps.owner,
    onLineCounts: deps.onLineCounts,
  });
  const statuses = new CameraStatuses(cameras, {
    ...deps,
    faults: (camera) => events.faultsOf(camera),
    log: log.child({ stage: 'status' }),
  });
  return {
    discovery,
    // Hears each frame as the events part tracked it (onTracked), whatever the parts' order.
    detections: new DetectionsPublisher(cameras, config.mqtt.detections, {
      out,
      topics,
      owner: deps.owner,
    }),
    events,
    statuses,
    frameFit: new FrameFit(cameras, log.child({ stage: 'config' })),
    latency: new PublishLatency(cameras, clock),
  };
}
