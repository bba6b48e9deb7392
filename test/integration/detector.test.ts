import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import type { Detection, Picture } from '../../src/core/frame.js';
import { letterbox } from '../../src/core/geometry.js';
import { modelConfig, sectionConfig, type Config } from '../../src/config/index.js';
import { DeadlineError, Detector, DetectorError, ModelError, planModel } from '../../src/detector/index.js';
import { loadLetterboxed } from '../../src/ingest/index.js';
import { createLogger } from '../../src/log.js';
import type { FixtureOptions } from '../../src/onnx/index.js';
import { fixtureDetector } from '../helpers/detector.js';
import { needsShared, shared, tempDir, waitFor, writeFixture } from '../helpers/env.js';
import { boxIou, FIXTURE_SCENE, squaresPng } from '../helpers/images.js';
import { needsWebgpu } from '../helpers/webgpu.js';

/** One 1-thread CPU session unless told otherwise; the model section's defaults (conf 0.25). */
const settings = (over: Partial<Config['detector']> = {}) => ({
  model: modelConfig({ path: 'unused.onnx' }),
  detector: sectionConfig('detector', { workers: 1, intra_op_threads: 1, inter_op_threads: 1, ...over }),
});

/** A grey picture of the model's size. */
const grey = (size: number): Picture => ({
  data: Buffer.alloc(size * size * 3, 128),
  geometry: letterbox(size, size, size),
});

