import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pino } from 'pino';
import { systemClock } from '../../../src/core/clock.js';
import type { Detection, Picture } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import type { HttpSource } from '../../../src/http/source.js';
import { decodeInferResponse, encodeInferRequest } from '../../../src/kserve/codec.js';
import { labelsFromConfig } from '../../../src/kserve/plan.js';
import { RemoteDetector } from '../../../src/kserve/remote-detector.js';
import { nchwToRgb } from '../../../src/kserve/service-tensors.js';
import { InferenceService, type ServedModel, type ServiceRequest } from '../../../src/kserve/service.js';
import { tensorToJson } from '../../../src/kserve/tensor.js';
import { FrameDropped } from '../../../src/scheduler/index.js';
import { serveHttp } from '../../helpers/live-view.js';

const S = 4;
const labels = ['person', 'car', 'dog'];

/**
 * A served model that answers each picture from its first byte (nothing for 0, a car, and a dog
 * too over 100; boxes for a 4×4 input, scaled to its size), and keeps what it was given.
 */
function model(over: Partial<ServedModel> = {}): ServedModel & { got: Picture[] } {
  const got: Picture[] = [];
  const size = over.inputSize ?? S;
  const box = (b: number[]): Detection['box'] => b.map((v) => (v * size) / S) as Detection['box'];
  return {
    name: 'default',
    inputSize: S,
    labels,
    ready: () => true,
    detect: (p: Picture): Promise<Detection[]> => {
      got.push(p);
      const v = p.data[0]!;
      if (v === 0) return Promise.resolve([]);
      return Promise.resolve([
        { label: 'car', score: 0.75, box: box([0.5, 1, 3.5, 4]) },
        ...(v > 100 ? [{ label: 'dog', score: 0.5, box: box([1, 1, 2, 2]) }] : []),
      ]);
    },
    got,
    ...over,
  };
}

const service = (m: ServedModel, maxBodyBytes = 1 << 20): InferenceService =>
  new InferenceService(() => [m], { version: '9.9.9', maxBodyBytes });
const get = (path: string): ServiceRequest => ({ method: 'GET', path, headers: {}, body: undefined });
const body = (a: { body: Buffer }): unknown => JSON.parse(a.body.toString());

function post(path: string, json: unknown, binary?: Buffer): ServiceRequest {
  const head = Buffer.from(JSON.stringify(json));
  return {
    method: 'POST',
    path,
    headers: binary ? { 'inference-header-content-length': String(head.length) } : {},
    body: binary ? Buffer.concat([head, binary]) : head,
  };
}

/** `n` RGB24 pictures of S×S, picture i of value values[i], as FP32 NCHW / 255. */
function fp32(values: number[]): Buffer {
  const f = new Float32Array(values.length * 3 * S * S);
  values.forEach((v, i) => f.fill(v / 255, i * 3 * S * S, (i + 1) * 3 * S * S));
  return Buffer.from(f.buffer);
}

describe('InferenceService: metadata and health (KServe v2)', () => {
  it('server metadata names Argus, its version and extensions; live and ready', async () => {
    const m = model();
    const svc = service(m);
    const meta = await svc.handle(get('/v2'));
    assert.deepEqual(
      [meta.status, body(meta)],
      [
        200,
        {
          name: 'argus',
          version: '9.9.9',
          extensions: ['binary_tensor_data', 'model_configuration', 'argus_rgb24'],
        },
      ],
    );
    assert.deepEqual(body(await svc.handle(get('/v2/health/live'))), { live: true });
    assert.deepEqual([(await svc.handle(get('/v2/health/ready'))).status], [200]);
    const down = service(model({ ready: () => false }));
    const ready = await down.handle(get('/v2/health/ready'));
    assert.deepEqual([ready.status, body(ready)], [400, { ready: false }]);
    const mready = await down.handle(get('/v2/models/default/ready'));
    assert.deepEqual([mready.status, body(mready)], [400, { name: 'default', ready: false }]);
  });

  it('model metadata: FP32 [-1, 3, S, S] in, detections and counts out; version 1 only', async () => {
    const svc = service(model());
    const expected = {
      name: 'default',
      versions: ['1'],
      platform: 'onnx_onnxv1',
      inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, S, S] }],
      outputs: [
        { name: 'detections', datatype: 'FP32', shape: [-1, -1, 6] },
        { name: 'num_detections', datatype: 'INT32', shape: [-1] },
      ],
    };
    assert.deepEqual(body(await svc.handle(get('/v2/models/default'))), expected);
    assert.deepEqual(body(await svc.handle(get('/v2/models/default/versions/1'))), expected);
    const v2 = await svc.handle(get('/v2/models/default/versions/2'));
    assert.deepEqual(
      [v2.status, body(v2)],
      [404, { error: "model 'default' has no version '2' (its one version is 1)" }],
    );
    const other = await svc.handle(get('/v2/models/plates'));
    assert.deepEqual(
      [other.status, body(other)],
      [404, { error: "unknown model 'plates' (models: default)" }],
    );
    assert.equal((await svc.handle(get('/v2/repository/index'))).status, 404);
    assert.equal((await svc.handle({ ...get('/v2/models/default'), method: 'DELETE' })).status, 405);
  });

  it('model configuration: class names where Ultralytics puts them, batch limits from the body limit', async () => {
    const config = body(await service(model(), 200_000).handle(get('/v2/models/default/config'))) as {
      max_batch_size: number;
      parameters: Record<string, { string_value: string }>;
    };
    assert.deepEqual(labelsFromConfig(config), labels);
    // (200000 - 65536) / (3·4·4·4 bytes) for FP32, / (3·4·4) for UINT8; at most 64.
    assert.equal(config.max_batch_size, 64);
    const tight = body(
      await service(model(), 65536 + 3 * S * S * 4 * 2).handle(get('/v2/models/default/config')),
    ) as typeof config;
    assert.deepEqual([tight.max_batch_size, tight.parameters.rgb24_max_batch_size!.string_value], [2, '8']);
  });
});

