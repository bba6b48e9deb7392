/**
 * The embedded MQTT broker (aedes) Argus runs when `mqtt.url` is not set: its logins, its
 * limits on what clients may publish and retain, and its bounds on slow subscribers.
 */
export { EmbeddedBroker, type BrokerStats, type CommandListener } from './broker.js';
export { REFUSALS, type Refusal } from './broker-policy.js';
