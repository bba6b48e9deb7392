import { configSchema, type CameraConfig, type Config } from '../../src/config/index.js';

/** A whole configuration with its defaults, for stages built in tests. */
export function config(over: Record<string, unknown> = {}): Config {
  return configSchema.parse({ model: { path: 'model.onnx' }, ...over });
}

/** One camera's section with its defaults (a lavfi test source unless told otherwise). */
export function cameraConfig(over: Record<string, unknown> = {}): CameraConfig {
  return config({ cameras: { cam: { url: 'lavfi:testsrc', ...over } } }).cameras.cam!;
}
