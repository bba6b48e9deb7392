import ort from 'onnxruntime-node';
import type { Config, ProviderName } from '../config/index.js';
import { buildFixtureModel, DEFAULT_FIXTURE } from '../onnx/index.js';
import { providerOption, selectWebgpuVendor, shortReason } from './providers.js';

/**
 * Whether ONNX Runtime can run a model with `provider` here, alone (no fallback): a session of
 * Argus' small generated model made and run once. Resolves null when it can, else the reason.
 * Runs on the calling thread: for commands (`validate`, the bench), never the daemon.
 */
export async function probeProvider(
  provider: ProviderName,
  webgpu: Config['detector']['webgpu'] = {},
): Promise<string | null> {
  if (provider === 'webgpu') selectWebgpuVendor(webgpu.vendor);
  ort.env.logLevel = 'fatal';
  const size = 64;
  try {
    const session = await ort.InferenceSession.create(buildFixtureModel({ ...DEFAULT_FIXTURE, size }), {
      executionProviders: [
        providerOption(provider, 0),
      ] as ort.InferenceSession.SessionOptions['executionProviders'],
      logSeverityLevel: 4,
    });
    try {
      const out = await session.run({
        images: new ort.Tensor('float32', new Float32Array(3 * size * size), [1, 3, size, size]),
      });
      for (const t of Object.values(out)) t.dispose();
    } finally {
      await session.release();
    }
    return null;
  } catch (err) {
    return shortReason(err);
  }
}

/** The GPU providers a configuration lists, for the detector or any local model, each once. */
export function configuredGpuProviders(config: Pick<Config, 'detector' | 'models'>): ProviderName[] {
  const lists = [config.detector.providers, ...Object.values(config.models).map((m) => m.providers ?? [])];
  return [...new Set(lists.flat())].filter((p) => p !== 'cpu');
}
