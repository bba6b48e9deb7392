import { configSchema, type CameraConfig, type Config } from '../../src/config/index.js';

/** A whole configuration with its defaults, for stages built in tests. */
export function config(over: Record<string, unknown> = {}): Config {
  return configSchema.parse({ model: { path: 'model.onnx' }, ...over });
}

/**
 * One camera's section with its defaults (a lavfi test source unless told otherwise); a model it
 * names other than `default` is defined for it.
 */
export function cameraConfig(over: Record<string, unknown> = {}): CameraConfig {
  const model = typeof over.model === 'string' && over.model !== 'default' ? over.model : undefined;
  return config({
    ...(model ? { models: { [model]: { path: `${model}.onnx` } } } : {}),
    cameras: { cam: { url: 'lavfi:testsrc', ...over } },
  }).cameras.cam!;
}

/** A zone's points for tests that need one anywhere (a triangle in the top-left corner). */
export const ZONE_POINTS = [
  [0, 0],
  [10, 0],
  [10, 10],
];

/** A line's points for tests that need one anywhere. */
export const LINE_POINTS = [
  [0, 0],
  [9, 9],
];
