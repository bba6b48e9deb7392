/** The scheduler stage's public interface: frames and submitted pictures in, batches out. */
export {
  FrameDropped,
  Scheduler,
  type BatchDetections,
  type BatchDetector,
  type CameraStats,
  type Drop,
  type ResultCache,
  type SchedulerDeps,
  type SchedulerStats,
} from './scheduler.js';