describe('InferenceService: inference', () => {
  it('FP32 NCHW in binary → RGB24 pictures through the model → binary detections [B, K, 6] + counts', async () => {
    const m = model();
    const res = await service(m).handle(
      post(
        '/v2/models/default/infer',
        {
          id: 'r1',
          inputs: [
            {
              name: 'images',
              datatype: 'FP32',
              shape: [3, 3, S, S],
              parameters: { binary_data_size: 3 * 3 * S * S * 4 },
            },
          ],
          outputs: [
            { name: 'detections', parameters: { binary_data: true } },
            { name: 'num_detections', parameters: { binary_data: true } },
          ],
        },
        fp32([50, 0, 200]),
      ),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers['Content-Type'], 'application/octet-stream');
    assert.deepEqual(
      m.got.map((p) => [p.data.length, p.data[0], p.geometry]),
      [
        [3 * S * S, 50, letterbox(S, S, S)],
        [3 * S * S, 0, letterbox(S, S, S)],
        [3 * S * S, 200, letterbox(S, S, S)],
      ],
    );
    const out = decodeInferResponse(res.body, res.headers['Inference-Header-Content-Length']);
    assert.deepEqual([out.modelName, out.modelVersion, out.id], ['default', '1', 'r1']);
    const [det, num] = out.outputs;
    assert.deepEqual(
      [det!.shape, tensorToJson(num!)],
      [
        [3, 2, 6],
        [1, 0, 2],
      ],
    );
    assert.deepEqual(tensorToJson(det!), [
      ...[0.5, 1, 3.5, 4, 0.75, 1],
      ...[0, 0, 0, 0, 0, 0],
      ...[0, 0, 0, 0, 0, 0],
      ...[0, 0, 0, 0, 0, 0],
      ...[0.5, 1, 3.5, 4, 0.75, 1],
      ...[1, 1, 2, 2, 0.5, 2],
    ]);
  });

  it('UINT8 RGB24 in, as a JSON request; JSON answers when binary is not asked for', async () => {
    const m = model();
    const data = [...Buffer.alloc(3 * S * S, 120)];
    const res = await service(m).handle(
      post('/v2/models/default/infer', {
        inputs: [{ name: 'images', datatype: 'UINT8', shape: [1, S, S, 3], data }],
      }),
    );
    assert.deepEqual([res.status, res.headers['Content-Type']], [200, 'application/json']);
    assert.deepEqual(m.got[0]!.data, Buffer.alloc(3 * S * S, 120));
    assert.deepEqual(body(res), {
      model_name: 'default',
      model_version: '1',
      outputs: [
        {
          name: 'detections',
          shape: [1, 2, 6],
          datatype: 'FP32',
          data: [0.5, 1, 3.5, 4, 0.75, 1, 1, 1, 2, 2, 0.5, 2],
        },
        { name: 'num_detections', shape: [1], datatype: 'INT32', data: [2] },
      ],
    });
  });

  it('binary_data_output with no outputs listed: both outputs, binary (what tritonclient sends)', async () => {
    const req = encodeInferRequest({
      inputs: [{ name: 'images', datatype: 'FP32', shape: [1, 3, S, S], bytes: fp32([9]) }],
      outputs: [],
    });
    const json = JSON.parse(req.chunks[0]!.toString()) as Record<string, unknown>;
    delete json.outputs;
    const res = await service(model()).handle(
      post('/v2/models/default/infer', { ...json, parameters: { binary_data_output: true } }, fp32([9])),
    );
    const out = decodeInferResponse(res.body, res.headers['Inference-Header-Content-Length']);
    assert.deepEqual(
      out.outputs.map((o) => o.name),
      ['detections', 'num_detections'],
    );
  });

  it('refuses what the model does not take (400), a model not ready or a dropped picture (503)', async () => {
    const infer = async (svc: InferenceService, json: unknown, binary?: Buffer) => {
      const a = await svc.handle(post('/v2/models/default/infer', json, binary));
      return [a.status, (body(a) as { error: string }).error];
    };
    const input = (over: Record<string, unknown>) => ({
      inputs: [
        {
          name: 'images',
          datatype: 'UINT8',
          shape: [1, S, S, 3],
          data: new Array(3 * S * S).fill(1),
          ...over,
        },
      ],
    });
    const svc = service(model());
    assert.deepEqual(await infer(svc, input({ name: 'x' })), [
      400,
      "the model takes one input, 'images'; unknown: 'x'",
    ]);
    assert.deepEqual(await infer(svc, input({ shape: [1, 3, S, S] })), [
      400,
      "input 'images' is UINT8 [1, 3, 4, 4]; the model takes FP32 [B, 3, 4, 4] or UINT8 [B, 4, 4, 3], B ≥ 1",
    ]);
    assert.deepEqual(await infer(svc, { ...input({}), outputs: [{ name: 'output0' }] }), [
      400,
      "unknown output 'output0'; the model gives 'detections' and 'num_detections'",
    ]);
    assert.deepEqual(await infer(svc, input({ data: [1] })), [
      400,
      "tensor 'images': 1 elements of data; shape [1, 4, 4, 3] has 48",
    ]);
    assert.equal((await infer(svc, '{'))[0], 400);
    assert.deepEqual(await infer(service(model({ ready: () => false })), input({})), [
      503,
      "model 'default' is not ready",
    ]);
    const busy = model({
      detect: () => Promise.reject(new FrameDropped('full', 'the detector is busy: the picture was dropped')),
    });
    assert.deepEqual(await infer(service(busy), input({})), [
      503,
      'the detector is busy: the picture was dropped',
    ]);
    const getInfer = await svc.handle(get('/v2/models/default/infer'));
    assert.deepEqual([getInfer.status, getInfer.headers.Allow], [405, 'POST']);
  });

  it('refuses a picture of the wrong shape before reading its data, and an input given twice', async () => {
    const svc = service(model());
    // Data that would not even parse: refused by the header alone.
    const wrong = await svc.handle(
      post('/v2/models/default/infer', {
        inputs: [{ name: 'images', datatype: 'FP32', shape: [1, 3, 8, 8], data: [] }],
      }),
    );
    assert.equal(wrong.status, 400);
    assert.match((body(wrong) as { error: string }).error, /is FP32 \[1, 3, 8, 8\]; the model takes/);
    const input = {
      name: 'images',
      datatype: 'UINT8',
      shape: [1, S, S, 3],
      data: new Array(3 * S * S).fill(1),
    };
    const twice = await svc.handle(post('/v2/models/default/infer', { inputs: [input, input] }));
    assert.deepEqual([twice.status, body(twice)], [400, { error: "input 'images' is given twice" }]);
  });
});

