/** The config stage's public interface: one schema, a loader with located errors, reload diffs. */
export { diffCameras, diffConfig, type CameraChanges, type ConfigChanges } from './diff.js';
export {
  ConfigError,
  dottedPath,
  loadConfig,
  MAX_CONFIG_BYTES,
  parseConfig,
  type ConfigIssue,
  type LoadedConfig,
  type PathKey,
} from './load.js';
export {
  cameraFps,
  cameraPriority,
  cameraSettings,
  configSchema,
  FPS_MIN,
  LIMITS,
  NO_MODE,
  modelConfig,
  HWACCELS,
  PROVIDERS,
  sectionConfig,
  topicLevelProblem,
  type CameraConfig,
  type CameraSwitches,
  type Config,
  type HwaccelName,
  type ModelConfig,
  type ProviderName,
  type RemoteModelConfig,
} from './schema.js';
