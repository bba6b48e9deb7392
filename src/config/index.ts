/** The config stage's public interface: one schema, a loader with located errors, reload diffs. */
export { diffConfig, type CameraChanges, type ConfigChanges } from './diff.js';
export { ConfigError, loadConfig, parseConfig, type ConfigIssue, type LoadedConfig } from './load.js';
export {
  configSchema,
  PROVIDERS,
  sectionConfig,
  topicLevelProblem,
  type CameraConfig,
  type Config,
  type ProviderName,
} from './schema.js';