/**
 * A served model that answers through a queue like the scheduler's for submitted pictures (16
 * waiting, beyond which the oldest is dropped), one batch of up to 4 at a time: what the service
 * must fit its pictures into.
 */
function queuedModel(): ServedModel & { most: number; sent: number } {
  const waiting: { resolve: (d: Detection[]) => void; reject: (e: Error) => void }[] = [];
  let running = false;
  const m = {
    ...model(),
    most: 0,
    sent: 0,
    detect(): Promise<Detection[]> {
      m.sent++;
      return new Promise<Detection[]>((resolve, reject) => {
        waiting.push({ resolve, reject });
        if (waiting.length > 16)
          waiting
            .shift()!
            .reject(
              new FrameDropped(
                'full',
                'the detector is busy: the picture was dropped (too many pictures waiting)',
              ),
            );
        m.most = Math.max(m.most, waiting.length);
        run();
      });
    },
  };
  const run = (): void => {
    if (running || !waiting.length) return;
    running = true;
    const batch = waiting.splice(0, 4);
    setImmediate(() => {
      for (const w of batch) w.resolve([]);
      running = false;
      run();
    });
  };
  return m;
}

const rgb24 = (n: number): ServiceRequest =>
  post(
    '/v2/models/default/infer',
    {
      inputs: [
        {
          name: 'images',
          datatype: 'UINT8',
          shape: [n, S, S, 3],
          parameters: { binary_data_size: n * 3 * S * S },
        },
      ],
    },
    Buffer.alloc(n * 3 * S * S, 1),
  );

