import type { Logger } from 'pino';
import { diffConfig, type LoadedConfig } from './config/index.js';
import type { Ingest } from './ingest/index.js';
import { planCameras, type ModelRegistry } from './models/index.js';
import type { Parts } from './parts.js';
import type { Scheduler } from './scheduler/index.js';

/** The stages a reload reaches. */
export interface Running {
  ingest: Ingest;
  scheduler: Scheduler;
  /** Those that hear of results, statuses and reloads (events, statuses, discovery, the live view…). */
  parts: Parts;
  models: ModelRegistry;
}

/**
 * Applies a reloaded file to the running pipeline, and returns the configuration that runs now.
 * Models first: new and changed ones load beside the running ones and the scheduler switches to
 * each that loaded (one that failed leaves the running one, and its cameras keep their settings).
 * Then cameras: added ones start, removed ones stop, changed ones restart, moved ones (only their
 * model changed) go on with the other model without a restart, unless its input size differs;
 * the rest keep streaming. Replaced models stop once their batches in flight are done. Other
 * sections are reported as needing a restart.
 */
export async function applyConfig(
  running: Running,
  loaded: LoadedConfig,
  next: LoadedConfig,
  log: Logger,
): Promise<LoadedConfig> {
  const later = diffConfig(loaded.config, next.config).needRestart;
  if (later.length) log.warn(`reload: changes to ${later.join(', ')} need a restart; not applied`);
  // The logger scrubs the same array: new secrets are hidden from now on.
  for (const secret of next.secrets) if (!loaded.secrets.includes(secret)) loaded.secrets.push(secret);
  const { models, ingest, scheduler, parts } = running;
  const before = new Map(models.names().map((n) => [n, models.detector(n)!.inputSize]));
  const swap = await models.swap(next.config.models, next.config.detector);
  const plan = planCameras(
    loaded.config.cameras,
    next.config.cameras,
    (m) => before.get(m),
    (m) => models.detector(m)?.inputSize,
  );
  if (plan.held.length)
    log.error({ cameras: plan.held }, 'reload: cameras whose model did not load keep their running settings');
  const { cameras, changes } = plan;
  // Moved cameras go to their new model at once; the others once their old ffmpeg has stopped.
  scheduler.moveCameras(cameras, changes.moved);
  await ingest.setCameras(cameras, changes, loaded.secrets);
  scheduler.setCameras(cameras, changes);
  parts.tell('setCameras', cameras);
  // A model swapped for one whose server is away (or back) says so on its cameras, once.
  for (const name of swap.switched) {
    const a = models.availability(name);
    if (a) parts.tell('onModelAvailability', a);
  }
  const config = { ...loaded.config, cameras, models: models.config(), detector: next.config.detector };
  const { added, removed, changed: restarted, moved, unchanged } = changes;
  const { switched, failed } = swap;
  log.info(
    { added, removed, restarted, moved, unchanged, models: { switched, failed } },
    'configuration reloaded',
  );
  await swap.retired;
  return { ...loaded, config };
}
