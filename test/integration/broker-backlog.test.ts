import assert from 'node:assert/strict';
import { createConnection, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import mqtt, { type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { sectionConfig } from '../../src/config/schema.js';
import { EmbeddedBroker } from '../../src/broker/broker.js';
import { MqttOutput } from '../../src/publish/mqtt-output.js';
import { waitFor } from '../helpers/env.js';
import { connectOnce, rawClient, wire } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';
import { stalledSubscriber } from '../helpers/stalled-subscriber.js';

type T = { after: (fn: () => Promise<void> | void) => void };
const KB = 1024;

/**
 * The embedded broker as the daemon runs it, with Argus' own client connected, and a clock the
 * test moves (how long a client has been behind is read from it).
 */
async function embedded(t: T, settings: Record<string, unknown> = {}) {
  const port = await freePort();
  const cfg = sectionConfig('mqtt', {
    reconnect_period_s: 0.2,
    embedded: { host: '127.0.0.1', port, ...settings },
  });
  const lines: string[] = [];
  const clock = { at: Date.now(), now: () => clock.at };
  const broker = new EmbeddedBroker(
    cfg,
    pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) }),
    clock,
  );
  await broker.start();
  const { url, mqtt: login } = broker.ownClient();
  const argus = new MqttOutput(url, login, 'argus/status', pino({ level: 'silent' }));
  argus.start();
  t.after(async () => {
    await argus.stop();
    await broker.stop();
  });
  await waitFor("Argus' client to connect", () => argus.stats().connected, 10_000);
  const logged = (reason: string): Record<string, unknown>[] =>
    lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reason === reason);
  return { broker, argus, port, url, clock, logged };
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

/** Resumes a stalled socket until the broker's close reaches it: the bytes it read meanwhile. */
async function resumeUntilClosed(socket: Socket, closed: Promise<void>): Promise<number> {
  let read = 0;
  socket.on('data', (d: Buffer) => (read += d.length));
  socket.resume();
  await closed;
  return read;
}

/**
 * Issue 24's attack: a subscriber to x/# that stops reading, while a publisher sends `messages`
 * of `size` to x/y, which a reading client and Argus' own client subscribe to as well. Paced by
 * the reader (never more than 600 KiB ahead of it), so that the reader is never over
 * max_queued_kb itself: it gets every message, or the stalled subscriber holds it up. aedes'
 * own drain timeout (60 s) comes long after the deadline.
 */
async function stallWhilePublishing(t: TestContext, size: number, messages: number): Promise<void> {
  const { broker, argus, port, url, clock, logged } = await embedded(t, {
    max_queued_kb: 1024,
    max_behind_s: 10,
  });
  const stalled = await stalledSubscriber(port, 'x/#');
  const other = await reader(t, url, 'x/#');
  let own = 0;
  argus.subscribe('x/#', () => own++);
  const publisher = mqtt.connect(url, { clientId: 'publisher', reconnectPeriod: 0 });
  t.after(() => publisher.endAsync(true).then(() => undefined));
  await new Promise<void>((r) => publisher.once('connect', () => r()));

  const ahead = Math.floor((600 * KB) / size);
  const payload = Buffer.alloc(size, 1);
  const deadline = Date.now() + 40_000;
  const heldUp = (n: number): string => `held up: the reader got ${other.got('x/y')}, Argus ${own} of ${n}`;
  for (let n = 1; n <= messages; n++) {
    while (n - other.got('x/y') > ahead || n - own > ahead) {
      if (Date.now() > deadline) assert.fail(heldUp(n - 1));
      await new Promise((r) => setTimeout(r, 5));
    }
    await publisher.publishAsync('x/y', payload, { qos: 0 });
  }
  await waitFor('the last messages', () => other.got('x/y') === messages && own === messages, 40_000).catch(
    () => assert.fail(heldUp(messages)),
  );

  const r = broker.stats().refusals;
  // The kernel's socket buffers took some, its backlog max_queued_kb, the rest was dropped.
  assert.ok(r.backlog > messages / 2, `${r.backlog} of ${messages} messages dropped for the stalled client`);
  const drop = logged('backlog')[0]!;
  assert.equal(drop.client, 'stalled');
  assert.ok((drop.queued_bytes as number) > 1024 * KB, 'dropped when over max_queued_kb');
  assert.equal(r.slow, 0, 'not disconnected before max_behind_s');

  clock.at += 10_000;
  await waitFor('the stalled client to be disconnected', () => broker.stats().refusals.slow === 1, 10_000);
  const slow = logged('slow')[0]!;
  assert.equal(slow.client, 'stalled');
  const queued = slow.queued_bytes as number;
  // What was let through while its socket was still empty (at most the 600 KiB the publisher is
  // ahead) may go over max_queued_kb once.
  assert.ok(queued <= 2048 * KB, `${queued} bytes waited for it: max_queued_kb and one burst at most`);
  const read = await resumeUntilClosed(stalled.socket, stalled.closed);
  assert.ok(
    read < (messages / 2) * size,
    `it read ${read} bytes: what the kernel held and its backlog, no more`,
  );
  assert.equal(argus.stats().reconnects, 0, "Argus' client was never dropped");
  t.diagnostic(
    `reader ${other.got('x/y')}/${messages}, Argus ${own}/${messages}; stalled: ${r.backlog} dropped, ` +
      `${queued} bytes waiting when disconnected, ${read} read in all`,
  );
}

