import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes } from 'aedes';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/load.js';
import { sectionConfig } from '../../src/config/schema.js';
import { EmbeddedBroker } from '../../src/broker/broker.js';
import { MqttOutput } from '../../src/publish/mqtt-output.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

const hasOpenssl = (): boolean => spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;

describe('MQTT output against a real broker (aedes, in process)', () => {
  it('drops detections, buffers events (bounded) and keeps the latest state while the broker is away, then delivers', async (t) => {
    const port = await freePort();
    const url = `mqtt://127.0.0.1:${port}`;
    const broker = new EmbeddedBroker(
      sectionConfig('mqtt', { embedded: { host: '127.0.0.1', port } }),
      pino({ level: 'silent' }),
    );
    const { config } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'mqtt:',
        `  url: ${url}`,
        `  username: ${broker.login.username}`,
        '  password: ${MQTT_PW}',
        '  buffer_size: 3',
        '  reconnect_period_s: 0.2',
      ].join('\n'),
      'c.yaml',
      { MQTT_PW: broker.login.password },
    );
    const lines: string[] = [];
    const out = new MqttOutput(
      url,
      config.mqtt,
      'argus/status',
      pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) }),
    );
    out.start();
    t.after(() => out.stop());
    for (let i = 0; i < 3; i++) out.detection('argus/cameras/a/detections', `d${i}`);
    for (let i = 0; i < 5; i++) out.event('argus/events', `e${i}`);
    out.state('argus/cameras/a/status', 'connecting');
    // Binary retained states (snapshot JPEGs) keep every byte, those that are not UTF-8 included.
    const jpeg = Buffer.from([0xff, 0xd8, ...Array.from({ length: 256 }, (_, i) => i), 0xff, 0xd9]);
    out.state('argus/cameras/a/person/snapshot', Buffer.from('an older one'));
    out.state('argus/cameras/a/person/snapshot', jpeg);
    out.state('argus/cameras/a/status', 'streaming');
    const away = out.stats();
    assert.deepEqual(
      [away.connected, away.detectionsDropped, away.eventsDropped, away.buffered],
      [false, 3, 2, 5],
    );

    await broker.start();
    t.after(() => broker.stop());
    const sub = new Subscriber(url);
    t.after(() => sub.end());
    await sub.waitFor('the buffered events', () => sub.on('argus/events').length === 3, 15_000);
    assert.deepEqual(
      sub.on('argus/events').map((m) => m.payload),
      ['e2', 'e3', 'e4'],
      'the oldest were dropped, the rest arrive in order',
    );
    await sub.waitFor(
      'state and availability',
      () => sub.on('argus/cameras/a/status').length > 0 && sub.on('argus/status').length > 0,
    );
    assert.deepEqual(
      sub.on('argus/cameras/a/status').map((m) => m.payload),
      ['streaming'],
    );
    assert.equal(sub.on('argus/status').at(-1)!.payload, 'online');
    assert.equal(sub.on('argus/cameras/a/detections').length, 0);
    await sub.waitFor('the snapshot', () => sub.on('argus/cameras/a/person/snapshot').length > 0);
    assert.deepEqual(
      sub.on('argus/cameras/a/person/snapshot').map((m) => m.data),
      [jpeg],
      'the latest, byte for byte',
    );
    // In the order last written (as a mode comes after the settings it brought).
    assert.deepEqual(
      sub.messages
        .map((m) => m.topic)
        .filter((topic) => topic === 'argus/cameras/a/status' || topic === 'argus/cameras/a/person/snapshot'),
      ['argus/cameras/a/person/snapshot', 'argus/cameras/a/status'],
    );
    const late = new Subscriber(url, 'argus/cameras/a/person/snapshot');
    t.after(() => late.end());
    await late.waitFor('the retained snapshot', () => late.messages.length > 0);
    assert.deepEqual([late.messages[0]!.data, late.messages[0]!.retain], [jpeg, true]);
    out.detection('argus/cameras/a/detections', 'live');
    await sub.waitFor('a live detection', () => sub.on('argus/cameras/a/detections').length === 1);
    assert.ok(out.stats().reconnects >= 1, 'mqtt.js did the reconnecting');
    assert.ok(!lines.join('').includes(broker.login.password), 'the password is never logged');
  });
});

