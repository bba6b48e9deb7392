/**
 * The whole pipeline under load: N synthetic cameras (ffmpeg lavfi, moving content) through
 * `argus run` with the cache off, measured by an MQTT subscriber: analysed frames/s, p50/p99
 * latency from capture to MQTT delivery, CPU of the daemon and of its ffmpeg children, peak RSS.
 * In the same run, the naive baseline (bench/naive.ts: one session.run per frame as it arrives,
 * on the main thread, no batching, no cache) on the same cameras and model.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { benchDaemonConfig, children, procTimes, startBenchBroker, statusMb, yamlSection } from './common.js';

export interface PipelineRow {
  mode: 'argus' | 'naive';
  /** What varied in this run, e.g. "cache on", "max_in_flight 2". */
  label: string;
  cameras: number;
  cache: boolean;
  /** Frames offered by the cameras per second (all cameras). */
  offered_fps: number;
  analysed_fps: number;
  answered_fps: number;
  /** Frames the daemon dropped per second (queue full or stale); null for the naive design. */
  dropped_fps: number | null;
  /** Mean batch size over the measurement; null for the naive design (always 1). */
  mean_batch: number | null;
  latency_p50_ms: number;
  latency_p99_ms: number;
  cpu_daemon_pct: number;
  cpu_ffmpeg_pct: number;
  /** Answered frames per CPU-second of the daemon and its ffmpeg children together. */
  answered_per_cpu_s: number;
  peak_rss_mb: number;
  /** [seconds into the measurement, RSS MB], when sampling was asked for. */
  rss_series: [number, number][];
}

const pct = (xs: number[], p: number): number => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

/** A moving synthetic camera: ffmpeg's testsrc2 (scrolling pattern, changing every frame). */
export const syntheticCamera = (i: number, fps: number): string =>
  `lavfi:testsrc2=s=640x480:r=${fps},hue=h=${i * 40}`;

interface StatsSnapshot {
  detector: { batch_sizes: Record<string, number> };
  cameras: Record<string, { dropped: Record<string, number> }>;
}

const batchTotals = (s: StatsSnapshot | undefined): [number, number] => {
  let batches = 0;
  let frames = 0;
  for (const [size, n] of Object.entries(s?.detector.batch_sizes ?? {})) {
    batches += n;
    frames += n * Number(size);
  }
  return [batches, frames];
};

const droppedTotal = (s: StatsSnapshot | undefined): number =>
  Object.values(s?.cameras ?? {}).reduce(
    (a, c) => a + Object.values(c.dropped).reduce((x, y) => x + y, 0) - (c.dropped.error ?? 0),
    0,
  );

export interface PipelineOptions {
  root: string;
  model: string;
  /** Camera URLs (lavfi: synthetic or looped files; rtsp: live cameras), one per camera. */
  sources: string[];
  /** The RTSP cameras' transport (the test RTSP server's). */
  rtspTransport?: 'tcp' | 'udp';
  fps: number;
  seconds: number;
  warmupSeconds: number;
  cache: boolean;
  mode: 'argus' | 'naive';
  label?: string;
  /** Extra YAML lines under `scheduler:` (max_batch, max_wait_ms, …). */
  scheduler?: Record<string, number | boolean>;
  /** Extra YAML lines under `detector:`. */
  detector?: Record<string, number | string>;
  /** Extra lines under `mqtt:` (EVERY_FRAME: this build, which the pipeline counts by its messages). */
  mqtt?: string[];
  /** Sample RSS this often (seconds) during the measurement; 0 = no series. */
  rssEverySeconds?: number;
}

export async function benchPipeline(opts: PipelineOptions): Promise<PipelineRow> {
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-pipe-'));
  const broker = await startBenchBroker();
  const names = opts.sources.map((_, i) => `cam${i}`);
  const config = join(dir, 'argus.yaml');
  await writeFile(
    config,
    [
      ...benchDaemonConfig(opts.model, broker, ['stats_interval_s: 1', ...(opts.mqtt ?? [])]),
      ...yamlSection('detector', opts.detector),
      ...yamlSection('scheduler', opts.scheduler),
      'cache:',
      `  enabled: ${opts.cache}`,
      'cameras:',
      ...names.flatMap((n, i) => [
        `  ${n}:`,
        `    url: "${opts.sources[i]}"`,
        `    fps: ${opts.fps}`,
        ...(opts.rtspTransport ? [`    rtsp_transport: ${opts.rtspTransport}`] : []),
      ]),
    ].join('\n'),
  );
  const latencies: number[] = [];
  let analysed = 0;
  let answered = 0;
  let measuring = false;
  let lastStats: StatsSnapshot | undefined;
  const sub = mqtt.connect(broker.url);
  sub.on('connect', () => sub.subscribe(['argus/cameras/+/detections', 'argus/stats']));
  sub.on('message', (topic, payload) => {
    if (topic === 'argus/stats') {
      lastStats = JSON.parse(payload.toString()) as StatsSnapshot;
      return;
    }
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
    const stats0 = lastStats;
    measuring = true;
    const t0 = Date.now();
    const series: [number, number][] = [];
    const every = (opts.rssEverySeconds ?? 0) * 1000;
    const sampler = every
      ? setInterval(() => series.push([Math.round((Date.now() - t0) / 1000), statusMb(pid, 'VmRSS')]), every)
      : undefined;
    await new Promise((r) => setTimeout(r, opts.seconds * 1000));
    clearInterval(sampler);
    measuring = false;
    const secs = (Date.now() - t0) / 1000;
    const d1 = procTimes(pid);
    const ff1 = children(pid).reduce((a, p) => a + procTimes(p), 0);
    const stats1 = lastStats;
    const [b0, f0] = batchTotals(stats0);
    const [b1, f1] = batchTotals(stats1);
    const cpuDaemon = ((d1 - d0) / secs) * 100;
    const cpuFfmpeg = (Math.max(0, ff1 - ff0) / secs) * 100;
    const argus = opts.mode === 'argus';
    return {
      mode: opts.mode,
      label: opts.label ?? '',
      cameras: opts.sources.length,
      cache: opts.cache,
      offered_fps: opts.sources.length * opts.fps,
      analysed_fps: analysed / secs,
      answered_fps: answered / secs,
      dropped_fps: argus ? (droppedTotal(stats1) - droppedTotal(stats0)) / secs : null,
      mean_batch: argus && b1 > b0 ? (f1 - f0) / (b1 - b0) : null,
      latency_p50_ms: pct(latencies, 50),
      latency_p99_ms: pct(latencies, 99),
      cpu_daemon_pct: cpuDaemon,
      cpu_ffmpeg_pct: cpuFfmpeg,
      answered_per_cpu_s: answered / secs / Math.max(0.01, (cpuDaemon + cpuFfmpeg) / 100),
      peak_rss_mb: statusMb(pid, 'VmHWM'),
      rss_series: series,
    };
  } finally {
    const spawned = child.pid ? children(child.pid) : [];
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    // The naive design can die with its ffmpeg children still running; leave none behind.
    for (const pid of spawned) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await sub.endAsync();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
