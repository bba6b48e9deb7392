/**
 * The tracker stage: per camera, objects followed from frame to frame (a Kalman filter per
 * track, one assignment per frame), their zones, loitering and line crossings; the camera's
 * filters and zones applied to a frame's detections first. Pure code: no I/O, no clock of its own.
 */
export {
  applyCameraFilters,
  boxMeetsPolygon,
  inZone,
  insidePolygon,
  type ZonedDetection,
} from './filters.js';
export { crossings, type LineConfig, type Side } from './lines.js';
export {
  groundPlane,
  GroundTrack,
  homography,
  project,
  SPEED_UNITS,
  type Homography,
  type SpeedUnit,
} from './speed.js';
export { ZonePresence, type ZoneArea } from './zones.js';
export { type TrackerAreas } from './areas.js';
export { type Count, type TrackCounts } from './counts.js';
export { type LineCrossing, type ObjectEvent, type SpeedReport, type TrackerEvent } from './events.js';
export { Tracker, type DetectionTrack, type Sighting } from './tracker.js';
export { type TrackedResult } from './tracked.js';
