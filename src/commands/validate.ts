import type { Config, LoadedConfig, ProviderName } from '../config/index.js';
import { configuredGpuProviders, probeProvider } from '../detector/index.js';
import { redactUrl, scrub } from '../redact.js';

/** The one-line summary `argus validate` prints for a valid file, secrets scrubbed. */
export function summarize({ file, config, secrets }: LoadedConfig): string {
  const cams = Object.values(config.cameras);
  const enabled = cams.filter((c) => c.enabled).length;
  const broker = config.mqtt.url ?? `embedded ${config.mqtt.embedded.host}:${config.mqtt.embedded.port}`;
  const entries = Object.entries(config.models);
  const models = entries.map(([name, m]) => {
    const where = m.remote ? `${redactUrl(m.remote.url)} (${m.remote.model})` : m.path!;
    return entries.length === 1 && name === 'default' ? where : `${name} ${where}`;
  });
  return scrub(
    `${file}: valid; ${cams.length} camera${cams.length === 1 ? '' : 's'} (${enabled} enabled), ` +
      `model${models.length === 1 ? '' : 's'} ${models.join(', ')}, providers ${config.detector.providers.join('>')}, ` +
      `batch ${config.scheduler.max_batch}/${config.scheduler.max_wait_ms} ms, mqtt ${broker}`,
    secrets,
  );
}

/**
 * One warning line when a GPU provider the file lists cannot load on this machine (each with
 * its reason), or null: not an error, since the box the file is for may differ, and the daemon
 * falls back along the list, saying so. `probe` is injectable for tests.
 */
export async function providerWarning(
  config: Pick<Config, 'detector' | 'models'>,
  probe: (p: ProviderName) => Promise<string | null> = (p) => probeProvider(p, config.detector.webgpu),
): Promise<string | null> {
  const failed: string[] = [];
  for (const p of configuredGpuProviders(config)) {
    const reason = await probe(p);
    if (reason !== null) failed.push(`${p} (${reason})`);
  }
  if (failed.length === 0) return null;
  return `warning: ${failed.length === 1 ? 'a configured GPU provider cannot' : 'configured GPU providers cannot'} load on this machine: ${failed.join(', ')}; the daemon would fall back along the providers list here`;
}
