import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { CameraStatusPayload, DetectionsPayload, StatsPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor, writeFixture } from '../helpers/env.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { startRtspServer } from '../helpers/rtsp.js';

/** A synthetic camera: a white 64×64 square in fixture cell (3, 3), always in view. */
const SQUARE =
  'lavfi:color=c=0x303030:s=640x480:r=10[bg];color=c=white:s=64x64:r=10[box];[bg][box]overlay=x=192:y=112';

const COCO = new Set(
  JSON.parse(await readFile(shared('models/coco80.json'), 'utf8').catch(() => '[]')) as string[],
);

/** The samples of one metric by their labels, e.g. `{ 'model="coco"': 12 }`. */
function series(text: string, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))) out[m[1]!] = Number(m[2]);
  return out;
}

/**
 * Two real models in one daemon (real ffmpeg, GStreamer or npm RTSP, ONNX Runtime, an MQTT broker):
 * Argus' fixture (labels bright, red) and YOLO11n (COCO-80), both 320 px.
 */
describe('named models (real ffmpeg, RTSP, ONNX Runtime, MQTT broker)', { skip: needsShared }, () => {
  it('analyses each camera with its own model, and a SIGHUP moves a camera and swaps a model while frames flow, losing none', async (t) => {
    const dir = await tempDir(t);
    const broker = await startBroker(t);
    const rtsp = await startRtspServer(t, [
      { name: 'bus', source: { kind: 'image', path: shared('media/bus.jpg'), fps: 5 } },
    ]);
    const fixture = await writeFixture(dir, 'fixture.onnx');
    const wide = await writeFixture(dir, 'wide.onnx', { size: 640 });
    await writeFile(join(dir, 'glow.txt'), 'glow\nscarlet\n');
    const yolo = shared('models/yolo11n_int8_320.onnx');
    // Every frame goes to its model (no cache) and none is dropped for load: 16 may wait, 10 s each;
    // every frame's detections are published, to see that none is lost.
    const settings = (models: Record<string, unknown>, cameras: Record<string, unknown>) => ({
      mqtt: { url: broker.url, detections: { publish: 'every_frame' } },
      model: { path: fixture },
      models,
      detector: { workers: 1, intra_op_threads: 1 },
      cache: { enabled: false },
      scheduler: { queue_size: 16, max_frame_age_ms: 10_000 },
      cameras,
    });
    const square = { url: SQUARE, fps: 4 };
    const bus = { url: rtsp.url('bus'), rtsp_transport: rtsp.transport, fps: 5 };
    const config = await writeDaemonConfig(
      dir,
      settings(
        { coco: { path: yolo }, wide: { path: wide } },
        { square, bus: { ...bus, model: 'coco' }, fine: { ...square, fps: 2, model: 'wide' } },
      ),
    );
    const sub = new Subscriber(broker.url);
    t.after(() => sub.end());
    const daemon = startDaemon(t, config);
    const base = await httpBase(daemon.output);
    const detections = (cam: string) => sub.json<DetectionsPayload>(`argus/cameras/${cam}/detections`);
    const labels = (cam: string, from = 0) =>
      new Set(
        detections(cam)
          .slice(from)
          .flatMap((d) => d.detections.map((x) => x.label)),
      );

    // Each camera is analysed by its own model: the fixture's labels on one, COCO's on the other.
    await sub.waitFor(
      'detections of both cameras',
      () => labels('square').has('bright') && labels('bus').has('person'),
      60_000,
    );
    assert.deepEqual([...labels('square')], ['bright'], 'the square camera: fixture labels only');
    for (const l of labels('bus')) assert.ok(COCO.has(l), `bus camera label ${l} is a COCO label`);
    assert.ok(labels('bus').has('bus'));
    // The 640 model sees the 640×480 camera at full size: its 32-pixel cells are 32 source pixels
    // (the 320 model's are 64), so the white square is four boxes there, one here.
    await sub.waitFor('detections of the 640 model', () => labels('fine').has('bright'), 30_000);
    const widths = (cam: string) =>
      new Set(detections(cam).flatMap((d) => d.detections.map((x) => x.box[2] - x.box[0])));
    assert.deepEqual([[...widths('square')], [...widths('fine')]], [[64], [32]]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.deepEqual(series(metrics, 'argus_camera_model'), {
      'camera="square",model="default"': 1,
      'camera="bus",model="coco"': 1,
      'camera="fine",model="wide"': 1,
    });
    const framesOf = series(metrics, 'argus_detector_frames_total');
    const analysed = series(metrics, 'argus_camera_frames_analysed_total');
    // A model's frames are its cameras' (sent frames count before their answer: at most a batch more).
    for (const [model, cam] of [
      ['default', 'square'],
      ['coco', 'bus'],
      ['wide', 'fine'],
    ] as const) {
      const extra = framesOf[`model="${model}"`]! - analysed[`camera="${cam}"`]!;
      assert.ok(
        extra >= 0 && extra <= 4,
        `model ${model}: ${framesOf[`model="${model}"`]} frames, ${cam} ${analysed[`camera="${cam}"`]}`,
      );
    }
    // Posted images go to the model the request names.
    const jpeg = await readFile(shared('media/bus.jpg'));
    const detect = async (query: string) => {
      const res = await fetch(`${base}/api/detect${query}`, { method: 'POST', body: jpeg });
      return {
        status: res.status,
        body: (await res.json()) as { detections?: { label: string }[]; error?: string },
      };
    };
    const onCoco = await detect('?model=coco');
    assert.equal(onCoco.status, 200);
    assert.ok(onCoco.body.detections!.some((d) => d.label === 'person'));
    const onFixture = await detect('');
    assert.ok(onFixture.body.detections!.every((d) => ['bright', 'red'].includes(d.label)));
    assert.deepEqual(await detect('?model=plates'), {
      status: 400,
      body: { error: "model: there is no model named 'plates' (the models are default, coco, wide)" },
    });

    // The reload: a new model `glow` (the fixture with other names) takes the square camera, and
    // coco is swapped for new sessions (another conf), both while frames keep coming.
    const statuses = (cam: string) => sub.json<CameraStatusPayload>(`argus/cameras/${cam}/status`).length;
    const before = { square: statuses('square'), bus: statuses('bus') };
    const squareFrom = detections('square').length;
    const atReload: Record<string, number> = { square: squareFrom, bus: detections('bus').length };
    await writeDaemonConfig(
      dir,
      settings(
        { coco: { path: yolo, conf: 0.3 }, glow: { path: fixture, labels: join(dir, 'glow.txt') } },
        { square: { ...square, model: 'glow' }, bus: { ...bus, model: 'coco' } },
      ),
    );
    daemon.child.kill('SIGHUP');
    await waitFor('the reload', () => daemon.output().includes('"msg":"configuration reloaded"'), 60_000);
    assert.match(daemon.output(), /"model":"coco","msg":"model swapped"/);
    assert.match(daemon.output(), /"model":"glow","msg":"model added"/);
    assert.match(daemon.output(), /"model":"wide","msg":"model removed"/);
    assert.match(
      daemon.output(),
      /"restarted":\[\],"moved":\["square"\],"retuned":\[\],"unchanged":\["bus"\]/,
    );
    await sub.waitFor(
      'the square camera on the glow model',
      () => labels('square', squareFrom).has('glow'),
      30_000,
    );
    const afterMove = detections('square').findIndex(
      (d, i) => i >= squareFrom && d.detections.some((x) => x.label === 'glow'),
    );
    assert.ok(
      detections('square')
        .slice(afterMove)
        .every((d) => d.detections.every((x) => x.label === 'glow')),
      'once moved, only the new model answers',
    );

    // A reload naming a model that cannot be read is refused as argus validate refuses it: everything stays, the log says why.
    await writeDaemonConfig(
      dir,
      settings(
        { coco: { path: join(dir, 'missing.onnx') }, glow: { path: fixture, labels: join(dir, 'glow.txt') } },
        { square: { ...square, model: 'glow' }, bus: { ...bus, model: 'coco' } },
      ),
    );
    const busFrom = detections('bus').length;
    daemon.child.kill('SIGHUP');
    await waitFor(
      'the refused reload',
      () =>
        /models\.coco\.path: [^"]*missing\.onnx: cannot read the model file \(no such file\)","msg":"reload: [^"]*: 1 configuration error; the running configuration is unchanged/.test(
          daemon.output(),
        ),
      30_000,
    );
    await sub.waitFor('the bus camera still analysed', () => labels('bus', busFrom).has('person'), 30_000);
    const latest = () => sub.json<StatsPayload>('argus/stats').at(-1);
    await sub.waitFor('stats since the move', () => (latest()?.models.glow?.frames ?? 0) > 0);
    assert.equal(latest()!.cameras.square!.model, 'glow');
    assert.deepEqual(Object.keys(latest()!.models).sort(), ['coco', 'default', 'glow']);
    assert.equal(latest()!.models.coco!.ready_workers, 1);

    // No camera restarted: neither published a status since the first reload.
    assert.deepEqual({ square: statuses('square'), bus: statuses('bus') }, before);
    const unrestarted = detections('square').length;

    // A move to a model of another input size restarts the camera: its ffmpeg letterboxes to 640 now.
    await writeDaemonConfig(
      dir,
      settings(
        {
          coco: { path: yolo, conf: 0.3 },
          glow: { path: fixture, labels: join(dir, 'glow.txt') },
          wide: { path: wide },
        },
        { square: { ...square, model: 'wide' }, bus: { ...bus, model: 'coco' } },
      ),
    );
    daemon.child.kill('SIGHUP');
    await waitFor(
      'the last reload',
      // Two of the three reloads applied: the one naming a missing model was refused.
      () => daemon.output().split('"msg":"configuration reloaded"').length - 1 === 2,
      30_000,
    );
    assert.match(
      daemon.output(),
      /"restarted":\["square"\],"moved":\[\],"retuned":\[\],"unchanged":\["bus"\]/,
    );
    await sub.waitFor(
      'the square camera at 640',
      () =>
        detections('square')
          .slice(unrestarted)
          .some((d) => d.detections.some((x) => x.box[2] - x.box[0] === 32)),
      30_000,
    );

    daemon.child.kill('SIGTERM');
    assert.equal((await daemon.exited).code, 0, daemon.output().slice(-2000));
    // Every frame of each camera was answered (the square camera's until its restart), but those
    // its queue dropped when it was full (a busy machine: YOLOv8n at 640 on two shared cores may
    // fall behind, and the queue drops the oldest, counted): frame numbers run on, and each gap
    // is a frame the stats count as dropped. None is lost by a reload, none failed.
    const last = sub.json<StatsPayload>('argus/stats').at(-1)!;
    for (const cam of ['square', 'bus']) {
      const frames = detections(cam)
        .slice(0, cam === 'square' ? unrestarted : undefined)
        .map((d) => d.frame);
      assert.ok(
        frames.length > atReload[cam]!,
        `${cam}: ${atReload[cam]} frames before the reloads, ${frames.length} in all`,
      );
      let missing = 0;
      for (let i = 1; i < frames.length; i++) {
        assert.ok(frames[i]! > frames[i - 1]!, `${cam}: frame ${frames[i - 1]} then ${frames[i]}`);
        missing += frames[i]! - frames[i - 1]! - 1;
      }
      const { full = 0, stale = 0, error = 0 } = last.cameras[cam]!.dropped;
      assert.equal(error, 0, `${cam}: no batch failed`);
      assert.ok(
        missing <= full + stale,
        `${cam}: ${missing} frames missing, ${full + stale} dropped by its queue`,
      );
    }
    assert.doesNotMatch(daemon.output(), /"level":60/);
  });
});
