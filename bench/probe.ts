/**
 * `node dist/bench/probe.js PROVIDER`: can ONNX Runtime run a model with this execution provider
 * here, with no fallback? Prints "ok" or the reason, and exits 0 or 1. Used by bench/gpu.sh and
 * .ci/run (which adapter WebGPU gets); `argus validate` asks the same (detector/probe.ts).
 */
import { PROVIDERS, type ProviderName } from '../src/config/models.js';
import { probeProvider } from '../src/detector/index.js';

const provider = process.argv[2] as ProviderName;
if (!PROVIDERS.includes(provider)) {
  process.stderr.write(`usage: probe.js ${PROVIDERS.join('|')}\n`);
  process.exit(2);
}
const reason = await probeProvider(provider);
process.stdout.write(`${reason ?? 'ok'}\n`);
if (reason !== null) process.exitCode = 1;