describe('InferenceService: it takes what its configuration says (issue 24)', () => {
  const limits = async (svc: InferenceService): Promise<[number, number]> => {
    const c = body(await svc.handle(get('/v2/models/default/config'))) as {
      max_batch_size: number;
      parameters: { rgb24_max_batch_size: { string_value: string } };
    };
    return [c.max_batch_size, Number(c.parameters.rgb24_max_batch_size.string_value)];
  };

  it('an idle model takes a batch of exactly the size its configuration gives, within a queue of 16; one more is refused, saying the limit', async () => {
    const m = queuedModel();
    const svc = service(m, 65536 + 3 * S * S * 64);
    const [, max] = await limits(svc);
    assert.equal(max, 64);
    const full = await svc.handle(rgb24(max));
    assert.equal(full.status, 200, full.body.toString());
    assert.deepEqual(
      decodeInferResponse(full.body, full.headers['Inference-Header-Content-Length']).outputs[1]!.shape,
      [64],
    );
    assert.ok(m.most <= 16, `${m.most} pictures waited in the queue`);
    const over = await svc.handle(rgb24(max + 1));
    assert.deepEqual(
      [over.status, body(over)],
      [
        400,
        {
          error:
            "input 'images' holds 65 pictures; the model takes at most 64 a request as UINT8 (parameters.rgb24_max_batch_size in its configuration)",
        },
      ],
    );
    assert.equal(m.sent, 64, 'nothing of the refused request was sent');
  });

  it('takes two of its largest batches at once; a request beyond is refused whole (503), and one dropped picture stops its request', async () => {
    const m = queuedModel();
    const svc = service(m, 65536 + 3 * S * S * 10);
    const [, max] = await limits(svc);
    assert.equal(max, 10);
    const answers = await Promise.all([svc.handle(rgb24(10)), svc.handle(rgb24(10)), svc.handle(rgb24(1))]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 503],
    );
    assert.match(
      (body(answers[2]) as { error: string }).error,
      /^model 'default' is busy: 20 pictures are waiting or running, and 1 more would pass its 20; try again$/,
    );
    assert.equal(m.sent, 20);
    assert.equal((await svc.handle(rgb24(10))).status, 200, 'taken again once answered');

    let calls = 0;
    const failing = model({
      detect: () =>
        ++calls === 2
          ? Promise.reject(new FrameDropped('stale', 'it waited too long'))
          : new Promise(() => {}),
    });
    const dropped = await service(failing, 65536 + 3 * S * S * 40).handle(rgb24(40));
    assert.deepEqual([dropped.status, body(dropped)], [503, { error: 'it waited too long' }]);
    await new Promise((r) => setImmediate(r));
    assert.equal(calls, 16, 'the pictures still waiting for room are not sent');
  });
});

