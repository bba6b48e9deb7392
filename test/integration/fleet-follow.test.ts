import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { CameraStatusPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig, type Daemon } from '../helpers/daemon.js';
import { tempDir } from '../helpers/env.js';
import { needsEtcd, startEtcdCluster } from '../helpers/etcd.js';
import { publishOnce, startBroker, Subscriber } from '../helpers/mqtt.js';

/**
 * Issue 48, item 4: a camera's line counts and runtime settings follow it to the box that takes
 * it over. Real etcd, a real broker, two real Argus daemons; the camera is a white square falling
 * down the frame again and again (lavfi), crossing the line `road` once a fall.
 *
 * Box a runs the camera alone; its fps and detect are set over MQTT (detection off freezes the
 * counts at N); a is SIGKILLed and only then is box b started, so b never heard the commands:
 * what it knows of them comes from etcd.
 */
const FALLING =
  "lavfi:color=c=0x303030:s=640x480:r=5[bg];color=c=white:s=64x64:r=5[box];[bg][box]overlay=x=192:y='mod(t*50,416)'";

const gate = {
  url: FALLING,
  fps: 4,
  objects: { track: ['bright'] },
  lines: {
    road: {
      points: [
        [0, 240],
        [640, 240],
      ],
      directions: ['north', 'south'],
    },
  },
};

/** Waits (up to 30 s) for an asynchronous condition; fails with what was seen last. */
async function poll(what: string, cond: () => Promise<boolean>, seen: () => string): Promise<void> {
  const end = Date.now() + 30_000;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${seen()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const COUNTS = ['north', 'south'].map((d) => `site/cameras/gate/lines/road/bright/${d}`);

describe(
  'a fleet on etcd: line counts and settings follow a camera (issue 48 item 4)',
  { timeout: 300_000 },
  () => {
    it(
      'set on box a over MQTT, a killed: box b runs the camera with its settings and counts on from N',
      { skip: needsEtcd },
      async (t) => {
        const etcd = await startEtcdCluster(t, 1);
        const broker = await startBroker(t);
        const sub = new Subscriber(broker.url, ['site/cameras/gate/#']);
        t.after(() => sub.end());
        const kv = new Etcd3({ hosts: etcd.endpoints.map((e) => `http://${e}`) });
        t.after(() => kv.close());

        const configOf = async (box: string): Promise<string> =>
          writeDaemonConfig(await tempDir(t), {
            mqtt: { url: broker.url, base_topic: 'site', client_id: `argus-${box}` },
            fleet: { endpoints: etcd.endpoints, name: box, capacity: 10, ttl_s: 3 },
            cameras: { gate },
          });
        const [configA, configB] = [await configOf('a'), await configOf('b')];
        const statusFrom = (box: string, since: number) =>
          sub.messages.some(
            (m) =>
              m.topic === 'site/cameras/gate/status' &&
              m.at >= since &&
              (JSON.parse(m.payload) as CameraStatusPayload).owner?.box === box,
          );
        /** The last count published on each direction's retained topic (after `since`). */
        const counts = (since = 0): number[] =>
          COUNTS.map((topic) =>
            Number(
              sub
                .on(topic)
                .filter((m) => m.at >= since)
                .at(-1)?.payload ?? NaN,
            ),
          );

        // 1. Box a alone: it takes the camera, which crosses the line.
        const a: Daemon = startDaemon(t, configA);
        await sub.waitFor('box a runs gate', () => statusFrom('a', 0), 90_000);
        await sub.waitFor('a crossing of road on box a', () => counts().some((n) => n > 0), 120_000);

        // 2. Its settings changed over MQTT (a command to the broker, as Home Assistant sends it).
        assert.ok(await publishOnce(t, broker.url, 'site/cameras/gate/fps/set', '3'));
        assert.ok(await publishOnce(t, broker.url, 'site/cameras/gate/detect/set', 'OFF'));
        const state = (key: string) => sub.on(`site/cameras/gate/${key}/state`).at(-1)?.payload;
        await sub.waitFor(
          'fps 3 and detect OFF',
          () => state('fps') === '3' && state('detect') === 'OFF',
          30_000,
        );

        // Detection off: the counts stay at N. etcd holds them, and the settings, as box a wrote them.
        const etcdJson = async <T>(kind: string): Promise<T | null> => {
          const v = await kv.get(`/argus/state/${kind}/gate`).string();
          return v === null ? null : (JSON.parse(v) as T);
        };
        type Settings = Record<string, { value: unknown }>;
        let n: number[] = [];
        let seen = '';
        await poll(
          'etcd to hold box a’s counts and settings',
          async () => {
            n = counts();
            const kept =
              await etcdJson<Record<string, Record<string, Record<string, number>>>>('line_counts');
            const inEtcd = ['north', 'south'].map((d) => kept?.road?.bright?.[d] ?? 0);
            const settings = await etcdJson<Settings>('control');
            seen = JSON.stringify({ published: n, inEtcd, settings });
            return (
              JSON.stringify(inEtcd) === JSON.stringify(n) &&
              settings?.fps?.value === 3 &&
              settings.detect?.value === false
            );
          },
          () => seen,
        );
        t.diagnostic(`box a's counts (north, south) kept in etcd: ${JSON.stringify(n)}`);

        // 3. Box a SIGKILLed; box b started afterwards (it never heard the commands).
        a.child.kill('SIGKILL');
        await a.exited;
        const killedAt = Date.now();
        const b = startDaemon(t, configB);
        await sub.waitFor('box b runs gate', () => statusFrom('b', killedAt), 90_000);
        t.diagnostic(`box b runs gate ${((Date.now() - killedAt) / 1000).toFixed(1)} s after a was killed`);

        // b publishes the counts it took over: N, not 0 (its own state directory holds none).
        await sub.waitFor(
          'box b publishes the counts',
          () => counts(killedAt).every((x) => !Number.isNaN(x)),
          30_000,
        );
        assert.deepEqual(counts(killedAt), n, 'box b goes on from the counts box a had');
        // b runs the camera with a's settings: fps 3, detection off (no crossing meanwhile).
        const base = await httpBase(b.output);
        const control = (await (await fetch(`${base}/api/control`)).json()) as {
          cameras: Record<string, Record<string, unknown>>;
        };
        assert.equal(control.cameras.gate!.fps, 3);
        assert.equal(control.cameras.gate!.detect, false);
        assert.equal(state('fps'), '3');
        assert.equal(state('detect'), 'OFF');

        // 4. Detection on again, now on box b: the next crossing counts N + 1.
        const onAt = Date.now();
        assert.ok(await publishOnce(t, broker.url, 'site/cameras/gate/detect/set', 'ON'));
        await sub.waitFor('a crossing on box b', () => counts(onAt).some((x, i) => x > n[i]!), 120_000);
        const grew = counts(onAt).findIndex((x, i) => x > n[i]!);
        const first = Number(
          sub.on(COUNTS[grew]!).find((m) => m.at >= onAt && Number(m.payload) > n[grew]!)!.payload,
        );
        assert.equal(first, n[grew]! + 1, `${COUNTS[grew]}: ${n[grew]} on box a, then ${first} on box b`);
        t.diagnostic(`${COUNTS[grew]}: ${n[grew]} on box a, ${first} after the next crossing on box b`);
        // b (the owner now) wrote the change to etcd: detect back to the file's value, fps kept.
        await poll(
          'box b’s settings in etcd',
          async () => {
            const settings = await etcdJson<Settings>('control');
            seen = JSON.stringify(settings);
            return settings?.fps?.value === 3 && settings.detect === undefined;
          },
          () => seen,
        );
      },
    );
  },
);
