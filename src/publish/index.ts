/**
 * The publish stage's public interface: the MQTT connection, every topic Argus publishes with
 * its payload, per-frame detections, camera statuses, stats and Home Assistant discovery.
 */
export { Discovery } from './ha-discovery.js';
export { areaLabels, cameraLabels } from './ha-configs.js';
export { MqttOutput, type Inbox, type Output, type OutputStats } from './mqtt-output.js';
export { DetectionsGate } from './detections-gate.js';
export { lagSeconds, StatsPublisher, type CameraRates, type StatsSources } from './stats.js';
export {
  topics,
  type CameraStatusPayload,
  type CrossingPayload,
  type DetectionsPayload,
  type EventPayload,
  type SnapshotPayload,
  type StatsPayload,
  type Topics,
} from './topics.js';
