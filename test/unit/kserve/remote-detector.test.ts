import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { backoffDelay } from '../../../src/backoff.js';
import type { Picture } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import type { DecodedRequest } from '../../../src/kserve/codec.js';
import { toFloat16Bits } from '../../../src/onnx/index.js';
import {
  HEALTH_INTERVAL_MS,
  PROBE_BACKOFF,
  RemoteDetector,
  RemoteUnavailableError,
} from '../../../src/kserve/remote-detector.js';
import { readySessions } from '../../../src/models/index.js';
import type { Availability, RemoteDetectorConfig } from '../../../src/kserve/remote-options.js';
import { RETRY_BACKOFF } from '../../../src/kserve/remote-requests.js';
import type { Tensor } from '../../../src/kserve/tensor.js';
import { tempDir, waitFor } from '../../helpers/env.js';
import { FakeKServe, type FakeModelSpec } from '../../helpers/fake-kserve.js';
import { FakeClock } from '../../helpers/fakes.js';

const S = 32;
const TOKEN = 'Bearer s3cr3t-t0ken';

/** The detector's waits on its clock, as setup's `random` (0) makes them: retry `n`, probe `n`. */
const retryDelay = (n: number): number => backoffDelay(n, RETRY_BACKOFF, () => 0);
const probeDelay = (n: number): number => backoffDelay(n, PROBE_BACKOFF, () => 0);

/**
 * The fake model: per picture one box [12, 12, 20, 20] (input pixels), class 'dog' when the
 * picture's first red value is over 127, else 'cat', score 0.9. It reads the first red value
 * from FP32 NCHW and UINT8 NHWC alike, so a test sees which picture went where.
 */
function yoloModel(opts: { batch?: number; fp16?: boolean; config?: boolean } = {}): FakeModelSpec {
  const b = opts.batch ?? -1;
  const datatype = opts.fp16 ? 'FP16' : 'FP32';
  return {
    name: 'pets',
    inputs: [{ name: 'images', datatype: 'FP32', shape: [b, 3, S, S] }],
    outputs: [{ name: 'output0', datatype, shape: [b, 6, 4] }],
    ...(opts.config === false
      ? {}
      : {
          config: {
            max_batch_size: b === -1 ? 8 : 0,
            parameters: { metadata: { string_value: "{'names': {0: 'cat', 1: 'dog'}, 'imgsz': [32, 32]}" } },
          },
        }),
    infer: (req: DecodedRequest): Tensor[] => {
      const input = req.inputs[0]!;
      const n = input.shape[0]!;
      const out = new Float32Array(n * 6 * 4);
      for (let i = 0; i < n; i++) {
        const red =
          input.datatype === 'UINT8'
            ? (input.data as Uint8Array)[i * S * S * 3]!
            : Math.round((input.data as Float32Array)[i * 3 * S * S]! * 255);
        // Anchor 0 of item i: cx, cy, w, h, cat, dog.
        [16, 16, 8, 8, red > 127 ? 0.05 : 0.9, red > 127 ? 0.9 : 0.05].forEach(
          (v, r) => (out[i * 24 + r * 4] = v),
        );
      }
      return [{ name: 'output0', datatype: opts.fp16 ? 'FP16' : 'FP32', shape: [n, 6, 4], data: out }];
    },
  };
}

/** A 32×32 picture of one value, letterboxed from a 64×32 source (boxes map back ×2, -8 px pad). */
const picture = (value: number): Picture => ({
  data: Buffer.alloc(S * S * 3, value),
  geometry: letterbox(64, 32, S),
});

interface Setup {
  server: FakeKServe;
  detector: RemoteDetector;
  /** The detector's clock: its backoffs, probes and readiness checks wait until a test moves it. */
  clock: FakeClock;
  changes: Availability[];
  logs: () => string;
}

