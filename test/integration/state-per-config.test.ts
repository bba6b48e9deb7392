import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import type { EventPayload } from '../../src/publish/index.js';
import { EventStore } from '../../src/events/index.js';
import {
  configStateName,
  HISTORY_DIR,
  LOCK_FILE,
  OWNER_FILE,
  type LockHolder,
} from '../../src/state/index.js';
import { startDaemon, writeDaemonConfig, type Daemon } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { silentLog } from '../helpers/fakes.js';
import { freePort } from '../helpers/rtsp.js';

/**
 * Issue 45, item 3: two real `argus run` daemons of two configs without `state_dir` (each on its
 * embedded broker), each with a camera the fixture model sees an object in: each keeps its own
 * state directory, and its HTTP `/api/events` lists its own camera's events only. A third config
 * pointed at one of those directories is refused while its daemon runs; that daemon, killed,
 * starts again on its directory (the dead lock taken over) with its history.
 */
const STARTED = '"msg":"argus started"';

/** A still scene with a white square: the fixture model sees one `bright` object in it. */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y=112';

/** `argus.yaml` in `dir` with one camera, without `state_dir` unless given; its real path and HTTP base. */
async function writeConfig(
  dir: string,
  camera: string,
  stateDir?: string,
): Promise<{ file: string; base: string }> {
  await mkdir(dir, { recursive: true });
  const port = await freePort();
  const file = await writeDaemonConfig(dir, {
    mqtt: { embedded: { port: await freePort() } },
    http: { port },
    cameras: { [camera]: { url: SQUARE, fps: 2, objects: { track: ['bright'] } } },
  });
  const doc = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  if (stateDir === undefined) delete doc.state_dir;
  else doc.state_dir = stateDir;
  await writeFile(file, stringify(doc));
  return { file: await realpath(file), base: `http://127.0.0.1:${port}` };
}

async function events(base: string): Promise<EventPayload[]> {
  return (await (await fetch(`${base}/api/events`)).json()) as EventPayload[];
}

