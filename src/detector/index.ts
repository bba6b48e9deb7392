/**
 * The detector stage's public interface: a model's plan, and a pool of ONNX Runtime sessions
 * in worker threads that takes letterboxed pictures and answers detections in source pixels.
 */
export {
  DeadlineError,
  Detector,
  DetectorError,
  type DetectorConfig,
  type DetectorStats,
} from './detector.js';
export { decodeYolo, resolveLayout, type OutputLayout, type RawDetection } from './decode.js';
export { checkLabels, ModelError, planModel, readLabels, type ModelPlan } from './model.js';
export { rgbToNchw } from './preprocess.js';
export { openDetector } from './open.js';
export { THREAD_NAME, type EngineSettings } from './protocol.js';
export { configuredGpuProviders, probeProvider } from './probe.js';
export { BASE_SESSION_OPTIONS, providerOption } from './providers.js';
export { toDetections } from './results.js';
