/** The scheduler stage's public interface: frames and submitted pictures in, batches per model out. */
export { FrameDropped, type CameraStats, type Drop } from './jobs.js';
export {
  type BatchDetections,
  type BatchDetector,
  type ModelAvailability,
  type ModelBatchStats,
  type ModelSet,
} from './models.js';
export {
  UnknownModel,
  type CacheAnswer,
  type ResultCache,
  type SchedulerDeps,
  type SchedulerStats,
} from './contract.js';
export { SUBMIT_QUEUE } from './pictures.js';
export { Scheduler } from './scheduler.js';
