/**
 * What a camera that shows nothing new costs (issue 16): N cameras on one still RTSP stream
 * (bus.jpg, 810×1080, encoded live to H.264 at 5 frames/s by GStreamer's RTSP server, as the
 * test bed's still camera) through `argus run` with the cache on, against N plain
 * `ffmpeg -i … -f null -` decoders of the same stream: the physical limit, decoding the stream
 * at all. Both run at the same time, so one wall window and one machine load hit both.
 *
 * CPU is user + system time from /proc, of the daemon with its ffmpeg children and of the
 * decoders, over the same window. The model's share is the CPU time of the detector's worker
 * threads (named `argus-detector`; ONNX Runtime's threads inherit the name), or, for a build
 * that does not name them, its inference time (the stats topic's batches × mean inference ms:
 * one session thread per worker on the CPU provider, so its wall time, an upper bound of its CPU
 * time on a busy machine). An MQTT subscriber counts each camera's detections messages. Figures
 * are medians over repeated windows.
 *
 * With `baseline` (the root of another checkout, built), that build's daemon runs beside this
 * one on the same stream and in the same windows: before → after of a change, side by side.
 *
 * `Argus with clips` is the same build with `events.clips` on (issue 28): each camera's ffmpeg
 * also copies the stream to its ring, which Argus writes to disk. Its row says what that costs
 * in CPU, and its disk writes (`write_bytes` in /proc of the daemon and its ffmpeg, per camera)
 * beside the stream's own rate (what each RTSP connection received, from the kernel's TCP
 * counters).
 *
 * With `health` (issue 49), the second daemon is the same build with camera health off
 * (`health: {enabled: false}`) instead of clips: the first has it on, as by default. Health runs
 * on the daemon's own thread, so its cost is the daemon's CPU difference, taken window by window
 * (one load hits both) and given per camera as the median over the windows.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';
import type { StatsPayload } from '../src/publish/topics.js';
import { startRtspServer } from '../test/helpers/rtsp.js';
import { THREAD_NAME } from '../src/detector/index.js';
import {
  benchDaemonConfig,
  children,
  median,
  procTimes,
  startBenchBroker,
  stopChild,
  threadTimes,
  yamlSection,
} from './common.js';

export interface IdleRow {
  /** `Argus`, `Argus (baseline)` or `plain ffmpeg decoders`. */
  label: string;
  cameras: number;
  /** Daemon and its ffmpeg children together (for the decoders: all of them). */
  cpu_pct: number;
  cpu_daemon_pct: number | null;
  cpu_ffmpeg_pct: number | null;
  /** The detector's inference time, part of the daemon's CPU. */
  cpu_model_pct: number | null;
  /** cpu_pct ÷ the decoders' in the same window. */
  ratio: number | null;
  /** (cpu_pct − cpu_model_pct) ÷ the decoders'. */
  ratio_without_model: number | null;
  /** Frames the model analysed ÷ frames the cameras delivered (fps × cameras × seconds). */
  analysed_share: number | null;
  /** Messages on `<base>/cameras/<camera>/detections`, per camera per minute. */
  detections_per_camera_min: number | null;
  /** Bytes written to storage per camera per second, daemon and ffmpeg. */
  disk_kb_s_per_camera: number | null;
}

export interface IdleResult {
  model: string;
  cameras: number;
  fps: number;
  windowSeconds: number;
  windows: number;
  rows: IdleRow[];
  /** The stream's own rate (kB/s): what each RTSP connection received, from the kernel's TCP counters. */
  stream_kb_s: number | null;
  /**
   * With `health`: camera health's cost, % of a core per camera (the daemons' CPU, health on − off,
   * ÷ cameras): the median over the windows, and each window's.
   */
  health?: { pct_per_camera: number; windows: number[] } | undefined;
}

export interface IdleOptions {
  root: string;
  /** Another checkout's root (built) to run beside this one. */
  baseline?: string;
  model: string;
  modelName: string;
  image: string;
  cameras: number;
  fps: number;
  warmupSeconds: number;
  windowSeconds: number;
  windows: number;
  detector?: Record<string, string | number>;
  /** Where the clips daemon's rings go (`events.clips.ring_dir`); absent: its state directory. */
  ringDir?: string | undefined;
  /** The second daemon has camera health off instead of clips on: health's cost, side by side. */
  health?: boolean | undefined;
}

interface Daemon {
  label: string;
  base: string;
  child: ChildProcess;
  stats?: StatsPayload;
  messages: number;
}

/** Inference milliseconds and analysed frames since the daemon started, from its stats message. */
function detectorTotals(s: StatsPayload | undefined): { inferMs: number; frames: number } {
  let batches = 0;
  let frames = 0;
  for (const [size, n] of Object.entries(s?.detector.batch_sizes ?? {})) {
    batches += n;
    frames += n * Number(size);
  }
  return { inferMs: batches * (s?.detector.inference_ms ?? 0), frames };
}

