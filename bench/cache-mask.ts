/**
 * `node dist/bench/cache-mask.js [--runs 3] [--seconds 30]`: what `cache_mask` saves on a still
 * scene with a moving corner (issue 27, item 1), through the real daemon.
 *
 * The clip: bus.jpg (../shared/media; a grey picture with a white square without it) looped at
 * 5 frames/s, its top-right 200×200 corner replaced by a crop of the picture itself that sways by
 * ±30 px (a tree in the wind), through x264 (compression noise on the rest). One daemon per run,
 * two cameras on the same clip: `masked`, whose `cache_mask` covers the corner, and `plain`.
 * After a warm-up, each camera's frames analysed and answered from the cache are read from
 * /metrics over `--seconds`; the share analysed (and the bytes read from ffmpeg a frame: whether
 * its picture was sent) is printed per run, and the median of the runs.
 * Default settings otherwise (the cache on, `max_age_s` 10, `picture_threshold` 12).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildFixtureModel } from '../src/onnx/fixture.js';
import { defaultFfmpegPath } from '../src/ingest/index.js';
import { median, startBenchBroker, stillClip, stopChild } from './common.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const shared = process.env.ARGUS_SHARED_DIR ?? resolve(root, '..', 'shared');
const FPS = 5;
/** The swaying corner of the 810×1080 picture, in its pixels. */
const CORNER = { x: 610, y: 0, size: 200 };

type Counts = Record<string, { analysed: number; cached: number; received: number; bytes: number }>;

async function counts(base: string): Promise<Counts> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out: Counts = {};
  for (const [, kind, camera, value] of text.matchAll(
    /^argus_camera_(?:frames_)?(analysed|cached|received|bytes)(?:_received)?_total\{camera="([^"]+)"\} (\S+)$/gm,
  ))
    (out[camera!] ??= { analysed: 0, cached: 0, received: 0, bytes: 0 })[kind as 'analysed'] = Number(value);
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Share {
  /** Of the frames answered, the share the model analysed. */
  analysed: number;
  /** Bytes read from ffmpeg a frame: a picture (the model's input) and its thumbnail, or the thumbnail alone. */
  bytesPerFrame: number;
}

/** One daemon on the clip: each camera's share of frames analysed, and bytes a frame, over `seconds`. */
async function run(
  dir: string,
  clip: string,
  model: string,
  seconds: number,
): Promise<Record<string, Share>> {
  const broker = await startBenchBroker();
  const config = join(dir, 'argus.yaml');
  const camera = (mask: boolean): string[] => [
    `    url: "lavfi:movie=${clip}"`,
    `    fps: ${FPS}`,
    ...(mask
      ? [
          '    cache_mask:',
          `      - [[${CORNER.x}, ${CORNER.y}], [${CORNER.x + CORNER.size}, ${CORNER.y}], [${CORNER.x + CORNER.size}, ${CORNER.y + CORNER.size}], [${CORNER.x}, ${CORNER.y + CORNER.size}]]`,
        ]
      : []),
  ];
  await writeFile(
    config,
    [
      'log_level: info',
      `state_dir: ${join(dir, 'state')}`,
      'model:',
      `  path: ${model}`,
      'mqtt:',
      `  url: ${broker.url}`,
      `  username: ${broker.login.username}`,
      `  password: ${JSON.stringify(broker.login.password)}`,
      'http:',
      '  port: 0',
      'cameras:',
      '  masked:',
      ...camera(true),
      '  plain:',
      ...camera(false),
    ].join('\n'),
  );
  const child = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'run', '-c', config], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    let base: string | undefined;
    for (let i = 0; !base; i++) {
      if (i > 300 || child.exitCode !== null)
        throw new Error(`the daemon did not start:\n${out.slice(-2000)}`);
      await sleep(100);
      base = /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"HTTP server listening"/.exec(out)?.[1];
    }
    // Past the first frames: the cameras streaming, the cache filled.
    await sleep(5000);
    const before = await counts(base);
    await sleep(seconds * 1000);
    const after = await counts(base);
    const share: Record<string, Share> = {};
    for (const c of ['masked', 'plain']) {
      const d = (k: keyof Counts[string]): number => after[c]![k] - before[c]![k];
      share[c] = {
        analysed: d('analysed') / (d('analysed') + d('cached')),
        bytesPerFrame: d('bytes') / d('received'),
      };
    }
    return share;
  } finally {
    await stopChild(child);
    await broker.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { runs: { type: 'string' }, seconds: { type: 'string' } } });
  const runs = Number(values.runs ?? 3);
  const seconds = Number(values.seconds ?? 30);
  const ffmpeg = await defaultFfmpegPath();
  const dir = await mkdtemp(join(tmpdir(), 'argus-bench-cache-mask-'));
  try {
    const bus = join(shared, 'media', 'bus.jpg');
    const picture = existsSync(bus) ? ['-i', bus] : ['-f', 'lavfi', '-i', 'color=c=0x606060:s=810x1080'];
    const yolo = join(shared, 'models', 'yolo11n_int8_320.onnx');
    let model = yolo;
    if (!existsSync(yolo)) await writeFile((model = join(dir, 'fixture.onnx')), buildFixtureModel());
    const { x, y, size } = CORNER;
    const sway = `[0:v]split[a][b];[b]crop=${size}:${size}:x='${x - 40}+30*sin(2*PI*t/1.5)':y='${y + 20}+10*sin(2*PI*t/2.3)'[c];[a][c]overlay=x=${x}:y=${y}`;
    const clip = stillClip(
      ffmpeg,
      ['-loop', '1', '-framerate', String(FPS), ...picture, '-filter_complex', sway],
      seconds + 20,
      28,
      join(dir, 'clip.mkv'),
    );
    const rows: Record<string, Share>[] = [];
    const pct = (v: number): string => `${(100 * v).toFixed(1)} %`;
    const kb = (v: number): string => `${(v / 1000).toFixed(0)} kB`;
    const line = (what: string, m: (c: string, k: keyof Share) => number): string =>
      `${what}: analysed ${pct(m('masked', 'analysed'))} with the mask, ${pct(m('plain', 'analysed'))} without; ` +
      `${kb(m('masked', 'bytesPerFrame'))} and ${kb(m('plain', 'bytesPerFrame'))} read from ffmpeg a frame\n`;
    for (let r = 0; r < runs; r++) {
      const s = await run(dir, clip, model, seconds);
      rows.push(s);
      process.stdout.write(line(`run ${r + 1}`, (c, k) => s[c]![k]));
    }
    process.stdout.write(line(`median of ${runs}`, (c, k) => median(rows.map((s) => s[c]![k]))));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
