/**
 * The GPU path, run for real: ONNX Runtime's WebGPU provider (Dawn over Vulkan) on whatever
 * Vulkan device the machine has — in CI Mesa's software one (lavapipe), installed by .ci/run.
 * Its speed means nothing there; what it shows is that the path works: the same detections as
 * the CPU, in worker threads, inside the daemon. Kept to a few small runs: the device is slow.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import type { Detection } from '../../src/core/frame.js';
import { modelConfig, sectionConfig, type Config } from '../../src/config/index.js';
import { Detector, planModel } from '../../src/detector/index.js';
import { loadLetterboxed } from '../../src/ingest/index.js';
import type { DetectionsPayload, StatsPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { needsShared, shared, tempDir, waitFor } from '../helpers/env.js';
import { boxIou } from '../helpers/images.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';
import { hasGstreamer, startRtspServer } from '../helpers/rtsp.js';
import { needsWebgpu, preparedYolo } from '../helpers/webgpu.js';

const skip = needsShared || needsWebgpu;

async function started(
  t: Parameters<typeof tempDir>[0],
  path: string,
  over: Partial<Config['detector']>,
): Promise<Detector> {
  const detector = new Detector(
    await planModel({ path }),
    {
      model: modelConfig({ path }),
      // The software device compiles each new batch shape's shaders on first use: minutes, not a deadline miss.
      detector: sectionConfig('detector', {
        workers: 1,
        intra_op_threads: 1,
        inference_timeout_ms: 600_000,
        ...over,
      }),
    },
    pino({ level: 'silent' }),
  );
  await detector.start();
  t.after(() => detector.stop());
  return detector;
}

/** Same labels, same count of each, and each box matched one to one at IoU ≥ `minIou`. */
function assertSame(got: Detection[], want: Detection[], minIou: number, what: string): void {
  const labels = (d: Detection[]) => d.map((x) => x.label).sort();
  assert.deepEqual(labels(got), labels(want), `${what}: labels`);
  const free = [...want];
  for (const g of got) {
    const i = free.findIndex((w) => w.label === g.label && boxIou(w.box, g.box) >= minIou);
    assert.ok(i >= 0, `${what}: ${g.label} ${JSON.stringify(g.box)} has no match in ${JSON.stringify(want)}`);
    free.splice(i, 1);
  }
}

