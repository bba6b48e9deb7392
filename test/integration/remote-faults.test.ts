import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import type { DecodedRequest } from '../../src/kserve/codec.js';
import type { Tensor } from '../../src/kserve/tensor.js';
import type { CameraStatusPayload } from '../../src/publish/topics.js';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';
import { FakeKServe, type FakeModelSpec } from '../helpers/fake-kserve.js';
import { startBroker, Subscriber } from '../helpers/mqtt.js';

/**
 * Issue 24, item 4: a real `argus run` whose camera (ffmpeg on a synthetic still scene) is on a
 * remote model served by a small node:http KServe v2 server in this test, which answers the
 * readiness and metadata probes correctly and then misbehaves. Every surface must say the model
 * is down (`/metrics`, `/healthz`, `/api/cameras`, the camera's MQTT status), with one log line
 * when it goes and one when it is back.
 */
const S = 64;
const STILL = `lavfi:color=c=0x506070:s=320x240:r=5`;

/** Per picture one 'cat' box in the middle, score 0.9 (raw YOLO output, [n, 6, 4]). */
const pets: FakeModelSpec = {
  name: 'pets',
  inputs: [{ name: 'images', datatype: 'FP32', shape: [-1, 3, S, S] }],
  outputs: [{ name: 'output0', datatype: 'FP32', shape: [-1, 6, 4] }],
  config: {
    max_batch_size: 8,
    parameters: { metadata: { string_value: "{'names': {0: 'cat', 1: 'dog'}}" } },
  },
  infer: (req: DecodedRequest): Tensor[] => {
    const n = req.inputs[0]!.shape[0]!;
    const out = new Float32Array(n * 6 * 4);
    for (let i = 0; i < n; i++) [32, 32, 16, 16, 0.9, 0.05].forEach((v, r) => (out[i * 24 + r * 4] = v));
    return [{ name: 'output0', datatype: 'FP32', shape: [n, 6, 4], data: out }];
  },
};

interface CameraView {
  state: string;
  cached: boolean;
  has_frame: boolean;
  last_error: { cause: string; message: string } | null;
}

type T = Parameters<typeof tempDir>[0];

/** The daemon, its HTTP API and MQTT, with camera `cam` on the remote model `gpu`. */
async function remoteCamera(t: T, cache: Record<string, unknown>) {
  const server = new FakeKServe(pets);
  await server.start();
  t.after(() => server.stop());
  const broker = await startBroker(t);
  const dir = await tempDir(t);
  const config = await writeDaemonConfig(dir, {
    mqtt: { url: broker.url },
    models: {
      gpu: { input_size: S, remote: { url: server.url, model: 'pets', retries: 1, timeout_ms: 2000 } },
    },
    cache,
    cameras: { cam: { url: STILL, fps: 5, model: 'gpu' } },
  });
  const sub = new Subscriber(broker.url, 'argus/cameras/cam/status');
  t.after(() => sub.end());
  const daemon = startDaemon(t, config);
  const base = await httpBase(daemon.output);
  const get = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    return { status: res.status, text: await res.text() };
  };
  const surfaces = async () => {
    const [health, cameras, metrics] = await Promise.all([
      get('/healthz'),
      get('/api/cameras'),
      get('/metrics'),
    ]);
    const up = /^argus_remote_model_up\{model="gpu"\} (\d)$/m.exec(metrics.text)?.[1];
    const status = sub.json<CameraStatusPayload>('argus/cameras/cam/status').at(-1);
    return {
      healthz: health.status,
      camera: (JSON.parse(cameras.text) as CameraView[])[0]!,
      up: up === undefined ? undefined : Number(up),
      mqtt: status?.last_error?.cause ?? null,
    };
  };
  let seen: Awaited<ReturnType<typeof surfaces>> | undefined;
  /** Polls every surface until all of them say `down` (or all say up); returns what they said. */
  const until = async (what: string, down: boolean, timeoutMs: number) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      seen = await surfaces();
      const says = [
        seen.healthz === (down ? 503 : 200),
        (seen.camera.last_error?.cause === 'detector_unavailable') === down,
        seen.up === (down ? 0 : 1),
        (seen.mqtt === 'detector_unavailable') === down,
      ];
      if (says.every(Boolean)) return seen;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(seen)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  /** The daemon's JSON log lines at warn or above, from `from` characters on. */
  const warnings = (from: number) =>
    daemon
      .output()
      .slice(from)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= 40)
      .map((l) => l.msg);
  return { server, daemon, surfaces, until, warnings };
}

