import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CameraStatusPayload, DetectionsPayload } from '../../src/publish/topics.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir } from '../helpers/env.js';
import { boxIou } from '../helpers/images.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { freePort, hasGstreamer, startRtspServer } from '../helpers/rtsp.js';

const STARTED = '"msg":"argus started"';

/**
 * Two real Argus processes: box A serves YOLOv8n over KServe v2 (`http.inference`); box B decodes
 * a real RTSP camera with ffmpeg and sends its frames to A (a remote model), beside a second
 * camera on the same stream with the same model run locally, both publishing to a real broker.
 */
describe('a fleet: one box detects for another over KServe v2', { timeout: 300_000 }, () => {
  // bus.jpg's 810×1080 key frames need RTP over TCP (GStreamer), as in run.test.ts.
  const skip =
    needsShared ||
    (hasGstreamer() ? false : 'needs the GStreamer RTSP server (RTP over TCP); .ci/run installs it');
  it(
    "B's camera on A's model sees what a local model sees; A killed: detector_unavailable; A back: it recovers",
    { skip },
    async (t) => {
      const yolo = shared('models/yolov8n_int8.onnx');
      const broker = await startBroker(t);
      const rtsp = await startRtspServer(t, [
        { name: 'bus', source: { kind: 'image', path: shared('media/bus.jpg'), fps: 5 } },
      ]);

      const dirA = await tempDir(t);
      const portA = await freePort();
      const configA = await writeDaemonConfig(dirA, {
        model: { path: yolo },
        mqtt: { url: broker.url, base_topic: 'box-a', client_id: 'argus-box-a' },
        http: { port: portA, inference: true },
        detector: { workers: 1 },
      });
      const boxA = startDaemon(t, configA);
      const subA = new Subscriber(broker.url, 'box-a/status');
      t.after(() => subA.end());
      await subA.waitFor('box A online', () => subA.on('box-a/status').at(-1)?.payload === 'online', 60_000);

      const dirB = await tempDir(t);
      const camera = { url: rtsp.url('bus'), rtsp_transport: rtsp.transport, fps: 1 };
      const configB = await writeDaemonConfig(dirB, {
        model: { path: yolo },
        models: {
          box_a: {
            // input_size: B starts, and its cameras with it, even while A is away.
            input_size: 640,
            remote: { url: `http://127.0.0.1:${portA}`, model: 'default', timeout_ms: 15_000, in_flight: 2 },
          },
        },
        mqtt: { url: broker.url, base_topic: 'box-b', client_id: 'argus-box-b' },
        detector: { workers: 1 },
        cache: { enabled: false },
        cameras: { remote: { ...camera, model: 'box_a' }, local: camera },
      });
      const sub = new Subscriber(broker.url, 'box-b/#');
      t.after(() => sub.end());
      const boxB = startDaemon(t, configB);
      const dets = (cam: string): DetectionsPayload[] =>
        sub.json<DetectionsPayload>(`box-b/cameras/${cam}/detections`);
      const status = (cam: string): CameraStatusPayload | undefined =>
        sub.json<CameraStatusPayload>(`box-b/cameras/${cam}/status`).at(-1);
      const full = (cam: string) => dets(cam).find((d) => d.detections.length >= 4);
      await sub.waitFor(
        'both cameras to see the bus and people',
        () => !!full('remote') && !!full('local'),
        120_000,
      );
      assert.ok(boxB.output().includes(STARTED));

      // The same frames (one stream), the same model: here, or on box A over the wire.
      const remote = full('remote')!;
      const local = full('local')!;
      assert.deepEqual([remote.width, remote.height], [810, 1080]);
      assert.equal(remote.detections.length, local.detections.length, JSON.stringify([remote, local]));
      for (const l of local.detections) {
        const same = remote.detections.filter((d) => d.label === l.label);
        const best = Math.max(...same.map((d) => boxIou(d.box, l.box)));
        // Two decodes of one lossy stream, not always the same frame: a weak detection (the
        // person cut by the picture's edge, scoring ~0.4) moves more than a confident one.
        assert.ok(
          best >= (l.score >= 0.5 ? 0.9 : 0.8),
          `${l.label} ${JSON.stringify(l.box)}: best IoU ${best} in ${JSON.stringify(remote)}`,
        );
      }

      // Box A dies: B's camera on it says why, once; the local camera goes on.
      boxA.child.kill('SIGKILL');
      await boxA.exited;
      await sub.waitFor(
        'the remote camera to report detector_unavailable',
        () => status('remote')?.last_error?.cause === 'detector_unavailable',
        60_000,
      );
      const down = status('remote')!;
      assert.match(down.last_error!.message, /ECONNREFUSED|ECONNRESET|EPIPE/);
      assert.equal(down.state, 'streaming', 'the camera itself still streams');
      const unavailable = () =>
        sub
          .json<CameraStatusPayload>('box-b/cameras/remote/status')
          .filter((s) => s.last_error?.cause === 'detector_unavailable').length;
      const localBefore = dets('local').length;
      await sub.waitFor(
        'local detections while A is away',
        () => dets('local').length >= localBefore + 3,
        60_000,
      );
      assert.equal(unavailable(), 1, 'one status for the outage, not one per refused batch');
      assert.notEqual(status('local')?.last_error?.cause, 'detector_unavailable');

      // Box A comes back on the same port: B's camera recovers by itself.
      const boxAgain = startDaemon(t, configA);
      const remoteBefore = dets('remote').length;
      await sub.waitFor(
        'the remote camera to recover',
        () =>
          status('remote')?.last_error?.cause !== 'detector_unavailable' &&
          dets('remote').length > remoteBefore,
        120_000,
      );
      assert.equal(status('remote')!.last_error, null);
      const again = dets('remote')
        .filter((d) => d.detections.length >= 4)
        .at(-1);
      assert.ok(again, 'detections after the recovery');
      assert.equal(unavailable(), 1);
      assert.ok(boxAgain.output().includes(STARTED));
      // One log line each way, however many batches were refused in between.
      assert.equal(boxB.output().match(/remote model box_a unavailable/g)?.length, 1);
      assert.equal(boxB.output().match(/remote model box_a available again/g)?.length, 1);
    },
  );
});