describe('WebGPU on a Vulkan device (real ONNX Runtime, Dawn)', { skip }, () => {
  it("gives the CPU provider's detections on bus.jpg at batch 1 and at batch 4, fp32; fp16 where the adapter takes it", async (t) => {
    const dir = await tempDir(t);
    const model = await preparedYolo(dir);
    const cpu = await started(t, model, { providers: ['cpu'] });
    const gpu = await started(t, model, { providers: ['webgpu'] });
    assert.equal(gpu.provider, 'webgpu');
    assert.match(gpu.choice!.message, /^using execution provider webgpu$/);
    const bus = await loadLetterboxed(await readFile(shared('media/bus.jpg')), cpu.inputSize);
    const [want] = (await cpu.detect([bus])).detections;
    assert.ok(want!.length >= 4, `CPU: ${JSON.stringify(want)}`);
    const [one] = (await gpu.detect([bus])).detections;
    assertSame(one!, want!, 0.99, 'batch 1');
    const four = (await gpu.detect([bus, bus, bus, bus])).detections;
    for (const [i, d] of four.entries()) assertSame(d, want!, 0.99, `batch 4, picture ${i}`);

    // fp16: the adapter offers shader-f16 (lavapipe does) and runs it, or says why not and runs fp32.
    const half = await started(t, model, { providers: ['webgpu'], precision: 'fp16' });
    assert.equal(half.provider, 'webgpu');
    const [h] = (await half.detect([bus])).detections;
    if (/\(fp16[,)]/.test(half.choice!.message)) assertSame(h!, want!, 0.95, 'fp16');
    else {
      assert.match(half.choice!.message, /fp16 refused by this adapter \(.+\): running fp32/);
      assertSame(h!, want!, 0.99, 'fp16 refused, fp32');
    }
  });

  it('a vendor whose drivers are not here leaves WebGPU without an adapter: the next provider runs, saying why', async (t) => {
    // Dawn's Vulkan instance lives as long as the process: the vendor is tried in a CLI of its own.
    const { runCli } = await import('../helpers/env.js');
    const dir = await tempDir(t);
    const model = await preparedYolo(dir);
    const args = ['detect', '--model', model, '--providers', 'webgpu,cpu', shared('media/bus.jpg')];
    const none = await runCli([...args, '--webgpu-vendor', 'nvidia']);
    assert.equal(none.code, 0, none.stderr);
    assert.match(
      none.stderr,
      /^argus: using execution provider cpu; skipped webgpu \(Failed to get a WebGPU adapter: No supported adapters\)$/m,
    );
    const soft = await runCli([...args, '--webgpu-vendor', 'software']);
    assert.match(soft.stderr, /^argus: using execution provider webgpu \(adapter from software drivers\)$/m);
    const boxes = (out: string) => JSON.parse(out.trim()) as { detections: Detection[] };
    assertSame(boxes(soft.stdout).detections, boxes(none.stdout).detections, 0.99, 'software WebGPU vs CPU');
  });

  const busSkip = hasGstreamer()
    ? false
    : 'needs the GStreamer RTSP server (RTP over TCP); .ci/run installs it';
  it(
    'argus run with providers [webgpu]: the provider line, detections from a real RTSP camera, /metrics and the status name webgpu, a hot model swap stays on it',
    { skip: busSkip },
    async (t) => {
      const dir = await tempDir(t);
      const model = await preparedYolo(dir);
      const broker = await startBroker(t);
      const rtsp = await startRtspServer(t, [
        { name: 'bus', source: { kind: 'image', path: shared('media/bus.jpg'), fps: 5 } },
      ]);
      const settings = (conf: number) => ({
        model: { path: model, conf },
        mqtt: { url: broker.url, detections: { publish: 'every_frame' } },
        detector: { providers: ['webgpu'], inference_timeout_ms: 60_000 },
        scheduler: { max_batch: 2 },
        cameras: { bus: { url: rtsp.url('bus'), rtsp_transport: rtsp.transport, fps: 1 } },
      });
      const config = await writeDaemonConfig(dir, settings(0.25));
      const sub = new Subscriber(broker.url);
      t.after(() => sub.end());
      const daemon = startDaemon(t, config);
      const base = await httpBase(daemon.output, 180_000);
      await waitFor(
        'the provider line',
        () => daemon.output().includes('"msg":"using execution provider webgpu"'),
        120_000,
      );
      const busDetections = () => sub.json<DetectionsPayload>('argus/cameras/bus/detections');
      await sub.waitFor(
        'detections of the bus camera',
        () => busDetections().some((d) => d.detections.filter((x) => x.label === 'person').length >= 3),
        120_000,
      );
      const got = busDetections().find((d) => d.detections.some((x) => x.label === 'bus'));
      assert.ok(got, JSON.stringify(busDetections()));

      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, /^argus_detector_provider\{model="default",provider="webgpu"\} 1$/m);
      const health = (await (await fetch(`${base}/healthz`)).json()) as { detector: { provider: string } };
      assert.equal(health.detector.provider, 'webgpu');
      await sub.waitFor('stats', () => sub.json<StatsPayload>('argus/stats').length > 0, 60_000);
      assert.equal(sub.json<StatsPayload>('argus/stats').at(-1)!.models.default!.provider, 'webgpu');

      // A hot swap: new sessions (another conf) start beside the running ones, on WebGPU again.
      const from = busDetections().length;
      await writeDaemonConfig(dir, settings(0.3));
      daemon.child.kill('SIGHUP');
      await waitFor('the reload', () => daemon.output().includes('"msg":"configuration reloaded"'), 120_000);
      assert.match(daemon.output(), /"model":"default","msg":"model swapped"/);
      assert.equal(daemon.output().split('"msg":"using execution provider webgpu"').length - 1, 2);
      await sub.waitFor('detections after the swap', () => busDetections().length > from + 3, 60_000);
      // conf 0.3 drops the 0.34 person at the picture's left edge that conf 0.25 keeps.
      for (const d of busDetections().slice(from + 1))
        assert.ok(
          d.detections.every((x) => x.score >= 0.3),
          JSON.stringify(d.detections),
        );

      daemon.child.kill('SIGTERM');
      assert.equal((await daemon.exited).code, 0, daemon.output().slice(-2000));
    },
  );
});
