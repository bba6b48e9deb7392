import type { HistogramSnapshot } from '../../src/core/histogram.js';
import type { DetectorStats } from '../../src/detector/index.js';
import type { CameraStatus } from '../../src/ingest/index.js';
import type { RingStats } from '../../src/record/index.js';
import type { RemoteStats } from '../../src/kserve/index.js';
import type { NamedModelStats } from '../../src/models/index.js';
import type { OutputStats } from '../../src/publish/index.js';
import type { CameraStats, SchedulerStats } from '../../src/scheduler/index.js';

/** A histogram with nothing observed yet. */
export const emptyHistogram = (): HistogramSnapshot => ({ bounds: [1], counts: [0, 0], sum: 0, count: 0 });

/** A camera's scheduler counters, zero unless told. */
export function cameraStats(over: Partial<CameraStats> = {}): CameraStats {
  return {
    model: 'default',
    framesIn: 0,
    analysed: 0,
    cached: 0,
    dropped: { full: 0, stale: 0, error: 0 },
    queueDepth: 0,
    frameAgeMsMean: 0,
    queueWait: emptyHistogram(),
    resequenced: 0,
    lagMs: null,
    lagging: false,
    ...over,
  };
}

/** A camera's status from ingest, streaming unless told. */
export function cameraStatus(camera: string, over: Partial<CameraStatus> = {}): CameraStatus {
  return {
    camera,
    state: 'streaming',
    since: 0,
    restarts: 0,
    framesReceived: 0,
    bytesReceived: 0,
    lastFrameAt: null,
    lastError: null,
    retryAt: null,
    source: { width: 640, height: 480 },
    ...over,
  };
}

/** A local model's numbers: two sessions on the CPU, both ready, unless told. */
export function localModelStats(
  over: Partial<DetectorStats & { inputSize: number }> = {},
): DetectorStats & { inputSize: number } {
  return {
    kind: 'local',
    provider: 'cpu',
    workers: 2,
    readyWorkers: 2,
    sessionsRecreated: 0,
    deadlinesMissed: 0,
    buffersAllocated: 0,
    inputSize: 32,
    ...over,
  };
}

/** A remote model's numbers: its server up, two connections, nothing sent yet, unless told. */
export function remoteModelStats(over: Partial<RemoteStats & { inputSize: number }> = {}): RemoteStats & {
  inputSize: number;
} {
  return {
    kind: 'remote',
    model: 'remote',
    server: 'http://gpu-box:8000',
    remoteModel: 'yolov8n',
    state: 'up',
    since: 0,
    lastError: null,
    input: 'UINT8',
    output: 'detections',
    requests: 0,
    retries: 0,
    failures: { connect: 0, timeout: 0, unavailable: 0, rejected: 0, protocol: 0 },
    frames: 0,
    bytesSent: 0,
    bytesReceived: 0,
    inFlight: 0,
    connections: 2,
    inputSize: 640,
    ...over,
  };
}

/** Stages whose numbers a test sets: what stats, metrics and the HTTP view read. */
export class FakeStages {
  cams: Record<string, CameraStats> = {};
  statuses: CameraStatus[] = [];
  sched: Omit<SchedulerStats, 'cameras'> = {
    submitted: { answered: 0, dropped: 0 },
    models: {},
    batches: 0,
    batchSizes: [0, 0, 0, 0, 0],
    inferenceMsMean: 0,
    inFlight: 0,
    cacheHitRatio: 0,
  };
  /** The models' own numbers, by name: one local model, `default`, unless a test adds others. */
  modelStats: Record<string, NamedModelStats> = { default: localModelStats() };
  out: OutputStats = {
    connected: true,
    reconnects: 0,
    detectionsDropped: 0,
    eventsDropped: 0,
    buffered: 0,
    lastError: null,
    failures: { auth: 0, refused: 0, unreachable: 0, tls: 0, error: 0 },
  };

  scheduler = { stats: (): SchedulerStats => ({ ...this.sched, cameras: structuredClone(this.cams) }) };
  /** Clip-keeping cameras' rings, by camera. */
  rings: Record<string, RingStats> = {};
  ingest = {
    statuses: (): CameraStatus[] => this.statuses,
    status: (name: string): CameraStatus | undefined => this.statuses.find((s) => s.camera === name),
    ringStats: (): Record<string, RingStats> => this.rings,
  };
  /** Why a model is unavailable (a remote model's server away), by its name; none: all are up. */
  away = new Map<string, string>();
  /** The model registry, as stats, metrics and the HTTP view read it. */
  models = {
    stats: (): Record<string, NamedModelStats> => structuredClone(this.modelStats),
    names: (): string[] => Object.keys(this.modelStats),
    detector: (name: string): { inputSize: number } | undefined => this.modelStats[name],
    labels: (name: string): readonly string[] | undefined =>
      name in this.modelStats ? ['person', 'car'] : undefined,
    unavailable: (name: string): string | undefined => this.away.get(name),
  };
  output = { stats: (): OutputStats => this.out };
}
