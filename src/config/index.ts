/** The config stage's public interface: one schema, a loader with located errors, reload diffs. */
export { diffCameras, diffConfig, type CameraChanges, type ConfigChanges } from './diff.js';
export { ConfigError, dottedPath, type ConfigIssue, type PathKey } from './issues.js';
export { COCO, COCO_LABELS, nearest, untrackedLabels, type LabelReference } from './labels.js';
export { loadConfig, MAX_CONFIG_BYTES, parseConfig, type LoadedConfig, type LoadOptions } from './load.js';
export { HWACCELS, type CameraConfig, type CamerasNow, type HwaccelName } from './camera.js';
export { type FleetConfig } from './fleet.js';
export {
  PROVIDERS,
  WEBGPU_VENDORS,
  type ModelConfig,
  type ProviderName,
  type RemoteModelConfig,
  type WebgpuVendor,
} from './models.js';
export { RESERVED_NAMES, topicWordProblem } from './names.js';
export { LIMITS, topicLevelProblem } from './primitives.js';
export {
  cameraFps,
  cameraPriority,
  cameraSettings,
  FPS_MIN,
  NO_MODE,
  type CameraSwitches,
} from './runtime.js';
export { configSchema, modelConfig, sectionConfig, type Config } from './schema.js';
export {
  HEALTH_FAULTS,
  healthOf,
  type CameraHealth,
  type HealthFault,
  type HealthSettings,
} from './health.js';
