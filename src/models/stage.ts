import type { DetectorStats } from '../detector/index.js';
import type { RemoteStats } from '../kserve/index.js';
import type { BatchDetector, ModelAvailability } from '../scheduler/index.js';

/**
 * What a model reports of itself, by its kind: a local model its sessions (the detector's
 * numbers), a remote one its client's view of the server.
 */
export type ModelStats = DetectorStats | RemoteStats;

/** A model as the daemon runs it: a detector with a lifecycle, its labels and its numbers. */
export interface ModelStage extends BatchDetector {
  readonly labels: readonly string[];
  /** Loads and warms it; resolves once every session can take a batch. */
  start(): Promise<void>;
  stop(): Promise<void> | void;
  stats(): ModelStats;
  /**
   * Whether it takes batches now, as the model decides it (a remote model's server away or
   * back); a model without the method always does.
   */
  availability?(): ModelAvailability;
}

/** Sessions able to take a batch now; a remote model's are its connections, while its server is up. */
export function readySessions(m: ModelStats): number {
  if (m.kind === 'local') return m.readyWorkers;
  return m.state === 'up' ? m.connections : 0;
}

/** The execution provider of a local model (`cpu`, `cuda`, …; null before it started); `kserve` for a remote one. */
export function providerOf(m: ModelStats): string | null {
  return m.kind === 'local' ? m.provider : 'kserve';
}
