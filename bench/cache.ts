/**
 * What the frame cache saves and what it misses, on real clips: every frame is analysed by the
 * model (the truth), then the cache is replayed over the same frames in time order. A frame the
 * cache answers is "missed" when its reused result differs from the truth (a label's count
 * changed). Reports the share of frames analysed with the cache on, and the share missed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { FrameCache } from '../src/cache/index.js';
import type { Detection, Frame } from '../src/core/frame.js';
import { letterbox } from '../src/core/geometry.js';
import { defaultFfmpegPath } from '../src/ingest/index.js';
import { startDetector, decodeFrames, stillClip } from './common.js';

export interface CacheBenchRow {
  clip: string;
  frames: number;
  analysed_share: number;
  missed_share: number;
  /** Share of frames whose (confident) label counts differ from the previous frame's: how often the truth itself changes. */
  truth_change_share: number;
}

const counts = (dets: Detection[]): string => {
  const c: Record<string, number> = {};
  // Confident objects only: the model itself flickers on objects near the threshold.
  for (const d of dets) if (d.score >= 0.5) c[d.label] = (c[d.label] ?? 0) + 1;
  return JSON.stringify(Object.entries(c).sort());
};

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
      const cam: Frame[] = frames.map((data, i) => ({
        camera: 'cam',
        seq: i + 1,
        ts: (i * 1000) / opts.fps,
        data,
        geometry,
      }));
      const truth: Detection[][] = [];
      for (const f of cam) truth.push((await detector.detect([f])).detections[0]!);
      const cache = new FrameCache({
        enabled: true,
        max_distance: opts.maxDistance,
        cell_threshold: opts.cellThreshold,
        max_age_s: opts.maxAgeS,
      });
      let analysed = 0;
      let missed = 0;
      cam.forEach((f, i) => {
        const reused = cache.lookup(f);
        if (reused) {
          if (counts(reused) !== counts(truth[i]!)) missed++;
        } else {
          analysed++;
          cache.store(f, truth[i]!);
        }
      });
      let changes = 0;
      for (let i = 1; i < n; i++) if (counts(truth[i]!) !== counts(truth[i - 1]!)) changes++;
      rows.push({
        clip,
        frames: n,
        analysed_share: analysed / n,
        missed_share: missed / n,
        truth_change_share: changes / Math.max(1, n - 1),
      });
    }
  } finally {
    await detector.stop();
  }
  return rows;
}
