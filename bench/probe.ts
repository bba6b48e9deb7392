/**
 * `node dist/bench/probe.js PROVIDER`: can ONNX Runtime run a model with this execution provider
 * here, with no fallback? Prints "ok" or the reason, and exits 0 or 1. Used by bench/gpu.sh.
 */
import ort from 'onnxruntime-node';
import { PROVIDERS, type ProviderName } from '../src/config/models.js';
import { providerOption, shortReason } from '../src/detector/providers.js';
import { buildFixtureModel } from '../src/onnx/fixture.js';

const provider = process.argv[2] as ProviderName;
if (!PROVIDERS.includes(provider)) {
  process.stderr.write(`usage: probe.js ${PROVIDERS.join('|')}\n`);
  process.exit(2);
}
ort.env.logLevel = 'fatal';
try {
  const session = await ort.InferenceSession.create(buildFixtureModel(), {
    executionProviders: [
      providerOption(provider, 0),
    ] as ort.InferenceSession.SessionOptions['executionProviders'],
    logSeverityLevel: 4,
  });
  const size = 320;
  await session.run({
    images: new ort.Tensor('float32', new Float32Array(3 * size * size), [1, 3, size, size]),
  });
  await session.release();
  process.stdout.write('ok\n');
} catch (err) {
  process.stdout.write(`${shortReason(err)}\n`);
  process.exitCode = 1;
}
