import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { repoRoot, tempDir } from './env.js';
import { freePort } from './rtsp.js';

/**
 * A real MQTT broker for tests: Mosquitto (the broker most users run; installed by .ci/run),
 * or aedes in a child process where Mosquitto is absent. Either can be killed and restarted
 * on the same port.
 */
export interface TestBroker {
  kind: 'mosquitto' | 'aedes';
  url: string;
  port: number;
  kill(): Promise<void>;
  start(): Promise<void>;
  /** With `login`: the one user the broker accepts from now on (Mosquitto re-reads on SIGHUP). */
  setLogin(username: string, password: string): Promise<void>;
}

export interface Login {
  username: string;
  password: string;
}

let mosquittoPath: string | null | undefined;
export function findMosquitto(): string | null {
  if (mosquittoPath === undefined) {
    const r = spawnSync('sh', ['-c', 'command -v mosquitto || ls /usr/sbin/mosquitto'], { encoding: 'utf8' });
    mosquittoPath = r.status === 0 ? r.stdout.trim().split('\n')[0]! : null;
  }
  return mosquittoPath;
}

function waitReady(child: ChildProcess, port: number, what: string, login?: Login): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const deadline = Date.now() + 10_000;
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out}`)));
    const probe = (): void => {
      const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, {
        reconnectPeriod: 0,
        connectTimeout: 1000,
        ...login,
      });
      c.once('connect', () => {
        c.end(true);
        resolve();
      });
      c.once('error', () => {
        c.end(true);
        if (Date.now() > deadline) reject(new Error(`${what} did not start: ${out}`));
        else setTimeout(probe, 100);
      });
    };
    probe();
  });
}

/**
 * Starts a broker on a free port. With `login`, it accepts only that user (Mosquitto with a
 * password file; aedes reading a JSON file at each connection), and `setLogin` changes it.
 */
export async function startBroker(
  t: { after: (fn: () => Promise<void>) => void },
  opts: { login?: Login } = {},
): Promise<TestBroker> {
  const port = await freePort();
  const mosquitto = process.env.ARGUS_TEST_BROKER === 'aedes' ? null : findMosquitto();
  let child: ChildProcess | undefined;
  const dir = await tempDir(t);
  const conf = join(dir, 'mosquitto.conf');
  const users = join(dir, mosquitto ? 'passwd' : 'users.json');
  let login = opts.login;
  const writeLogin = async (l: Login): Promise<void> => {
    if (!mosquitto) return writeFile(users, JSON.stringify({ [l.username]: l.password }));
    const r = spawnSync('mosquitto_passwd', ['-c', '-b', users, l.username, l.password], {
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
    // Started as root, Mosquitto reads its files as the user `mosquitto`.
    await chmod(dir, 0o755);
    await chmod(users, 0o644);
  };
  if (login) await writeLogin(login);
  if (mosquitto) {
    const auth = login ? `allow_anonymous false\npassword_file ${users}\n` : 'allow_anonymous true\n';
    await writeFile(conf, `listener ${port} 127.0.0.1\n${auth}persistence false\n`);
  }
  const broker: TestBroker = {
    kind: mosquitto ? 'mosquitto' : 'aedes',
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async start() {
      child = mosquitto
        ? spawn(mosquitto, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(
            process.execPath,
            [join(repoRoot, 'dist/test/helpers/aedes-broker.js'), String(port), ...(login ? [users] : [])],
            { stdio: ['ignore', 'pipe', 'pipe'] },
          );
      await waitReady(child, port, broker.kind, login);
    },
    async setLogin(username, password) {
      login = { username, password };
      await writeLogin(login);
      if (mosquitto) child?.kill('SIGHUP');
    },
    kill() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        c.removeAllListeners('exit');
        c.once('exit', () => resolve());
        c.kill('SIGKILL');
      });
    },
  };
  t.after(() => broker.kill());
  await broker.start();
  return broker;
}

export interface Received {
  topic: string;
  /** As UTF-8 text; `data` has the bytes (a JPEG). */
  payload: string;
  data: Buffer;
  retain: boolean;
  at: number;
}

/** A subscriber that records every message it receives (but its own markers, see retainedDone). */
export class Subscriber {
  readonly messages: Received[] = [];
  private client: MqttClient;
  private subscribed = false;
  private readonly marker = `argus-test/marker/${randomUUID()}`;
  private markerCame = false;

  constructor(url: string, topic: string | string[] = 'argus/#', login?: Login) {
    this.client = mqtt.connect(url, { reconnectPeriod: 100, connectTimeout: 2000, clean: true, ...login });
    this.client.on('connect', () =>
      this.client.subscribe(topic, { qos: 1 }, (err) => (this.subscribed = !err)),
    );
    this.client.on('error', () => undefined);
    this.client.on('message', (topic, payload, packet) => {
      if (topic === this.marker) return void (this.markerCame = true);
      this.messages.push({
        topic,
        payload: payload.toString(),
        data: payload,
        retain: packet.retain,
        at: Date.now(),
      });
    });
  }

  on(topic: string): Received[] {
    return this.messages.filter((m) => m.topic === topic);
  }

  json<T>(topic: string): T[] {
    return this.on(topic).map((m) => JSON.parse(m.payload) as T);
  }

  async waitFor(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > end)
        throw new Error(
          `timed out waiting for ${what}; got ${this.messages.length} messages on ${[...new Set(this.messages.map((m) => m.topic))].join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Waits for a message on `topic` after every message received so far: a later sign of life of
   * its publisher, so whatever it sent before (on this connection's ordered stream) has come. The
   * signal a "nothing more came" assertion waits for instead of a sleep.
   */
  async next(topic: string, timeoutMs = 30_000): Promise<void> {
    const from = this.messages.length;
    await this.waitFor(
      `a later message on ${topic}`,
      () => this.messages.slice(from).some((m) => m.topic === topic),
      timeoutMs,
    );
  }

  /**
   * Resolves once the broker has sent every retained message of the subscription: a marker this
   * subscriber subscribes to after it, then publishes on its own connection, comes after them.
   */
  async retainedDone(timeoutMs = 30_000): Promise<void> {
    await this.waitFor('the subscription', () => this.subscribed, timeoutMs);
    await this.client.subscribeAsync(this.marker, { qos: 1 });
    await this.client.publishAsync(this.marker, 'marker', { qos: 1 });
    await this.waitFor('its marker', () => this.markerCame, timeoutMs);
  }

  end(): Promise<void> {
    return this.client.endAsync().then(() => undefined);
  }
}

/**
 * Connects once, without reconnecting: the connected client (ended after the test), or the
 * code of the broker's CONNACK refusal (4: bad user name or password, 5: not authorised, ...).
 */
export function connectOnce(
  t: { after: (fn: () => Promise<void>) => void },
  url: string,
  opts: IClientOptions = {},
): Promise<{ client: MqttClient; refused?: undefined } | { client?: undefined; refused: number }> {
  const client = mqtt.connect(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
  client.on('error', () => undefined); // later errors (a reset socket) are expected: the broker closes on refusals
  t.after(() => client.endAsync(true).then(() => undefined));
  return new Promise((resolve, reject) => {
    client.once('connect', () => resolve({ client }));
    client.once('error', (err) => {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'number') resolve({ refused: code });
      else reject(err);
    });
  });
}

/**
 * Publishes one message at QoS 1 on a new connection: true once the broker acknowledged it,
 * false when it closed the connection instead (how a broker refuses a publish in MQTT 3.1.1).
 */
export async function publishOnce(
  t: { after: (fn: () => Promise<void>) => void },
  url: string,
  topic: string,
  payload: string | Buffer,
  opts: { retain?: boolean; login?: Login } = {},
): Promise<boolean> {
  const { client, refused } = await connectOnce(t, url, { ...opts.login });
  if (!client) throw new Error(`connection refused (${refused})`);
  const acked = await new Promise<boolean>((resolve) => {
    client.once('close', () => resolve(false));
    client.publish(topic, payload, { qos: 1, retain: opts.retain ?? false }, (err) => resolve(!err));
  });
  await client.endAsync(true);
  return acked;
}

/** The remaining-length field of an MQTT packet's fixed header. */
function remainingLength(n: number): number[] {
  const out: number[] = [];
  do {
    const byte = n % 128;
    n = Math.floor(n / 128);
    out.push(n > 0 ? byte | 0x80 : byte);
  } while (n > 0);
  return out;
}

const utf8 = (s: string): Buffer => {
  const b = Buffer.from(s);
  return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
};

/** Raw MQTT 3.1.1 packets, for tests that must control every byte (mqtt.js would not send them). */
export const wire = {
  /** CONNECT with a clean session and no login. */
  connect(clientId: string): Buffer {
    const body = Buffer.concat([utf8('MQTT'), Buffer.from([4, 0x02, 0, 60]), utf8(clientId)]);
    return Buffer.concat([Buffer.from([0x10, ...remainingLength(body.length)]), body]);
  },
  /** A PUBLISH's headers only, announcing a payload of `payloadBytes`, which the caller sends. */
  publishHeader(
    topic: string,
    payloadBytes: number,
    opts: { qos?: 0 | 1 | 2; retain?: boolean; id?: number } = {},
  ): Buffer {
    const qos = opts.qos ?? 0;
    const variable = Buffer.concat([
      utf8(topic),
      qos ? Buffer.from([opts.id! >> 8, opts.id! & 0xff]) : Buffer.alloc(0),
    ]);
    const first = 0x30 | (qos << 1) | (opts.retain ? 1 : 0);
    return Buffer.concat([
      Buffer.from([first, ...remainingLength(variable.length + payloadBytes)]),
      variable,
    ]);
  },
};

/** A raw TCP connection to a broker that has sent CONNECT and read its CONNACK. */
export async function rawClient(
  t: { after: (fn: () => Promise<void>) => void },
  port: number,
  clientId: string,
): Promise<{ socket: Socket; closed: Promise<void>; received: () => Buffer }> {
  const socket = createConnection(port, '127.0.0.1');
  t.after(() => {
    socket.destroy();
    return Promise.resolve();
  });
  socket.on('error', () => undefined); // the broker may close it mid-write: that is what tests look for
  let data = Buffer.alloc(0);
  socket.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(wire.connect(clientId));
  const deadline = Date.now() + 5000;
  while (data.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (!data.subarray(0, 4).equals(Buffer.from([0x20, 2, 0, 0])))
    throw new Error(`no CONNACK: ${data.toString('hex')}`);
  return { socket, closed, received: () => data };
}
