/**
 * `node dist/bench/gpu.js`: what matters on a GPU box, in a few minutes, as Markdown tables
 * (bench/gpu.sh runs it and keeps its output).
 *
 *   --section engine   a TensorRT (or CUDA) model's start cold (engine built, state directory
 *                      empty) and warm (engine loaded), then a run whose batch sizes vary from 1
 *                      to --max-batch: builds during it, frames/s and p50/p99 per batch size
 *   --section decode   one ffmpeg per camera with Argus' arguments on a 1080p H.264 clip, for
 *                      each --hwaccel preset: CPU per camera (a preset that cannot run here says why)
 *
 * Options: --model PATH --provider tensorrt|cuda|webgpu|cpu --precision fp32|fp16 --max-batch 16
 * --seconds 60 (the varying-batch run) --ffmpeg PATH --hwaccel none,nvidia,vaapi,qsv --cameras 4
 * --decode-seconds 20. Numbers of a shared machine: compare ratios in one run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import {
  HWACCELS,
  modelConfig,
  sectionConfig,
  type HwaccelName,
  type ProviderName,
} from '../src/config/index.js';
import type { Picture } from '../src/core/frame.js';
import { iou, letterbox } from '../src/core/geometry.js';
import type { Detection } from '../src/core/frame.js';
import { Detector, planModel } from '../src/detector/index.js';
import { ENGINE_FILE } from '../src/detector/tensorrt.js';
import { buildFfmpegArgs } from '../src/ingest/ffmpeg-args.js';
import { probeCapabilities, probeOptionNames } from '../src/ingest/ffmpeg-process.js';
import { hwaccelProblem } from '../src/ingest/hwaccel.js';
import { loadLetterboxed } from '../src/ingest/index.js';
import { procTimes, startDetector, stillClip } from './common.js';

/** bus.jpg from ../shared (ARGUS_SHARED_DIR), the picture whose detections are compared with the CPU's. */
const BUS = join(process.env.ARGUS_SHARED_DIR ?? join(process.cwd(), '..', 'shared'), 'media', 'bus.jpg');

/**
 * Whether `got` are `want` (the CPU provider's): the same labels, as many of each, each box
 * matched one to one; says the least IoU of the matches.
 */
export function sameDetections(got: readonly Detection[], want: readonly Detection[]): string {
  const labels = (d: readonly Detection[]) =>
    d
      .map((x) => x.label)
      .sort()
      .join(',');
  if (labels(got) !== labels(want))
    return `no: ${labels(got) || 'none'} against the CPU's ${labels(want) || 'none'}`;
  const free = [...want];
  let least = 1;
  for (const g of got) {
    let best = -1;
    free.forEach((w, i) => {
      if (w.label === g.label && (best < 0 || iou(w.box, g.box) > iou(free[best]!.box, g.box))) best = i;
    });
    least = Math.min(least, iou(free[best]!.box, g.box));
    free.splice(best, 1);
  }
  return `${least >= 0.99 ? 'yes' : 'boxes differ'}: ${got.length} detections, same labels, least box IoU ${least.toFixed(3)}`;
}

/** The p-th percentile (0–100) of `xs`, nearest rank. */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface BatchRow {
  batch: number;
  runs: number;
  fps: number;
  p50: number;
  p99: number;
  /** Runs far slower than the others of their size: a build (or a stall) during the run. */
  slow: number;
}

/**
 * Per batch size: runs, frames per second (frames over the time spent in that size's runs),
 * p50 and p99 latency, and the runs slower than `slowFactor` × the size's median and `slowMs`.
 */
export function batchTable(
  samples: readonly { batch: number; ms: number }[],
  slowFactor = 20,
  slowMs = 500,
): BatchRow[] {
  const sizes = [...new Set(samples.map((s) => s.batch))].sort((a, b) => a - b);
  return sizes.map((batch) => {
    const ms = samples.filter((s) => s.batch === batch).map((s) => s.ms);
    const p50 = percentile(ms, 50);
    const total = ms.reduce((a, b) => a + b, 0);
    return {
      batch,
      runs: ms.length,
      fps: (batch * ms.length * 1000) / total,
      p50,
      p99: percentile(ms, 99),
      slow: ms.filter((m) => m > slowFactor * p50 && m > slowMs).length,
    };
  });
}

