import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.js';
import type { Detection } from '../../src/core/frame.js';
import { modelConfig, sectionConfig } from '../../src/config/index.js';
import { Detector, planModel, toDetections } from '../../src/detector/index.js';
import { loadLetterboxed } from '../../src/ingest/index.js';
import { decodeInferResponse, encodeInferRequest } from '../../src/kserve/codec.js';
import { packPictures, unpackDetections } from '../../src/kserve/pack.js';
import { RemoteDetector, RemoteUnavailableError } from '../../src/kserve/remote-detector.js';
import type { Availability } from '../../src/kserve/remote-options.js';
import { startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor } from '../helpers/env.js';
import { boxIou, BUS_REFERENCE } from '../helpers/images.js';
import { freePort } from '../helpers/rtsp.js';

const STARTED = '"msg":"argus started"';
const silent = pino({ level: 'silent' });

/** Same objects: count, labels in order, each box at IoU ≥ 0.9, scores within 0.01. */
function assertSameDetections(
  got: readonly Detection[],
  want: readonly { label: string; box: readonly number[]; score?: number }[],
): void {
  assert.deepEqual(
    got.map((d) => d.label),
    want.map((d) => d.label),
    JSON.stringify(got),
  );
  got.forEach((d, i) => {
    const w = want[i]!;
    assert.ok(boxIou(d.box, w.box) >= 0.9, `${d.label} ${JSON.stringify(d.box)} vs ${JSON.stringify(w.box)}`);
    if (w.score !== undefined)
      assert.ok(Math.abs(d.score - w.score) <= 0.01, `${d.label} ${d.score} vs ${w.score}`);
  });
}

describe('KServe v2: a real Argus process serving YOLOv8n', { skip: needsShared, timeout: 240_000 }, () => {
  it('answers bus.jpg as the local detector does (RGB24 and FP32 requests); killed, it turns unavailable; restarted, it recovers', async (t) => {
    const model = shared('models/yolov8n_int8.onnx');
    const image = await readFile(shared('media/bus.jpg'));

    // The local run: the same model in this process.
    const local = new Detector(
      await planModel({ path: model }),
      { model: modelConfig({ path: model }), detector: sectionConfig('detector', { workers: 1 }) },
      silent,
    );
    await local.start();
    const bus = await loadLetterboxed(image, local.inputSize, 'bus.jpg');
    const expected = (await local.detect([bus])).detections[0]!;
    await local.stop();
    assertSameDetections(expected, BUS_REFERENCE);

    // Box A: `argus run` with http.inference, no cameras.
    const dir = await tempDir(t);
    const httpPort = await freePort();
    const config = await writeDaemonConfig(dir, {
      model: { path: model },
      mqtt: { embedded: { port: await freePort() } },
      http: { port: httpPort, inference: true },
      detector: { workers: 1 },
    });
    let server = startDaemon(t, config);
    await waitFor('box A to start', () => server.output().includes(STARTED), 60_000);
    const url = `http://127.0.0.1:${httpPort}`;

    // Box B's side: a RemoteDetector on box A's model.
    const changes: Availability[] = [];
    const remote = new RemoteDetector(
      {
        name: 'box-a',
        conf: 0.25,
        iou: 0.45,
        max_detections: 300,
        remote: { url, model: 'default', headers: {}, timeout_ms: 15_000, retries: 1, in_flight: 2 },
      },
      { log: silent, clock: systemClock, onAvailability: (c) => changes.push(c) },
    );
    await remote.start();
    t.after(() => remote.stop());
    const stats = remote.stats();
    assert.deepEqual(
      [stats.input, stats.output, remote.inputSize, remote.labels.length],
      ['UINT8', 'detections', 640, 80],
    );
    const [viaRgb24, again] = (await remote.detect([bus, bus])).detections;
    assertSameDetections(viaRgb24!, expected);
    assertSameDetections(again!, expected);
    const perFrame = remote.stats().bytesSent / 2;
    assert.ok(perFrame < 640 * 640 * 3 + 1000, `${perFrame} bytes a frame sent`);

    // What a Triton client sends a YOLO: FP32 NCHW / 255, outputs asked for as binary.
    const body = encodeInferRequest({
      inputs: [packPictures('images', [bus], 'FP32', 640)],
      outputs: [
        { name: 'detections', binary: true },
        { name: 'num_detections', binary: true },
      ],
    });
    const res = await fetch(`${url}/v2/models/default/versions/1/infer`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/octet-stream',
        'Inference-Header-Content-Length': String(body.headerLength),
      },
      body: Buffer.concat(body.chunks),
    });
    assert.equal(res.status, 200);
    const answer = decodeInferResponse(
      Buffer.from(await res.arrayBuffer()),
      res.headers.get('inference-header-content-length') ?? undefined,
    );
    const raw = unpackDetections(
      answer.outputs,
      { kind: 'detections', name: 'detections', countName: 'num_detections' },
      1,
      {
        conf: 0.25,
        iou: 0.45,
        maxDet: 300,
      },
    );
    assertSameDetections(toDetections(raw[0]!, bus.geometry, remote.labels), expected);

    // Box A dies: the model turns unavailable (one change), batches fail at once.
    server.child.kill('SIGKILL');
    await server.exited;
    await assert.rejects(remote.detect([bus]), /ECONNREFUSED|ECONNRESET|EPIPE/);
    assert.deepEqual([remote.available, changes.map((c) => c.up)], [false, [false]]);
    await assert.rejects(remote.detect([bus]), (e: Error) => e instanceof RemoteUnavailableError);

    // Box A comes back on the same port: the model recovers by itself.
    server = startDaemon(t, config);
    await waitFor('the remote model to recover', () => remote.available, 90_000);
    assert.deepEqual(
      changes.map((c) => c.up),
      [false, true],
    );
    assertSameDetections((await remote.detect([bus])).detections[0]!, expected);
  });
});
