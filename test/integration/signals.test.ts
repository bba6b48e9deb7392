import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import type { CameraStatusPayload, EventPayload } from '../../src/publish/topics.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { repoRoot, tempDir, waitFor } from '../helpers/env.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

/** A white 64×64 square in fixture cell (3, 3), shown 3 s out of every 6: an object in view, then none. */
const BLINKER =
  "lavfi:color=c=0x303030:s=640x480:r=10[bg];color=c=white:s=64x64:r=10[box];[bg][box]overlay=x=192:y=112:enable='lt(mod(t,6),3)'";

/** The messages of the daemon's JSON log lines, with their fields. */
function logLines(output: string): { msg: string; [key: string]: unknown }[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The processes below `root` (not itself), from `ps`. */
function descendants(root: number): number[] {
  const rows = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  for (let frontier = [root]; frontier.length > 0;) {
    frontier = rows.filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...frontier);
  }
  return found;
}

/** Whether a process has ended (gone, or a zombie waiting to be reaped). */
function ended(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

describe('argus run and signals (real processes, real signals)', () => {
  it('a second SIGTERM 20 ms after the first makes the stop quicker and still clean: the end of the object in view, stopped, retained offline, exit 0', async (t) => {
    const dir = await tempDir(t);
    const broker = await startBroker(t);
    // `-nostdin`: ffmpeg ignores the 'q' of a clean stop, which then waits out stop_grace_s
    // before its SIGTERM; a quick stop kills ffmpeg at once instead.
    const config = await writeDaemonConfig(dir, {
      mqtt: { url: broker.url },
      ffmpeg: { stop_grace_s: 10 },
      cameras: { blinker: { url: BLINKER, fps: 5, input_args: ['-nostdin'] } },
    });
    const sub = new Subscriber(broker.url);
    t.after(() => sub.end());
    const daemon = startDaemon(t, config);

    const events = () => sub.json<EventPayload>('argus/events').filter((e) => e.camera === 'blinker');
    const inView = () =>
      events().find((e) => e.type === 'new' && !events().some((x) => x.type === 'end' && x.id === e.id));
    await sub.waitFor('an object in view', () => inView() !== undefined, 45_000);
    const object = inView()!;
    daemon.child.kill('SIGTERM');
    await sleep(20);
    daemon.child.kill('SIGTERM');

    const { code, signal } = await daemon.exited;
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, daemon.output().slice(-3000));
    await sub.waitFor('the end of the object in view', () =>
      events().some((e) => e.type === 'end' && e.id === object.id),
    );
    const late = new Subscriber(broker.url);
    t.after(() => late.end());
    await late.waitFor(
      'the retained states',
      () => late.on('argus/status').length > 0 && late.on('argus/cameras/blinker/status').length > 0,
    );
    assert.equal(late.on('argus/status')[0]!.payload, 'offline');
    assert.equal(late.json<CameraStatusPayload>('argus/cameras/blinker/status')[0]!.state, 'stopped');

    // What the second signal skipped: ffmpeg's grace (it was killed, not waited for).
    const logs = logLines(daemon.output());
    const at = (re: RegExp): number => logs.findIndex((l) => re.test(l.msg));
    const order = [
      /^stopping$/,
      /^signal during the stop: stopping quickly/,
      /^ffmpeg killed$/,
      /^argus stopped$/,
    ];
    const seen = order.map(at);
    assert.ok(
      seen.every((i, n) => i >= 0 && (n === 0 || i > seen[n - 1]!)),
      `log in order ${order.join(', ')}: ${logs.map((l) => l.msg).join(' | ')}`,
    );
    assert.equal((logs[at(/^ffmpeg killed$/)]!.pids as number[]).length, 1);
    assert.doesNotMatch(daemon.output(), /"level":50|"level":60/, 'no error was logged');
  });

  it('a SIGTERM after the stop has finished, while the process exits, changes nothing: exit 0', async (t) => {
    const dir = await tempDir(t);
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port: await freePort() } },
      cameras: { blinker: { url: BLINKER } },
    });
    const daemon = startDaemon(t, config);
    await waitFor('argus started', () => daemon.output().includes('"msg":"argus started"'), 30_000);
    // The second signal goes the moment 'argus stopped' is read, before the process has exited.
    let sent = false;
    const onOutput = (): void => {
      if (!daemon.output().includes('"msg":"argus stopped"')) return;
      daemon.child.stdout!.off('data', onOutput);
      sent = daemon.child.kill('SIGTERM');
    };
    daemon.child.stdout!.on('data', onOutput);
    daemon.child.kill('SIGTERM');
    const { code, signal } = await daemon.exited;
    assert.ok(sent, 'the second SIGTERM reached the process');
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, daemon.output().slice(-3000));
    assert.match(daemon.output(), /"signal":"SIGTERM","msg":"already stopped; signal ignored"/);
  });

  it('SIGTERM to `npx argus run` (README) ends every process it started within the stop bound, its ports free', async (t) => {
    const dir = await tempDir(t);
    const mqttPort = await freePort();
    const httpPort = await freePort();
    const config = await writeDaemonConfig(dir, {
      mqtt: { embedded: { port: mqttPort } },
      http: { port: httpPort },
      cameras: { blinker: { url: BLINKER } },
    });
    const env = { ...process.env };
    delete env.STATE_DIRECTORY;
    const npx = spawn('npx', ['argus', 'run', '-c', config], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env,
    });
    let out = '';
    npx.stdout.on('data', (d: Buffer) => (out += d.toString()));
    npx.stderr.on('data', (d: Buffer) => (out += d.toString()));
    let tree: number[] = [];
    t.after(() => {
      for (const pid of [npx.pid!, ...tree].filter((p) => !ended(p))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Ended meanwhile.
        }
      }
      return Promise.resolve();
    });
    // The first `npx argus` of a checkout installs it in npm's cache, which runs `prepare` (a build).
    await waitFor('argus started', () => out.includes('"msg":"argus started"'), 120_000);
    await waitFor('the camera streaming', () => out.includes('"msg":"streaming"'), 30_000);
    const daemonPid = logLines(out).find((l) => l.msg === 'argus started')!.pid as number;
    tree = descendants(npx.pid!);
    assert.ok(tree.includes(daemonPid), `the daemon ${daemonPid} runs under npx: ${tree.join(' ')}`);

    npx.kill('SIGTERM');
    await waitFor(
      'every process of the tree to end',
      () => [npx.pid!, ...tree].every(ended),
      21_000, // the stop bound (20 s), and the half second the daemon takes to notice
    );
    assert.ok(await portFree(httpPort), `HTTP port ${httpPort} free`);
    assert.ok(await portFree(mqttPort), `MQTT port ${mqttPort} free`);
    assert.match(out, /"msg":"the process that started Argus has gone"/);
    assert.match(out, /"msg":"argus stopped"/);
  });
});
