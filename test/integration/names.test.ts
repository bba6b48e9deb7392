import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CameraView } from '../../src/http/view.js';
import type { CameraStatusPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, writeFixture } from '../helpers/env.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort } from '../helpers/rtsp.js';

/** A synthetic camera: a white 64×64 square, always shown, in fixture cell (3, 3). */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=10[bg];color=c=white:s=64x64:r=10[box];[bg][box]overlay=x=192:y=112';

/** The whole picture. */
const EVERYWHERE = [
  [0, 0],
  [640, 0],
  [640, 480],
  [0, 480],
];

/** A camera with a zone and a line named `zone` and `line`, and directions named `ways`. */
const camera = (zone: string, line: string, ways: [string, string]) => ({
  url: SQUARE,
  fps: 5,
  objects: { filters: { constructor: { min_score: 0.3 } } },
  zones: { [zone]: { points: EVERYWHERE } },
  lines: {
    [line]: {
      points: [
        [320, 0],
        [320, 480],
      ],
      objects: ['constructor'],
      directions: ways,
    },
  },
});

/**
 * The real daemon with cameras, zones, lines, directions and labels named constructor,
 * __proto__, toString, hasOwnProperty and valueOf: names a plain object answers for without
 * holding them, or (`__proto__`) whose assignment sets its prototype. Before they were names like
 * any other, `argus run` died at start-up ('Cannot convert undefined or null to object').
 */
describe('argus run with names that are special to a JavaScript object', () => {
  it('starts, streams each camera, counts their labels in their zones, answers the API, and stops on SIGTERM', async (t) => {
    const dir = await tempDir(t);
    // The fixture's classes, bright and red, renamed by a labels file.
    const labels = join(dir, 'labels.txt');
    await writeFile(labels, 'constructor\n__proto__\n');
    const port = await freePort();
    // Computed keys: `{ __proto__: … }` in a literal would set the object's prototype instead.
    const cameras = {
      ['constructor']: camera('__proto__', 'toString', ['valueOf', 'hasOwnProperty']),
      ['__proto__']: camera('toString', 'constructor', ['hasOwnProperty', 'valueOf']),
      ['toString']: camera('constructor', '__proto__', ['valueOf', 'hasOwnProperty']),
    };
    const names = Object.keys(cameras);
    assert.deepEqual(names, ['constructor', '__proto__', 'toString']);
    const config = await writeDaemonConfig(dir, {
      model: { path: await writeFixture(dir, 'fixture.onnx'), labels },
      mqtt: { embedded: { port } },
      cameras,
    });

    const daemon = startDaemon(t, config);
    const sub = new Subscriber(`mqtt://127.0.0.1:${port}`);
    t.after(() => sub.end());
    const status = (cam: string) => sub.json<CameraStatusPayload>(`argus/cameras/${cam}/status`).at(-1);
    const last = (topic: string) => sub.on(topic).at(-1)?.payload;

    await sub
      .waitFor(
        'every camera streaming',
        () => names.every((cam) => status(cam)?.state === 'streaming'),
        45_000,
      )
      .catch((err: Error) => assert.fail(`${err.message}; the daemon said:\n${daemon.output()}`));
    for (const cam of names) assert.equal(status(cam)!.camera, cam);
    // The square is a `constructor` (the fixture's bright class), in view and in each camera's zone.
    const zoneOf = (cam: string) => Object.keys(cameras[cam as keyof typeof cameras].zones)[0]!;
    await sub.waitFor(
      'each camera to count its constructor, in view and in its zone',
      () =>
        names.every(
          (cam) =>
            last(`argus/cameras/${cam}/constructor`) === '1' &&
            last(`argus/cameras/${cam}/zones/${zoneOf(cam)}/constructor`) === '1',
        ),
      30_000,
    );
    // Each line's counts start at 0, by direction: retained, named as configured.
    for (const [cam, c] of Object.entries(cameras))
      for (const [line, l] of Object.entries(c.lines))
        for (const way of l.directions)
          assert.equal(
            last(`argus/cameras/${cam}/lines/${line}/constructor/${way}`),
            '0',
            `${cam} ${line} ${way}`,
          );

    const base = await httpBase(daemon.output);
    const listed = (await (await fetch(`${base}/api/cameras`)).json()) as CameraView[];
    assert.deepEqual(
      listed.map((c) => c.camera),
      names,
    );
    for (const c of listed) {
      assert.equal(c.state, 'streaming', c.camera);
      const counts = { labels: { constructor: 1 }, zones: { [zoneOf(c.camera)]: { constructor: 1 } } };
      assert.deepEqual(c.counts, counts, c.camera);
    }
    const health = (await (await fetch(`${base}/healthz`)).json()) as { cameras: Record<string, string> };
    assert.deepEqual(Object.keys(health.cameras).sort(), [...names].sort());

    daemon.child.kill('SIGTERM');
    const { code } = await daemon.exited;
    assert.equal(code, 0, daemon.output());
    const logs = daemon
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    assert.equal(logs.at(-1)?.msg, 'argus stopped');
    assert.deepEqual(
      logs.filter((l) => l.level >= 50).map((l) => l.msg),
      [],
      'no error was logged',
    );
  });
});