async function setup(
  t: { after: (fn: () => Promise<void> | void) => void },
  model: FakeModelSpec,
  over: Partial<Omit<RemoteDetectorConfig, 'remote'>> & {
    remote?: Partial<RemoteDetectorConfig['remote']>;
  } = {},
  start = true,
): Promise<Setup> {
  const server = new FakeKServe(model);
  await server.start();
  t.after(() => server.stop());
  let logs = '';
  // As the registry gives it: the model's own logger, `model` bound on every line.
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logs += chunk.toString();
        done();
      },
    }),
  ).child({ model: 'pets' });
  const changes: Availability[] = [];
  const clock = new FakeClock();
  const detector = new RemoteDetector(
    {
      name: 'pets',
      conf: 0.25,
      iou: 0.45,
      max_detections: 300,
      ...over,
      remote: {
        url: server.url,
        model: 'pets',
        headers: { Authorization: TOKEN },
        // A deadline fires only when a test moves the clock past it; 10 s is none of the waits
        // the tests let pass (retry and probe backoff, HEALTH_INTERVAL_MS), so dueIn tells them apart.
        timeout_ms: 10_000,
        retries: 2,
        in_flight: 2,
        ...over.remote,
      },
    },
    { log, clock, onAvailability: (c) => changes.push(c), random: () => 0 },
  );
  t.after(() => detector.stop());
  if (start) await detector.start();
  return { server, detector, clock, changes, logs: () => logs };
}