const cpuOf = (pids: number[]): number => pids.reduce((a, p) => a + procTimes(p), 0);

export async function benchIdle(opts: IdleOptions): Promise<IdleResult> {
  const cleanups: (() => Promise<void>)[] = [];
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-idle-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  try {
    const server = await startRtspServer({ after: (fn) => cleanups.push(fn) }, [
      { name: 'still', source: { kind: 'image', path: opts.image, fps: opts.fps } },
    ]);
    const url = server.url('still');
    const broker = await startBenchBroker();
    cleanups.push(() => broker.stop());

    // Label, root, and the config's extra lines by the daemon's base topic (none, clips on, or health off).
    const clipsOn = (base: string): string[] => [
      'events:',
      '  clips:',
      '    enabled: true',
      ...(opts.ringDir ? [`    ring_dir: ${JSON.stringify(join(opts.ringDir, base))}`] : []),
    ];
    const none = (): string[] => [];
    const builds: [string, string, (base: string) => string[]][] = [
      [opts.health ? HEALTH_ON : 'Argus', opts.root, none],
      opts.health
        ? [HEALTH_OFF, opts.root, () => ['health:', '  enabled: false']]
        : [
            opts.ringDir ? `Argus with clips (ring in ${opts.ringDir})` : 'Argus with clips',
            opts.root,
            clipsOn,
          ],
    ];
    if (opts.baseline) builds.push(['Argus (baseline)', opts.baseline, none]);
    const daemons: Daemon[] = [];
    const sub = mqtt.connect(broker.url);
    cleanups.push(() => sub.endAsync());
    sub.on('connect', () => {
      const topics = builds.flatMap((_, i) => [`idle${i}/cameras/+/detections`, `idle${i}/stats`]);
      void sub.subscribeAsync(topics);
    });
    sub.on('message', (topic, payload) => {
      const d = daemons.find((x) => topic.startsWith(`${x.base}/`));
      if (!d) return;
      if (topic.endsWith('/stats')) d.stats = JSON.parse(payload.toString()) as StatsPayload;
      else d.messages++;
    });
    for (const [i, [label, root, extra]] of builds.entries()) {
      // Each daemon in its own directory: its config, and its state directory beside it.
      const base = `idle${i}`;
      const home = join(dir, base);
      await mkdir(home);
      const config = join(home, 'argus.yaml');
      const cameras = Array.from({ length: opts.cameras }, (_, c) => [
        `  cam${c}:`,
        `    url: "${url}"`,
        `    fps: ${opts.fps}`,
        `    rtsp_transport: ${server.transport}`,
      ]);
      await writeFile(
        config,
        [
          ...benchDaemonConfig(opts.model, broker, [
            'stats_interval_s: 1',
            `base_topic: ${base}`,
            `client_id: ${base}`,
          ]),
          ...yamlSection('detector', opts.detector),
          ...extra(base),
          'cameras:',
          ...cameras.flat(),
        ].join('\n'),
      );
      const child = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'run', '-c', config], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      cleanups.push(() => stopChild(child));
      daemons.push({ label, base, child, messages: 0 });
    }

    const ffmpeg = await defaultFfmpegPath();
    const decoders = Array.from({ length: opts.cameras }, () =>
      spawn(
        ffmpeg,
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-rtsp_transport',
          server.transport,
          '-i',
          url,
          '-an',
          '-f',
          'null',
          '-',
        ],
        { stdio: 'ignore' },
      ),
    );
    for (const d of decoders) cleanups.push(() => stopChild(d));

    await sleep(opts.warmupSeconds * 1000);
    const windows: Map<string, IdleRow[]> = new Map();
    const healthCosts: number[] = [];
    const streamRates: number[] = [];
    for (let w = 0; w < opts.windows; w++) {
      const pidsOf = (d: Daemon): { daemon: number; ffmpeg: number[] } => ({
        daemon: d.child.pid!,
        ffmpeg: children(d.child.pid!),
      });
      const pids = daemons.map(pidsOf);
      const decPids = decoders.map((d) => d.pid!);
      const before = daemons.map((d, i) => ({
        daemon: procTimes(pids[i]!.daemon),
        model: threadTimes(pids[i]!.daemon, THREAD_NAME),
        ffmpeg: cpuOf(pids[i]!.ffmpeg),
        det: detectorTotals(d.stats),
        messages: d.messages,
        written: writtenOf([pids[i]!.daemon, ...pids[i]!.ffmpeg]),
      }));
      const dec0 = cpuOf(decPids);
      const received0 = receivedFrom(url);
      const t0 = Date.now();
      await sleep(opts.windowSeconds * 1000);
      const secs = (Date.now() - t0) / 1000;
      const decPct = ((cpuOf(decPids) - dec0) / secs) * 100;
      const perCameraKbS = (bytes: number): number => bytes / 1024 / opts.cameras / secs;
      const received = receivedFrom(url);
      if (received0 && received && received.connections === received0.connections)
        streamRates.push((received.bytes - received0.bytes) / received.connections / 1024 / secs);
      const rows: IdleRow[] = daemons.map((d, i) => {
        const b = before[i]!;
        const daemonPct = ((procTimes(pids[i]!.daemon) - b.daemon) / secs) * 100;
        const ffmpegPct = ((cpuOf(pids[i]!.ffmpeg) - b.ffmpeg) / secs) * 100;
        const det = detectorTotals(d.stats);
        const named = threadTimes(pids[i]!.daemon, THREAD_NAME);
        const modelPct = ((named > 0 ? named - b.model : (det.inferMs - b.det.inferMs) / 1000) / secs) * 100;
        const cpu = daemonPct + ffmpegPct;
        return {
          label: d.label,
          cameras: opts.cameras,
          cpu_pct: cpu,
          cpu_daemon_pct: daemonPct,
          cpu_ffmpeg_pct: ffmpegPct,
          cpu_model_pct: modelPct,
          ratio: cpu / decPct,
          ratio_without_model: (cpu - modelPct) / decPct,
          analysed_share: (det.frames - b.det.frames) / (opts.cameras * opts.fps * secs),
          detections_per_camera_min: ((d.messages - b.messages) / opts.cameras / secs) * 60,
          disk_kb_s_per_camera: perCameraKbS(writtenOf([pids[i]!.daemon, ...pids[i]!.ffmpeg]) - b.written),
        };
      });
      rows.push({
        label: 'plain ffmpeg decoders',
        cameras: opts.cameras,
        cpu_pct: decPct,
        cpu_daemon_pct: null,
        cpu_ffmpeg_pct: null,
        cpu_model_pct: null,
        ratio: 1,
        ratio_without_model: null,
        analysed_share: null,
        detections_per_camera_min: null,
        disk_kb_s_per_camera: null,
      });
      for (const r of rows) windows.set(r.label, [...(windows.get(r.label) ?? []), r]);
      const on = rows.find((r) => r.label === HEALTH_ON);
      const off = rows.find((r) => r.label === HEALTH_OFF);
      if (on && off) healthCosts.push((on.cpu_daemon_pct! - off.cpu_daemon_pct!) / opts.cameras);
    }
    return {
      model: opts.modelName,
      cameras: opts.cameras,
      fps: opts.fps,
      windowSeconds: opts.windowSeconds,
      windows: opts.windows,
      rows: [...windows.values()].map(medianRow),
      stream_kb_s: streamRates.length ? median(streamRates) : null,
      ...(healthCosts.length
        ? { health: { pct_per_camera: median(healthCosts), windows: healthCosts } }
        : {}),
    };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  }
}

