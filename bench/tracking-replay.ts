/**
 * Replays the recordings `npm run bench -- --sections tracking --tracking-dump DIR` kept (every
 * published detection of every answered frame, with its time, frame number and whether it was
 * cached) through this checkout's Tracker, and scores them as the bench does: a tracking change
 * is judged on the same detections in seconds, without the detector (a vtest run costs six
 * minutes of both cores).
 *
 *   node dist/bench/tracking-replay.js DIR [--scenes crossing,vtest] [--no-pixels]
 *        [--events appearance=false] [--size 640] [--detail] [--out FILE] [--keep DIR]
 *
 * The tracker gets the pictures too (appearance, and whether a still object's place changed):
 * each scene is rendered again (test/helpers/synthetic-scene.ts) and vtest.mp4 read from
 * ../shared, both decoded by ffmpeg as the daemon's ingest does (`fps`, then the model's
 * letterbox: ingest/ffmpeg-args.ts; vtest played as often as it was, `-stream_loop`), frame
 * number n being the nth picture. vtest's pictures are kept in $TMPDIR/argus-replay-pictures
 * (1.9 GB for four loops at 640) for the next replay. The pixels are the clip's, not the very
 * buffers the daemon had (the frame cache's ffmpeg repeats an unchanged picture's last
 * pixels): close, not equal.
 * `--no-pixels` replays without them. `--keep DIR` writes vtest's replayed recording (with the
 * ids this checkout gives) to DIR/vtest.json; `--out FILE` the scores as JSON.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { letterbox, type Letterbox } from '../src/core/geometry.js';
import { parseConfig, type CameraConfig, type Config } from '../src/config/index.js';
import { areasOf, checkedGroundPlane } from '../src/events/areas.js';
import { defaultFfmpegPath } from '../src/ingest/index.js';
import { letterboxFilter } from '../src/ingest/ffmpeg-args.js';
import { isoTime } from '../src/core/time.js';
import { applyCameraFilters, Tracker, type ObjectEvent } from '../src/track/index.js';
import type { Pixels } from '../src/track/appearance.js';
import { writeSceneClip } from '../test/helpers/synthetic-scene.js';
import {
  CAMERA,
  cameraYaml,
  scoreScene,
  sceneCamera,
  TRACKING_SCENES,
  scoreStreet,
  vtestCamera,
  type Recording,
  type RecordedEvent,
  type SceneRow,
  type StreetReplay,
} from './tracking.js';

/** A clip's pictures as the daemon's ffmpeg makes them: `count` letterboxed RGB24 frames in a file. */
interface Pictures {
  file: string;
  geometry: Letterbox;
  count: number;
}

/**
 * Decodes `clip` (played `loops` times, as `-stream_loop` does) at `fps` into `size`² letterboxed
 * RGB24 frames (ingest's filters), into a file under `cache` that later replays reuse.
 */
async function decode(
  clip: string,
  opts: { fps: number; srcW: number; srcH: number; size: number; loops: number; cache: string },
): Promise<Pictures> {
  const { fps, size, loops } = opts;
  const geometry = letterbox(opts.srcW, opts.srcH, size);
  const frame = size * size * 3;
  const file = join(opts.cache, `${basename(clip)}-${fps}fps-${size}-x${loops}.rgb`);
  if (!existsSync(file)) {
    await mkdir(opts.cache, { recursive: true });
    const ffmpeg = await defaultFfmpegPath();
    const args = ['-v', 'error', '-stream_loop', String(loops - 1), '-i', clip, '-an'];
    args.push('-vf', `fps=${fps},${letterboxFilter(size)}`, '-f', 'rawvideo', '-y', `${file}.part`);
    const child = spawn(ffmpeg, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0)
      throw new Error(`replay: ffmpeg could not decode ${clip} (exit ${code}): ${stderr.trim()}`);
    await rename(`${file}.part`, file);
  }
  return { file, geometry, count: Math.floor(statSync(file).size / frame) };
}

/** The picture of frame number `n` (1, 2, …), read from the decoded file; undefined past its end. */
function pictureOf(
  p: Pictures,
  fd: number,
  n: number,
): { data: Uint8Array; geometry: Letterbox } | undefined {
  if (n < 1 || n > p.count) return undefined;
  const size = p.geometry.dstW * p.geometry.dstH * 3;
  const data = Buffer.alloc(size);
  readSync(fd, data, 0, size, (n - 1) * size);
  return { data, geometry: p.geometry };
}

/** Replays with frame numbers' pictures from `p` (none without). */
function withPictures<T>(
  p: Pictures | undefined,
  run: (picture?: (n: number) => Pixels | undefined) => T,
): T {
  if (!p) return run();
  const fd = openSync(p.file, 'r');
  try {
    return run((n) => pictureOf(p, fd, n));
  } finally {
    closeSync(fd);
  }
}

/** The config the bench ran a camera with (bench/tracking.ts `cameraYaml`), parsed. */
function configOf(lines: string[]): { events: Config['events']; cam: CameraConfig } {
  const text = ['model:', '  path: replay.onnx', 'mqtt:', '  url: mqtt://127.0.0.1:1883', ...lines].join(
    '\n',
  );
  const config = parseConfig(text, 'replay.yaml').config;
  const cam = config.cameras[CAMERA];
  if (!cam) throw new Error(`replay: the config has no camera ${CAMERA}`);
  return { events: config.events, cam };
}

const payload = (e: ObjectEvent): RecordedEvent => ({
  type: e.type,
  camera: e.camera,
  id: e.id,
  label: e.label,
  box: e.box,
  end_ts: e.endTs === null ? null : isoTime(e.endTs),
  speed: e.speed,
});