describe('InferenceService: any body is answered 2xx, 4xx or 503, never an error', () => {
  it('fuzzed inference bodies, JSON and binary', async () => {
    const svc = service(model(), 1 << 16);
    const valid = {
      id: 'x',
      parameters: { binary_data_output: true },
      inputs: [
        { name: 'images', datatype: 'UINT8', shape: [1, S, S, 3], data: new Array(3 * S * S).fill(7) },
      ],
      outputs: [{ name: 'detections', parameters: { binary_data: true } }],
    };
    const text = JSON.stringify(valid);
    const mutated = fc
      .tuple(fc.nat(text.length), fc.nat(20), fc.stringMatching(/^[\s\d.e\-"\\tfrunl[\]{},:]{0,12}$/))
      .map(([at, cut, insert]) => text.slice(0, at) + insert + text.slice(at + cut));
    const structured = fc
      .record(
        {
          id: fc.jsonValue(),
          parameters: fc.jsonValue(),
          inputs: fc.array(
            fc.record(
              {
                name: fc.constantFrom('images', 'x', 3),
                datatype: fc.constantFrom('UINT8', 'FP32', 'BYTES', 'BOOL', 'X'),
                shape: fc.oneof(
                  fc.constant([1, S, S, 3]),
                  fc.constant([2, 3, S, S]),
                  fc.array(fc.oneof(fc.integer({ min: -1, max: 70 }), fc.jsonValue()), { maxLength: 5 }),
                ),
                data: fc.oneof(
                  fc.jsonValue(),
                  fc.array(fc.integer({ min: -1, max: 300 }), { maxLength: 200 }),
                ),
                parameters: fc.oneof(
                  fc.constant(undefined),
                  fc.record({ binary_data_size: fc.integer({ min: -1, max: 200 }) }),
                ),
              },
              { requiredKeys: ['name'] },
            ),
            { maxLength: 3 },
          ),
          outputs: fc.oneof(fc.constant(undefined), fc.jsonValue(), fc.constant([{ name: 'detections' }])),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v));
    // Data nested from a few levels to 100,000 deep, closed or not, around a number or nothing.
    const deep = fc
      .tuple(fc.constantFrom(1, 3, 4, 5, 1000, 100_000), fc.boolean(), fc.constantFrom('1', '', '"a"', '{}'))
      .map(([depth, closed, inner]) => {
        const data = '['.repeat(depth) + inner + (closed ? ']'.repeat(depth) : '');
        return `{"inputs":[{"name":"images","datatype":"UINT8","shape":[1,${S},${S},3],"data":${data}}]}`;
      });
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(mutated, structured, deep, fc.string({ maxLength: 50 })),
        fc.option(fc.uint8Array({ maxLength: 200 })),
        fc.option(fc.oneof(fc.nat(400).map(String), fc.string({ maxLength: 4 }))),
        async (json, binary, header) => {
          const head = Buffer.from(json);
          const req: ServiceRequest = {
            method: 'POST',
            path: '/v2/models/default/infer',
            headers: header === null ? {} : { 'inference-header-content-length': header },
            body: binary === null ? head : Buffer.concat([head, binary]),
          };
          const a = await svc.handle(req);
          assert.ok(
            (a.status >= 200 && a.status < 300) || (a.status >= 400 && a.status < 500) || a.status === 503,
            `${a.status}`,
          );
          if (a.status >= 400) assert.equal(typeof (body(a) as { error: unknown }).error, 'string');
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('InferenceService: pictures', () => {
  it('nchwToRgb turns FP32 back into the RGB24 bytes they came from (clamped)', () => {
    const square = new Float32Array(3 * 4);
    [0, 127, 255, 300].forEach((v, i) => [0, 1, 2].forEach((c) => (square[c * 4 + i] = (v + c) / 255)));
    assert.deepEqual([...nchwToRgb(square, 0, 2)], [0, 1, 2, 127, 128, 129, 255, 255, 255, 255, 255, 255]);
  });
});

describe(
  'Argus to Argus: a RemoteDetector against an HttpServer serving a model',
  { timeout: 20_000 },
  () => {
    it('sends RGB24, gets post-NMS detections, maps them to the source picture', async (t) => {
      const served = model({ inputSize: 32 });
      const source = { servedModels: () => [served] } as unknown as HttpSource;
      const url = await serveHttp(t, source, { inference: true });
      const remote = new RemoteDetector(
        {
          name: 'box-a',
          conf: 0.6,
          iou: 0.45,
          max_detections: 300,
          remote: {
            url,
            model: 'default',
            headers: {},
            timeout_ms: 2000,
            retries: 0,
            in_flight: 2,
          },
        },
        { log: pino({ level: 'silent' }), clock: systemClock },
      );
      await remote.start();
      t.after(() => remote.stop());
      // A 64×32 source letterboxed to 32×32: scale 0.5, 8 px of padding above.
      const picture: Picture = { data: Buffer.alloc(32 * 32 * 3, 200), geometry: letterbox(64, 32, 32) };
      const { detections } = await remote.detect([
        picture,
        { ...picture, data: Buffer.alloc(32 * 32 * 3, 0) },
      ]);
      // conf 0.6 keeps the car (0.75), not the dog (0.5); [4, 8, 28, 32] → x ×2, (y - 8) ×2, clipped.
      assert.deepEqual(detections, [[{ label: 'car', score: 0.75, box: [8, 0, 56, 32] }], []]);
      assert.deepEqual(
        served.got.map((p) => p.data[0]),
        [200, 0],
      );
      const s = remote.stats();
      assert.deepEqual([s.input, s.output], ['UINT8', 'detections']);
      assert.ok(s.bytesSent < 2 * 32 * 32 * 3 + 1000, `${s.bytesSent} bytes for two RGB24 pictures`);
    });
  },
);
