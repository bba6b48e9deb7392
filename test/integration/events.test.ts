import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CrossingPayload, DetectionsPayload, EventPayload } from '../../src/publish/topics.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor } from '../helpers/env.js';
import { busyCores } from '../helpers/load.js';
import { Subscriber } from '../helpers/mqtt.js';
import { freePort, startRtspServer } from '../helpers/rtsp.js';
import { EVENTS_SCENE, writeSceneClip } from '../helpers/synthetic-scene.js';

/**
 * Object events and line crossings end to end, on a clip with known truth (test/helpers/
 * synthetic-scene.ts): a person walking left to right, a bus driving right to left, then two
 * people crossing each other, each passing the line x = 640 once. Real ffmpeg pulls the clip
 * from a real RTSP server, real ONNX Runtime runs YOLOv8n, and the assertions are on what a
 * subscriber of Argus' embedded broker receives. Every core is kept busy the whole time (an
 * edge box is busy; the walker passing the bus once ended behind it on a loaded machine).
 */
const STARTED = '"msg":"argus started"';

describe('events end to end (synthetic clip with known truth)', () => {
  it(
    'one new and one end per object, one crossing per line pass, line counts kept across a restart',
    { skip: needsShared, timeout: 180_000 },
    async (t) => {
      const dir = await tempDir(t);
      const clip = join(dir, 'scene.mp4');
      await writeSceneClip(EVENTS_SCENE, shared('media/bus.jpg'), clip);
      t.diagnostic(`${busyCores(t)} cores kept busy by spinning processes`);
      // The daemon starts first and retries the camera until the server is up: the clip then
      // plays from its start (12 s of empty background before the first object).
      const rtsp = await startRtspServer(
        t,
        [{ name: 'scene', source: { kind: 'clip', path: clip, once: true } }],
        {
          deferStart: true,
        },
      );
      const port = await freePort();
      const stateDir = join(dir, 'state');
      const config = await writeDaemonConfig(dir, {
        model: { path: shared('models/yolov8n_int8.onnx') },
        state_dir: stateDir,
        mqtt: { embedded: { port }, stats_interval_s: 1 },
        events: { end_after_s: 3 },
        cameras: {
          scene: {
            url: rtsp.url('scene'),
            rtsp_transport: rtsp.transport,
            fps: 5,
            objects: { track: ['person', 'bus'] },
            lines: {
              middle: {
                points: [
                  [640, 0],
                  [640, 720],
                ],
                directions: ['leftward', 'rightward'],
              },
            },
          },
        },
      });
      const first = startDaemon(t, config);
      await waitFor('the daemon to start', () => first.output().includes(STARTED), 60_000);
      const sub = new Subscriber(`mqtt://127.0.0.1:${port}`);
      t.after(() => sub.end());
      await rtsp.start();
      const served = Date.now();

      const events = (): EventPayload[] => sub.json<EventPayload>('argus/events');
      await sub.waitFor(
        'four objects to come and go',
        () => events().filter((e) => e.type === 'end').length >= 4,
        90_000,
      );
      // Two stats later (a second of the daemon's time), anything late would have come before them.
      await sub.next('argus/stats');
      await sub.next('argus/stats');
      const firstFrame = sub.on('argus/cameras/scene/detections')[0]!.at;
      t.diagnostic(`first frame published ${firstFrame - served} ms after the RTSP server started`);

      const news = events().filter((e) => e.type === 'new');
      const story = (): string =>
        events()
          .map((e) => `${e.type} ${e.label} ${e.id} [${e.box.map(Math.round).join(',')}]`)
          .concat(
            sub
              .json<CrossingPayload>('argus/crossings')
              .map((c) => `crossing ${c.label} ${c.id} ${c.direction}`),
          )
          .join('\n');
      assert.deepEqual(
        news.map((e) => e.label).sort(),
        ['bus', 'person', 'person', 'person'],
        `one new per object:\n${story()}`,
      );
      for (const n of news) {
        const own = events().filter((e) => e.id === n.id);
        assert.equal(own.filter((e) => e.type === 'end').length, 1, `${n.label} ${n.id}: one end`);
      }
      const crossings = sub.json<CrossingPayload>('argus/crossings');
      t.diagnostic(`a crossing: ${sub.on('argus/crossings')[0]?.payload}`);
      assert.deepEqual(
        crossings.map((c) => `${c.label} ${c.direction}`).sort(),
        ['bus leftward', 'person leftward', 'person rightward', 'person rightward'],
        `one crossing per pass, each in its direction:\n${story()}`,
      );
      assert.deepEqual(
        new Set(crossings.map((c) => c.id)),
        new Set(news.map((e) => e.id)),
        'each object crossed once',
      );
      const count = (label: string, direction: string): string | undefined =>
        sub.on(`argus/cameras/scene/lines/middle/${label}/${direction}`).at(-1)?.payload;
      assert.deepEqual(
        [count('person', 'rightward'), count('person', 'leftward'), count('bus', 'leftward')],
        ['2', '1', '1'],
      );
      const inView = sub.on('argus/cameras/scene/person').map((m) => Number(m.payload));
      assert.ok(Math.max(...inView) <= 2, `never more people counted than in view: ${inView.join(' ')}`);
      const frames = sub.json<DetectionsPayload>('argus/cameras/scene/detections').map((d) => d.frame);
      assert.ok(
        frames.every((f, i) => i === 0 || f > frames[i - 1]!),
        'detections in capture order',
      );

      // SIGTERM: the counts are on disk; a new daemon (with a new embedded broker, which kept
      // nothing) publishes them again.
      first.child.kill('SIGTERM');
      assert.deepEqual(await first.exited, { code: 0, signal: null });
      const saved = JSON.parse(await readFile(join(stateDir, 'line-counts.json'), 'utf8')) as {
        counts: Record<string, unknown>;
      };
      assert.deepEqual(saved.counts, {
        scene: { middle: { person: { leftward: 1, rightward: 2 }, bus: { leftward: 1 } } },
      });
      const second = startDaemon(t, config);
      await waitFor('the daemon to start again', () => second.output().includes(STARTED), 60_000);
      const late = new Subscriber(`mqtt://127.0.0.1:${port}`, 'argus/cameras/scene/lines/#');
      t.after(() => late.end());
      // The line's control state (…/lines/middle/enabled/state) sits beside its counts.
      const counts = () => late.messages.filter((m) => !m.topic.endsWith('/enabled/state'));
      await late.waitFor('the restored counts', () => counts().length >= 4);
      assert.deepEqual(
        Object.fromEntries(
          counts().map((m) => [m.topic.split('/').slice(-2).join(' '), [m.payload, m.retain]]),
        ),
        {
          'person leftward': ['1', true],
          'person rightward': ['2', true],
          'bus leftward': ['1', true],
          'bus rightward': ['0', true],
        },
      );
    },
  );
});