describe('a state directory of its own per config (issue 45, item 3)', { timeout: 240_000 }, () => {
  it('two daemons of two configs without state_dir: each its own directory and history; a third config on one of them is refused', async (t) => {
    const dir = await tempDir(t);
    const env = { XDG_STATE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') };
    const a = await writeConfig(join(dir, 'a'), 'front');
    const b = await writeConfig(join(dir, 'b'), 'back');
    const start = async (file: string): Promise<Daemon> => {
      const d = startDaemon(t, file, env);
      await waitFor(
        `${file} to start`,
        () => d.output().includes(STARTED) || d.child.exitCode !== null,
        60_000,
      );
      assert.ok(d.output().includes(STARTED), d.output());
      return d;
    };
    const first = await start(a.file);
    const second = await start(b.file);

    // Both files are argus.yaml: their directories differ by the hash of their real paths.
    const shared = join(env.XDG_STATE_HOME, 'argus');
    const aDir = join(shared, configStateName(a.file));
    const bDir = join(shared, configStateName(b.file));
    assert.deepEqual(
      (await readdir(shared)).sort(),
      [configStateName(a.file), configStateName(b.file)].sort(),
    );
    for (const [d, daemon, file] of [
      [aDir, first, a.file],
      [bDir, second, b.file],
    ] as const) {
      const lock = JSON.parse(await readFile(join(d, LOCK_FILE), 'utf8')) as LockHolder;
      assert.deepEqual([lock.pid, lock.config], [daemon.child.pid, file]);
      assert.deepEqual(JSON.parse(await readFile(join(d, OWNER_FILE), 'utf8')), { version: 1, config: file });
    }

    const listed = async (base: string): Promise<EventPayload[]> => {
      let found: EventPayload[] = [];
      await waitForAsync(`an event at ${base}`, async () => (found = await events(base)).length > 0);
      return found;
    };
    const aEvents = await listed(a.base);
    const bEvents = await listed(b.base);
    assert.deepEqual([...new Set(aEvents.map((e) => e.camera))], ['front']);
    assert.deepEqual([...new Set(bEvents.map((e) => e.camera))], ['back']);

    // A third config pointed at the first one's directory: refused, naming both configs and the directory.
    const c = await writeConfig(join(dir, 'c'), 'side', aDir);
    const third = startDaemon(t, c.file, env);
    assert.deepEqual(await third.exited, { code: 1, signal: null }, third.output());
    assert.ok(
      third
        .output()
        .includes(
          `argus: the state directory ${aDir} is in use by another Argus (pid ${first.child.pid}) running config ${a.file}; config ${c.file} cannot share it`,
        ),
      third.output(),
    );
    assert.ok(!third.output().includes(STARTED));
    assert.equal(
      (JSON.parse(await readFile(join(aDir, LOCK_FILE), 'utf8')) as LockHolder).pid,
      first.child.pid,
      'the lock is still the first daemon’s',
    );

    // The first daemon killed (its lock left behind) starts again on its own directory, history kept.
    first.child.kill('SIGKILL');
    await first.exited;
    const again = await start(a.file);
    assert.match(again.output(), /lock taken over/);
    const kept = await events(a.base);
    assert.ok(
      aEvents.every((e) => kept.some((k) => k.id === e.id)),
      'the events listed before the kill are listed again',
    );
    assert.deepEqual([...new Set(kept.map((e) => e.camera))], ['front']);
    // Stopped cleanly, each daemon removes its lock; the owner record stays.
    for (const d of [again, second]) d.child.kill('SIGTERM');
    assert.equal((await again.exited).code, 0);
    assert.equal((await second.exited).code, 0);
    assert.deepEqual(
      (await readdir(aDir)).filter((n) => n === LOCK_FILE || n === OWNER_FILE),
      [OWNER_FILE],
    );
  });

  it('an existing user’s shared directory: the config whose cameras it holds keeps it, warned of the others’, which the API does not list', async (t) => {
    const dir = await tempDir(t);
    const env = { XDG_STATE_HOME: join(dir, 'xdg'), HOME: join(dir, 'home') };
    const shared = join(env.XDG_STATE_HOME, 'argus');
    // What an earlier version left there: events of this config's camera and of another config's.
    const history = new EventStore(
      join(shared, HISTORY_DIR),
      { maxEvents: 10, maxBytes: 1 << 20 },
      silentLog,
    );
    const old = Date.now() - 60_000;
    for (const camera of ['front', 'bcam']) {
      const id = `${camera}-old`;
      history.add({ id, camera, label: 'bright', zones: [], start: old, event: { id, camera, type: 'end' } });
    }
    await history.flush();
    const a = await writeConfig(join(dir, 'a'), 'front');
    const first = startDaemon(t, a.file, env);
    await waitFor('the daemon to start', () => first.output().includes(STARTED), 60_000);
    const lines = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; state_dir?: string; history?: string[] });
    assert.equal(lines.find((l) => l.msg === 'starting')?.state_dir, shared, 'the shared directory is kept');
    assert.ok(
      lines.some((l) => l.msg.startsWith('the shared state directory of earlier versions holds state')),
    );
    const warned = lines.filter((l) =>
      l.msg.startsWith('the state directory holds cameras this config does not have'),
    );
    assert.equal(warned.length, 1, 'warned once');
    assert.deepEqual(warned[0]!.history, ['bcam']);
    const listed = await events(a.base);
    assert.ok(
      listed.some((e) => e.id === 'front-old'),
      'its own camera’s event is listed',
    );
    assert.ok(!listed.some((e) => e.camera === 'bcam'), 'the other config’s is not');
    assert.equal((await fetch(`${a.base}/api/events/bcam-old/snapshot.jpg`)).status, 404);
    assert.deepEqual(JSON.parse(await readFile(join(shared, OWNER_FILE), 'utf8')), {
      version: 1,
      config: a.file,
    });
    // Another config without state_dir gets its own directory, beside.
    const b = await writeConfig(join(dir, 'b'), 'bcam');
    const second = startDaemon(t, b.file, env);
    await waitFor('the second daemon to start', () => second.output().includes(STARTED), 60_000);
    assert.ok(second.output().includes(`"state_dir":"${join(shared, configStateName(b.file))}"`));
    assert.deepEqual(
      (await events(b.base)).filter((e) => e.id === 'bcam-old'),
      [],
      'the shared directory is the first config’s now',
    );
    for (const d of [first, second]) d.child.kill('SIGTERM');
    assert.equal((await first.exited).code, 0);
    assert.equal((await second.exited).code, 0);
  });
});

/** Polls an async condition every 500 ms until it holds; fails naming `what` after 90 s. */
async function waitForAsync(what: string, cond: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 90_000;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
