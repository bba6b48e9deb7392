import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { sectionConfig } from '../../src/config/schema.js';
import { EmbeddedBroker } from '../../src/broker/broker.js';
import { MqttOutput } from '../../src/publish/mqtt-output.js';
import { waitFor } from '../helpers/env.js';
import { connectOnce, publishOnce, rawClient, Subscriber, wire } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

type T = Parameters<typeof rawClient>[0];
const MB = 1024 * 1024;
const ARGUS_ID = 'argus-under-test';

/**
 * The embedded broker on a free port with Argus' own client connected to it as the daemon
 * wires them (src/daemon.ts): MqttOutput logs in with the login the broker made for this run.
 */
async function embedded(t: T, settings: Record<string, unknown> = {}, commands = false) {
  const port = await freePort();
  const cfg = sectionConfig('mqtt', {
    client_id: ARGUS_ID,
    reconnect_period_s: 0.2,
    embedded: { host: '127.0.0.1', port, ...settings },
  });
  const lines: string[] = [];
  const broker = new EmbeddedBroker(
    cfg,
    pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) }),
    undefined,
    commands,
  );
  await broker.start();
  const { url, mqtt } = broker.ownClient();
  const argus = new MqttOutput(url, mqtt, 'argus/status', pino({ level: 'silent' }));
  argus.start();
  t.after(async () => {
    await argus.stop();
    await broker.stop();
  });
  await waitFor("Argus' client to connect", () => argus.stats().connected, 10_000);
  return { broker, argus, port, url: broker.url, log: () => lines.join('') };
}

