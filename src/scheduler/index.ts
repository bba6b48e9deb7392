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
  Scheduler,
  SUBMIT_QUEUE,
  UnknownModel,
  type CacheAnswer,
  type ResultCache,
  type SchedulerDeps,
  type SchedulerStats,
} from './scheduler.js';
