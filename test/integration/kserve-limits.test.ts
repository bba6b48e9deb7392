import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { systemClock } from '../../src/core/clock.js';
import type { Picture } from '../../src/core/frame.js';
import { letterbox } from '../../src/core/geometry.js';
import { decodeInferResponse, encodeInferRequest } from '../../src/kserve/codec.js';
import { packPictures } from '../../src/kserve/pack.js';
import { RemoteDetector } from '../../src/kserve/remote-detector.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { freePort } from '../helpers/rtsp.js';

/**
 * Issue 24, item 3: a real `argus run` (the generated fixture model, http.inference, no cameras)
 * and real HTTP requests. An idle server takes batches of exactly the size its model
 * configuration gives (Argus' own remote client sizes its batches from it), refuses one more
 * saying the limit, and answers every malformed body, however deep or large, with a 400.
 */
const STARTED = '"msg":"argus started"';
const S = 320;
const silent = pino({ level: 'silent' });

type T = Parameters<typeof tempDir>[0];

async function server(t: T, http: Record<string, unknown>): Promise<{ url: string; pid: number }> {
  const dir = await tempDir(t);
  const config = await writeDaemonConfig(dir, {
    mqtt: { embedded: { port: await freePort() } },
    http: { inference: true, ...http },
    detector: { workers: 1 },
  });
  const daemon = startDaemon(t, config);
  await waitFor('Argus to start', () => daemon.output().includes(STARTED), 60_000);
  return { url: await httpBase(daemon.output), pid: daemon.child.pid! };
}

/** Picture i: grey, with a red 64-pixel square when i is odd (the fixture model sees it). */
function pictures(n: number): Picture[] {
  return Array.from({ length: n }, (_, i) => {
    const data = Buffer.alloc(S * S * 3, 114);
    if (i % 2)
      for (let y = 96; y < 160; y++) for (let x = 128; x < 192; x++) data.set([230, 20, 20], (y * S + x) * 3);
    return { geometry: letterbox(S, S, S), data };
  });
}

async function limits(url: string): Promise<{ fp32: number; rgb24: number }> {
  const c = (await (await fetch(`${url}/v2/models/default/config`)).json()) as {
    max_batch_size: number;
    parameters: { rgb24_max_batch_size: { string_value: string } };
  };
  return { fp32: c.max_batch_size, rgb24: Number(c.parameters.rgb24_max_batch_size.string_value) };
}

interface Answer {
  status: number;
  counts?: number[];
  error?: string;
}

/** POSTs a batch as Argus' client does (binary tensors), or any body. */
async function infer(url: string, body: Buffer, headerLength?: number): Promise<Answer> {
  const res = await fetch(`${url}/v2/models/default/infer`, {
    method: 'POST',
    headers: {
      'Content-Type': headerLength === undefined ? 'application/json' : 'application/octet-stream',
      ...(headerLength === undefined ? {} : { 'Inference-Header-Content-Length': String(headerLength) }),
    },
    body,
  });
  const raw = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200)
    return { status: res.status, error: (JSON.parse(raw.toString()) as { error: string }).error };
  const out = decodeInferResponse(raw, res.headers.get('inference-header-content-length') ?? undefined);
  return {
    status: 200,
    counts: [...(out.outputs.find((o) => o.name === 'num_detections')!.data as Int32Array)],
  };
}

function batch(url: string, n: number, form: 'UINT8' | 'FP32'): Promise<Answer> {
  const body = encodeInferRequest({
    inputs: [packPictures('images', pictures(n), form, S)],
    outputs: [{ name: 'num_detections', binary: true }],
  });
  return infer(url, Buffer.concat(body.chunks), body.headerLength);
}

const alternating = (n: number): boolean[] => Array.from({ length: n }, (_, i) => i % 2 === 1);