const HEALTH_ON = 'Argus, health on';
const HEALTH_OFF = 'Argus, health off';

/** Each figure's median over the windows. */
function medianRow(rows: IdleRow[]): IdleRow {
  const m = (pick: (r: IdleRow) => number | null): number | null => {
    const xs = rows.map(pick).filter((x): x is number => x !== null);
    return xs.length ? median(xs) : null;
  };
  return {
    label: rows[0]!.label,
    cameras: rows[0]!.cameras,
    cpu_pct: m((r) => r.cpu_pct)!,
    cpu_daemon_pct: m((r) => r.cpu_daemon_pct),
    cpu_ffmpeg_pct: m((r) => r.cpu_ffmpeg_pct),
    cpu_model_pct: m((r) => r.cpu_model_pct),
    ratio: m((r) => r.ratio),
    ratio_without_model: m((r) => r.ratio_without_model),
    analysed_share: m((r) => r.analysed_share),
    detections_per_camera_min: m((r) => r.detections_per_camera_min),
    disk_kb_s_per_camera: m((r) => r.disk_kb_s_per_camera),
  };
}

/** Bytes `pids` had written to storage (/proc/<pid>/io `write_bytes`; 0 for a process gone). */
function writtenOf(pids: number[]): number {
  let n = 0;
  for (const pid of pids) {
    try {
      const m = /^write_bytes: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
      n += m ? Number(m[1]) : 0;
    } catch {
      // gone
    }
  }
  return n;
}

/**
 * What the TCP connections to the RTSP server of `url` have received (`ss -ti`: the kernel's
 * `bytes_received` of each), and how many there are; undefined without `ss`.
 */
function receivedFrom(url: string): { bytes: number; connections: number } | undefined {
  const port = new URL(url).port;
  const r = spawnSync('ss', ['-tinH', 'dst', `127.0.0.1:${port}`], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const counts = [...r.stdout.matchAll(/bytes_received:(\d+)/g)].map((m) => Number(m[1]));
  return { bytes: counts.reduce((a, b) => a + b, 0), connections: counts.length };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
