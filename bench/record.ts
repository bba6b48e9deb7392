/**
 * Issue 47, item 1: bytes written to disk per camera ÷ the stream's bytes, with clips on. Two
 * `file:` cameras played in real time and looped (`-stream_loop -1 -re`), analysed at 5 frames/s
 * by a real YOLO model: `busy`, vtest.mp4 (a plaza, people walking: many events a minute), and
 * `still`, bus.jpg encoded as H.264 (four people standing: four overlapping events). After a
 * warm-up, for `seconds`: the daemon's bytes written to the block layer (`write_bytes` of
 * /proc/<pid>/io: segments, their descriptions, the history's records and snapshots; ffmpeg
 * writes nothing to disk) and the bytes of stream its rings received
 * (`argus_clip_ring_written_bytes_total`), events counted on MQTT; then a clip's time to first
 * byte, cold (made on request) and warm (from the cache), and the recording's bytes by reason.
 *
 *   node dist/bench/record.js [seconds=180] [model=../shared/models/yolov8n_int8.onnx]
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';
import type { EventPayload } from '../src/publish/topics.js';
import { benchDaemonConfig, procTimes, startBenchBroker, stillClip } from './common.js';

const shared = resolve('../shared');
const seconds = Number(process.argv[2] ?? 180);
const model = process.argv[3] ?? join(shared, 'models/yolov8n_int8.onnx');
const log = (msg: string): boolean => process.stderr.write(`bench record: ${msg}\n`);

const writeBytes = (pid: number): number =>
  Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? NaN);

async function metrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = new Map<string, number>();
  for (const m of text.matchAll(
    /^(argus_(?:clip_ring_written_bytes_total|recording_bytes)\{[^}]*\}) (\S+)$/gm,
  ))
    out.set(m[1]!, Number(m[2]));
  return out;
}

const streamBytes = (m: Map<string, number>, camera: string): number =>
  m.get(`argus_clip_ring_written_bytes_total{camera="${camera}"}`) ?? 0;

async function main(): Promise<void> {
  if (!existsSync(join(shared, 'media/vtest.mp4')) || !existsSync(model)) {
    log(`needs ../shared (media/vtest.mp4, ${model}): skipped`);
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
  const loop = JSON.stringify(['-re', '-stream_loop', '-1']);
  const config = [
    ...benchDaemonConfig(model, broker)
      .filter((l) => !/^http:|^ {2}enabled: false/.test(l))
      .map((l) => (l === 'log_level: warn' ? 'log_level: info' : l)),
    'http:',
    '  port: 0',
    'events:',
    '  clips:',
    '    enabled: true',
    'cameras:',
    '  busy:',
    `    url: "file://${join(shared, 'media/vtest.mp4')}"`,
    '    fps: 5',
    `    input_args: ${loop}`,
    '  still:',
    `    url: "file://${still}"`,
    '    fps: 5',
    `    input_args: ${loop}`,
  ].join('\n');
  await writeFile(join(dir, 'argus.yaml'), config);
  const news = { busy: 0, still: 0 } as Record<string, number>;
  const sub = mqtt.connect(broker.url);
  sub.on('message', (_t, payload) => {
    const e = JSON.parse(payload.toString()) as EventPayload;
    if (e.type === 'new') news[e.camera] = (news[e.camera] ?? 0) + 1;
  });
  await sub.subscribeAsync('argus/events');
  const child = spawn(process.execPath, [resolve('dist/src/cli.js'), 'run', '-c', join(dir, 'argus.yaml')], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  try {
    const deadline = Date.now() + 120_000;
    let base: string | undefined;
    while (!base) {
      if (Date.now() > deadline) throw new Error('the daemon did not start');
      await new Promise((r) => setTimeout(r, 500));
      const url = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"HTTP server listening"/.exec(out)?.[1];
      if (url) base = url.replace(/\/+$/, '');
    }
    await new Promise((r) => setTimeout(r, 20_000)); // warm-up: both cameras streaming
    const m0 = await metrics(base);
    const w0 = writeBytes(child.pid!);
    const cpu0 = procTimes(child.pid!);
    const n0 = { ...news };
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const m1 = await metrics(base);
    const w1 = writeBytes(child.pid!);
    const cpu1 = procTimes(child.pid!);
    const stream = ['busy', 'still'].map((c) => streamBytes(m1, c) - streamBytes(m0, c));
    const minutes = seconds / 60;
    const row = {
      seconds,
      events_per_min: Object.fromEntries(
        ['busy', 'still'].map((c) => [c, ((news[c]! - n0[c]!) / minutes).toFixed(1)]),
      ),
      stream_mb: stream.map((b) => (b / 1048576).toFixed(1)),
      written_mb: ((w1 - w0) / 1048576).toFixed(1),
      written_over_stream: ((w1 - w0) / (stream[0]! + stream[1]!)).toFixed(3),
      daemon_cpu_s: (cpu1 - cpu0).toFixed(1),
      recording_bytes: Object.fromEntries([...m1].filter(([k]) => k.startsWith('argus_recording_bytes'))),
    };
    // A 2-minute range of the busy camera's recording: cold (made), then warm (the cache).
    const events = (await (await fetch(`${base}/api/events?camera=busy&limit=500`)).json()) as EventPayload[];
    const ready = events.find((e) => e.clip?.state === 'ready');
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
    const clipPath = ready?.clip?.state === 'ready' ? ready.clip.path : undefined;
    process.stdout.write(
      `${JSON.stringify({ ...row, ttfb_2min_ms: { cold: Math.round(cold), warm: Math.round(warm) }, an_event_clip: clipPath ?? null })}\n`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await sub.endAsync();
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
