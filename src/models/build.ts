import { stat } from 'node:fs/promises';
import type { Config, ModelConfig } from '../config/index.js';
import { Detector, planModel } from '../detector/index.js';
import type { ModelContext } from './context.js';
import { createRemoteModel } from './remote.js';
import type { ModelStage } from './stage.js';

/** Makes a model's stage (not started): what the registry builds each model with. */
export type BuildModel = (
  name: string,
  model: ModelConfig,
  detector: Config['detector'],
  ctx: ModelContext,
) => Promise<ModelStage>;

/** A local model runs in Argus' own sessions (`detector:` with its overrides); a remote one on its server. */
export const buildModel: BuildModel = async (name, model, detector, ctx) => {
  if (model.remote) return createRemoteModel(name, { ...model, remote: model.remote }, ctx);
  const path = model.path!;
  return new Detector(
    await planModel({ ...model, path }),
    { detector, model, engines: ctx.engines ?? null },
    ctx.log,
  );
};

/**
 * What identifies a model's settings, to tell on reload whether it changed: its entry, and for a
 * local model `detector:` (its sessions' settings) and its files' size and time (a model file
 * replaced in place is a new model).
 */
export async function modelSpec(model: ModelConfig, detector: Config['detector']): Promise<string> {
  if (model.remote) return JSON.stringify(model);
  const files = await Promise.all(
    [model.path, model.labels].map(async (f) => {
      if (!f) return null;
      try {
        const s = await stat(f);
        return [s.size, s.mtimeMs];
      } catch {
        return 'unreadable';
      }
    }),
  );
  return JSON.stringify({ model, detector, files });
}
