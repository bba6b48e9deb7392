import type { Logger } from 'pino';
import { modelConfig, sectionConfig, type Config, type ModelConfig } from '../config/index.js';
import { Detector } from './detector.js';
import { planModel } from './model.js';

/**
 * A started detector for tools that run the model outside the daemon (`argus detect`,
 * `model prepare`'s checks, the bench): the model and detector sections as in a config file,
 * every key left out taking its documented default, but for the deadline: a tool waits for as
 * long as the schema allows (a large batch of a large model on a CPU takes a while). Throws
 * ModelError or DetectorError naming the model file.
 */
export async function openDetector(
  model: Partial<ModelConfig> & { path: string },
  detector: Partial<Config['detector']>,
  log: Logger,
): Promise<Detector> {
  const m = { ...modelConfig(model), path: model.path };
  const settings = sectionConfig('detector', { inference_timeout_ms: 600_000, ...detector });
  const d = new Detector(await planModel(m), { model: m, detector: settings }, log);
  await d.start();
  return d;
}
