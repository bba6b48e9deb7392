/**
 * Object events and what they leave: event payloads and history records (kept in the state
 * directory, bounded), each event's snapshots, line crossings' cumulative counts, and the
 * counts of what is in view.
 */
export { EventStore, RESCUE_RETRY_MS, type EventStoreLimits } from './event-store.js';
export { type Snapshot, type SnapshotFrame, type StoredEvent } from './event-record.js';
export { SnapshotFrames, type NoSnapshot, type SnapshotFrameCounts } from './snapshot-frames.js';
export { type EventQuery } from './event-query.js';
export {
  Clips,
  MAX_RANGE_MS,
  type ClipSource,
  type ClipsDeps,
  type NoClip,
  type OpenedClip,
} from './clips.js';
export { type CountsInView } from './counts.js';
export { ObjectEvents, type LiveObject, type ObjectEventsDeps } from './object-events.js';
export { FrameFit, shapesOutside } from './frame-fit.js';
