import type { LoadedConfig } from '../config/index.js';
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
