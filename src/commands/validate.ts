import type { LoadedConfig } from '../config/index.js';
import { scrub } from '../redact.js';

/** The one-line summary `argus validate` prints for a valid file, secrets scrubbed. */
export function summarize({ file, config, secrets }: LoadedConfig): string {
  const cams = Object.values(config.cameras);
  const enabled = cams.filter((c) => c.enabled).length;
  const broker = config.mqtt.url ?? `embedded ${config.mqtt.embedded.host}:${config.mqtt.embedded.port}`;
  return scrub(
    `${file}: valid; ${cams.length} camera${cams.length === 1 ? '' : 's'} (${enabled} enabled), ` +
      `model ${config.model.path}, providers ${config.detector.providers.join('>')}, ` +
      `batch ${config.scheduler.max_batch}/${config.scheduler.max_wait_ms} ms, mqtt ${broker}`,
    secrets,
  );
}
