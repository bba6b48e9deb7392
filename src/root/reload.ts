import type { Logger } from 'pino';
import {
  ConfigError,
  diffConfig,
  type CameraChanges,
  type CameraConfig,
  type LoadedConfig,
} from '../config/index.js';
import type { Control } from '../control/index.js';
import type { Ingest } from '../ingest/index.js';
import { loadVouchedConfig, planCameras, type ModelRegistry } from '../models/index.js';
import type { Parts } from './parts.js';
import type { RunningConfig } from './running-config.js';
import type { Scheduler } from '../scheduler/index.js';

/** The stages a reload reaches. */
export interface Running {
  ingest: Ingest;
  scheduler: Scheduler;
  /** Those that hear of results, statuses and reloads (events, statuses, discovery, the live view…). */
  parts: Parts;
  models: ModelRegistry;
  /** The mode and runtime changes: a reloaded file's cameras pass through it. */
  control: Control;
  /** The configuration that runs: a change of cameras is set here, and those that keep what they derived hear of it. */
  config: RunningConfig;
  /**
   * The cameras this box runs of those wanted: with `fleet:`, those etcd gave it (src/fleet);
   * without, all of them.
   */
  select: (cameras: Record<string, CameraConfig>) => Record<string, CameraConfig>;
}

/**
 * Reads the config file again (SIGHUP) and applies it (applyConfig), its cameras passed through
 * the mode and runtime changes: the configuration that runs now, or undefined when the file is
 * invalid (logged; nothing changed).
 */
export async function reloadFile(
  running: Running,
  loaded: LoadedConfig,
  log: Logger,
): Promise<LoadedConfig | undefined> {
  let next: LoadedConfig;
  try {
    // As `argus run` started: the file, its models and the labels it names.
    next = await loadVouchedConfig(loaded.file);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log.error({ errors: err.format() }, `reload: ${err.message}; the running configuration is unchanged`);
    return undefined;
  }
  const effective = running.control.effective(next.config);
  const config = { ...effective, cameras: running.select(effective.cameras) };
  return applyConfig(running, loaded, { ...next, config }, log);
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
  const { models, parts } = running;
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
  await switchCameras(running, cameras, changes, loaded.secrets);
  // A model swapped for one whose server is away (or back) says so on its cameras, once.
  for (const name of swap.switched) {
    const a = models.availability(name);
    if (a) parts.tell('onModelAvailability', a);
  }
  const config = { ...loaded.config, cameras, models: models.config(), detector: next.config.detector };
  const { added, removed, changed: restarted, moved, retuned, unchanged } = changes;
  const { switched, failed } = swap;
  log.info(
    { added, removed, restarted, moved, retuned, unchanged, models: { switched, failed } },
    'configuration reloaded',
  );
  await swap.retired;
  return { ...loaded, config };
}

/** Brings the stages in line with a camera section (`changes`: how it differs from the running one). */
async function switchCameras(
  { ingest, scheduler, config }: Running,
  cameras: Record<string, CameraConfig>,
  changes: CameraChanges,
  secrets: readonly string[],
): Promise<void> {
  // Moved cameras go to their new model at once; the others once their old ffmpeg has stopped.
  scheduler.moveCameras(cameras, changes.moved);
  await ingest.setCameras(cameras, changes, secrets);
  scheduler.setCameras(cameras, changes);
  // From here these cameras run: the parts read them, and hear of the change (pipeline.ts).
  const now = config.current();
  config.set({ ...now, config: { ...now.config, cameras } });
}

/**
 * Applies a camera section changed at run time (control topics, modes, PUT /api/control) with the
 * running models, as a reload would: only cameras whose stream changed (enabled, fps) restart;
 * the others take their new settings while streaming. Returns the configuration that runs now.
 */
export async function applyCameras(
  running: Running,
  loaded: LoadedConfig,
  wanted: Record<string, CameraConfig>,
  log: Logger,
): Promise<LoadedConfig> {
  const size = (m: string): number | undefined => running.models.detector(m)?.inputSize;
  const { cameras, changes } = planCameras(loaded.config.cameras, running.select(wanted), size, size);
  await switchCameras(running, cameras, changes, loaded.secrets);
  const { added, removed, changed: restarted, retuned } = changes;
  if (restarted.length + retuned.length + added.length + removed.length)
    log.debug({ restarted, retuned }, 'control: cameras changed');
  return { ...loaded, config: { ...loaded.config, cameras } };
}
