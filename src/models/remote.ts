import type { ModelConfig, RemoteModelConfig } from '../config/index.js';
import { RemoteDetector } from '../kserve/index.js';
import type { ModelContext } from './context.js';
import type { ModelStage } from './stage.js';

/** A model of `models:` served by a KServe v2 server. */
export type RemoteModel = ModelConfig & { remote: RemoteModelConfig };

/**
 * Builds the stage of a remote model (`models.<name>.remote`): a KServe v2 client that takes the
 * scheduler's batches (kserve's RemoteDetector), with the model's logger, the clock, the config's
 * secrets, and its availability reported to the registry.
 */
export function createRemoteModel(name: string, model: RemoteModel, ctx: ModelContext): ModelStage {
  return new RemoteDetector(
    {
      name,
      remote: model.remote,
      conf: model.conf,
      iou: model.iou,
      max_detections: model.max_detections,
      labels: model.labels,
      input_size: model.input_size,
    },
    { log: ctx.log, clock: ctx.clock, secrets: ctx.secrets, onAvailability: () => ctx.onAvailability?.() },
  );
}
