import type { ModelConfig, RemoteModelConfig } from '../config/index.js';
import type { ModelStage } from '../scheduler/index.js';
import type { ModelContext } from './build.js';

/** A model of `models:` served by a KServe v2 server. */
export type RemoteModel = ModelConfig & { remote: RemoteModelConfig };

/** A model that cannot be built in this build of Argus. */
export class ModelUnavailable extends Error {}

/**
 * Builds the stage of a remote model (`models.<name>.remote`): a KServe v2 client that takes the
 * scheduler's batches. The one place a remote model is made: this build has no KServe client,
 * so every remote model fails start-up (and a reload that adds one keeps what runs), saying so.
 */
export function createRemoteModel(name: string, _model: RemoteModel, _ctx: ModelContext): ModelStage {
  throw new ModelUnavailable(`model ${name}: remote models are not available in this build`);
}
