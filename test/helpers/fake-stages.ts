import type { DetectorStats } from '../../src/detector/index.js';
import type { CameraStatus } from '../../src/ingest/index.js';
import type { OutputStats } from '../../src/publish/index.js';
import type { CameraStats, SchedulerStats } from '../../src/scheduler/index.js';

/** A camera's scheduler counters, zero unless told. */
export function cameraStats(over: Partial<CameraStats> = {}): CameraStats {
  return {
    framesIn: 0,
    analysed: 0,
    cached: 0,
    dropped: { full: 0, stale: 0, error: 0 },
    queueDepth: 0,
    frameAgeMsMean: 0,
    resequenced: 0,
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

/** Stages whose numbers a test sets: what stats, metrics and the HTTP view read. */
export class FakeStages {
  cams: Record<string, CameraStats> = {};
  statuses: CameraStatus[] = [];
  sched: Omit<SchedulerStats, 'cameras'> = {
    submitted: { answered: 0, dropped: 0 },
    batches: 0,
    batchSizes: [0, 0, 0, 0, 0],
    inferenceMsMean: 0,
    inFlight: 0,
    cacheHitRatio: 0,
  };
  det: DetectorStats = {
    provider: 'cpu',
    workers: 2,
    readyWorkers: 2,
    sessionsRecreated: 0,
    deadlinesMissed: 0,
    buffersAllocated: 2,
  };
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
  ingest = {
    statuses: (): CameraStatus[] => this.statuses,
    status: (name: string): CameraStatus | undefined => this.statuses.find((s) => s.camera === name),
  };
  detector = { stats: (): DetectorStats => this.det, inputSize: 32 };
  output = { stats: (): OutputStats => this.out };
}
