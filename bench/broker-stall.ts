/**
 * Issue 24's attack on the embedded broker, measured: a subscriber to `x/#` that stops reading
 * (a raw socket, paused after its SUBACK), a publisher sending `--kb` KiB QoS 0 messages to
 * `x/y` as fast as its socket takes them (and `homeassistant/status`, which Argus' own client
 * subscribes to, once before them or after every `--status-every`), a client in a process of its own that reads `x/#` and `argus/#`,
 * and Argus' own client publishing `argus/tick` (QoS 0) every 100 ms. The broker runs in this
 * process as the daemon runs it (src/daemon.ts), the clients in children, so this process'
 * memory is the broker's.
 *
 *   node --expose-gc dist/bench/broker-stall.js [--messages 8000] [--kb 200] [--at 2500,8000]
 *                                               [--queued-kb 1024] [--no-stall] [--status-every 100]
 *
 * It runs against a build without `mqtt.embedded.max_queued_kb` too (leave `--queued-kb` out),
 * to measure before and after a change.
 *
 * Prints the broker's memory (MB: RSS, V8 heap, external buffers) before, when the publisher
 * has sent each count in `--at`, 5 s after it is done, 5 s after the stalled subscriber left, and
 * after every client left (with a GC), and with each the seconds since the attack began, what
 * the reading client had received (`read` of x/y, `ticks` of Argus'), what Argus' own client
 * had (`own`), and the broker's refusals. `--no-stall` leaves the stalled subscriber out: what the reader gets on its own.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import mqtt from 'mqtt';
import { pino } from 'pino';
import { sectionConfig } from '../src/config/schema.js';
import { EmbeddedBroker } from '../src/broker/broker.js';
import { MqttOutput } from '../src/publish/mqtt-output.js';
import { stalledSubscriber } from '../test/helpers/stalled-subscriber.js';

const MB = 1024 * 1024;

interface Options {
  messages: number;
  kb: number;
  at: number[];
  stall: boolean;
  /** `homeassistant/status` after every this many messages; 0: once, before them. */
  statusEvery: number;
}
type FromReader = { kind: 'ready' } | { kind: 'count'; read: number; ticks: number };
type Seen = Omit<Extract<FromReader, { kind: 'count' }>, 'kind'>;
type FromAttack = { kind: 'at' | 'done'; label: string };

const self = fileURLToPath(import.meta.url);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

function memory(): Record<string, number> {
  const m = process.memoryUsage();
  const mb = (n: number): number => Math.round(n / MB);
  return { rss: mb(m.rss), heap: mb(m.heapUsed), external: mb(m.external) };
}

async function broker(opts: Options & { queuedKb: string | undefined }): Promise<void> {
  const queued = opts.queuedKb === undefined ? {} : { max_queued_kb: Number(opts.queuedKb) };
  const embedded = { host: '127.0.0.1', port: 0, ...queued };
  const b = new EmbeddedBroker(sectionConfig('mqtt', { embedded }), pino({ level: 'error' }));
  await b.start();
  const { url, mqtt: login } = b.ownClient();
  const argus = new MqttOutput(url, login, 'argus/status', pino({ level: 'silent' }));
  argus.start();
  let own = 0;
  argus.subscribe('homeassistant/status', () => own++);
  let ticks = 0;
  const ticker = setInterval(() => argus.detection('argus/tick', String(ticks++)), 100);
  const args = [String(new URL(b.url).port), JSON.stringify(opts)];
  gc();
  console.log('before', JSON.stringify(memory()));

  const reader = fork(self, ['reader', ...args]);
  let seen: Seen = { read: 0, ticks: 0 };
  await new Promise<void>((resolve) =>
    reader.on('message', (m: FromReader) =>
      m.kind === 'ready' ? resolve() : (seen = { read: m.read, ticks: m.ticks }),
    ),
  );
  const attack = fork(self, ['attack', ...args]);
  const started = Date.now();
  const refused = (): Record<string, number> => {
    const r: Partial<Record<string, number>> = b.stats().refusals;
    return { backlog: r.backlog ?? 0, slow: r.slow ?? 0 };
  };
  await new Promise<void>((resolve) =>
    attack.on('message', (m: FromAttack) => {
      const s = Math.round((Date.now() - started) / 100) / 10;
      const line = { s, ...seen, ticksSent: ticks, own, ...refused(), ...memory() };
      console.log(m.label, JSON.stringify(line));
      if (m.kind === 'done') resolve();
    }),
  );
  await Promise.all([exited(attack), (reader.kill(), exited(reader))]);
  await sleep(2000);
  gc();
  await sleep(500);
  gc();
  console.log('after (clients gone, GC)', JSON.stringify(memory()));
  clearInterval(ticker);
  await argus.stop();
  await b.stop();
}

const exited = (c: ChildProcess): Promise<unknown> => new Promise((r) => c.once('exit', r));

async function reader(port: number): Promise<void> {
  const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, { clientId: 'reader', reconnectPeriod: 0 });
  let read = 0;
  let ticks = 0;
  client.on('message', (topic) => (topic === 'argus/tick' ? ticks++ : topic === 'x/y' && read++));
  await new Promise<void>((r) => client.once('connect', () => r()));
  await client.subscribeAsync(['x/#', 'argus/#'], { qos: 0 });
  process.send!({ kind: 'ready' } satisfies FromReader);
  setInterval(() => process.send!({ kind: 'count', read, ticks } satisfies FromReader), 100);
}

async function attack(port: number, opts: Options): Promise<void> {
  const send = (m: FromAttack): Promise<void> => new Promise((r) => process.send!(m, () => r()));
  const stalled = opts.stall ? await stalledSubscriber(port, 'x/#') : undefined;
  const publisher = mqtt.connect(`mqtt://127.0.0.1:${port}`, { clientId: 'publisher', reconnectPeriod: 0 });
  await new Promise<void>((r) => publisher.once('connect', () => r()));
  const payload = Buffer.alloc(opts.kb * 1024, 7);
  const status = (): Promise<unknown> => publisher.publishAsync('homeassistant/status', 'online', { qos: 0 });
  if (!opts.statusEvery) await status();
  for (let n = 1; n <= opts.messages; n++) {
    await publisher.publishAsync('x/y', payload, { qos: 0 });
    if (opts.statusEvery && n % opts.statusEvery === 0) await status();
    if (opts.at.includes(n)) await send({ kind: 'at', label: `published ${n}` });
  }
  await sleep(5000);
  await send({ kind: 'at', label: 'publisher done +5 s' });
  stalled?.socket.destroy();
  await sleep(5000);
  await send({ kind: 'done', label: 'stalled gone +5 s' });
  await publisher.endAsync(true);
  process.exit(0);
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    messages: { type: 'string', default: '8000' },
    kb: { type: 'string', default: '200' },
    at: { type: 'string', default: '2500,8000' },
    'queued-kb': { type: 'string' },
    'no-stall': { type: 'boolean', default: false },
    'status-every': { type: 'string', default: '0' },
  },
});
const [role, port, json] = positionals;
if (role === 'reader') await reader(Number(port));
else if (role === 'attack') await attack(Number(port), JSON.parse(json!) as Options);
else
  await broker({
    messages: Number(values.messages),
    kb: Number(values.kb),
    at: values.at.split(',').map(Number),
    stall: !values['no-stall'],
    statusEvery: Number(values['status-every']),
    queuedKb: values['queued-kb'],
  });
