/**
 * Issue 47, items 1 and 6: bytes written to disk per camera ÷ the stream's bytes, with clips on,
 * and what recording costs ffmpeg. `file:` cameras played in real time and looped (`-stream_loop
 * -1 -re`), analysed at 5 frames/s by a real YOLO model: `busy`, vtest.mp4 (a plaza, people
 * walking; `busy2` the same again, another camera's worth of people), `street`,
 * person-bicycle-car-detection.mp4 (people, bicycles and cars; vtest alone gave 13 events a minute,
 * the three together give the busy scene its ≥ 20) and `still`, bus.jpg encoded as H.264 (four people
 * standing: four overlapping events). After a warm-up, for `seconds`: the daemon's bytes written
 * to the block layer (`write_bytes` of /proc/<pid>/io: segments, their descriptions, the history's
 * records and snapshots; ffmpeg writes nothing to disk) and the bytes of stream its rings
 * received (`argus_clip_ring_written_bytes_total`), events counted on MQTT; then a clip's time to
 * first byte, cold (made on request) and warm (from the cache), and the recording's bytes by
 * reason.
 *
 * `ARGUS_BENCH_OUTLIVE=false` sets `events.snapshots.outlive_footage: false` (a snapshot goes with
 * its footage: no rescue). `ARGUS_BENCH_RING_MB` sets `events.clips.ring_max_mb` (unset: the default, 256 MB a camera, which
 * a run of minutes never fills). A small ring fills within the run, so segments holding events'
 * snapshot frames are removed while it runs and the snapshots are rescued as `<key>.jpg` first
 * (issue 47, item 1: the ratio past a full ring, and what rescues cost). At 4 the street and still
 * cameras' rings fill in well under a minute, the busy ones (vtest, ≈ 1.75 MB a minute) only near
 * the end of a 120-s run; at 2 every camera's does. After the run the report also gives, per
 * camera, the history's records, those whose `frame` is marked `gone`, its `<key>.jpg` files (full
 * snapshots: every event's where the snapshot is written per event, the rescued ones where it is a
 * frame of the recording) and the bytes of all its files (of the events of the whole run, warm-up
 * included; the total ratio is the block layer's count), each ring's bytes at the end, the CPU of
 * the daemon's exited children in the window (`cutime` + `cstime` of /proc/<pid>/stat: the
 * short-lived ffmpegs that decode rescued frames and remux clips, reaped by the daemon) and the
 * daemon's warnings and errors, each message with its count and when it first came (seconds from
 * the window's start).
 *
 * Then, with another daemon, for `seconds` ÷ 2: recording's CPU, side by side in one run — each
 * source twice, `detect: false` (decoded as for the model, no model), once recording (`clips:
 * true`) and once not: the CPU seconds of each camera's ffmpeg (the recording is a second,
 * copied output of the same ffmpeg) and of the daemon.
 *
 *   node dist/bench/record.js [seconds=180] [model=../shared/models/yolov8n_int8.onnx] [all|events|cpu]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';
import type { EventPayload } from '../src/publish/topics.js';
import type { EmbeddedBroker } from '../src/broker/index.js';
import { benchDaemonConfig, children, procTimes, startBenchBroker, stillClip } from './common.js';

const shared = resolve('../shared');
const seconds = Number(process.argv[2] ?? 180);
const model = process.argv[3] || join(shared, 'models/yolov8n_int8.onnx');
/** Which part runs: the events' bytes and clips, recording's CPU, or both. */
const part = process.argv[4] ?? 'all';
/** `events.clips.ring_max_mb` of the daemons; unset: the default. */
const ringMb = process.env.ARGUS_BENCH_RING_MB;
/** `false`: `events.snapshots.outlive_footage: false` (snapshots go with their footage: no rescue). */
const outlive = process.env.ARGUS_BENCH_OUTLIVE;
const log = (msg: string): boolean => process.stderr.write(`bench record: ${msg}\n`);

/**
 * The bytes a process has dirtied for the disk (`write_bytes`, counted in 4-KiB pages as they are
 * dirtied) and, of those, the bytes removed or truncated before they were written back
 * (`cancelled_write_bytes`: a segment evicted, a temporary file gone, within the 30 s the kernel
 * keeps dirty pages).
 */
