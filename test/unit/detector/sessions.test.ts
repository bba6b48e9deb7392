import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { modelConfig, sectionConfig } from '../../../src/config/index.js';
import { Detector, type SessionWorker } from '../../../src/detector/detector.js';
import type { ModelPlan } from '../../../src/detector/model.js';
import type { FromWorker, WorkerInit } from '../../../src/detector/protocol.js';
import { describeSessions, sessionSettings, workerInits } from '../../../src/detector/sessions.js';
import { flush, recordingLog } from '../../helpers/fakes.js';

const plan = {
  path: '/m/yolo.onnx',
  inputName: 'images',
  outputName: 'output0',
  inputSize: 320,
  staticBatch: null,
  labels: ['person', 'car'],
  labelsFrom: 'model metadata',
  quantization: 'none',
} as unknown as ModelPlan;

const output = { conf: 0.3, iou: 0.5, max_detections: 50 };

describe('sessions of a local model', () => {
  it("takes the model's providers, devices and workers over the detector section's", () => {
    const detector = sectionConfig('detector', { providers: ['cpu'], device_id: 3, workers: 2 });
    assert.deepEqual(
      [
        sessionSettings(detector, {}).providers,
        sessionSettings(detector, {}).deviceIds,
        sessionSettings(detector, {}).workers,
      ],
      [['cpu'], [3], 2],
    );
    const own = sessionSettings(detector, { providers: ['cuda', 'cpu'], device_ids: [0, 1], workers: 0 });
    assert.deepEqual([own.providers, own.deviceIds, own.workers], [['cuda', 'cpu'], [0, 1], 0]);
  });

  it('starts one session per GPU listed in device_ids, each on its device; more workers go round the devices', () => {
    const gpu = sectionConfig('detector', { providers: ['cuda', 'cpu'] });
    const inits = workerInits(plan, sessionSettings(gpu, { device_ids: [0, 1] }), output, 16);
    assert.deepEqual(
      inits.map((i) => [i.deviceId, i.providers, i.modelPath]),
      [
        [0, ['cuda', 'cpu'], '/m/yolo.onnx'],
        [1, ['cuda', 'cpu'], '/m/yolo.onnx'],
      ],
    );
    assert.deepEqual(
      workerInits(plan, sessionSettings(gpu, { device_ids: [2, 5], workers: 4 }), output, 16).map(
        (i) => i.deviceId,
      ),
      [2, 5, 2, 5],
    );
    assert.deepEqual(
      workerInits(plan, sessionSettings({ ...gpu, device_id: 1 }, {}), output, 16).map((i) => i.deviceId),
      [1],
      'without device_ids: detector.device_id, one session',
    );
    const cpu = workerInits(
      plan,
      sessionSettings(sectionConfig('detector', {}), { device_ids: [0, 1] }),
      output,
      2,
    );
    assert.deepEqual(
      cpu.map((i) => [i.intraOpThreads, i.conf, i.iou, i.maxDet]),
      [
        [1, 0.3, 0.5, 50],
        [1, 0.3, 0.5, 50],
      ],
      'on the CPU the cores decide the sessions, as without devices',
    );
  });

  it('says in one line where the sessions run, and warns when they fell back to the CPU or differ by device', () => {
    const cudaFailed = [{ provider: 'cuda' as const, reason: 'Failed to load shared library' }];
    assert.deepEqual(
      describeSessions([
        { deviceId: 0, provider: 'cuda', skipped: [] },
        { deviceId: 1, provider: 'cuda', skipped: [] },
      ]),
      { warn: false, message: 'using execution provider cuda on devices 0, 1' },
    );
    assert.deepEqual(
      describeSessions([
        { deviceId: 0, provider: 'cpu', skipped: cudaFailed },
        { deviceId: 1, provider: 'cpu', skipped: cudaFailed },
      ]),
      {
        warn: true,
        message:
          'using execution provider cpu; skipped cuda (Failed to load shared library); devices 0, 1 not used',
      },
    );
    assert.deepEqual(
      describeSessions([
        { deviceId: 0, provider: 'cuda', skipped: [] },
        { deviceId: 1, provider: 'cpu', skipped: cudaFailed },
      ]),
      {
        warn: true,
        message:
          'sessions differ by device: device 0 cuda, device 1 cpu (skipped cuda: Failed to load shared library)',
      },
    );
    assert.deepEqual(
      describeSessions([
        { deviceId: 0, provider: 'webgpu', skipped: [] },
        { deviceId: 1, provider: 'webgpu', skipped: [] },
      ]).message,
      'using execution provider webgpu; device_ids apply to cuda and tensorrt; webgpu picks its own adapter',
    );
    assert.deepEqual(describeSessions([{ deviceId: 0, provider: 'cpu', skipped: [] }]), {
      warn: false,
      message: 'using execution provider cpu',
    });
  });
});

/** A worker thread stand-in: records what it was started with and sent, answers as the test says. */
class FakeWorker extends EventEmitter {
  terminated = false;
  constructor(readonly init: WorkerInit) {
    super();
  }
  postMessage(): void {}
  terminate(): Promise<number> {
    this.terminated = true;
    return Promise.resolve(0);
  }
  reply(msg: FromWorker): void {
    this.emit('message', msg);
  }
  ready(provider: 'cuda' | 'cpu', skipped: { provider: 'cuda'; reason: string }[] = []): void {
    this.reply({
      type: 'ready',
      provider,
      skipped,
      layout: { kind: 'channels-first', classes: 2, anchors: 2100 },
      warmupMs: 3,
    });
  }
}