describe(
  'KServe v2 server: it takes what its configuration says, on an idle server (issue 24)',
  { timeout: 180_000 },
  () => {
    for (const [http, want] of [
      [{}, { fp32: 8, rgb24: 33 }],
      [{ max_body_mb: 20 }, { fp32: 17, rgb24: 64 }],
    ] as const) {
      it(`max_body_mb ${'max_body_mb' in http ? http.max_body_mb : 'default'}: batches of 18 and of the advertised size are answered in full, one more is refused saying the limit`, async (t) => {
        const { url } = await server(t, http);
        assert.deepEqual(await limits(url), want);
        for (const n of [18, want.rgb24]) {
          const a = await batch(url, n, 'UINT8');
          assert.equal(a.status, 200, `${n} RGB24 pictures: ${a.error}`);
          assert.deepEqual(
            a.counts!.map((c) => c > 0),
            alternating(n),
          );
        }
        const over = await batch(url, want.rgb24 + 1, 'UINT8');
        assert.deepEqual(over, {
          status: 400,
          error: `input 'images' holds ${want.rgb24 + 1} pictures; the model takes at most ${want.rgb24} a request as UINT8 (parameters.rgb24_max_batch_size in its configuration)`,
        });
        const fp32 = await batch(url, want.fp32, 'FP32');
        assert.equal(fp32.status, 200, fp32.error);
        assert.deepEqual(
          fp32.counts!.map((c) => c > 0),
          alternating(want.fp32),
        );
        // One more FP32 picture does not fit the body limit the configuration was worked out from.
        const fp32Over = await batch(url, want.fp32 + 1, 'FP32');
        assert.equal(fp32Over.status, 413);
        assert.match(fp32Over.error!, /over the \d+-byte limit/);

        // Argus' own client, 64 frames a batch, two requests in flight: every frame answered.
        const remote = new RemoteDetector(
          {
            name: 'box-a',
            conf: 0.25,
            iou: 0.45,
            max_detections: 300,
            remote: { url, model: 'default', headers: {}, timeout_ms: 30_000, retries: 0, in_flight: 2 },
          },
          { log: silent, clock: systemClock },
        );
        await remote.start();
        t.after(() => remote.stop());
        const { detections } = await remote.detect(pictures(64));
        assert.deepEqual(
          detections.map((d) => d.length > 0),
          alternating(64),
        );
      });
    }

    it('JSON tensors: 100,000 deep, malformed or oversized around the data get 400; large bodies of pixels are answered, eight at once', async (t) => {
      const { url } = await server(t, {});
      const json = (v: unknown): Buffer => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
      const input = (over: Record<string, unknown>): Buffer =>
        json({ inputs: [{ name: 'images', datatype: 'UINT8', shape: [1, S, S, 3], ...over }] });

      const deep = json(
        `{"inputs":[{"name":"images","datatype":"UINT8","shape":[1,${S},${S},3],"data":${'['.repeat(100_000)}1${']'.repeat(100_000)}}]}`,
      );
      const deepAnswer = await infer(url, deep);
      assert.equal(deepAnswer.status, 400);
      assert.match(
        deepAnswer.error!,
        /^tensor 'images': the data is nested deeper than its shape \[1, 320, 320, 3\]/,
      );
      const refusals: [Buffer, RegExp][] = [
        [json(`{"inputs":${'['.repeat(100_000)}}`), /nested deeper than 32 levels/],
        [input({ data: [[1, 2], 3] }), /neither flat nor nested as its shape/],
        [input({ data: [1, 2, 3] }), /3 elements of data; shape \[1, 320, 320, 3\] has 307200/],
        [input({ data: new Array(S * S * 3).fill(256) }), /element 0 \(256\) is not a UINT8 integer/],
        [input({ data: 'abc' }), /"data" is not an array/],
        [input({ shape: [1, S, S], data: [] }), /the model takes FP32 \[B, 3, 320, 320\] or UINT8/],
        [input({ datatype: 'BYTES', data: [] }), /the model takes FP32/],
        [json({ id: 'x'.repeat(100_000), inputs: [] }), /over 65536 bytes apart from its tensors' "data"/],
        [json('{"inputs": [1, 2'), /does not parse/],
        [json('[]'), /not a JSON object/],
      ];
      for (const [body, re] of refusals) {
        const a = await infer(url, body);
        assert.equal(a.status, 400, `${body.subarray(0, 80).toString()}: ${a.status} ${a.error}`);
        assert.match(a.error!, re);
      }

      // 7 pictures as nested JSON bytes, 9.3 MiB (a 10 MiB limit): answered, eight such at once too.
      const pics = pictures(7);
      const nested = pics.map((p) =>
        Array.from({ length: S }, (_, y) =>
          Array.from({ length: S }, (_, x) => [...p.data.subarray((y * S + x) * 3, (y * S + x) * 3 + 3)]),
        ),
      );
      const large = json({
        inputs: [{ name: 'images', datatype: 'UINT8', shape: [7, S, S, 3], data: nested }],
      });
      assert.ok(large.length > 9 * 1024 * 1024, `${large.length} bytes`);
      const answers = await Promise.all(Array.from({ length: 8 }, () => infer(url, large)));
      for (const a of answers) {
        assert.equal(a.status, 200, a.error);
        assert.deepEqual(
          a.counts!.map((c) => c > 0),
          alternating(7),
        );
      }
      const live = await fetch(`${url}/v2/health/live`);
      assert.equal(live.status, 200, 'still serving');
    });
  },
);
