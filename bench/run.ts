/**
 * `npm run bench`: runs the benchmarks and writes bench/results/latest.json and latest.md.
 * `npm run bench -- --full` repeats more. Models from ../shared are used when present.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFixtureModel } from '../src/onnx/fixture.js';
import { benchDetector, type DetectorBenchResult } from './detector.js';
import { benchCache, type CacheBenchRow } from './cache.js';
import { benchHash } from './hash.js';
import { benchPipeline, type PipelineRow } from './pipeline.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const shared = process.env.ARGUS_SHARED_DIR ?? resolve(root, '..', 'shared');
const full = process.argv.includes('--full');

async function main(): Promise<void> {
  const tmp = await mkdtemp(join(tmpdir(), 'argus-bench-'));
  const fixture = join(tmp, 'argus-fixture.onnx');
  await writeFile(fixture, buildFixtureModel());
  const models: [string, number[]][] = [[fixture, [1, 2, 4, 8]]];
  for (const m of ['yolo11n_int8_320.onnx', 'yolov8n_int8.onnx']) {
    const p = join(shared, 'models', m);
    if (existsSync(p)) models.push([p, [1, 4]]);
    else process.stderr.write(`bench: ${p} not found, skipped\n`);
  }
  const results: DetectorBenchResult[] = [];
  for (const [path, batches] of models) {
    process.stderr.write(`bench: detector ${path}\n`);
    const heavy = path !== fixture;
    results.push(await benchDetector(path, batches, { frames: heavy ? 8 : 64, repeats: full ? 7 : 3 }));
  }
  process.stderr.write('bench: frame hashes\n');
  const hashes = [];
  for (const size of [320, 640])
    hashes.push(await benchHash(shared, size, { maxDistance: 2, cellThreshold: 10, hammingMax: 4 }));
  let cacheRows: CacheBenchRow[] = [];
  const cacheModel = join(shared, 'models', 'yolo11n_int8_320.onnx');
  if (existsSync(cacheModel)) {
    process.stderr.write('bench: frame cache on real clips\n');
    cacheRows = await benchCache(shared, cacheModel, {
      maxDistance: 2,
      cellThreshold: 10,
      maxAgeS: 10,
      fps: 5,
      seconds: full ? 60 : 20,
    });
  }
  const pipeModel = existsSync(join(shared, 'models', 'yolo11n_int8_320.onnx'))
    ? join(shared, 'models', 'yolo11n_int8_320.onnx')
    : fixture;
  const pipeline: PipelineRow[] = [];
  for (const cameras of full ? [1, 2, 4, 8] : [1, 2, 4]) {
    for (const mode of ['argus', 'naive'] as const) {
      process.stderr.write(`bench: pipeline ${mode}, ${cameras} cameras\n`);
      pipeline.push(
        await benchPipeline({
          root,
          model: pipeModel,
          cameras,
          fps: 10,
          seconds: full ? 30 : 12,
          warmupSeconds: 5,
          cache: false,
          mode,
          maxBatch: 4,
          workers: 1,
        }),
      );
    }
  }
  const rows = results.flatMap((r) => r.rows);
  const pre = Object.assign({}, ...results.map((r) => r.preprocessMsPerFrame)) as Record<string, number>;
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version };
  await rm(tmp, { recursive: true, force: true });
  const out = {
    date: new Date().toISOString(),
    machine,
    detector: rows,
    preprocessMsPerFrame: pre,
    hashes,
    pipeline: { model: pipeModel.split('/').pop(), rows: pipeline },
  };
  const dir = join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'latest.json'), `${JSON.stringify(out, null, 2)}\n`);
  const f = (n: number, d = 1): string => n.toFixed(d);
  const md = [
    `Machine: ${machine.cpus} × ${machine.cpu}, Node ${machine.node}. Medians of ${full ? 7 : 3} interleaved runs.`,
    '',
    '| model | batch | bare ORT frames/s | Argus detector frames/s | efficiency | event-loop max delay, bare / Argus (ms) |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.model} | ${r.batch} | ${f(r.bareFps)} | ${f(r.argusFps)} | ${f(r.efficiency, 2)} | ${f(r.bareLoopDelayMaxMs)} / ${f(r.argusLoopDelayMaxMs)} |`,
    ),
    '',
    '| model@size | preprocess one frame (ms) |',
    '|---|---|',
    ...Object.entries(pre).map(([k, v]) => `| ${k} | ${f(v, 2)} |`),
    '',
    `Pipeline: synthetic 640×480 cameras at 10 frames/s each, ${pipeModel.split('/').pop()}, cache off, measured by an MQTT subscriber.`,
    '',
    '| design | cameras | offered fps | analysed fps | p50 / p99 latency (ms) | CPU daemon / ffmpeg (%) | peak RSS (MB) |',
    '|---|---|---|---|---|---|---|',
    ...pipeline.map(
      (p) =>
        `| ${p.mode === 'argus' ? 'Argus' : 'naive'} | ${p.cameras} | ${p.offered_fps} | ${f(p.analysed_fps)} | ${f(p.latency_p50_ms, 0)} / ${f(p.latency_p99_ms, 0)} | ${f(p.cpu_daemon_pct, 0)} / ${f(p.cpu_ffmpeg_pct, 0)} | ${f(p.peak_rss_mb, 0)} |`,
    ),
    '',
    'Frame cache (defaults: 2 cells, threshold 10, max age 10 s) replayed over real clips at 5 frames/s, yolo11n_int8_320: share of frames the model still analyses, share answered from the cache whose counts of confident objects (score ≥ 0.5) differ from what the model says for that frame, and how often those counts change from frame to frame anyway.',
    '',
    '| clip | frames | analysed with the cache | missed changes |',
    '|---|---|---|---|',
    ...cacheRows.map(
      (c) =>
        `| ${c.clip} | ${c.frames} | ${f(c.analysed_share * 100, 0)} % | ${f(c.missed_share * 100, 1)} % |`,
    ),
    '',
    'Frame hashes: cost per frame, and share of frames called unchanged (block: ≤ 2 cells changed by > 10; pHash and blockhash: Hamming ≤ 4 of 64).',
    '',
    '| size | clip | frames | block hash | pHash | imghash blockhash |',
    '|---|---|---|---|---|---|',
    ...hashes.flatMap((h) => [
      `| ${h.size} | cost per frame (ms) | | ${f(h.ms_per_frame.block, 2)} | ${f(h.ms_per_frame.phash, 2)} | ${f(h.ms_per_frame.imghash_blockhash, 2)} |`,
      ...h.clips.map(
        (c) =>
          `| ${h.size} | ${c.clip} | ${c.frames} | ${f(c.block_unchanged, 2)} | ${f(c.phash_unchanged, 2)} | ${f(c.blockhash_unchanged, 2)} |`,
      ),
    ]),
    '',
  ].join('\n');
  await writeFile(join(dir, 'latest.md'), md);
  process.stdout.write(md);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
