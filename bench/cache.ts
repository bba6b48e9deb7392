/**
 * What the frame cache saves and what it misses, on real clips: every frame is analysed by the
 * model (the truth), then the cache is replayed over the same frames in time order. A frame the
 * cache answers is "missed" when its reused result differs from the truth (a label's count
 * changed). Reports the share of frames analysed with the cache on, and the share missed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { blockHash } from '../src/cache/block-hash.js';
import { FrameCache } from '../src/cache/frame-cache.js';
import { letterbox } from '../src/detector/letterbox.js';
import { planModel } from '../src/detector/model.js';
import { rgbToNchw } from '../src/detector/preprocess.js';
import { toDetections, type Detection } from '../src/detector/results.js';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';
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
  const plan = await planModel({ path: model });
  const size = plan.inputSize;
  const detector = await startDetector(plan);
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
      const g = letterbox(w, h, size);
      const truth: Detection[][] = [];
      let input: Float32Array = new Float32Array(detector.frameFloats);
      for (const f of frames) {
        rgbToNchw(f, size, size, input, 0);
        const r = await detector.detect(input, 1);
        input = r.input;
        truth.push(toDetections(r.detections[0]!, g, detector.labels));
      }
      const cache = new FrameCache({
        enabled: true,
        maxDistance: opts.maxDistance,
        cellThreshold: opts.cellThreshold,
        maxAgeMs: opts.maxAgeS * 1000,
      });
      let analysed = 0;
      let missed = 0;
      frames.forEach((f, i) => {
        const ts = (i * 1000) / opts.fps;
        const hash = blockHash(f, size);
        const d = cache.lookup('cam', hash, ts);
        if (d.hit) {
          if (counts(d.detections) !== counts(truth[i]!)) missed++;
        } else {
          analysed++;
          cache.store('cam', hash, ts, truth[i]!);
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