describe('embedded MQTT broker (in process, with real clients)', () => {
  it("closes a connection at the header of a packet over max_message_kb, before its body is buffered; Argus' own packets are not limited", async (t) => {
    const { broker, argus, port, url, log } = await embedded(t, { max_message_kb: 64 });
    const flooder = await rawClient(t, port, 'flooder');
    flooder.socket.write(wire.publishHeader('junk/big', 100 * MB, { retain: true }));
    let closed = false;
    void flooder.closed.then(() => (closed = true));
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024);
    while (!closed && sent < 32 * MB) {
      sent += chunk.length;
      if (!flooder.socket.write(chunk))
        await Promise.race([new Promise((r) => flooder.socket.once('drain', r)), flooder.closed]);
    }
    assert.ok(closed, `the broker still reads after ${sent / MB} MB of a 100 MB packet`);
    // What the kernel's socket buffers took before the broker closed; the broker read one chunk.
    assert.ok(sent < 16 * MB, `${sent / MB} MB sent before the connection closed`);
    assert.equal(broker.stats().refusals.oversize, 1);
    assert.match(log(), /"reason":"oversize".*"packet":"publish","bytes":104857\d\d\d/);

    assert.equal(await publishOnce(t, url, 'other/fits', Buffer.alloc(60 * 1024)), true, '60 KiB fits');
    assert.equal(await publishOnce(t, url, 'other/big', Buffer.alloc(65 * 1024)), false, '65 KiB does not');
    const sub = new Subscriber(url, '#');
    t.after(() => sub.end());
    await sub.waitFor('the subscription', () => sub.on('argus/status').length > 0);
    argus.state('argus/cameras/a/status', 'x'.repeat(200 * 1024));
    await sub.waitFor("Argus' 200 KiB message", () => sub.on('argus/cameras/a/status').length > 0);
    assert.equal(sub.on('argus/cameras/a/status')[0]!.payload.length, 200 * 1024);
    assert.deepEqual(
      sub.messages.filter((m) => m.topic.startsWith('junk/')),
      [],
      'the refused packet was not retained',
    );
  });

  it("bounds other clients' retained messages by count and bytes; Argus' own are always stored", async (t) => {
    const { broker, argus, url, log } = await embedded(t, { max_retained_messages: 3, max_retained_kb: 2 });
    const retain = { retain: true };
    for (const n of [1, 2, 3])
      assert.equal(await publishOnce(t, url, `other/${n}`, 'x'.repeat(100), retain), true, `other/${n}`);
    assert.equal(await publishOnce(t, url, 'other/4', 'x', retain), false, 'a fourth retained topic');
    assert.equal(await publishOnce(t, url, 'other/1', '', retain), true, 'an empty payload deletes');
    assert.equal(await publishOnce(t, url, 'other/5', 'x'.repeat(2000), retain), false, 'over 2 KiB in all');
    assert.equal(await publishOnce(t, url, 'other/5', 'x'.repeat(1000), retain), true, 'within 2 KiB');
    assert.equal(
      await publishOnce(t, url, 'other/live', 'x'.repeat(5000)),
      true,
      'not retained: not counted',
    );
    argus.state('argus/cameras/a/status', 'streaming');
    assert.deepEqual(broker.stats().retained, { messages: 3, bytes: 3 * 7 + 100 + 100 + 1000 });

    const late = new Subscriber(url, '#');
    t.after(() => late.end());
    await late.waitFor("Argus' retained state", () => late.on('argus/cameras/a/status').length > 0);
    await late.retainedDone();
    assert.deepEqual(
      late.messages
        .filter((m) => m.topic.startsWith('other/'))
        .map((m) => [m.topic, m.payload.length, m.retain])
        .sort(),
      [
        ['other/2', 100, true],
        ['other/3', 100, true],
        ['other/5', 1000, true],
      ],
    );
    assert.deepEqual(
      late.messages
        .filter((m) => m.topic.startsWith('argus/'))
        .map((m) => [m.topic, m.payload])
        .sort(),
      [
        ['argus/cameras/a/status', 'streaming'],
        ['argus/status', 'online'],
      ],
    );
    assert.equal(broker.stats().refusals.retained_limit, 2);
    assert.match(log(), /"reason":"retained_limit"/);
  });

  it('lets only Argus publish under its base topic: foreign messages, wills and client ids there change nothing subscribers see', async (t) => {
    const { broker, argus, url } = await embedded(t);
    argus.state('argus/cameras/x/status', 'streaming');
    const sub = new Subscriber(url, '#');
    t.after(() => sub.end());
    await sub.waitFor("Argus' states", () => sub.on('argus/cameras/x/status').length > 0);

    for (const topic of ['argus/status', 'argus/cameras/x/status', 'argus/events', 'argus'])
      assert.equal(await publishOnce(t, url, topic, 'offline', { retain: true }), false, topic);
    const will = { topic: 'argus/status', payload: Buffer.from('offline'), qos: 1 as const, retain: true };
    assert.deepEqual(await connectOnce(t, url, { will }), { refused: 5 }, 'a last will on argus/status');
    // Taking over Argus' client id would drop Argus' connection and send its will.
    assert.deepEqual(await connectOnce(t, url, { clientId: ARGUS_ID }), { refused: 2 }, "Argus' client id");
    // A persistent session would queue every message for a client that never comes back.
    assert.deepEqual(await connectOnce(t, url, { clientId: 'keeper', clean: false }), { refused: 5 });

    assert.equal(
      await publishOnce(t, url, 'homeassistant/status', 'online', { retain: true }),
      true,
      'other topics are open to every client',
    );
    argus.state('argus/cameras/x/status', 'backoff');
    await sub.waitFor('the later state', () => sub.on('argus/cameras/x/status').length === 2);
    await sub.waitFor('homeassistant/status', () => sub.on('homeassistant/status').length === 1);
    // A message Argus sends after them all: whatever came through before it has come.
    argus.state('argus/cameras/x/last', 'x');
    await sub.waitFor('the last state', () => sub.on('argus/cameras/x/last').length === 1);
    assert.deepEqual(
      sub.messages.filter((m) => m.topic.startsWith('argus')).map((m) => [m.topic, m.payload]),
      [
        ['argus/status', 'online'],
        ['argus/cameras/x/status', 'streaming'],
        ['argus/cameras/x/status', 'backoff'],
        ['argus/cameras/x/last', 'x'],
      ],
    );
    assert.equal(argus.stats().reconnects, 0, "Argus' connection was never dropped");
    const r = broker.stats().refusals;
    assert.deepEqual([r.base_topic, r.will, r.client_id, r.session], [4, 1, 1, 1]);
  });

  it('with embedded.username and password, refuses clients without them or with wrong ones, and serves those with them', async (t) => {
    const login = { username: 'viewer', password: 'Viewer-Secret-7' };
    const { argus, url, log } = await embedded(t, login);
    assert.deepEqual(await connectOnce(t, url), { refused: 5 }, 'no login: not authorised');
    assert.deepEqual(await connectOnce(t, url, { ...login, password: 'Wrong-Pw-9' }), { refused: 4 });
    assert.deepEqual(await connectOnce(t, url, { username: 'argus-daemon', password: 'guess' }), {
      refused: 4,
    });
    const sub = new Subscriber(url, 'argus/#', login);
    t.after(() => sub.end());
    await sub.waitFor('argus/status', () => sub.on('argus/status').length > 0);
    argus.event('argus/events', 'e1');
    await sub.waitFor('an event', () => sub.on('argus/events').length === 1);
    assert.equal(
      log().match(/"reason":"login"/g)?.length,
      1,
      'three refusals in a row: one log line (the rest are counted)',
    );
    assert.ok(!log().includes('Viewer-Secret-7') && !log().includes('Wrong-Pw-9'), 'no password is logged');
  });

  it("refuses clients beyond max_clients until one leaves; Argus' own client takes no room", async (t) => {
    const { argus, url, broker, log } = await embedded(t, { max_clients: 2 });
    const first = new Subscriber(url, 'argus/#');
    t.after(() => first.end());
    await first.waitFor('argus/status', () => first.on('argus/status').length > 0);
    const second = await connectOnce(t, url);
    assert.ok(second.client, "a second client connects: Argus' own is not counted");
    assert.deepEqual(await connectOnce(t, url), { refused: 3 }, 'a third: server unavailable');
    const takeover = await connectOnce(t, url, { clientId: second.client.options.clientId });
    assert.ok(takeover.client, 'a client reconnecting with its id takes its old place');
    second.client = takeover.client;
    argus.event('argus/events', 'still served');
    await first.waitFor('an event', () => first.on('argus/events').length === 1);
    assert.equal(broker.stats().refusals.clients, 1);
    await second.client.endAsync();
    let again: Awaited<ReturnType<typeof connectOnce>> = { refused: -1 };
    const end = Date.now() + 5000;
    while (!again.client && Date.now() < end) again = await connectOnce(t, url);
    assert.ok(again.client, 'once one left, the next connects');
    assert.match(log(), /"reason":"clients".*max_clients are connected/);
  });

  it('closes a connection that leaves more than 16 QoS 2 messages waiting for their PUBREL', async (t) => {
    const { broker, port } = await embedded(t);
    const c = await rawClient(t, port, 'half-open');
    let closed = false;
    void c.closed.then(() => (closed = true));
    for (let id = 1; id <= 16; id++)
      c.socket.write(Buffer.concat([wire.publishHeader('q2/x', 1, { qos: 2, id }), Buffer.from('x')]));
    await waitFor('16 PUBRECs', () => c.received().length === 4 + 16 * 4, 5000);
    assert.equal(closed, false);
    c.socket.write(Buffer.concat([wire.publishHeader('q2/x', 1, { qos: 2, id: 17 }), Buffer.from('x')]));
    await waitFor('the connection to close', () => closed, 5000);
    assert.equal(broker.stats().refusals.inflight, 1);
  });

  it(
    'takes control commands only from clients logged in with embedded.username and password, naming each',
    { timeout: 30_000 },
    async (t) => {
      // Without a login anyone may connect, and nobody may steer.
      const open = await embedded(t, {}, true);
      let heard: string[] = [];
      open.broker.onCommand((topic, payload, retained, id) =>
        heard.push(`${id} ${topic} ${payload} ${retained}`),
      );
      assert.equal(await publishOnce(t, open.url, 'argus/cameras/x/detect/set', 'OFF'), false, 'anonymous');
      assert.equal(open.broker.stats().refusals.control, 1);
      assert.match(open.log(), /"reason":"control".*only clients logged in/);
      assert.deepEqual(heard, []);

      const login = { username: 'panel', password: 'Panel-Secret-7' };
      const { broker, url } = await embedded(t, login, true);
      heard = [];
      broker.onCommand((topic, payload, retained, id) => heard.push(`${id} ${topic} ${payload} ${retained}`));
      const { client } = await connectOnce(t, url, { ...login, clientId: 'ha-panel' });
      await client!.publishAsync('argus/cameras/x/detect/set', 'OFF', { qos: 1 });
      await client!.publishAsync('argus/mode/set', 'away', { qos: 1, retain: true });
      await waitFor('both commands', () => heard.length === 2, 5000);
      assert.deepEqual(heard, [
        'ha-panel argus/cameras/x/detect/set OFF false',
        'ha-panel argus/mode/set away true',
      ]);

      // Retained commands are kept by the broker as any retained message: within its bounds.
      const bounded = await embedded(t, { ...login, max_retained_messages: 2 }, true);
      const retain = { retain: true, login };
      for (const cam of ['a', 'b'])
        assert.equal(
          await publishOnce(t, bounded.url, `argus/cameras/${cam}/detect/set`, 'ON', retain),
          true,
        );
      assert.equal(
        await publishOnce(t, bounded.url, 'argus/cameras/c/detect/set', 'ON', retain),
        false,
        'a third',
      );
      assert.equal(bounded.broker.stats().refusals.retained_limit, 1);
    },
  );
});