describe('RemoteDetector against a fake KServe v2 server', { timeout: 30_000 }, () => {
  it('asks health, readiness, metadata and config at start; sends one binary FP32 request per batch', async (t) => {
    const { server, detector } = await setup(t, yoloModel());
    assert.deepEqual(
      server.seen.map((r) => `${r.method} ${r.path}`),
      [
        'GET /v2/health/ready',
        'GET /v2/models/pets/ready',
        'GET /v2/models/pets',
        'GET /v2',
        'GET /v2/models/pets/config',
      ],
    );
    assert.deepEqual([detector.inputSize, detector.labels, detector.concurrency], [S, ['cat', 'dog'], 2]);
    const { detections } = await detector.detect([picture(10), picture(200), picture(20)]);
    assert.deepEqual(detections, [
      [{ label: 'cat', score: 0.9, box: [24, 8, 40, 24] }],
      [{ label: 'dog', score: 0.9, box: [24, 8, 40, 24] }],
      [{ label: 'cat', score: 0.9, box: [24, 8, 40, 24] }],
    ]);
    const [req] = server.inferences;
    assert.equal(server.inferences.length, 1, 'a dynamic batch: one request');
    assert.deepEqual(
      req!.infer!.inputs.map((i) => [i.name, i.datatype, i.shape]),
      [['images', 'FP32', [3, 3, S, S]]],
    );
    assert.deepEqual(req!.infer!.outputs, [{ name: 'output0', binary: true }]);
    assert.equal(req!.headers['content-type'], 'application/octet-stream');
    assert.equal(req!.headers.authorization, TOKEN, 'the configured header goes with every request');
    assert.ok(Number(req!.headers['inference-header-content-length']) > 0);
    const s = detector.stats();
    assert.deepEqual([readySessions(s), s.state, s.requests, s.frames], [2, 'up', 1, 3]);
    assert.equal(s.bytesSent, Number(req!.headers['content-length']));
    assert.ok(s.bytesSent > 3 * 3 * S * S * 4, 'FP32: 4 bytes a value');
  });

  it('a model with a fixed batch of 1 gets one request per picture, at most in_flight at once, on kept connections', async (t) => {
    const { server, detector } = await setup(t, yoloModel({ batch: 1 }));
    server.delayMs = 30;
    const { detections } = await detector.detect([picture(10), picture(200), picture(20), picture(210)]);
    assert.deepEqual(
      detections.map((d) => d[0]!.label),
      ['cat', 'dog', 'cat', 'dog'],
    );
    assert.equal(server.inferences.length, 4);
    assert.ok(server.inferences.every((r) => r.infer!.inputs[0]!.shape[0] === 1));
    assert.equal(server.maxActive, 2, 'never more than in_flight requests outstanding');
    assert.ok(server.connections <= 2, `${server.connections} connections for 9 requests`);
  });

  it('decodes FP16 outputs', async (t) => {
    const model = yoloModel({ fp16: true });
    const { detector } = await setup(t, model);
    const { detections } = await detector.detect([picture(200)]);
    assert.deepEqual(
      detections[0]!.map((d) => [d.label, d.box]),
      [['dog', [24, 8, 40, 24]]],
    );
    // 0.9 in half precision is 0.89990234375: the score is what the server sent, rounded.
    assert.equal(detections[0]![0]!.score, Math.round(toHalf(0.9) * 1e4) / 1e4);
  });

  it('sends UINT8 RGB24 pictures to an Argus server (argus_rgb24), a quarter of the bytes', async (t) => {
    const model = yoloModel();
    const { server, detector } = await setup(t, model, {}, false);
    server.extensions = [...server.extensions, 'argus_rgb24'];
    await detector.start();
    const { detections } = await detector.detect([picture(200), picture(5)]);
    assert.deepEqual(
      detections.map((d) => d[0]!.label),
      ['dog', 'cat'],
    );
    const input = server.inferences[0]!.infer!.inputs[0]!;
    assert.deepEqual([input.datatype, input.shape], ['UINT8', [2, S, S, 3]]);
    assert.equal(detector.stats().input, 'UINT8');
  });

  it('class names from a labels file when the server gives none', async (t) => {
    const dir = await tempDir(t);
    const labels = join(dir, 'pets.txt');
    await writeFile(labels, 'kitten\npuppy\n');
    const { detector } = await setup(t, yoloModel({ config: false }), { labels });
    assert.deepEqual(detector.labels, ['kitten', 'puppy']);
    assert.equal((await detector.detect([picture(200)])).detections[0]![0]!.label, 'puppy');
    await assert.rejects(
      setup(t, yoloModel({ config: false })),
      /gives no class names for the model.*set labels/,
    );
  });

  it('retries a 503 with backoff, and fails when the retries run out; the server counts as unavailable', async (t) => {
    const { server, detector, clock, changes } = await setup(t, yoloModel(), { remote: { retries: 2 } });
    server.statuses = [503, 503];
    const answered = detector.detect([picture(1)]);
    for (const n of [0, 1]) await clock.advanceWhenDue(retryDelay(n));
    assert.equal((await answered).detections[0]!.length, 1);
    assert.deepEqual([detector.stats().requests, detector.stats().retries], [3, 2]);
    server.statuses = [503, 503, 503];
    const refused = assert.rejects(detector.detect([picture(1)]), /HTTP 503: scripted 503/);
    for (const n of [0, 1]) await clock.advanceWhenDue(retryDelay(n));
    await refused;
    assert.deepEqual(changes, [{ model: 'pets', up: false, message: changes[0]!.message }]);
    assert.match(changes[0]!.message!, /POST http:\/\/127\.0\.0\.1:\d+\/v2\/models\/pets\/infer: HTTP 503/);
    // The probe (health, ready, metadata) finds it well again.
    await clock.advanceWhenDue(probeDelay(0));
    await waitFor('recovery', () => detector.available, 5000);
    assert.deepEqual(changes.at(-1), { model: 'pets', up: true, message: null });
  });

  it('a 400 fails the batch alone, with the server’s error, and the token never in it or the log', async (t) => {
    const { server, detector, changes, logs } = await setup(t, yoloModel());
    server.statuses = [400];
    const err = await detector.detect([picture(1)]).then(
      () => assert.fail('should fail'),
      (e: Error) => e,
    );
    assert.match(err.message, /HTTP 400: scripted 400/);
    assert.equal(detector.stats().retries, 0, 'a rejection is not retried');
    assert.deepEqual([detector.available, changes], [true, []]);
    // A server that echoes the token back has it hidden.
    server.statuses = [401];
    server.errorText = () => `token ${TOKEN} refused`;
    await assert.rejects(detector.detect([picture(1)]), (e: Error) =>
      /HTTP 401: token \*\*\* refused/.test(e.message),
    );
    assert.ok(!logs().includes('s3cr3t'));
  });

  it('a request past its deadline fails; three in a row make the server unavailable', async (t) => {
    const { server, detector, clock, changes } = await setup(t, yoloModel(), {
      remote: { timeout_ms: 100, retries: 0 },
    });
    server.delayMs = 400;
    /** A batch whose request reaches the server, and the 100 ms on the clock that it waits there. */
    const late = async (): Promise<void> => {
      const sent = server.inferences.length;
      const failed = assert.rejects(detector.detect([picture(1)]), /no answer within 100 ms/);
      await waitFor('the request at the server', () => server.inferences.length > sent, 5000);
      await clock.advance(100);
      await failed;
    };
    await late();
    assert.equal(detector.available, true);
    await late();
    await late();
    assert.equal(detector.available, false);
    assert.equal(changes.length, 1);
    assert.equal(detector.stats().failures.timeout, 3);
  });

  it('connection refused: unavailable at once (one log line, one change), batches fail without a request, then recovers', async (t) => {
    const { server, detector, clock, changes, logs } = await setup(t, yoloModel(), {
      remote: { retries: 1 },
    });
    await server.stop();
    const refused = assert.rejects(detector.detect([picture(1)]), /ECONNREFUSED/);
    await clock.advanceWhenDue(retryDelay(0));
    await refused;
    assert.deepEqual(
      changes.map((c) => c.up),
      [false],
    );
    const before = server.seen.length;
    for (let i = 0; i < 5; i++)
      await assert.rejects(detector.detect([picture(1)]), (e: Error) => e instanceof RemoteUnavailableError);
    assert.equal(server.seen.length, before, 'no request while it is unavailable');
    assert.equal(readySessions(detector.stats()), 0);
    assert.equal(logs().match(/remote model pets unavailable/g)?.length, 1, 'one line for the transition');
    await server.start();
    await clock.advanceWhenDue(probeDelay(0));
    await waitFor('recovery', () => detector.available, 5000);
    assert.deepEqual(
      changes.map((c) => c.up),
      [false, true],
    );
    assert.equal(logs().match(/remote model pets available again/g)?.length, 1);
    assert.equal((await detector.detect([picture(200)])).detections[0]![0]!.label, 'dog');
  });

  it('starts while the server is away when input_size is known; refuses to without it', async (t) => {
    const { server, detector, clock } = await setup(t, yoloModel(), { input_size: S }, false);
    await server.stop();
    await detector.start();
    assert.deepEqual([detector.available, detector.inputSize, detector.stats().state], [false, S, 'down']);
    await server.start();
    await clock.advanceWhenDue(probeDelay(0));
    await waitFor('the server', () => detector.available, 5000);
    assert.deepEqual(detector.labels, ['cat', 'dog']);

    const other = await setup(t, yoloModel(), {}, false);
    await other.server.stop();
    await assert.rejects(
      other.detector.start(),
      /model pets: .*ECONNREFUSED.*set input_size to start without the server/,
    );
  });

  it('a model Argus cannot use fails the start, naming the server and why', async (t) => {
    const model = yoloModel();
    model.inputs = [{ name: 'images', datatype: 'FP32', shape: [-1, S, S, 3] }];
    const { detector } = await setup(t, model, {}, false);
    await assert.rejects(
      detector.start(),
      /model pets: http:\/\/127\.0\.0\.1:\d+ model 'pets': input 'images' FP32 \[-1, 32, 32, 3\] is not \[batch, 3, size, size\]/,
    );
    const hashed = yoloModel();
    hashed.config!.parameters!.metadata!.string_value = "{'names': {0: 'cat', 1: 'dog#1'}}";
    const bad = await setup(t, hashed, { input_size: S }, false);
    await assert.rejects(
      bad.detector.start(),
      /model 'pets': its class names: label 1 "dog#1" must not contain/,
    );
    const sized = await setup(t, yoloModel(), { input_size: 64 }, false);
    await assert.rejects(sized.detector.start(), /takes 32×32 pictures; input_size says 64/);
  });
});