describe('embedded MQTT broker: clients that do not keep up (issue 24)', () => {
  it("a subscriber that stops reading holds up no one: the reading client and Argus' own client get every 200 KiB message, its backlog stays under max_queued_kb (QoS 0 dropped), and it is disconnected after max_behind_s", (t) =>
    stallWhilePublishing(t, 200 * KB, 300));

  it('so it does with small messages, many of which fit before max_queued_kb', (t) =>
    stallWhilePublishing(t, 8 * KB, 3000));

  it('sends QoS 1 messages to a subscriber over max_queued_kb, and disconnects it at twice that; the reader gets them all', async (t) => {
    const { broker, argus, port, url } = await embedded(t, { max_queued_kb: 256 });
    const stalled = await stalledSubscriber(port, 'argus/events', { qos: 1 });
    const other = await reader(t, url, 'argus/events', 1);
    const event = 'e'.repeat(100 * KB);
    const deadline = Date.now() + 40_000;
    let sent = 0;
    while (broker.stats().refusals.slow === 0) {
      if (Date.now() > deadline) assert.fail(`not disconnected after ${sent} events of 100 KiB`);
      if (sent - other.got('argus/events') < 10) {
        argus.event('argus/events', event);
        sent++;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(broker.stats().refusals.backlog, 0, 'no QoS 1 message was dropped');
    await resumeUntilClosed(stalled.socket, stalled.closed);
    argus.event('argus/events', 'after');
    await waitFor('every event at the reader', () => other.got('argus/events') === sent + 1, 20_000);
  });

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

  it('closes connections beyond max_connecting that have not sent CONNECT, and those that send none within connect_timeout_s; connected clients take no room', async (t) => {
    const { broker, port, url } = await embedded(t, { max_connecting: 5, connect_timeout_s: 1 });
    const clients = await Promise.all([1, 2, 3].map(() => connectOnce(t, url)));
    assert.ok(clients.every((c) => c.client));

    let closed = 0;
    const idle = await Promise.all(
      Array.from({ length: 20 }, () => {
        const socket = createConnection(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.on('data', () => undefined);
        socket.once('close', () => closed++);
        t.after(() => void socket.destroy());
        return new Promise<Socket>((r) => socket.once('connect', () => r(socket)));
      }),
    );
    await waitFor('15 of 20 idle connections to be closed at once', () => closed >= 15, 10_000);
    assert.equal(broker.stats().refusals.connecting, 15);
    await waitFor('the other 5 to be closed after connect_timeout_s', () => closed === 20, 20_000);
    assert.equal(broker.stats().refusals.connect_timeout, 5);
    assert.ok(idle.every((s) => s.destroyed));
    const later = await connectOnce(t, url);
    assert.ok(later.client, 'then clients connect again');
  });
});