/** No log line carries `model` twice (the model's child logger binds it; a field repeated it). */
function assertModelOnce(output: string): void {
  for (const line of output.split('\n').filter((l) => l.includes('remote model')))
    assert.equal((line.match(/"model":/g) ?? []).length, 1, line);
}

describe(
  'a remote model that fails is visibly down (real daemon, ffmpeg, MQTT broker)',
  { timeout: 240_000 },
  () => {
    it('a server answering 500, then 200 with garbage, to every inference: down on every surface, one line each way', async (t) => {
      // Every frame is analysed: each one is a batch sent to the server.
      const { server, daemon, surfaces, until, warnings } = await remoteCamera(t, { enabled: false });
      await waitFor('a frame analysed remotely', () => server.inferences.length >= 3, 60_000);
      await until('every surface to say the model is up', false, 30_000);

      const faults: [string, (res: ServerResponse) => void, RegExp][] = [
        [
          '500',
          (res) =>
            res.writeHead(500, { 'Content-Type': 'application/json' }).end('{"error":"CUDA out of memory"}'),
          /3 batches in a row failed, the last: POST http:\/\/127\.0\.0\.1:\d+\/v2\/models\/pets\/infer: HTTP 500: CUDA out of memory/,
        ],
        [
          'garbage',
          (res) =>
            res.writeHead(200, { 'Content-Type': 'application/octet-stream' }).end('not a KServe answer'),
          /3 batches in a row failed, the last: POST .*\/infer: the body's JSON does not parse/,
        ],
      ];
      for (const [fault, misbehave, why] of faults) {
        const from = daemon.output().length;
        const t0 = Date.now();
        server.misbehave = misbehave;
        const down = await until(`every surface to say the model is down (${fault})`, true, 30_000);
        assert.equal(down.camera.state, 'streaming', 'the camera itself streams on');
        assert.match(down.camera.last_error!.message, why);
        // The outage lasts a while: the daemon's probes find the server ready but its trial
        // inference failing, and the camera's frames are refused meanwhile.
        const sent = server.inferences.length;
        await waitFor('two trial inferences', () => server.inferences.length >= sent + 2, 30_000);
        assert.equal((await surfaces()).up, 0, 'still down while inference fails');
        server.misbehave = undefined;
        await until(`every surface to say the model is back (${fault})`, false, 60_000);
        const outage = daemon.output().slice(from);
        t.diagnostic(
          `${fault}: ${((Date.now() - t0) / 1000).toFixed(1)} s outage, ${outage.split('\n').length - 1} log lines, warnings: ${JSON.stringify(warnings(from))}`,
        );
        assert.deepEqual(
          warnings(from).map((m) => m.replace(/: .*/, '')),
          ['remote model gpu unavailable'],
          'one warning when it goes; no line per failed batch',
        );
        assert.equal(outage.match(/remote model gpu available again/g)?.length, 1);
      }
      assertModelOnce(daemon.output());
    });

    it('a server killed while its camera is answered from the cache: the readiness check notices it', async (t) => {
      // A still scene, never analysed afresh meanwhile: no batch would tell.
      const { server, daemon, until, warnings } = await remoteCamera(t, { max_age_s: 3600 });
      await waitFor('a frame analysed remotely', () => server.inferences.length >= 1, 60_000);
      await until('every surface to say the model is up', false, 30_000);
      const cached = async () => {
        const res = await fetch(`${await httpBase(daemon.output)}/api/cameras`);
        return ((await res.json()) as CameraView[])[0]!;
      };
      const end = Date.now() + 30_000;
      while (!(await cached()).cached) {
        if (Date.now() > end) throw new Error('timed out waiting for frames answered from the cache');
        await new Promise((r) => setTimeout(r, 200));
      }
      const from = daemon.output().length;
      const sent = server.inferences.length;
      await server.stop();
      const t0 = Date.now();
      const down = await until('every surface to say the model is down', true, 30_000);
      t.diagnostic(`noticed within ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      assert.equal(server.inferences.length, sent, 'no batch was sent: the readiness check noticed');
      assert.match(
        down.camera.last_error!.message,
        /GET http:\/\/127\.0\.0\.1:\d+\/v2\/health\/ready: ECONNREFUSED/,
      );
      await server.start();
      await until('every surface to say the model is back', false, 60_000);
      assert.deepEqual(
        warnings(from).map((m) => m.replace(/: .*/, '')),
        ['remote model gpu unavailable'],
      );
      assert.equal(
        daemon
          .output()
          .slice(from)
          .match(/remote model gpu available again/g)?.length,
        1,
      );
      assertModelOnce(daemon.output());
    });
  },
);