const toHalf = (v: number): number => {
  const bits = toFloat16Bits(Float32Array.of(v))[0]!;
  const e = (bits >> 10) & 0x1f;
  return (1 + (bits & 0x3ff) / 1024) * 2 ** (e - 15);
};

/** The log lines (JSON) at `level` and above: pino's 30 info, 40 warn. */
function linesAtLeast(logs: string, level: number): { level: number; msg: string; raw: string }[] {
  return logs
    .split('\n')
    .filter(Boolean)
    .map((raw) => ({ ...(JSON.parse(raw) as { level: number; msg: string }), raw }))
    .filter((l) => l.level >= level);
}

/** No line carries a key twice (pino child bindings and a field of the same name both print). */
function assertNoDuplicateModelKey(logs: string): void {
  for (const line of logs.split('\n').filter(Boolean))
    assert.ok((line.match(/"model":/g) ?? []).length <= 1, `"model" twice in ${line}`);
}

/** A post-NMS model (as an Argus server answers): one row per picture, of the class `classOf` says. */
function detectionsModel(classOf: () => number): FakeModelSpec {
  return {
    name: 'pets',
    inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, S, S] }],
    outputs: [
      { name: 'detections', datatype: 'FP32', shape: [-1, -1, 6] },
      { name: 'num_detections', datatype: 'INT32', shape: [-1] },
    ],
    config: {
      max_batch_size: 8,
      parameters: { metadata: { string_value: "{'names': {0: 'cat', 1: 'dog'}}" } },
    },
    infer: (req: DecodedRequest): Tensor[] => {
      const n = req.inputs[0]!.shape[0]!;
      const rows = new Float32Array(n * 6);
      for (let i = 0; i < n; i++) rows.set([4, 4, 12, 12, 0.9, classOf()], i * 6);
      return [
        { name: 'detections', datatype: 'FP32', shape: [n, 1, 6], data: rows },
        { name: 'num_detections', datatype: 'INT32', shape: [n], data: new Int32Array(n).fill(1) },
      ];
    },
  };
}

