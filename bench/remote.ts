/**
 * Remote against local inference on one machine: the same model run by Argus' detector in this
 * process, and by an `argus run` with `http.inference` over loopback through a RemoteDetector
 * (KServe v2, binary tensors), once sending RGB24 (what Argus sends Argus) and once FP32 NCHW
 * (what a Triton client sends a YOLO). Each side gets batches of `batch` pictures, as many in
 * flight as its detector takes (the local sessions; the remote's `in_flight`: as many, and one
 * more), as the scheduler would send them. Reports frames/s and
 * batch latency (medians of interleaved repeats) and bytes per frame each way on the wire.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemClock } from '../src/core/clock.js';
import type { Picture } from '../src/core/frame.js';
import { letterbox } from '../src/core/geometry.js';
import { modelConfig, sectionConfig } from '../src/config/schema.js';
import { Detector, planModel } from '../src/detector/index.js';
import { loadLetterboxed } from '../src/ingest/index.js';
import { RemoteDetector } from '../src/kserve/index.js';
import type { BatchDetector } from '../src/scheduler/index.js';
import { median, stopChild } from './common.js';

export interface RemoteBenchRow {
  mode: string;
  batch: number;
  in_flight: number;
  fps: number;
  /** Of one batch, from detect() to its answer. */
  latency_p50_ms: number;
  latency_p99_ms: number;
  /** Request and answer bytes per frame (HTTP bodies); null for local. */
  sent_per_frame: number | null;
  received_per_frame: number | null;
}

export interface RemoteBench {
  model: string;
  picture: string;
  rows: RemoteBenchRow[];
  /** Remote (RGB24) frames/s ÷ local frames/s, with as many in flight as the local sessions. */
  ratio: number;
  /** The same with one more request in flight. */
  ratioPlusOne: number;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

/** `batches` batches, `inFlight` at once: frames/s and each batch's latency. */
async function drive(
  detector: BatchDetector,
  pictures: Picture[],
  batches: number,
  inFlight: number,
): Promise<{ fps: number; latencies: number[] }> {
  let started = 0;
  const latencies: number[] = [];
  const worker = async (): Promise<void> => {
    while (started < batches) {
      started++;
      const t0 = performance.now();
      await detector.detect(pictures);
      latencies.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { fps: (batches * pictures.length * 1000) / (performance.now() - t0), latencies };
}

/** The daemon's HTTP address, from its log line (it listens on a free port), once it is ready. */
async function serverUrl(output: () => string, ms: number): Promise<string> {
  const end = Date.now() + ms;
  let url: string | undefined;
  while (!url) {
    url = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"HTTP server listening"/.exec(output())?.[1];
    if (Date.now() > end) throw new Error(`the Argus server did not listen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
  for (;;) {
    const ok = await fetch(`${url}/v2/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return url;
    if (Date.now() > end) throw new Error(`the Argus server at ${url} was not ready within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function benchRemote(opts: {
  root: string;
  dir: string;
  model: string;
  name: string;
  /** An image to detect in (bus.jpg), or a grey picture. */
  image: string | undefined;
  batch: number;
  batches: number;
  repeats: number;
}): Promise<RemoteBench> {
  const log = pino({ level: 'warn' });
  const plan = await planModel({ path: opts.model });
  const size = plan.inputSize;
  const picture: Picture = opts.image
    ? await loadLetterboxed(await readFile(opts.image), size, opts.image)
    : { data: Buffer.alloc(3 * size * size, 114), geometry: letterbox(size, size, size) };
  const pictures = Array.from({ length: opts.batch }, () => picture);

  // Both sides run the detector section's defaults (sessions and threads chosen for the machine).
  const detectorCfg = sectionConfig('detector', {});
  const local = new Detector(plan, { model: modelConfig({ path: opts.model }), detector: detectorCfg }, log);
  await local.start();

  const config = join(opts.dir, 'remote-server.yaml');
  await writeFile(
    config,
    [
      'log_level: info',
      'state_dir: remote-state',
      'model:',
      `  path: ${opts.model}`,
      'mqtt:',
      '  embedded:',
      '    port: 0',
      'http:',
      '  port: 0',
      '  inference: true',
      '  max_body_mb: 64',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [join(opts.root, 'dist/src/cli.js'), 'run', '-c', config], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  let url = '';
  const remotes: RemoteDetector[] = [];
  const remote = (floatInput: boolean, inFlight: number): RemoteDetector =>
    new RemoteDetector(
      {
        name: 'bench',
        conf: 0.25,
        iou: 0.45,
        max_detections: 300,
        remote: {
          url,
          model: 'default',
          headers: {},
          timeout_ms: 30_000,
          retries: 2,
          in_flight: inFlight,
        },
      },
      { log, clock: systemClock, floatInput },
    );
  try {
    url = await serverUrl(() => output, 60_000);
    // The remote side with as many requests in flight as the server has sessions, and with one
    // more, which covers a request's time on the wire.
    const n = local.concurrency;
    const sides: [string, BatchDetector, RemoteDetector | undefined][] = [['local', local, undefined]];
    for (const [mode, floatInput, inFlight] of [
      ['remote, RGB24', false, n],
      ['remote, RGB24', false, n + 1],
      ['remote, FP32', true, n + 1],
    ] as const) {
      const r = remote(floatInput, inFlight);
      remotes.push(r);
      await r.start();
      sides.push([`${mode}, ${inFlight} in flight`, r, r]);
    }
    const runs = new Map<string, { fps: number[]; p50: number[]; p99: number[] }>();
    for (const [, d] of sides) await drive(d, pictures, 3, d.concurrency);
    // Interleaved, so drift in machine load hits every side alike.
    for (let r = 0; r < opts.repeats; r++)
      for (const [mode, d] of sides) {
        const { fps, latencies } = await drive(d, pictures, opts.batches, d.concurrency);
        const run = runs.get(mode) ?? { fps: [], p50: [], p99: [] };
        run.fps.push(fps);
        run.p50.push(pct(latencies, 50));
        run.p99.push(pct(latencies, 99));
        runs.set(mode, run);
      }
    const rows = sides.map(([mode, d, r]): RemoteBenchRow => {
      const run = runs.get(mode)!;
      const s = r?.stats();
      return {
        mode,
        batch: opts.batch,
        in_flight: d.concurrency,
        fps: median(run.fps),
        latency_p50_ms: median(run.p50),
        latency_p99_ms: median(run.p99),
        sent_per_frame: s ? s.bytesSent / s.frames : null,
        received_per_frame: s ? s.bytesReceived / s.frames : null,
      };
    });
    return {
      model: opts.name,
      picture: opts.image ? 'bus.jpg' : 'grey',
      rows,
      ratio: rows[1]!.fps / rows[0]!.fps,
      ratioPlusOne: rows[2]!.fps / rows[0]!.fps,
    };
  } finally {
    await Promise.all(remotes.map((r) => r.stop()));
    await local.stop();
    await stopChild(child);
  }
}
