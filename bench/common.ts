/** Pieces the benchmarks share: a CPU detector, real clips decoded to model-ready frames, /proc readings. */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { pino } from 'pino';
import type { ProviderName } from '../src/config/index.js';
import { openDetector, type Detector } from '../src/detector/index.js';
import {
  buildFfmpegArgs,
  defaultFfmpegPath,
  letterboxFilter,
  PnmSplitter,
  probeOptionNames,
  thumbnailFilter,
} from '../src/ingest/index.js';
import { sectionConfig } from '../src/config/schema.js';
import { EmbeddedBroker } from '../src/broker/index.js';

/** A config section as YAML lines (`name:` and its keys), or none when `values` is absent. */
export const yamlSection = (
  name: string,
  values: Record<string, number | string | boolean> | undefined,
): string[] => (values ? [`${name}:`, ...Object.entries(values).map(([k, v]) => `  ${k}: ${v}`)] : []);

/**
 * `mqtt:` lines that publish every answered frame's detections (the benches that count frames
 * by their messages); a build from before `mqtt.detections` did so anyway, and refuses the key.
 */
export const EVERY_FRAME = ['detections:', '  publish: every_frame'];

/** The bench's own broker: Argus' embedded one, on a free loopback port, silent. */
export async function startBenchBroker(): Promise<EmbeddedBroker> {
  const broker = new EmbeddedBroker(
    sectionConfig('mqtt', { embedded: { host: '127.0.0.1', port: 0 } }),
    pino({ level: 'silent' }),
  );
  await broker.start();
  return broker;
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * The start of a bench daemon's config: its own state directory (relative to the config file,
 * never the user's line counts or event history), the model, the bench's embedded broker with
 * its login (`mqtt` adds keys to that section), and no HTTP.
 */
export function benchDaemonConfig(model: string, broker: EmbeddedBroker, mqtt: string[] = []): string[] {
  return [
    'log_level: warn',
    'state_dir: state',
    'model:',
    `  path: ${model}`,
    'mqtt:',
    `  url: ${broker.url}`,
    `  username: ${broker.login.username}`,
    `  password: ${JSON.stringify(broker.login.password)}`,
    ...mqtt.map((line) => `  ${line}`),
    'http:',
    '  enabled: false',
  ];
}

/**
 * A started one-session detector (CPU unless told) with ONNX Runtime's default threads and
 * spinning, as a bare session has them.
 */
export function startDetector(path: string, provider: ProviderName = 'cpu', workers = 1): Promise<Detector> {
  return openDetector(
    { path },
    { providers: [provider], workers, thread_spinning: workers === 1 },
    pino({ level: 'warn' }),
  );
}

/**
 * One ffmpeg per URL with the arguments Argus' ingest gives a camera's (cache off: every frame
 * decoded, scaled to the model's `size` and written out), its pictures to /dev/null: the
 * decoding the daemon's cameras cost, beside a side that decodes nothing itself.
 */
export async function startDecoders(
  urls: string[],
  opts: { fps: number; size: number; transport: 'tcp' | 'udp' },
): Promise<ChildProcess[]> {
  const ffmpeg = await defaultFfmpegPath();
  const names = await probeOptionNames(ffmpeg);
  return urls.map((url) => {
    const a = buildFfmpegArgs(
      { url, fps: opts.fps, rtsp_transport: opts.transport, input_args: [], hwaccel_args: [] },
      { timeout_s: 10, threads: 1 },
      { url, size: opts.size, names, cache: { enabled: false, picture_threshold: 0 } },
    );
    const input = a.input.map((x) => (x === 'verbose' ? 'error' : x));
    return spawn(ffmpeg, [...input, '-i', a.url, ...a.output, 'pipe:1'], { stdio: 'ignore' });
  });
}

/** A decoded frame: the model's letterboxed RGB picture and ffmpeg's thumbnail of it, as Argus gets them. */
export interface DecodedFrame {
  data: Buffer;
  thumb: Buffer;
}

/**
 * Decodes ffmpeg input `args` into frames at `fps`, each with its thumbnail, by Argus' own
 * filters (ingest/ffmpeg-args.ts), every frame's pixels included (no `mpdecimate`).
 */
export function decodeFrames(ffmpeg: string, args: string[], fps: number, size: number): DecodedFrame[] {
  const graph = `[0:v]fps=${fps},split=2[a][b];[a]${letterboxFilter(size)}[frames];[b]${thumbnailFilter()}[thumbs]`;
  const raw = execFileSync(
    ffmpeg,
    [
      '-loglevel',
      'error',
      ...args,
      '-filter_complex',
      graph,
      '-map',
      '[frames]',
      '-map',
      '[thumbs]',
      '-c:v:0',
      'ppm',
      '-c:v:1',
      'pam',
      '-f',
      'image2pipe',
      'pipe:1',
    ],
    { maxBuffer: 1 << 30 },
  );
  const frames: DecodedFrame[] = [];
  let data: Buffer | undefined;
  new PnmSplitter(size * size * 3, (image) => {
    if (image.format === 'P6') data = image.data;
    else frames.push({ data: data!, thumb: image.data });
  }).push(raw);
  return frames;
}

/**
 * A still camera: ffmpeg input `source` (e.g. a looped picture) through a real H.264 encoder, so
 * the frames carry compression noise. Returns the path of the clip written.
 */
export function stillClip(
  ffmpeg: string,
  source: string[],
  seconds: number,
  crf: number,
  path: string,
): string {
  execFileSync(ffmpeg, [
    '-y',
    '-loglevel',
    'error',
    ...source,
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    String(crf),
    '-pix_fmt',
    'yuv420p',
    path,
  ]);
  return path;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

const CLK = 100; // USER_HZ on Linux

/** CPU seconds (user + system) of the process or thread at /proc/<path>; 0 once it is gone. */
function statTimes(path: string): number {
  try {
    const stat = readFileSync(`/proc/${path}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK;
  } catch {
    return 0;
  }
}

/** CPU seconds (user + system) a process has used, all its threads; 0 once it is gone. */
export const procTimes = (pid: number): number => statTimes(String(pid));

/** CPU seconds the threads of `pid` named `name` have used (0 when it has none). */
export function threadTimes(pid: number, name: string): number {
  let sum = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim() === name)
          sum += statTimes(`${pid}/task/${tid}`);
      } catch {
        // ended
      }
    }
  } catch {
    // gone
  }
  return sum;
}

/** The processes whose parent is `pid`. */
export function children(pid: number): number[] {
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

/** A field of /proc/<pid>/status in MB (peak or current RSS). */
export function statusMb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The name of the Vulkan device WebGPU runs on when it is a CPU-type one (Mesa's lavapipe), as
 * `vulkaninfo --summary` lists it; null when it lists a GPU first. Figures measured on it are of
 * the path, not of speed. Without vulkaninfo (package vulkan-tools) the device is not known: said so.
 */
export function softwareVulkan(): string | null {
  const r = spawnSync('vulkaninfo', ['--summary'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error || r.status !== 0) return 'a Vulkan device vulkaninfo could not name (vulkan-tools)';
  const types = [...r.stdout.matchAll(/deviceType\s*=\s*(\S+)/g)].map((m) => m[1]);
  const names = [...r.stdout.matchAll(/deviceName\s*=\s*(.+)/g)].map((m) => m[1]!.trim());
  return types[0] === 'PHYSICAL_DEVICE_TYPE_CPU' ? (names[0] ?? 'a CPU-type Vulkan device') : null;
}