describe('MQTT output that cannot connect', () => {
  it('scrubs the secrets of the config from the error it reports (/healthz, logs)', async (t) => {
    const { config, secrets } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'mqtt:',
        '  url: mqtt://${MQTT_HOST}:1883',
        '  reconnect_period_s: 5',
      ].join('\n'),
      'c.yaml',
      { MQTT_HOST: 'argus-secret-host.invalid' },
    );
    const out = new MqttOutput(
      config.mqtt.url!,
      config.mqtt,
      'argus/status',
      pino({ level: 'silent' }),
      secrets,
    );
    out.start();
    t.after(() => out.stop());
    await waitFor('a failed attempt', () => out.stats().lastError !== null, 20_000);
    const message = out.stats().lastError!.message;
    assert.match(message, /\*\*\*/, message);
    assert.doesNotMatch(message, /argus-secret-host/);
  });
});

describe('MQTT over TLS (mqtts://, real TLS server in front of aedes)', () => {
  it(
    'connects with the configured CA, and refuses a broker it cannot verify without crashing',
    { skip: hasOpenssl() ? false : 'openssl not found: TLS test skipped' },
    async (t) => {
      const dir = await tempDir(t);
      const key = join(dir, 'key.pem');
      const cert = join(dir, 'cert.pem');
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          key,
          '-out',
          cert,
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      const aedes = await Aedes.createBroker();
      const server = createTlsServer({ key: await readFile(key), cert: await readFile(cert) }, (socket) =>
        aedes.handle(socket),
      );
      const port = await freePort();
      await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
      t.after(async () => {
        await new Promise<void>((r) => aedes.close(() => r()));
        await new Promise<void>((r) => server.close(() => r()));
      });
      const url = `mqtts://127.0.0.1:${port}`;
      const configured = (tls: string[]) =>
        parseConfig(
          ['model:', '  path: m.onnx', 'mqtt:', `  url: ${url}`, '  reconnect_period_s: 0.2', ...tls].join(
            '\n',
          ),
          join(dir, 'c.yaml'),
          {},
        ).config.mqtt;

      const lines: string[] = [];
      const untrusted = new MqttOutput(
        url,
        configured([]),
        'argus/status',
        pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) }),
      );
      untrusted.start();
      t.after(() => untrusted.stop());
      const trusted = new MqttOutput(
        url,
        configured(['  tls:', '    ca: cert.pem']),
        'argus/status',
        pino({ level: 'silent' }),
      );
      trusted.start();
      t.after(() => trusted.stop());
      const deadline = Date.now() + 10_000;
      while (!trusted.stats().connected && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      assert.equal(trusted.stats().connected, true, 'connected with the CA from the config');
      assert.equal(untrusted.stats().connected, false);
      assert.match(lines.join(''), /self.signed|certificate/i, 'the refusal is logged');
    },
  );
});

describe('MQTT output against a broker that refuses its login (Mosquitto, or aedes)', () => {
  it('keeps retrying with backoff, says why, and connects once the login is fixed', async (t) => {
    const broker = await startBroker(t, { login: { username: 'argus', password: 'right-one' } });
    const { config } = parseConfig(
      [
        'model:',
        '  path: m.onnx',
        'mqtt:',
        '  username: argus',
        '  password: wrong-one',
        '  reconnect_period_s: 0.2',
      ].join('\n'),
      'c.yaml',
      {},
    );
    const lines: string[] = [];
    const out = new MqttOutput(
      broker.url,
      config.mqtt,
      'argus/status',
      pino({ level: 'warn' }, { write: (l: string) => lines.push(l) }),
    );
    out.start();
    t.after(() => out.stop());
    await waitFor('three refused attempts', () => out.stats().failures.auth >= 3, 20_000);
    const s = out.stats();
    assert.equal(s.connected, false);
    assert.equal(s.lastError?.cause, 'auth');
    assert.match(lines.join(''), /MQTT connection failed \(auth\)/);
    assert.ok(!lines.join('').includes('wrong-one'), 'the password is never logged');
    // Attempts are spaced out: 0.2 s doubling, not every 0.2 s.
    const before = out.stats().failures.auth;
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(
      out.stats().failures.auth - before <= 2,
      `${out.stats().failures.auth - before} attempts in 1 s`,
    );
    // The operator fixes the broker's side; Argus gets in without a restart.
    await broker.setLogin('argus', 'wrong-one');
    const sub = new Subscriber(broker.url, 'argus/status', { username: 'argus', password: 'wrong-one' });
    t.after(() => sub.end());
    await waitFor('connected', () => out.stats().connected, 30_000);
    assert.equal(out.stats().lastError, null);
    await sub.waitFor('online', () => sub.messages.at(-1)?.payload === 'online', 10_000);
  });
});
