import type { Result } from '../core/frame.js';
import type { ZonedDetection } from './filters.js';
import type { DetectionTrack } from './tracker.js';

/**
 * An answered frame as tracking saw it, made once per answer (events/object-events.ts) and
 * handed to the parts that use it (the detections topic, the live view): its detections after
 * the camera's filters, with their zones, and what tracking made of each.
 */
export interface TrackedResult {
  result: Result;
  /** The camera's detections after its filters, with their zones. */
  detections: readonly ZonedDetection[];
  /** What tracking made of each detection, in the same order; undefined when tracking failed on this frame. */
  tracks: readonly DetectionTrack[] | undefined;
}