/** `rec`'s detections through a fresh Tracker with the camera's config: what Argus would publish now. */
export function replay(
  rec: Recording,
  configLines: string[],
  picture?: (frame: number) => Pixels | undefined,
): Recording {
  const { events: cfg, cam } = configOf(configLines);
  const tracker = new Tracker(CAMERA, cfg, areasOf(cam, cfg.speed_unit, checkedGroundPlane));
  const out: Recording = { frames: [], events: [], crossings: [] };
  const take = (es: ReturnType<Tracker['update']>): void => {
    for (const e of es) {
      if (e.type === 'crossing') out.crossings.push({ ...e, ts: isoTime(e.ts), count: null });
      else out.events.push(payload(e));
    }
  };
  // The daemon's filters and speeds run on the frames' steady times (the stream's own intervals);
  // the recorded clips are at a fixed rate, so the nth picture's is n frame intervals on.
  const first = rec.frames[0];
  const steadyOf = (f: (typeof rec.frames)[number]): number =>
    first ? first.ts + ((f.frame - first.frame) * 1000) / cam.fps : f.ts;
  for (const f of rec.frames) {
    const raw = f.seen.map((s) => ({ label: s.label, score: s.score ?? 1, box: s.box }));
    const dets = applyCameraFilters(raw, cam);
    const frame = { others: raw, cached: f.cached, pixels: picture?.(f.frame), steady: steadyOf(f) };
    take(tracker.update(dets, f.ts, frame));
    const ids = tracker.identify(dets);
    out.frames.push({
      ...f,
      seen: dets.map((d, i) => ({ label: d.label, score: d.score, box: d.box, id: ids[i]?.id ?? null })),
    });
  }
  take(tracker.endAll());
  return out;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      scenes: { type: 'string' },
      'no-pixels': { type: 'boolean' },
      events: { type: 'string' },
      size: { type: 'string' },
      loops: { type: 'string' },
      detail: { type: 'boolean' },
      out: { type: 'string' },
      keep: { type: 'string' },
    },
  });
  const dir = positionals[0];
  if (!dir)
    throw new Error('usage: tracking-replay DIR [--scenes a,b] [--no-pixels] [--events k=v,…] [--detail]');
  const only = values.scenes ? new Set(values.scenes.split(',')) : undefined;
  const events = Object.fromEntries(
    (values.events ?? '')
      .split(',')
      .filter(Boolean)
      .map((kv) => kv.split('=') as [string, string]),
  );
  const size = Number(values.size ?? 640);
  const pixels = !values['no-pixels'];
  const shared = resolve(process.cwd(), '..', 'shared');
  const tmp = await mkdtemp(join(tmpdir(), 'argus-replay-'));
  const result: { scenes: SceneRow[]; street: StreetReplay | null } = { scenes: [], street: null };
  try {
    for (const spec of TRACKING_SCENES) {
      const file = join(dir, `${spec.name}.json`);
      if ((only && !only.has(spec.name)) || !existsSync(file)) continue;
      const rec = JSON.parse(await readFile(file, 'utf8')) as Recording;
      let pics: Pictures | undefined;
      if (pixels) {
        const clip = join(tmp, `${spec.name}.mp4`);
        await writeSceneClip(spec.scene, join(shared, 'media', 'bus.jpg'), clip);
        pics = await decode(clip, {
          fps: spec.fps,
          srcW: spec.scene.width,
          srcH: spec.scene.height,
          size,
          loops: 1,
          cache: tmp,
        });
      }
      const { camera, events: ev } = sceneCamera(spec, `file://${spec.name}.mp4`, events);
      const again = withPictures(pics, (picture) => replay(rec, cameraYaml(camera, ev), picture));
      const row = scoreScene(spec, again);
      const s = row.score;
      console.log(
        `${spec.name}: ids/object ${s.ids_per_object.toFixed(2)}, switches ${s.switches}, IDF1 ${s.idf1.toFixed(2)}, early ends ${s.early_ends}, new ${s.new_events}/${s.objects}, crossings ${s.crossings.truth}/${s.crossings.published}/${s.crossings.wrong}${row.speed ? `, speed max ${row.speed.max}` : ''}`,
      );
      result.scenes.push(row);
    }
    const file = join(dir, 'vtest.json');
    if ((!only || only.has('vtest')) && existsSync(file)) {
      const rec = JSON.parse(await readFile(file, 'utf8')) as Recording;
      const loops = Number(values.loops ?? 4);
      const clip = join(shared, 'media', 'vtest.mp4');
      const cache = join(tmpdir(), 'argus-replay-pictures');
      const pics =
        pixels && existsSync(clip)
          ? await decode(clip, { fps: 5, srcW: 480, srcH: 360, size, loops, cache })
          : undefined;
      if (pixels && !pics) console.log(`vtest: ${clip} not found, replayed without pixels`);
      const { camera, events: ev } = vtestCamera(clip, loops, events);
      const again = withPictures(pics, (picture) => replay(rec, cameraYaml(camera, ev), picture));
      if (values.keep) await writeFile(join(values.keep, 'vtest.json'), JSON.stringify(again));
      const st = scoreStreet(again, loops);
      const lt = st.line_truth;
      console.log(
        `vtest: person new ${st.person_new} (${st.new_per_person.toFixed(2)} per person), parked new ${st.parked_new.join(', ')}, line ids ${st.line_ids}, more than once ${st.line_multi} (${(100 * st.line_multi_share).toFixed(0)} %), false multi ${lt.false_multi}/${lt.ids} (${(100 * lt.false_share).toFixed(0)} %; across the loop cut ${lt.false_across_cut})`,
      );
      if (values.detail) {
        for (const d of lt.detail) console.log(`  ${d}`);
      }
      result.street = st;
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  if (values.out) await writeFile(values.out, JSON.stringify(result, null, 2));
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