function captureLog(): { log: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString());
      cb();
    },
  });
  const log = createLogger({ level: 'info', stream: { write: (s: string) => stream.write(s) } });
  return {
    log,
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

async function startFixture(
  t: Parameters<typeof tempDir>[0],
  fixture: Partial<FixtureOptions> = {},
  opts: Partial<Config['detector']> = {},
) {
  const dir = await tempDir(t);
  const path = await writeFixture(dir, 'fixture.onnx', fixture);
  const { log, lines } = captureLog();
  const detector = new Detector(await planModel({ path }), settings(opts), log);
  await detector.start();
  t.after(() => detector.stop());
  return { detector, lines, dir };
}

/** Letterboxes `images` and runs them as one batch: detections in source pixels. */
async function detectImages(detector: Detector, images: Buffer[]): Promise<Detection[][]> {
  const pictures = await Promise.all(images.map((b) => loadLetterboxed(b, detector.inputSize)));
  return (await detector.detect(pictures)).detections;
}

function assertScene(dets: Detection[], expected: { label: string; box: number[] }[]): void {
  assert.equal(dets.length, expected.length, JSON.stringify(dets));
  for (const e of expected) {
    const d = dets.find((x) => x.label === e.label);
    assert.ok(d, `no ${e.label} in ${JSON.stringify(dets)}`);
    assert.ok(
      boxIou(d.box, e.box) > 0.95,
      `${e.label}: ${JSON.stringify(d.box)} vs ${JSON.stringify(e.box)}`,
    );
    assert.ok(d.score > 0.9, `${e.label} score ${d.score}`);
  }
}

const scene = () => squaresPng(FIXTURE_SCENE.width, FIXTURE_SCENE.height, FIXTURE_SCENE.squares);
const blank = () => squaresPng(FIXTURE_SCENE.width, FIXTURE_SCENE.height, []);
const shifted = () =>
  squaresPng(FIXTURE_SCENE.width, FIXTURE_SCENE.height, [{ x: 0, y: 304, size: 64, rgb: [255, 255, 255] }]);

describe('detector with the fixture model (real ONNX Runtime)', () => {
  it('finds the bright and red squares at their source-pixel boxes', async (t) => {
    const { detector, lines } = await startFixture(t);
    assert.equal(detector.provider, 'cpu');
    assert.deepEqual(detector.labels, ['bright', 'red']);
    const [dets] = await detectImages(detector, [await scene()]);
    assertScene(dets!, FIXTURE_SCENE.expected);
    const ready = lines().find((l) => l.msg === 'detector ready');
    assert.equal(ready?.layout, 'channels-first');
    assert.equal(ready?.labelsFrom, 'model metadata');
  });

  it('runs a dynamic batch in one call, each item with its own result', async (t) => {
    const { detector } = await startFixture(t);
    const results = await detectImages(detector, [await scene(), await blank(), await shifted()]);
    assertScene(results[0]!, FIXTURE_SCENE.expected);
    assert.deepEqual(results[1], []);
    assertScene(results[2]!, [{ label: 'bright', box: [0, 304, 64, 368] }]);
  });

  it('runs a static-batch-1 model item by item and says so once', async (t) => {
    const { detector, lines } = await startFixture(t, { batch: 1 });
    const results = await detectImages(detector, [await blank(), await shifted(), await scene()]);
    assert.deepEqual(results[0], []);
    assertScene(results[1]!, [{ label: 'bright', box: [0, 304, 64, 368] }]);
    assertScene(results[2]!, FIXTURE_SCENE.expected);
    assert.equal(lines().filter((l) => String(l.msg).includes('static batch of 1')).length, 1);
  });

  it('runs a static batch of 2 in chunks, padding the last', async (t) => {
    const { detector } = await startFixture(t, { batch: 2 });
    const results = await detectImages(detector, [await scene(), await blank(), await shifted()]);
    assertScene(results[0]!, FIXTURE_SCENE.expected);
    assert.deepEqual(results[1], []);
    assertScene(results[2]!, [{ label: 'bright', box: [0, 304, 64, 368] }]);
  });

  it('reads the transposed [B, N, 4+C] layout', async (t) => {
    const { detector, lines } = await startFixture(t, { layout: 'transposed' });
    const [dets] = await detectImages(detector, [await scene()]);
    assertScene(dets!, FIXTURE_SCENE.expected);
    assert.equal(lines().find((l) => l.msg === 'detector ready')?.layout, 'transposed');
  });

  it('the slow fixture (work) answers as the plain one, to the last bit of every score, and takes longer', async (t) => {
    const plain = (await startFixture(t)).detector;
    const slow = (await startFixture(t, { work: 12 })).detector;
    const scenes = await Promise.all([scene(), blank(), shifted()]);
    const pictures = await Promise.all(scenes.map((b) => loadLetterboxed(b, plain.inputSize)));
    // And a picture of cells of every colour, scoring anywhere between 0 and 1.
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const colours = Array.from({ length: 100 }, () => [random(), random(), random()]);
    const cells = Buffer.alloc(320 * 320 * 3);
    for (let i = 0; i < 320 * 320; i++)
      cells.set(colours[Math.floor(i / 320 / 32) * 10 + Math.floor((i % 320) / 32)]!, i * 3);
    pictures.push({ data: cells, geometry: letterbox(320, 320, 320) });
    const a = await plain.detect(pictures);
    const b = await slow.detect(pictures);
    assertScene(b.detections[0]!, FIXTURE_SCENE.expected);
    assert.ok(a.detections[3]!.length > 3, `cells over the threshold: ${JSON.stringify(a.detections[3])}`);
    assert.deepEqual(b.detections, a.detections);
    // ONNX Runtime runs the extra work (nothing folds it away): one picture at a time, median of 7.
    const median = async (d: Detector): Promise<number> => {
      const ms: number[] = [];
      for (let i = 0; i < 7; i++) ms.push((await d.detect([pictures[0]!])).inferMs);
      return ms.sort((x, y) => x - y)[3]!;
    };
    const [fast, slowMs] = [await median(plain), await median(slow)];
    assert.ok(
      slowMs > 5 * fast && slowMs > 10,
      `plain ${fast.toFixed(1)} ms, work 12 ${slowMs.toFixed(1)} ms`,
    );
  });

  it('refuses an output layout it does not understand, naming the model', async (t) => {
    const dir = await tempDir(t);
    const path = await writeFixture(dir, 'flat.onnx', { layout: 'flat' });
    const detector = new Detector(await planModel({ path }), settings(), captureLog().log);
    await assert.rejects(detector.start(), (err: unknown) => {
      assert.ok(err instanceof DetectorError);
      assert.ok(err.message.startsWith(path), err.message);
      assert.match(err.message, /output shape \[1, 600\] is not a YOLO detection output/);
      return true;
    });
  });

  it('needs a labels file when the model has no names, and uses it', async (t) => {
    const dir = await tempDir(t);
    const path = await writeFixture(dir, 'nonames.onnx', { names: false });
    await assert.rejects(
      planModel({ path }),
      (err: unknown) =>
        err instanceof ModelError && /no 'names' metadata; set model.labels/.test(err.message),
    );
    const json = join(dir, 'labels.json');
    await writeFile(json, JSON.stringify(['light', 'crimson']));
    assert.deepEqual((await planModel({ path, labels: json })).labels, ['light', 'crimson']);
    const txt = join(dir, 'labels.txt');
    await writeFile(txt, 'light\n\ncrimson\n');
    const plan = await planModel({ path, labels: txt });
    assert.equal(plan.labelsFrom, 'labels file');
    const detector = new Detector(plan, settings(), captureLog().log);
    await detector.start();
    t.after(() => detector.stop());
    const [dets] = await detectImages(detector, [await scene()]);
    assert.deepEqual(dets!.map((d) => d.label).sort(), ['crimson', 'light']);
    await writeFile(txt, '');
    await assert.rejects(planModel({ path, labels: txt }), /labels file must list class names/);
    // Labels are MQTT topic levels: a wildcard or a slash in one is refused, naming it and the file.
    for (const bad of ['#', 'car/truck', '+', '$SYS']) {
      await writeFile(txt, `light\n${bad}\n`);
      await assert.rejects(
        planModel({ path, labels: txt }),
        (err: unknown) =>
          err instanceof ModelError &&
          err.message.startsWith(`${txt}: label 1 ${JSON.stringify(bad)} must not`) &&
          err.message.includes('rename it in the labels file'),
      );
    }
  });

  it('names the file when the model is missing or not ONNX', async (t) => {
    const dir = await tempDir(t);
    await assert.rejects(
      planModel({ path: join(dir, 'missing.onnx') }),
      /missing\.onnx: cannot read the model file \(no such file\)/,
    );
    const junk = join(dir, 'junk.onnx');
    await writeFile(junk, 'this is not a model');
    await assert.rejects(
      planModel({ path: junk }),
      (err: unknown) =>
        err instanceof ModelError && err.message.startsWith(`${junk}: not a valid ONNX model`),
    );
  });

  it('reuses one batch buffer for a stream of batches (transferred to the worker and back)', async (t) => {
    const { detector } = await startFixture(t);
    const scenes = await Promise.all([scene(), blank()]);
    const pictures = await Promise.all(scenes.map((b) => loadLetterboxed(b, detector.inputSize)));
    for (let i = 0; i < 20; i++) {
      const { detections } = await detector.detect(i % 2 ? [pictures[0]!] : pictures);
      assertScene(detections[0]!, FIXTURE_SCENE.expected);
    }
    assert.equal(detector.stats().buffersAllocated, 1, 'one buffer, sized for the largest batch, reused');
    assert.deepEqual(await detector.detect([]), { detections: [], inferMs: 0 });
  });

  it('refuses a picture of another size than the model takes', async (t) => {
    const { detector } = await startFixture(t);
    await assert.rejects(detector.detect([grey(detector.inputSize * 2)]), /the model takes 320x320/);
  });

  it('shares batches across a pool of workers', async (t) => {
    const { detector } = await startFixture(t, {}, { workers: 2 });
    assert.equal(detector.concurrency, 2);
    // Three waves of two batches at once: both sessions busy, each batch with its own buffer.
    for (let wave = 0; wave < 3; wave++) {
      const runs = await Promise.all([1, 2].map(() => detector.detect([grey(detector.inputSize)])));
      assert.equal(runs.length, 2);
    }
    assert.equal(detector.stats().readyWorkers, 2);
    assert.equal(detector.stats().buffersAllocated, 2, 'one buffer per batch in flight');
  });

  it('falls back along the configured providers to one that works, saying why in one line', async (t) => {
    const { detector, lines } = await startFixture(
      t,
      {},
      { providers: ['tensorrt', 'cuda', 'webgpu', 'cpu'] },
    );
    const choice = lines().filter((l) => String(l.msg).startsWith('using execution provider'));
    assert.equal(choice.length, 1, 'one line');
    assert.equal(choice[0]!.provider, detector.provider);
    const skipped = choice[0]!.skipped as { provider: string; reason: string }[];
    if (detector.provider === 'cpu') {
      // No GPU here (the development and CI machines have none): every GPU provider is skipped with its reason.
      assert.deepEqual(
        skipped.map((s) => s.provider),
        ['tensorrt', 'cuda', 'webgpu'],
      );
      for (const s of skipped) assert.ok(s.reason.length > 0);
      assert.equal(choice[0]!.level, 40, 'a fallback is a warning');
    }
    const [dets] = await detectImages(detector, [await scene()]);
    assertScene(dets!, FIXTURE_SCENE.expected);
  });

  it('rejects detect() after stop', async (t) => {
    const { detector } = await startFixture(t);
    await detector.stop();
    await assert.rejects(detector.detect([grey(detector.inputSize)]), /stopped/);
  });
});

describe('detector with the real YOLOv8n model', { skip: needsShared }, () => {
  it('keeps the event loop free while the session runs', async (t) => {
    const { log } = captureLog();
    const detector = new Detector(
      await planModel({ path: shared('models/yolov8n_int8.onnx') }),
      settings({ intra_op_threads: 0 }),
      log,
    );
    await detector.start();
    t.after(() => detector.stop());
    // Four frames of a static-batch model: several hundred milliseconds of inference.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const result = await detector.detect(Array.from({ length: 4 }, () => grey(detector.inputSize)));
    clearInterval(timer);
    assert.equal(result.detections.length, 4);
    // Were session.run on this thread, no timer could fire until it returned.
    assert.ok(ticks >= 5, `only ${ticks} timer ticks during ${result.inferMs.toFixed(0)} ms of inference`);
  });
});

// On each provider that runs here: WebGPU where the machine has a Vulkan device (CI: lavapipe).
for (const provider of ['cpu', 'webgpu'] as const)
  describe(
    `detector deadline (real worker threads, ${provider})`,
    { skip: provider === 'webgpu' && needsWebgpu },
    () => {
      it('abandons a batch that misses its deadline, recreates the session, and keeps working', async (t) => {
        const { log, lines } = captureLog();
        const detector = await fixtureDetector(t, log, { inference_timeout_ms: 1, providers: [provider] });
        assert.equal(detector.provider, provider);
        const many = Array.from({ length: 64 }, () => grey(detector.inputSize));
        const first = detector.detect(many);
        // A second batch finds no session free: the first is stuck, its replacement still loading.
        const second = detector.detect([grey(detector.inputSize)]);
        await assert.rejects(
          first,
          (err: unknown) => err instanceof DeadlineError && /missed its 1 ms deadline/.test(err.message),
        );
        await assert.rejects(second, /no detector session was free within 1 ms/);
        assert.equal(detector.stats().deadlinesMissed, 1);
        assert.ok(lines().some((l) => String(l.msg).includes('missed its 1 ms deadline')));
        await waitFor('the session to be recreated', () => detector.stats().readyWorkers === 1);
        assert.equal(detector.stats().sessionsRecreated, 1);
      });
    },
  );