/**
 * Issue 24, item 4: a remote model that fails is visibly down. Each fault as a real HTTP server
 * shows it, after it answered the readiness and metadata probes correctly.
 */
describe('RemoteDetector: a server that misbehaves', { timeout: 60_000 }, () => {
  const faults: [string, (res: ServerResponse) => void, RegExp][] = [
    [
      '500 to every inference',
      (res) =>
        res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"CUDA out of memory"}'),
      /POST http:\/\/127\.0\.0\.1:\d+\/v2\/models\/pets\/infer: HTTP 500: CUDA out of memory/,
    ],
    [
      '200 with garbage to every inference',
      (res) =>
        res
          .writeHead(200, { 'Content-Type': 'application/octet-stream' })
          .end(Buffer.from('\x89PNG garbage')),
      /POST http:\/\/127\.0\.0\.1:\d+\/v2\/models\/pets\/infer: the body's JSON does not parse/,
    ],
  ];
  for (const [fault, misbehave, error] of faults)
    it(`${fault}: three failed batches in a row make it unavailable (one line); back once a trial inference is answered (one line)`, async (t) => {
      const { server, detector, clock, changes, logs } = await setup(t, yoloModel(), {
        remote: { retries: 1 },
      });
      assert.equal((await detector.detect([picture(1)])).detections[0]!.length, 1);
      server.misbehave = misbehave;
      const failed: Error[] = [];
      for (let i = 1; i <= 3; i++) {
        await assert.rejects(detector.detect([picture(1)]), (e: Error) => {
          assert.match(e.message, error);
          return failed.push(e) > 0;
        });
        assert.equal(detector.available, i < 3, `after ${i} failed batches`);
      }
      assert.ok(
        failed.every((e) => (e as { reported?: unknown }).reported === true),
        'each failed batch is the model’s to report: the scheduler logs it at debug',
      );
      assert.equal(changes.length, 1);
      assert.equal(changes[0]!.up, false);
      assert.match(changes[0]!.message!, /^3 batches in a row failed, the last: /);
      assert.match(changes[0]!.message!, error);
      assert.deepEqual([readySessions(detector.stats()), detector.stats().state], [0, 'down']);
      assert.match(detector.unavailable()!, error);
      const sent = server.inferences.length;
      await assert.rejects(detector.detect([picture(1)]), (e: Error) => e instanceof RemoteUnavailableError);
      assert.equal(server.inferences.length, sent, 'no request while it is unavailable');

      // Its probes find the server ready and the model described, but the trial inference fails.
      for (const n of [0, 1]) await clock.advanceWhenDue(probeDelay(n));
      await waitFor('two probes', () => server.inferences.length >= sent + 2, 10_000);
      assert.equal(detector.available, false, 'ready is not enough: the trial inference failed');
      const trial = server.inferences.at(-1)!.infer!.inputs[0]!;
      assert.deepEqual(trial.shape, [1, 3, S, S], 'one blank picture');

      server.misbehave = undefined;
      await clock.advanceWhenDue(probeDelay(2));
      await waitFor('recovery', () => detector.available, 20_000);
      assert.deepEqual(
        changes.map((c) => c.up),
        [false, true],
      );
      assert.equal((await detector.detect([picture(200)])).detections[0]![0]!.label, 'dog');
      const said = linesAtLeast(logs(), 30);
      assert.deepEqual(
        said.map((l) => [l.level, l.msg.replace(/: .*/, '')]),
        [
          [30, 'remote model pets ready'],
          [40, 'remote model pets unavailable'],
          [30, 'remote model pets available again'],
        ],
        'one line when it goes, one when it is back: nothing per batch above debug',
      );
      assertNoDuplicateModelKey(logs());
    });

  it('killed while no batch is sent (its cameras answered from the cache): the readiness check notices it', async (t) => {
    const { server, detector, clock, changes, logs } = await setup(t, yoloModel());
    await detector.detect([picture(1)]);
    const probes = server.seen.length;
    // From here no batch goes out. The server is asked whether it is ready meanwhile.
    await clock.advanceWhenDue(HEALTH_INTERVAL_MS);
    await waitFor(
      'a readiness check while up',
      () => server.seen.slice(probes).some((r) => r.path === '/v2/health/ready'),
      10_000,
    );
    assert.equal(server.inferences.length, 1);
    // The check answered, the next one is set.
    await clock.dueIn(HEALTH_INTERVAL_MS);
    await server.stop();
    const t0 = clock.now();
    await clock.advanceWhenDue(HEALTH_INTERVAL_MS);
    // ECONNREFUSED is retried as a request's is (retries: 2), then makes it unavailable.
    for (const n of [0, 1]) await clock.advanceWhenDue(retryDelay(n));
    await waitFor('the check to find it gone', () => !detector.available, 15_000);
    const noticedMs = clock.now() - t0;
    assert.equal(server.inferences.length, 1, 'noticed without a batch');
    assert.match(changes[0]!.message!, /GET http:\/\/127\.0\.0\.1:\d+\/v2\/health\/ready: ECONNREFUSED/);
    t.diagnostic(`noticed ${noticedMs} ms (on the clock) after the server went`);
    await server.start();
    await clock.advanceWhenDue(probeDelay(0));
    await waitFor('recovery', () => detector.available, 15_000);
    assert.deepEqual(
      changes.map((c) => c.up),
      [false, true],
    );
    assert.deepEqual(
      linesAtLeast(logs(), 40).map((l) => l.msg.replace(/: .*/, '')),
      ['remote model pets unavailable'],
    );
    assertNoDuplicateModelKey(logs());
  });

  it('a model not ready while up: the readiness check makes it unavailable', async (t) => {
    const { server, detector, clock, changes } = await setup(t, yoloModel());
    server.ready = false;
    await clock.advanceWhenDue(HEALTH_INTERVAL_MS);
    await waitFor('the check to find it not ready', () => !detector.available, 15_000);
    assert.match(changes[0]!.message!, /\/v2\/health\/ready \(server ready\): HTTP 400/);
    server.ready = true;
    await clock.advanceWhenDue(probeDelay(0));
    await waitFor('recovery', () => detector.available, 15_000);
  });

  it('an answer larger than the batch can need is refused as it arrives, never read whole', async (t) => {
    const { server, detector } = await setup(t, yoloModel());
    const GiB = 1024 ** 3;
    let written = 0;
    /** Streams spaces (1 MiB at a time, up to 1 GiB) until the client hangs up. */
    const endless =
      (headers: Record<string, string | number>) =>
      (res: ServerResponse): void => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', ...headers });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        const pump = (): void => {
          while (written < GiB && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      };
    // One picture of a [1, 6, 4] output: 24 binary floats, and 64 KiB for the JSON header.
    const limit = 64 * 1024 + 6 * 4 * 4;
    const declared: Record<string, number>[] = [{}, { 'Content-Length': GiB }];
    for (const headers of declared) {
      written = 0;
      server.misbehave = endless(headers);
      await assert.rejects(
        detector.detect([picture(1)]),
        new RegExp(`/v2/models/pets/infer: answer over ${limit} bytes, more than it can need`),
      );
      assert.ok(written < 32 * 1024 * 1024, `the server wrote ${written} bytes before the client hung up`);
    }
    assert.equal(detector.stats().failures.protocol, 2);
    server.misbehave = undefined;
    assert.equal((await detector.detect([picture(200)])).detections[0]![0]!.label, 'dog');
  });

  it('a class index outside the model’s labels fails the batch instead of inventing a label', async (t) => {
    let cls = 1;
    const { detector } = await setup(
      t,
      detectionsModel(() => cls),
    );
    assert.equal((await detector.detect([picture(1)])).detections[0]![0]!.label, 'dog');
    for (const [bad, shown] of [
      [2, '2'],
      [-1, '-1'],
      [Number.NaN, 'NaN'],
    ] as const) {
      cls = bad;
      await assert.rejects(
        detector.detect([picture(1), picture(2)]),
        new RegExp(`/v2/models/pets/infer: picture 0: class index ${shown} is outside the model's 2 labels`),
      );
    }
    assert.equal(detector.available, false, 'three such batches in a row');
    assert.equal(detector.stats().failures.protocol, 3);
  });
});
