/**
 * The publish stage's public interface: the MQTT connection, every topic Argus publishes with
 * its payload, per-frame detections, camera statuses, stats and Home Assistant discovery.
 */
export { Discovery, type DiscoveryDeps } from './ha-discovery.js';
export { areaLabels, cameraLabels } from './ha-configs.js';
export { Publisher } from './publisher.js';
export { MqttOutput, type Inbox, type OnMessage, type Output, type OutputStats } from './mqtt-output.js';
export { CameraStatuses, type CameraStatusesDeps } from './camera-status.js';
export { DetectionsPublisher } from './detections.js';
export { PublishLatency } from './latency.js';
export { lagSeconds, StatsPublisher, type CameraRates, type StatsSources } from './stats.js';
export {
  commandTopic,
  settingTopic,
  topics,
  type CameraStatusPayload,
  type CrossingPayload,
  type DetectionsPayload,
  type EventPayload,
  type HealthPayload,
  type SnapshotPayload,
  type ClipPayload,
  type StatsPayload,
  type Topic,
  type TopicMap,
  type Topics,
} from './topics.js';
