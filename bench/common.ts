/** Pieces the benchmarks share: a CPU detector, real clips decoded to model-ready frames. */
import { execFileSync } from 'node:child_process';
import { pino } from 'pino';
import { Detector } from '../src/detector/detector.js';
import type { ModelPlan } from '../src/detector/model.js';
import type { ProviderName } from '../src/config/schema.js';
import { letterboxFilter } from '../src/ingest/ffmpeg-args.js';

/** A started one-worker detector (CPU unless told) with ONNX Runtime's default threads. */
export async function startDetector(plan: ModelPlan, provider: ProviderName = 'cpu'): Promise<Detector> {
  const detector = new Detector(
    plan,
    {
      providers: [provider],
      deviceId: 0,
      workers: 1,
      intraOpThreads: 0,
      interOpThreads: 0,
      conf: 0.25,
      iou: 0.45,
      maxDet: 300,
    },
    pino({ level: 'warn' }),
  );
  await detector.start();
  return detector;
}

/** Decodes ffmpeg input `args` into letterboxed RGB frames of `size`, at `fps`, as Argus' ingest does. */
export function decodeFrames(ffmpeg: string, args: string[], fps: number, size: number): Buffer[] {
  const raw = execFileSync(
    ffmpeg,
    [
      '-loglevel',
      'error',
      ...args,
      '-vf',
      letterboxFilter(fps, size),
      '-pix_fmt',
      'rgb24',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    {
      maxBuffer: 1 << 30,
    },
  );
  const bytes = size * size * 3;
  return Array.from({ length: raw.length / bytes }, (_, i) => raw.subarray(i * bytes, (i + 1) * bytes));
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
