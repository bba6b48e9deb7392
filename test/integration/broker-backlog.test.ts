import { describe, it } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { sectionConfig } from '../../src/config/schema.js';
import { EmbeddedBroker } from '../../src/publish/broker.js';
import { MqttOutput } from '../../src/publish/mqtt-output.js';
import { waitFor } from '../helpers/env.js';
import { rawClient, wire } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

type T = { after: (fn: () => Promise<void> | void) => void };

/** The embedded broker as the daemon runs it, with Argus' own client connected. */
async function embedded(t: T, settings: Record<string, unknown> = {}) {
  const port = await freePort();
  const cfg = sectionConfig('mqtt', {
    reconnect_period_s: 0.2,
    embedded: { host: '127.0.0.1', port, ...settings },
  });
  const broker = new EmbeddedBroker(cfg, pino({ level: 'silent' }));
  await broker.start();
  const { url, mqtt: login } = broker.ownClient();
  const argus = new MqttOutput(url, login, 'argus/status', pino({ level: 'silent' }));
  argus.start();
  t.after(async () => {
    await argus.stop();
    await broker.stop();
  });
  await waitFor("Argus' client to connect", () => argus.stats().connected, 10_000);
  return { broker, argus, port, url };
}

/** A client that reads and counts what it gets, by topic. */
async function reader(t: T, url: string, filter: string, qos: 0 | 1 = 0) {
  const client: MqttClient = mqtt.connect(url, { clientId: `reader-${qos}`, reconnectPeriod: 0 });
  t.after(() => client.endAsync(true).then(() => undefined));
  const counts = new Map<string, number>();
  client.on('message', (topic) => counts.set(topic, (counts.get(topic) ?? 0) + 1));
  await new Promise<void>((r) => client.once('connect', () => r()));
  await client.subscribeAsync(filter, { qos });
  return { client, got: (topic: string) => counts.get(topic) ?? 0 };
}

describe('embedded MQTT broker: clients that do not keep up (issue 24)', () => {
  it('survives a burst of 20,000 messages in one write, after 200 to a subscriber, the rest to a topic no one subscribed to', async (t) => {
    // aedes' pool of 100 messages in flight queued the rest; when a slot came free, the queued
    // messages no one subscribed to were released in one synchronous chain: a stack overflow.
    const { url, port } = await embedded(t);
    const other = await reader(t, url, 'a');
    const flooder = await rawClient(t, port, 'flooder');
    const publish = (topic: string): Buffer =>
      Buffer.concat([wire.publishHeader(topic, 1), Buffer.from('x')]);
    flooder.socket.write(
      Buffer.concat([
        ...Array.from({ length: 200 }, () => publish('a')),
        ...Array.from({ length: 20_000 }, () => publish('b')),
      ]),
    );
    flooder.socket.write(publish('a'));
    await waitFor('the 201 messages to a', () => other.got('a') === 201, 20_000);
  });
});
