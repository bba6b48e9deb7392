import type { Output } from './mqtt-output.js';
import type { Topic, TopicMap, TopicsSent } from './topics.js';

type Payload<K extends keyof TopicMap> = TopicMap[K]['payload'];

/** A payload as it goes on the wire: a JPEG as it is, a number or word as text, the rest as JSON. */
function encode(payload: Payload<keyof TopicMap>): string | Buffer {
  if (Buffer.isBuffer(payload)) return payload;
  return typeof payload === 'object' ? JSON.stringify(payload) : String(payload);
}

/**
 * Publishes through an Output (the MQTT connection, or a fake in tests) by TopicMap: each
 * method takes only the topics sent its way, each topic only its payload.
 */
export class Publisher {
  constructor(private readonly out: Output) {}

  /** QoS 0, not retained: dropped (and counted) while the broker is away. */
  detection<K extends TopicsSent<0, false>>(topic: Topic<K>, payload: Payload<K>): void {
    this.out.detection(topic, encode(payload) as string);
  }

  /** QoS 1, not retained: kept in a bounded buffer while the broker is away. */
  event<K extends TopicsSent<1, false>>(topic: Topic<K>, payload: Payload<K>): void {
    this.out.event(topic, encode(payload) as string);
  }

  /** QoS 1, retained: only the latest value of each topic is kept while the broker is away. */
  state<K extends TopicsSent<1, true>>(topic: Topic<K>, payload: Payload<K>): void {
    this.out.state(topic, encode(payload));
  }

  /** Deletes a retained message: an empty retained message on its topic. */
  clear(topic: Topic<TopicsSent<1, true>>): void {
    this.out.state(topic, '');
  }
}
