/**
 * The whole pipeline under load: N synthetic cameras (ffmpeg lavfi, moving content) through
 * `argus run` with the cache off, measured by an MQTT subscriber: analysed frames/s, p50/p99
 * latency from capture to MQTT delivery, CPU of the daemon and of its ffmpeg children, peak RSS.
 * In the same run, the naive baseline (bench/naive.ts: one session.run per frame as it arrives,
 * on the main thread, no batching, no cache) on the same cameras and model.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { pino } from 'pino';
import { EmbeddedBroker } from '../src/publish/broker.js';

export interface PipelineRow {
  mode: 'argus' | 'naive';
  cameras: number;
  cache: boolean;
  /** Frames offered by the cameras per second (all cameras). */
  offered_fps: number;
  analysed_fps: number;
  answered_fps: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  cpu_daemon_pct: number;
  cpu_ffmpeg_pct: number;
  peak_rss_mb: number;
}

const CLK = 100; // USER_HZ on Linux

function procTimes(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK;
  } catch {
    return 0;
  }
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // gone
    }
  }
  return out;
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

const pct = (xs: number[], p: number): number => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** A moving synthetic camera: ffmpeg's testsrc2 (scrolling pattern, changing every frame). */
export const syntheticCamera = (i: number, fps: number): string =>
  `lavfi:testsrc2=s=640x480:r=${fps},hue=h=${i * 40}`;

export async function benchPipeline(opts: {
  root: string;
  model: string;
  cameras: number;
  fps: number;
  seconds: number;
  warmupSeconds: number;
  cache: boolean;
  mode: 'argus' | 'naive';
  maxBatch: number;
  workers: number;
}): Promise<PipelineRow> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-pipe-'));
  const broker = new EmbeddedBroker('127.0.0.1', 0, pino({ level: 'silent' }));
  await broker.start();
  const names = Array.from({ length: opts.cameras }, (_, i) => `cam${i}`);
  const config = join(dir, 'argus.yaml');
  await writeFile(
    config,
    [
      'log_level: warn',
      'model:',
      `  path: ${opts.model}`,
      'mqtt:',
      `  url: ${broker.url}`,
      '  stats_interval_s: 3600',
      'http:',
      '  enabled: false',
      'detector:',
      `  workers: ${opts.workers}`,
      ...(opts.workers > 1 ? ['  intra_op_threads: 1'] : []),
      'scheduler:',
      `  max_batch: ${opts.maxBatch}`,
      'cache:',
      `  enabled: ${opts.cache}`,
      'cameras:',
      ...names.flatMap((n, i) => [
        `  ${n}:`,
        `    url: "${syntheticCamera(i, opts.fps)}"`,
        `    fps: ${opts.fps}`,
      ]),
    ].join('\n'),
  );
  const latencies: number[] = [];
  let analysed = 0;
  let answered = 0;
  let measuring = false;
  const sub = mqtt.connect(broker.url);
  sub.on('connect', () => sub.subscribe('argus/cameras/+/detections'));
  sub.on('message', (_topic, payload) => {
    if (!measuring) return;
    const msg = JSON.parse(payload.toString()) as { ts: string; cached: boolean };
    answered++;
    if (!msg.cached) analysed++;
    latencies.push(Date.now() - Date.parse(msg.ts));
  });
  const script =
    opts.mode === 'argus'
      ? [join(opts.root, 'dist/src/cli.js'), 'run', '-c', config]
      : [join(opts.root, 'dist/bench/naive.js'), config];
  const child: ChildProcess = spawn(process.execPath, script, { stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await new Promise((r) => setTimeout(r, opts.warmupSeconds * 1000));
    const pid = child.pid!;
    const ff0 = children(pid).reduce((a, p) => a + procTimes(p), 0);
    const d0 = procTimes(pid);
    measuring = true;
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, opts.seconds * 1000));
    measuring = false;
    const secs = (Date.now() - t0) / 1000;
    const d1 = procTimes(pid);
    const ff1 = children(pid).reduce((a, p) => a + procTimes(p), 0);
    return {
      mode: opts.mode,
      cameras: opts.cameras,
      cache: opts.cache,
      offered_fps: opts.cameras * opts.fps,
      analysed_fps: analysed / secs,
      answered_fps: answered / secs,
      latency_p50_ms: pct(latencies, 50),
      latency_p99_ms: pct(latencies, 99),
      cpu_daemon_pct: ((d1 - d0) / secs) * 100,
      cpu_ffmpeg_pct: (Math.max(0, ff1 - ff0) / secs) * 100,
      peak_rss_mb: peakRssMb(pid),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await sub.endAsync();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
