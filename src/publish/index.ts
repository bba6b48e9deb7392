/**
 * The publish stage's public interface: MQTT output (an embedded broker when none is
 * configured), per-frame detections, object events, counts, camera statuses, stats and Home
 * Assistant discovery; JPEGs of frames as the model saw them.
 */
export { EmbeddedBroker, type BrokerStats } from './broker.js';
export { Discovery } from './ha-discovery.js';
export { applyCameraFilters, type ZonedDetection } from './filters.js';
export { annotatedJpeg, MAX_WIDTH, MIN_WIDTH } from './jpeg.js';
export { MqttOutput, type Inbox, type Output, type OutputStats } from './mqtt-output.js';
export { Reporter, type CountsInView, type ReporterDeps } from './reporter.js';
export { lagSeconds, StatsPublisher, type CameraRates, type StatsSources } from './stats.js';
export { topics, type Topics } from './topics.js';
