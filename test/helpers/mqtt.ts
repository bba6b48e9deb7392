import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
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
  payload: string;
  retain: boolean;
  at: number;
}

/** A subscriber that records every message it receives. */
export class Subscriber {
  readonly messages: Received[] = [];
  private client: MqttClient;

  constructor(url: string, topic = 'argus/#', login?: Login) {
    this.client = mqtt.connect(url, { reconnectPeriod: 100, connectTimeout: 2000, clean: true, ...login });
    this.client.on('connect', () => this.client.subscribe(topic, { qos: 1 }));
    this.client.on('error', () => undefined);
    this.client.on('message', (topic, payload, packet) => {
      this.messages.push({ topic, payload: payload.toString(), retain: packet.retain, at: Date.now() });
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

  end(): Promise<void> {
    return this.client.endAsync().then(() => undefined);
  }
}