function writeBytes(pid: number): { dirtied: number; cancelled: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
  return { dirtied: field('write_bytes'), cancelled: field('cancelled_write_bytes') };
}

async function metrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(
    /^(argus_(?:clip_ring_written_bytes_total|clip_ring_bytes|recording_bytes)\{[^}]*\}) (\S+)$/gm,
  ))
    out.set(m[1]!, Number(m[2]));
  return out;
}

const streamBytes = (m: Map<string, number>, camera: string): number =>
  m.get(`argus_clip_ring_written_bytes_total{camera="${camera}"}`) ?? 0;

/** The daemon running now (stopped at the end, whatever failed). */
let running: ChildProcess | undefined;

/** A daemon started on `cameras` (YAML lines under `cameras:`) in `dir`, once its HTTP server listens. */
async function startDaemon(
  dir: string,
  broker: EmbeddedBroker,
  cameras: string[],
): Promise<{ child: ChildProcess; base: string; log: () => string }> {
  await mkdir(dir, { recursive: true });
  const config = [
    ...benchDaemonConfig(model, broker)
      .filter((l) => !/^http:|^ {2}enabled: false/.test(l))
      .map((l) => (l === 'log_level: warn' ? 'log_level: info' : l)),
    'http:',
    '  port: 0',
    'events:',
    ...(outlive === 'false' ? ['  snapshots:', '    outlive_footage: false'] : []),
    '  clips:',
    '    enabled: true',
    ...(ringMb ? [`    ring_max_mb: ${Number(ringMb)}`] : []),
    'cameras:',
    ...cameras,
  ].join('\n');
  await writeFile(join(dir, 'argus.yaml'), config);
  const child = spawn(process.execPath, [resolve('dist/src/cli.js'), 'run', '-c', join(dir, 'argus.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  running = child;
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error('the daemon did not start');
    }
    await sleep(500);
    const url = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"HTTP server listening"/.exec(out)?.[1];
    if (url) return { child, base: url.replace(/\/+$/, ''), log: () => out };
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function stopDaemon(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

/** A `file:` camera looped in real time. */
const camera = (name: string, file: string, extra: string[] = []): string[] => [
  `  ${name}:`,
  `    url: "file://${file}"`,
  '    fps: 5',
  `    input_args: ${JSON.stringify(['-re', '-stream_loop', '-1'])}`,
  ...extra.map((l) => `    ${l}`),
];

/** The ffmpeg children of `pid` whose command line names `file`. */
function ffmpegOf(pid: number, file: string): number[] {
  return children(pid).filter((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, 'utf8')
        .split('\0')
        .some((a) => a.includes(file));
    } catch {
      return false; // gone
    }
  });
}

/** CPU seconds (user + system) of the exited children `pid` has reaped (`cutime` + `cstime`). */
function childrenTimes(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) / 100; // USER_HZ
}

/** A camera's files in the event history: records, full snapshots (`<key>.jpg`), all their bytes. */
interface HistoryFiles {
  records: number;
  gone: number;
  jpgs: number;
  jpgBytes: number;
  bytes: number;
}

/**
 * What the event history in `dir` holds, per camera: its records, those whose snapshot `frame` is
 * marked `gone`, its full snapshots (`<key>.jpg`, not the crops) and the bytes of all its files.
 */
async function historyFiles(dir: string): Promise<Record<string, HistoryFiles>> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const cameraOf = new Map<string, string>();
  const out: Record<string, HistoryFiles> = {};
  const of = (camera: string): HistoryFiles =>
    (out[camera] ??= { records: 0, gone: 0, jpgs: 0, jpgBytes: 0, bytes: 0 });
  for (const name of names.filter((n) => n.endsWith('.json'))) {
    try {
      const rec = JSON.parse(await readFile(join(dir, name), 'utf8')) as {
        camera: string;
        frame?: { gone?: string };
      };
      cameraOf.set(name.slice(0, -'.json'.length), rec.camera);
      of(rec.camera).records++;
      if (rec.frame?.gone !== undefined) of(rec.camera).gone++;
    } catch {
      // being replaced
    }
  }
  for (const name of names) {
    const key = /^(.*?)(?:\.crop)?\.(?:json|jpg)$/.exec(name)?.[1];
    const camera = key === undefined ? undefined : cameraOf.get(key);
    if (camera === undefined) continue;
    const size = (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
    of(camera).bytes += size;
    if (name === `${key}.jpg`) {
      of(camera).jpgs++;
      of(camera).jpgBytes += size;
    }
  }
  return out;
}

const cpuOf = (pids: readonly number[]): number => pids.reduce((sum, p) => sum + procTimes(p), 0);

async function main(): Promise<void> {
  const vtest = join(shared, 'media/vtest.mp4');
  const street = join(shared, 'media/person-bicycle-car-detection.mp4');
  if (![vtest, street, model].every(existsSync)) {
    log(`needs ../shared (media/vtest.mp4, media/person-bicycle-car-detection.mp4, ${model}): skipped`);
    return;
  }
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-record-'));
  const ffmpeg = await defaultFfmpegPath();
  const still = stillClip(
    ffmpeg,
    ['-loop', '1', '-framerate', '15', '-i', join(shared, 'media/bus.jpg')],
    20,
    23,
    join(dir, 'still.mp4'),
  );
  const broker = await startBenchBroker();
  const names = ['busy', 'busy2', 'street', 'still'];
  const news = Object.fromEntries(names.map((c) => [c, 0])) as Record<string, number>;
  const sub = mqtt.connect(broker.url);
  sub.on('message', (_t, payload) => {
    const e = JSON.parse(payload.toString()) as EventPayload;
    if (e.type === 'new') news[e.camera] = (news[e.camera] ?? 0) + 1;
  });
  await sub.subscribeAsync('argus/events');
  try {
    if (part !== 'cpu') await eventsRun(dir, broker, [vtest, street, still], names, news);
    if (part !== 'events') await cpuRun(dir, broker, vtest, street);
  } finally {
    if (running) await stopDaemon(running);
    await sub.endAsync();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Bytes written ÷ stream with events on every camera; a 2-minute range's time to first byte. */
async function eventsRun(
  dir: string,
  broker: EmbeddedBroker,
  [vtest, street, still]: [string, string, string],
  names: string[],
  news: Record<string, number>,
): Promise<void> {
  const started = await startDaemon(join(dir, 'events'), broker, [
    ...camera('busy', vtest),
    ...camera('busy2', vtest),
    ...camera('street', street),
    ...camera('still', still),
  ]);
  const { child, base } = started;
  await sleep(20_000); // warm-up: every camera streaming
  const m0 = await metrics(base);
  const w0 = writeBytes(child.pid!);
  const cpu0 = procTimes(child.pid!);
  const kids0 = childrenTimes(child.pid!);
  const n0 = { ...news };
  const t0 = Date.now(); // the window's start
  await sleep(seconds * 1000);
  const m1 = await metrics(base);
  const w1 = writeBytes(child.pid!);
  const cpu1 = procTimes(child.pid!);
  const kids1 = childrenTimes(child.pid!);
  const stream = names.map((c) => streamBytes(m1, c) - streamBytes(m0, c));
  const streamAll = stream.reduce((a, b) => a + b, 0);
  const minutes = seconds / 60;
  const row = {
    seconds,
    events_per_min: Object.fromEntries(names.map((c) => [c, ((news[c]! - n0[c]!) / minutes).toFixed(1)])),
    stream_mb: Object.fromEntries(names.map((c, i) => [c, (stream[i]! / 1048576).toFixed(1)])),
    written_mb: ((w1.dirtied - w0.dirtied) / 1048576).toFixed(1),
    written_over_stream: ((w1.dirtied - w0.dirtied) / streamAll).toFixed(3),
    cancelled_mb: ((w1.cancelled - w0.cancelled) / 1048576).toFixed(1),
    daemon_cpu_s: (cpu1 - cpu0).toFixed(1),
    children_cpu_s: (kids1 - kids0).toFixed(2),
    ring_max_mb: ringMb ? Number(ringMb) : 'default',
    outlive_footage: outlive !== 'false',
    ring_mb: Object.fromEntries(
      names.map((c) => [c, ((m1.get(`argus_clip_ring_bytes{camera="${c}"}`) ?? 0) / 1048576).toFixed(1)]),
    ),
    recording_bytes: Object.fromEntries([...m1].filter(([k]) => k.startsWith('argus_recording_bytes'))),
  };
  // A 2-minute range of the busy camera's recording: cold (made), then warm (the cache).
  const end = Date.now() - 5000;
  const url = `${base}/api/cameras/busy/recording.mp4?start=${end - 120_000}&end=${end}`;
  const ttfb = async (u: string): Promise<number> => {
    const t = performance.now();
    const res = await fetch(u);
    const reader = res.body!.getReader();
    await reader.read();
    const ms = performance.now() - t;
    await reader.cancel();
    return ms;
  };
  const cold = await ttfb(url);
  const warm = await ttfb(url);
  await stopDaemon(child);
  // The history once the daemon has stopped (its last records written).
  const history = await historyFiles(join(dir, 'events', 'state', 'events'));
  // Per camera, the stream and what the history holds of its events (files' sizes at the end; the
  // total above is the block layer's count, records rewritten included).
  const perCamera = Object.fromEntries(
    names.map((c, i) => {
      const h = history[c] ?? { records: 0, gone: 0, jpgs: 0, jpgBytes: 0, bytes: 0 };
      return [
        c,
        {
          records: h.records,
          gone: h.gone,
          jpgs: h.jpgs,
          jpg_mb: (h.jpgBytes / 1048576).toFixed(2),
          history_mb: (h.bytes / 1048576).toFixed(2),
          stream_plus_history_over_stream: ((stream[i]! + h.bytes) / stream[i]!).toFixed(3),
        },
      ];
    }),
  );
  // The daemon's warnings and errors (its log, JSON lines on stdout), each message with its count.
  const warnings: Record<string, { n: number; first_s: number }> = {};
  for (const line of started.log().split('\n')) {
    const m = /"level":(\d+),"time":"([^"]+)".*"msg":"([^"]*)"/.exec(line);
    if (m && Number(m[1]) >= 40)
      (warnings[m[3]!] ??= { n: 0, first_s: Math.round((Date.parse(m[2]!) - t0) / 1000) }).n++;
  }
  process.stdout.write(
    `${JSON.stringify({ ...row, ttfb_2min_ms: { cold: Math.round(cold), warm: Math.round(warm) }, history: perCamera, warnings })}\n`,
  );
}

/** Recording's CPU: each source twice, decoded for no model, one recording and one not. */
async function cpuRun(dir: string, broker: EmbeddedBroker, vtest: string, street: string): Promise<void> {
  const files: Record<string, string> = {};
  for (const [source, file] of [
    ['busy', vtest],
    ['street', street],
  ] as const)
    for (const rec of ['rec', 'plain']) {
      files[`${source}_${rec}`] = join(dir, `${source}_${rec}.mp4`);
      await symlink(file, files[`${source}_${rec}`]!);
    }
  const started = await startDaemon(
    join(dir, 'cpu'),
    broker,
    Object.entries(files).flatMap(([name, file]) =>
      camera(name, file, ['detect: false', `clips: ${name.endsWith('_rec')}`]),
    ),
  );
  const child = started.child;
  await sleep(15_000);
  const pids = Object.fromEntries(Object.entries(files).map(([n, f]) => [n, ffmpegOf(child.pid!, f)]));
  const c0 = Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, cpuOf(p)]));
  const d0 = procTimes(child.pid!);
  const cpuSeconds = Math.max(30, Math.round(seconds / 2));
  await sleep(cpuSeconds * 1000);
  const c1 = Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, cpuOf(p)]));
  const d1 = procTimes(child.pid!);
  process.stdout.write(
    `${JSON.stringify({
      seconds: cpuSeconds,
      ffmpeg_cpu_s: Object.fromEntries(Object.keys(files).map((n) => [n, (c1[n]! - c0[n]!).toFixed(2)])),
      ffmpeg_processes: Object.fromEntries(Object.entries(pids).map(([n, p]) => [n, p.length])),
      daemon_cpu_s: (d1 - d0).toFixed(1),
    })}\n`,
  );
  await stopDaemon(child);
}

await main();