describe('detector on several GPUs (fake workers)', () => {
  it('gives each worker its device, logs one line, and recreates a lost session on the same device', async () => {
    const workers: FakeWorker[] = [];
    const { log, lines } = recordingLog();
    const detector = new Detector(
      plan,
      {
        detector: sectionConfig('detector', { providers: ['cuda', 'cpu'] }),
        model: { ...modelConfig({ path: plan.path, ...output }), device_ids: [0, 1] },
      },
      log,
      16,
      (init) => {
        const w = new FakeWorker(init);
        workers.push(w);
        return w as unknown as SessionWorker;
      },
    );
    assert.equal(detector.concurrency, 2);
    const starting = detector.start();
    assert.deepEqual(
      workers.map((w) => w.init.deviceId),
      [0, 1],
    );
    const failed = [
      { provider: 'cuda' as const, reason: 'CUDA failure 100: no CUDA-capable device is detected' },
    ];
    workers[0]!.ready('cpu', failed);
    workers[1]!.ready('cpu', failed);
    await starting;
    const where = lines.filter((l) => /execution provider|differ by device/.test(l.msg));
    assert.deepEqual(
      where.map((l) => l.msg),
      [
        'using execution provider cpu; skipped cuda (CUDA failure 100: no CUDA-capable device is detected); devices 0, 1 not used',
      ],
      'one line for the fallback of every session',
    );
    assert.equal(detector.stats().readyWorkers, 2);

    workers[1]!.emit('exit', 1);
    await flush();
    assert.equal(workers.length, 3);
    assert.equal(workers[2]!.init.deviceId, 1, 'the replacement starts on the lost session’s device');
    workers[2]!.ready('cuda');
    await flush();
    assert.equal(detector.stats().readyWorkers, 2);
    assert.equal(detector.stats().sessionsRecreated, 1);
    await detector.stop();
    assert.ok(workers.filter((w) => w !== workers[1]).every((w) => w.terminated));
  });
});

describe('TensorRT sessions (fake workers)', () => {
  function start(workerCount: number, deviceIds: number[], engines: boolean, engineCache = true) {
    const workers: FakeWorker[] = [];
    const { log, lines } = recordingLog();
    const detector = new Detector(
      plan,
      {
        detector: sectionConfig('detector', { providers: ['tensorrt', 'cpu'], engine_cache: engineCache }),
        model: {
          ...modelConfig({ path: plan.path, ...output }),
          device_ids: deviceIds,
          workers: workerCount,
        },
        engines: engines ? { stateDir: '/var/lib/argus', maxBatch: 8 } : null,
      },
      log,
      16,
      (init) => {
        const w = new FakeWorker(init);
        workers.push(w);
        return w as unknown as SessionWorker;
      },
    );
    return { detector, workers, lines, starting: detector.start() };
  }

  it('starts the sessions of a device one after another, so the later ones load the engine the first built', async () => {
    const { workers, starting, detector } = start(3, [0, 1], true);
    await flush();
    assert.deepEqual(
      workers.map((w) => w.init.deviceId),
      [0, 1],
      'the first session of each device, at once',
    );
    assert.deepEqual(workers[0]!.init.engines, { stateDir: '/var/lib/argus', maxBatch: 8 });
    workers[0]!.ready('cpu');
    workers[1]!.ready('cpu');
    await flush();
    assert.deepEqual(
      workers.map((w) => w.init.deviceId),
      [0, 1, 0],
      'then the second of device 0',
    );
    workers[2]!.ready('cpu');
    await starting;
    assert.equal(detector.stats().readyWorkers, 3);
    await detector.stop();
  });

  it('starts every session at once without an engine cache', async () => {
    const { workers, starting, detector } = start(2, [0], true, false);
    await flush();
    assert.equal(workers.length, 2);
    assert.equal(workers[0]!.init.engines, null, 'engine_cache: false keeps no engine');
    for (const w of workers) w.ready('cpu');
    await starting;
    await detector.stop();
  });

  it('logs when an engine build starts and ends, with how long it took, and an engine loaded', async () => {
    const { workers, starting, lines, detector } = start(1, [0], true);
    await flush();
    const w = workers[0]!;
    w.reply({ type: 'engine', event: { phase: 'building', reason: 'no engine cached', dir: '/s/trt/k' } });
    w.reply({ type: 'engine', event: { phase: 'built', ms: 212_400, saved: true, dir: '/s/trt/k' } });
    w.reply({ type: 'engine', event: { phase: 'built', ms: 1000, saved: false, dir: '/s/trt/k' } });
    w.reply({ type: 'engine', event: { phase: 'loaded', ms: 2100, dir: '/s/trt/k' } });
    w.ready('cpu');
    await starting;
    const engine = lines.filter((l) => /TensorRT engine/.test(l.msg)) as { msg: string; level?: number }[];
    assert.deepEqual(
      engine.map((l) => [l.level, l.msg]),
      [
        [40, 'building the TensorRT engine for device 0 (no engine cached); this can take minutes'],
        [30, 'TensorRT engine built in 212.4 s and kept for the next start'],
        [
          40,
          'TensorRT engine built in 1.0 s, but ONNX Runtime wrote no engine file: the next start builds it again',
        ],
        [30, 'TensorRT engine loaded from the cache in 2.1 s'],
      ],
    );
    await detector.stop();
  });
});
