import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import ort from 'onnxruntime-node';
import { decodeModel, encodeModel } from '../../src/onnx/graph.js';
import { parseModelInfo, quantizationOf } from '../../src/onnx/model-info.js';
import { prepareModel } from '../../src/onnx/prepare.js';
import { execFile } from 'node:child_process';
import { needsShared, repoRoot, runCli, shared, tempDir, writeFixture } from '../helpers/env.js';
import { buildQuantizedModel, floatReference, Q } from '../helpers/quantized-model.js';
import { iou } from '../../src/core/geometry.js';

const frame = (seed: number): Float32Array =>
  Float32Array.from(
    { length: Q.inC * Q.size * Q.size },
    (_, i) => ((i * 7919 + seed * 104729) % 1000) / 1000,
  );

async function run(bytes: Uint8Array, frames: Float32Array[]): Promise<Float32Array> {
  const s = await ort.InferenceSession.create(bytes, { graphOptimizationLevel: 'all' });
  const data = new Float32Array(frames.length * frames[0]!.length);
  frames.forEach((f, i) => data.set(f, i * f.length));
  const out = await s.run({
    images: new ort.Tensor('float32', data, [frames.length, Q.inC, Q.size, Q.size]),
  });
  await s.release();
  return Float32Array.from(out.output0!.data as Float32Array);
}

const maxDiff = (a: Float32Array, b: Float32Array): number =>
  a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);

describe('model prepare passes (real ONNX Runtime)', () => {
  it('turns each ConvInteger chain into a Conv computing (w − zero point) × scale + bias, for any batch', async () => {
    const q = buildQuantizedModel();
    const model = decodeModel(q.bytes);
    const report = prepareModel(model, { batch: 'dynamic', precision: 'fp32' });
    assert.deepEqual(report, [
      '1 ConvInteger chains → Conv with fp32 weights',
      'batch 1 → dynamic',
      '2 Reshape shapes no longer fix the batch',
      '3 nodes no longer needed removed',
    ]);
    const bytes = encodeModel(model);
    const info = parseModelInfo(bytes);
    assert.equal(quantizationOf(info), 'none');
    assert.deepEqual(info.opCounts, { Conv: 1, Sigmoid: 1, Reshape: 2 }, 'bias folded into the Conv');
    assert.deepEqual(info.inputs[0]!.shape, ['batch', 3, 8, 8]);
    assert.equal(info.metadata.names, "{0: 'a', 1: 'b'}", 'metadata carried through');
    assert.equal(info.metadata.argus_prepared, 'batch=dynamic,fp32');

    const frames = [frame(1), frame(2), frame(3)];
    const out = await run(bytes, frames);
    frames.forEach((f, i) => {
      const want = floatReference(q, f);
      const got = out.subarray(i * want.length, (i + 1) * want.length);
      assert.ok(maxDiff(got, want) < 1e-5, `frame ${i}: ${maxDiff(got, want)}`);
    });
    // The quantized original approximates the same function, less exactly.
    const original = await run(q.bytes, [frames[0]!]);
    const err = maxDiff(original, floatReference(q, frames[0]!));
    assert.ok(err > 1e-5 && err < 0.05, `int8 error ${err}`);
  });

  it('converts a chain without a bias Add too', async () => {
    const q = buildQuantizedModel({ biasAdd: false });
    const model = decodeModel(q.bytes);
    prepareModel(model, { batch: 'keep', precision: 'fp32' });
    const info = parseModelInfo(encodeModel(model));
    assert.deepEqual(info.inputs[0]!.shape, [1, 3, 8, 8], 'batch kept');
    const f = frame(4);
    const want = floatReference({ ...q, bias: new Float32Array(Q.outC) }, f);
    assert.ok(maxDiff(await run(encodeModel(model), [f]), want) < 1e-5);
  });

  it('fp16 keeps float32 at the edges and stays within half-precision error', async () => {
    const q = buildQuantizedModel();
    const model = decodeModel(q.bytes);
    const report = prepareModel(model, { batch: 'dynamic', precision: 'fp16' });
    assert.match(report.at(-1)!, /float tensors → fp16/);
    const bytes = encodeModel(model);
    const info = parseModelInfo(bytes);
    assert.equal(info.inputs[0]!.elemType, 1);
    assert.equal(info.outputs[0]!.elemType, 1);
    const f = frame(5);
    const d = maxDiff(
      await run(bytes, [f, f]),
      Float32Array.from([...floatReference(q, f), ...floatReference(q, f)]),
    );
    assert.ok(d > 0 && d < 5e-3, `fp16 error ${d}`);
  });

  it('refuses, naming the node, what it cannot convert', () => {
    const model = decodeModel(buildQuantizedModel({ castTo: 6 }).bytes);
    assert.throws(
      () => prepareModel(model, { batch: 'keep', precision: 'fp32' }),
      /Cast 'Cast_cf' \(Cast\) does not cast to float/,
    );
  });

  it('fp16 refuses an op it has no half-precision rule for, and the batch pass a Reshape it cannot rewrite', () => {
    const model = decodeModel(buildQuantizedModel().bytes);
    model.graph.nodes.find((n) => n.op === 'Sigmoid')!.op = 'NonMaxSuppression';
    assert.throws(
      () => prepareModel(model, { batch: 'keep', precision: 'fp16' }),
      /fp16: no half-precision rule for op\(s\) NonMaxSuppression/,
    );
    const other = decodeModel(buildQuantizedModel().bytes);
    const reshape = other.graph.nodes.find((n) => n.outputs[0] === 'flat3')!;
    reshape.attributes.push({ name: 'allowzero', type: 2, int: 1n });
    assert.throws(
      () => prepareModel(other, { batch: 'dynamic', precision: 'keep' }),
      /Reshape 'Reshape_flat3' \(Reshape\): batch spelled out next to -1 with allowzero=1/,
    );
  });

  it('keeps an already dynamic float model as it is, apart from the marker', async (t) => {
    const dir = await tempDir(t);
    const path = await writeFixture(dir, 'fixture.onnx');
    const model = decodeModel(await readFile(path));
    assert.deepEqual(prepareModel(model, { batch: 'dynamic', precision: 'fp32' }), []);
  });
});

