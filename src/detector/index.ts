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
export { resolveLayout } from './decode.js';
export { ModelError, planModel, type ModelPlan } from './model.js';
export { openDetector } from './open.js';
export { BASE_SESSION_OPTIONS, providerOption } from './providers.js';
