/**
 * What the frame cache saves and what it misses, on real clips: every frame is analysed by the
 * model (the truth), then the cache is replayed over the same frames in time order, with and
 * without its rule that a camera whose objects move is analysed every frame.
 *
 * A frame the cache answers "missed a change" when its reused result disagrees with the steady
 * truth: the per-label counts of confident objects (score ≥ 0.5) after a 5-frame median (so a
 * detection flickering across 0.5 for a frame or two is not a change: on the parking-lot clip
 * the model sees an "airplane" over the empty lot at 0.42–0.60 every few frames), or an object
 * the model sees in two frames running is more than half its box diagonal away from every box
 * the reused result has for its label (a moving object frozen in place). The raw share of
 * frames whose counts differ from that frame's own answer is reported too. Frames are hashed by
 * the thumbnails ffmpeg makes of them, as Argus hashes its cameras' frames.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FrameCache } from '../src/cache/index.js';
import type { Detection, Frame } from '../src/core/frame.js';
import { centre, diagonal, distance, letterbox } from '../src/core/geometry.js';
import { defaultFfmpegPath } from '../src/ingest/index.js';
import { startDetector, decodeFrames, stillClip } from './common.js';

export interface CacheBenchRow {
  clip: string;
  frames: number;
  /** The cache's rule for moving objects: on (the default), or off (the hash alone decides). */
  moving_rule: boolean;
  analysed_share: number;
  missed_share: number;
  /** Frames answered while an object moved, with that object frozen where it was (or gone). */
  frozen_share: number;
  /** Frames answered whose counts differ from the model's answer on that very frame (flicker included). */
  count_mismatch_share: number;
  /** Share of frames whose (confident) label counts differ from the previous frame's: how often the truth itself changes. */
  truth_change_share: number;
}

const CONFIDENT = 0.5;
const confident = (dets: readonly Detection[]): Detection[] => dets.filter((d) => d.score >= CONFIDENT);

const countsOf = (dets: readonly Detection[]): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const d of confident(dets)) c[d.label] = (c[d.label] ?? 0) + 1;
  return c;
};
const key = (c: Record<string, number>): string =>
  JSON.stringify(
    Object.entries(c)
      .filter(([, n]) => n > 0)
      .sort(),
  );
const counts = (dets: readonly Detection[]): string => key(countsOf(dets));

/** Per label, the median count over frames i-2..i+2: what the model steadily sees. */
function steadyCounts(truth: readonly Detection[][], i: number): string {
  const window = truth.slice(Math.max(0, i - 2), i + 3).map(countsOf);
  const labels = new Set(window.flatMap((c) => Object.keys(c)));
  const out: Record<string, number> = {};
  for (const label of labels) {
    const ns = window.map((c) => c[label] ?? 0).sort((a, b) => a - b);
    out[label] = ns[Math.floor(ns.length / 2)]!;
  }
  return key(out);
}

/** The distance from `d` to the nearest box of its label in `ds`, in `d`'s diagonals. */
const nearest = (d: Detection, ds: readonly Detection[]): number => {
  const c = centre(d.box);
  const same = ds.filter((e) => e.label === d.label).map((e) => distance(centre(e.box), c));
  return Math.min(Infinity, ...same) / diagonal(d.box);
};

/**
 * A moving object frozen: one the model sees moving at frame i (its nearest box of the frame
 * before is within half a diagonal yet more than 5 % of one away) that `reused` puts more than a
 * quarter of its diagonal from where it is, or nowhere.
 */
function frozen(truth: readonly Detection[][], i: number, reused: readonly Detection[]): boolean {
  const before = confident(truth[i - 1] ?? []);
  return confident(truth[i]!).some((d) => {
    const shift = nearest(d, before);
    return shift > 0.05 && shift <= 0.5 && nearest(d, reused) > 0.25;
  });
}

export async function benchCache(
  shared: string,
  model: string,
  opts: { maxDistance: number; cellThreshold: number; maxAgeS: number; fps: number; seconds: number },
): Promise<CacheBenchRow[]> {
  const ffmpeg = await defaultFfmpegPath();
  const detector = await startDetector(model);
  const size = detector.inputSize;
  const clips: [string, string[], [number, number]][] = [];
  for (const [name, file, w, h] of [
    ['pedestrians', 'vtest.mp4', 480, 360],
    ['parking lot', 'person-bicycle-car-detection.mp4', 768, 432],
  ] as const) {
    const p = join(shared, 'media', file);
    if (existsSync(p)) clips.push([name, ['-i', p, '-t', String(opts.seconds)], [w, h]]);
  }
  const bus = join(shared, 'media', 'bus.jpg');
  if (existsSync(bus)) {
    const still = stillClip(
      ffmpeg,
      ['-loop', '1', '-framerate', String(opts.fps), '-i', bus],
      opts.seconds,
      28,
      `/tmp/argus-bench-cache-still-${process.pid}.mkv`,
    );
    clips.push(['still camera (bus.jpg, H.264)', ['-i', still], [810, 1080]]);
  }
  const rows: CacheBenchRow[] = [];
  try {
    for (const [clip, args, [w, h]] of clips) {
      const frames = decodeFrames(ffmpeg, args, opts.fps, size);
      const n = frames.length;
      const geometry = letterbox(w, h, size);
      const cam: Frame[] = frames.map(({ data, thumb }, i) => ({
        camera: 'cam',
        seq: i + 1,
        ts: (i * 1000) / opts.fps,
        data,
        thumb,
        geometry,
      }));
      const truth: Detection[][] = [];
      for (const f of cam) truth.push((await detector.detect([f])).detections[0]!);
      let changes = 0;
      for (let i = 1; i < n; i++) if (counts(truth[i]!) !== counts(truth[i - 1]!)) changes++;
      for (const movingRule of [false, true]) {
        const cache = new FrameCache({
          enabled: true,
          max_distance: opts.maxDistance,
          cell_threshold: opts.cellThreshold,
          max_age_s: opts.maxAgeS,
          analyse_moving: movingRule,
        });
        let analysed = 0;
        let missed = 0;
        let mismatched = 0;
        let froze = 0;
        cam.forEach((f, i) => {
          const hit = cache.lookup(f);
          if (hit) {
            const reused = hit.detections;
            if (counts(reused) !== steadyCounts(truth, i)) missed++;
            if (frozen(truth, i, reused)) froze++;
            if (counts(reused) !== counts(truth[i]!)) mismatched++;
            // An old result is refreshed from this frame's analysis (at once here: no queue).
            if (hit.refresh) {
              analysed++;
              cache.store(f, truth[i]!);
            }
          } else {
            analysed++;
            cache.store(f, truth[i]!);
          }
        });
        rows.push({
          clip,
          frames: n,
          moving_rule: movingRule,
          analysed_share: analysed / n,
          missed_share: missed / n,
          frozen_share: froze / n,
          count_mismatch_share: mismatched / n,
          truth_change_share: changes / Math.max(1, n - 1),
        });
      }
    }
  } finally {
    await detector.stop();
  }
  return rows;
}