describe('argus model prepare (CLI)', () => {
  it('writes a checked model; refuses bad arguments and non-models without writing anything', async (t) => {
    const dir = await tempDir(t);
    const src = join(dir, 'q.onnx');
    await writeFile(src, buildQuantizedModel().bytes);
    const out = join(dir, 'out.onnx');
    // The test model has no YOLO output, so the report falls back to raw differences.
    const ok = await runCli(['model', 'prepare', src, '--out', out]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /check: batch 2 gives each frame the batch-1 answer/);
    assert.match(ok.stdout, /speed \(CPU, batch 1, median of 5\): original [\d.]+ ms, prepared [\d.]+ ms/);
    assert.ok(existsSync(out));

    const same = await runCli(['model', 'prepare', src, '--out', src]);
    assert.equal(same.code, 2);
    assert.match(same.stderr, /--out must differ from the input/);
    const bad = await runCli(['model', 'prepare', src, '--out', out, '--precision', 'int4']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--precision must be fp32, fp16 or keep, got 'int4'/);

    const junk = join(dir, 'junk.onnx');
    await writeFile(junk, 'not a model at all');
    const notModel = await runCli(['model', 'prepare', junk, '--out', join(dir, 'x.onnx')]);
    assert.equal(notModel.code, 1);
    assert.match(notModel.stderr, /junk\.onnx: not a valid ONNX model/);
    assert.ok(!existsSync(join(dir, 'x.onnx')), 'nothing written');

    const noDir = await runCli(['model', 'prepare', src, '--out', join(dir, 'missing', 'y.onnx')]);
    assert.equal(noDir.code, 1);
    assert.match(noDir.stderr, /cannot write .*missing\/y\.onnx \(no such directory\)/);
  });

  it(
    'prepares the shared YOLOv8n int8 model: dynamic batch, fp32, same detections on bus.jpg',
    { skip: needsShared },
    async (t) => {
      const dir = await tempDir(t);
      const out = join(dir, 'yolov8n_fp32.onnx');
      const bus = shared('media', 'bus.jpg');
      const res = await runCli(
        ['model', 'prepare', shared('models', 'yolov8n_int8.onnx'), '--out', out, '--check-image', bus],
        {},
        120_000,
      );
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /64 ConvInteger chains → Conv with fp32 weights/);
      assert.match(res.stdout, /bus\.jpg: 5 detections, same labels, box IoU ≥ 0\.9/);
      const info = parseModelInfo(await readFile(out));
      assert.equal(quantizationOf(info), 'none');
      assert.equal(info.inputs[0]!.shape[0], 'batch');

      // Against the published reference, through the detector at batch 2 (the same image twice).
      const det = await runCli(['detect', '--model', out, '--batch', '2', bus, bus], {}, 120_000);
      assert.equal(det.code, 0, det.stderr);
      const reference: [string, number[]][] = [
        ['person', [673, 377, 810, 879]],
        ['person', [221, 408, 343, 857]],
        ['person', [51, 398, 242, 904]],
        ['bus', [36, 232, 798, 775]],
        ['person', [0, 550, 62, 870]],
      ];
      for (const line of det.stdout.trim().split('\n')) {
        const got = (
          JSON.parse(line) as { detections: { label: string; box: [number, number, number, number] }[] }
        ).detections;
        assert.equal(got.length, reference.length, line);
        for (const [label, box] of reference) {
          const best = Math.max(
            ...got
              .filter((d) => d.label === label)
              .map((d) => iou(d.box, box as [number, number, number, number])),
          );
          assert.ok(best >= 0.9, `${label} [${box.join(',')}]: best IoU ${best}`);
        }
      }
    },
  );

  it('fp16 of the shared model gives the same detections on bus.jpg', { skip: needsShared }, async (t) => {
    const dir = await tempDir(t);
    const out = join(dir, 'yolov8n_fp16.onnx');
    const res = await runCli(
      [
        'model',
        'prepare',
        shared('models', 'yolov8n_int8.onnx'),
        '--out',
        out,
        '--precision',
        'fp16',
        '--check-image',
        shared('media', 'bus.jpg'),
      ],
      {},
      120_000,
    );
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /float tensors → fp16/);
    assert.match(res.stdout, /bus\.jpg: 5 detections, same labels, box IoU ≥ 0\.9/);
  });
});

describe('bench/probe.js (what bench/gpu.sh asks before each provider)', () => {
  it('says ok for the CPU, and gives the reason for a provider that cannot run here', async () => {
    const probe = join(repoRoot, 'dist/bench/probe.js');
    const run = (provider: string) =>
      new Promise<{ code: number | null; out: string }>((done) => {
        execFile(process.execPath, [probe, provider], (err, stdout) =>
          done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout.trim() }),
        );
      });
    assert.deepEqual(await run('cpu'), { code: 0, out: 'ok' });
    const cuda = await run('cuda');
    if (cuda.code === 0) return; // a machine with CUDA: nothing to check here
    assert.equal(cuda.code, 1);
    assert.ok(cuda.out.length > 0 && cuda.out !== 'ok', cuda.out);
  });
});