/** A Markdown table. */
export function table(head: string[], rows: (string | number)[][]): string {
  const cell = (v: string | number): string => (typeof v === 'number' ? String(Math.round(v * 10) / 10) : v);
  return [
    `| ${head.join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The batch sizes of the varying run: 1..max in a shuffled order, repeated (seeded, repeatable). */
export function batchSchedule(maxBatch: number, count: number, seed = 1): number[] {
  let x = seed;
  const rand = (): number => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => 1 + Math.floor(rand() * maxBatch));
}

/** The size of the engine file a build left in the state directory, or null. */
function engineBytes(state: string): number | null {
  const trt = join(state, 'trt');
  if (!existsSync(trt)) return null;
  for (const d of readdirSync(trt)) {
    const f = join(trt, d, ENGINE_FILE);
    if (existsSync(f)) return statSync(f).size;
  }
  return null;
}

/** Samples the GPUs' memory in use (MiB, the most seen) with nvidia-smi, when it is there. */
function gpuMemory(): { stop: () => number | null } {
  let max: number | null = null;
  let child: ChildProcess | undefined;
  try {
    child = spawn('nvidia-smi', ['--query-gpu=memory.used', '--format=csv,noheader,nounits', '-lms', '500'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.on('error', () => undefined);
    child.stdout?.on('data', (d: Buffer) => {
      for (const v of d.toString().split(/\s+/).filter(Boolean).map(Number))
        if (Number.isFinite(v)) max = Math.max(max ?? 0, v);
    });
  } catch {
    child = undefined;
  }
  return {
    stop: () => {
      child?.kill();
      return max;
    },
  };
}

async function engineSection(o: {
  model: string;
  provider: ProviderName;
  precision: 'fp32' | 'fp16';
  maxBatch: number;
  seconds: number;
}): Promise<string> {
  const state = await mkdtemp(join(tmpdir(), 'argus-gpu-bench-'));
  const events: string[] = [];
  const log = pino(
    { level: 'info' },
    { write: (s: string) => void events.push(String((JSON.parse(s) as { msg: string }).msg)) },
  );
  const plan = await planModel({ path: o.model });
  const open = async (): Promise<{ d: Detector; ms: number }> => {
    const d = new Detector(
      plan,
      {
        model: modelConfig({ path: o.model }),
        detector: sectionConfig('detector', {
          providers: [o.provider],
          workers: 1,
          precision: o.precision,
          inference_timeout_ms: 600_000,
        }),
        engines: { stateDir: state, maxBatch: o.maxBatch },
      },
      log,
    );
    const t0 = performance.now();
    await d.start();
    return { d, ms: performance.now() - t0 };
  };
  const mem = gpuMemory();
  const out: string[] = [`## ${o.provider}, ${o.precision}, max_batch ${o.maxBatch}: ${o.model}`, ''];
  try {
    const cold = await open();
    await cold.d.stop();
    const kept = engineBytes(state);
    const warm = await open();
    out.push(
      table(
        ['start', 'ms', 'log'],
        [
          [
            'cold (state directory empty)',
            cold.ms,
            events
              .filter((e) => /TensorRT/.test(e))
              .slice(0, 2)
              .join('; ') || '-',
          ],
          [
            `warm (engine kept: ${kept === null ? 'none' : `${(kept / 2 ** 20).toFixed(1)} MB`})`,
            warm.ms,
            events
              .filter((e) => /TensorRT/.test(e))
              .slice(2)
              .join('; ') || '-',
          ],
        ],
      ),
      '',
    );
    // The varying run, on the warm session: every size from 1 to max_batch, shuffled.
    const size = plan.inputSize;
    const pic: Picture = { data: Buffer.alloc(3 * size * size, 114), geometry: letterbox(size, size, size) };
    const samples: { batch: number; ms: number }[] = [];
    const end = performance.now() + o.seconds * 1000;
    for (const batch of batchSchedule(o.maxBatch, 100_000)) {
      if (performance.now() > end) break;
      const t0 = performance.now();
      await warm.d.detect(Array.from({ length: batch }, () => pic));
      samples.push({ batch, ms: performance.now() - t0 });
    }
    const stats = warm.d.stats();
    let same = `not compared (no ${BUS})`;
    if (existsSync(BUS)) {
      const bus = await loadLetterboxed(BUS, size);
      const cpu = await startDetector(o.model, 'cpu');
      try {
        const [want] = (await cpu.detect([bus])).detections;
        const [got] = (await warm.d.detect([bus])).detections;
        same = sameDetections(got ?? [], want ?? []);
      } finally {
        await cpu.stop();
      }
    }
    const ran = warm.d.choice?.message ?? '-';
    await warm.d.stop();
    const rows = batchTable(samples);
    const b1 = rows.find((r) => r.batch === 1)?.fps;
    const b8 = rows.find((r) => r.batch === 8)?.fps;
    out.push(
      table(
        ['batch', 'runs', 'frames/s', 'p50 ms', 'p99 ms', 'slow runs (builds?)'],
        rows.map((r) => [r.batch, r.runs, r.fps, r.p50, r.p99, r.slow]),
      ),
      '',
      `Builds during the run (runs over 20× their size's median and 500 ms): ${rows.reduce((a, r) => a + r.slow, 0)}; ` +
        `deadlines missed: ${stats.deadlinesMissed}; sessions recreated: ${stats.sessionsRecreated}.`,
      '',
      `Provider line: ${ran}.`,
      `b8 ÷ b1 frames/s: ${b1 && b8 ? (b8 / b1).toFixed(2) : 'n/a (needs --max-batch 8 or more)'}.`,
      `Same detections as the CPU provider on bus.jpg: ${same}.`,
    );
  } finally {
    const peak = mem.stop();
    out.push(
      '',
      `GPU memory in use, most seen: ${peak === null ? 'n/a (no nvidia-smi)' : `${peak} MiB`}.`,
      '',
    );
    await rm(state, { recursive: true, force: true });
  }
  return out.join('\n');
}

async function decodeSection(o: {
  ffmpeg: string;
  presets: HwaccelName[];
  cameras: number;
  seconds: number;
}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-gpu-decode-'));
  try {
    const clip = stillClip(
      o.ffmpeg,
      ['-f', 'lavfi', '-i', 'testsrc2=size=1920x1080:rate=25'],
      20,
      23,
      join(dir, 'clip-1080p25.mp4'),
    );
    const [names, caps] = await Promise.all([probeOptionNames(o.ffmpeg), probeCapabilities(o.ffmpeg)]);
    const rows: (string | number)[][] = [];
    for (const preset of o.presets) {
      const problem = hwaccelProblem(preset, undefined, caps, existsSync);
      if (problem) {
        rows.push([preset, '-', `not run: ${problem}`]);
        continue;
      }
      const url = `file://${clip}`;
      const a = buildFfmpegArgs(
        {
          url,
          fps: 5,
          rtsp_transport: 'tcp',
          input_args: ['-re', '-stream_loop', '-1'],
          hwaccel_args: [],
          hwaccel: preset,
        },
        { timeout_s: 10, threads: 1 },
        { url, size: 640, names, cache: { enabled: true, picture_threshold: 12 } },
      );
      const input = a.input.map((x) => (x === 'verbose' ? 'error' : x));
      const procs = Array.from({ length: o.cameras }, () =>
        spawn(o.ffmpeg, [...input, '-i', a.url, ...a.output, 'pipe:1'], {
          stdio: ['ignore', 'ignore', 'pipe'],
        }),
      );
      const errors: string[] = [];
      for (const p of procs) p.stderr.on('data', (d: Buffer) => errors.push(d.toString()));
      await new Promise((r) => setTimeout(r, 3000)); // past the start
      const cpu = (): number => procs.reduce((s, p) => s + (p.pid ? procTimes(p.pid) : 0), 0);
      const c0 = cpu();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, o.seconds * 1000));
      const used = cpu() - c0;
      const wall = (performance.now() - t0) / 1000;
      const alive = procs.filter((p) => p.exitCode === null).length;
      for (const p of procs) p.kill('SIGKILL');
      rows.push([
        preset,
        (100 * used) / wall / o.cameras,
        alive === o.cameras ? 'ok' : `${o.cameras - alive} exited: ${errors.join(' ').slice(0, 200)}`,
      ]);
    }
    return [
      `## Decoding: ${o.cameras} camera(s) of 1080p 25 fps H.264, analysed at 5 fps, ${o.ffmpeg}`,
      '',
      table(['hwaccel', 'CPU % per camera', 'note'], rows),
      '',
    ].join('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      section: { type: 'string', multiple: true },
      model: { type: 'string' },
      provider: { type: 'string', default: 'tensorrt' },
      precision: { type: 'string', default: 'fp32' },
      'max-batch': { type: 'string', default: '16' },
      seconds: { type: 'string', default: '60' },
      ffmpeg: { type: 'string', default: '/usr/bin/ffmpeg' },
      hwaccel: { type: 'string', default: 'none,nvidia,vaapi,qsv' },
      cameras: { type: 'string', default: '4' },
      'decode-seconds': { type: 'string', default: '20' },
    },
  });
  const sections = values.section ?? ['engine', 'decode'];
  const parts: string[] = [];
  if (sections.includes('engine')) {
    if (!values.model) throw new Error('--model is needed for the engine section');
    parts.push(
      await engineSection({
        model: values.model,
        provider: values.provider as ProviderName,
        precision: values.precision === 'fp16' ? 'fp16' : 'fp32',
        maxBatch: Number(values['max-batch']),
        seconds: Number(values.seconds),
      }),
    );
  }
  if (sections.includes('decode')) {
    const presets = values.hwaccel
      .split(',')
      .filter((h): h is HwaccelName => (HWACCELS as readonly string[]).includes(h));
    parts.push(
      await decodeSection({
        ffmpeg: values.ffmpeg,
        presets,
        cameras: Number(values.cameras),
        seconds: Number(values['decode-seconds']),
      }),
    );
  }
  process.stdout.write(`${parts.join('\n')}\n`);
}

// Run as a script, not when a test imports the helpers above.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
