/** The queue stage's public interface: bounded, drop-oldest, every drop counted. */
export { FrameQueue, type DropReason, type Timestamped } from './frame-queue.js';
