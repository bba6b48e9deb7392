/**
 * The frame cache's hash, measured against the alternatives the issue named: a 64-bit pHash of a
 * downscaled grey image (bench/phash.ts) and imghash's algorithm (blockhash, 64 bits). For each:
 * the cost of hashing one model-ready frame, and the share of frames a cache would call
 * "unchanged" on real clips (pedestrians, a parking lot, cars) and on a still camera.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { blockDistance, blockHash, GRID } from '../src/cache/block-hash.js';
import { defaultFfmpegPath } from '../src/ingest/ffmpeg-process.js';
import { decodeFrames, stillClip, type DecodedFrame } from './common.js';
import { hamming, phash } from './phash.js';

interface ImghashModule {
  hashRaw(this: void, data: { width: number; height: number; data: Uint8Array }, bits: number): string;
}

export interface HashBenchRow {
  clip: string;
  frames: number;
  /** Share of frames a cache would answer from the reference (the reference moves on each miss). */
  block_unchanged: number;
  /** The same hash of ffmpeg's 32×32 thumbnail of each frame: what Argus hashes. */
  thumbnail_unchanged: number;
  phash_unchanged: number;
  blockhash_unchanged: number;
}

export interface HashBenchResult {
  size: number;
  ms_per_frame: { block: number; thumbnail: number; phash: number; imghash_blockhash: number };
  clips: HashBenchRow[];
}

function hitRatio<H>(hashes: H[], same: (a: H, b: H) => boolean): number {
  let ref = hashes[0]!;
  let hits = 0;
  for (let i = 1; i < hashes.length; i++) {
    if (same(hashes[i]!, ref)) hits++;
    else ref = hashes[i]!;
  }
  return hits / Math.max(1, hashes.length - 1);
}

function hexDistance(a: string, b: string): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) {
    let x = parseInt(a[i]!, 16) ^ parseInt(b[i]!, 16);
    while (x) {
      d += x & 1;
      x >>= 1;
    }
  }
  return d;
}

export async function benchHash(
  shared: string,
  size: number,
  opts: { maxDistance: number; cellThreshold: number; hammingMax: number },
): Promise<HashBenchResult> {
  const ffmpeg = await defaultFfmpegPath();
  const imghash = (await import('imghash')) as unknown as { default?: ImghashModule } & ImghashModule;
  const hashRaw = (imghash.default ?? imghash).hashRaw;
  const decode = (args: string[]): DecodedFrame[] => decodeFrames(ffmpeg, args, 5, size);
  const clips: [string, string[]][] = [];
  for (const [name, file] of [
    ['pedestrians (vtest.mp4)', 'vtest.mp4'],
    ['parking lot', 'person-bicycle-car-detection.mp4'],
    ['cars from above', 'car-detection.mp4'],
  ] as const) {
    const p = join(shared, 'media', file);
    if (existsSync(p)) clips.push([name, ['-i', p, '-t', '20']]);
  }
  // A still camera: a picture through a real H.264 encoder, so compression noise is present.
  const stillSrc = existsSync(join(shared, 'media', 'bus.jpg'))
    ? ['-loop', '1', '-framerate', '5', '-i', join(shared, 'media', 'bus.jpg')]
    : ['-f', 'lavfi', '-i', 'smptebars=size=640x480:rate=5'];
  const still = stillClip(ffmpeg, stillSrc, 10, 30, `/tmp/argus-bench-still-${process.pid}.mkv`);
  clips.push(['still camera (H.264)', ['-i', still]]);

  const timing = {
    block: [] as number[],
    thumbnail: [] as number[],
    phash: [] as number[],
    imghash_blockhash: [] as number[],
  };
  const rows: HashBenchRow[] = [];
  for (const [clip, args] of clips) {
    const decoded = decode(args);
    const frames = decoded.map((f) => f.data);
    let t = performance.now();
    const blocks = frames.map((f) => blockHash(f, size));
    timing.block.push((performance.now() - t) / frames.length);
    t = performance.now();
    const thumbs = decoded.map((f) => blockHash(f.thumb, GRID));
    timing.thumbnail.push((performance.now() - t) / frames.length);
    t = performance.now();
    const ph = frames.map((f) => phash(f, size));
    timing.phash.push((performance.now() - t) / frames.length);
    t = performance.now();
    const bh = frames.map((f) => {
      const rgba = new Uint8Array(size * size * 4);
      for (let i = 0, j = 0; i < size * size; i++, j += 3) {
        rgba[i * 4] = f[j]!;
        rgba[i * 4 + 1] = f[j + 1]!;
        rgba[i * 4 + 2] = f[j + 2]!;
        rgba[i * 4 + 3] = 255;
      }
      return hashRaw({ width: size, height: size, data: rgba }, 8);
    });
    timing.imghash_blockhash.push((performance.now() - t) / frames.length);
    rows.push({
      clip,
      frames: frames.length,
      block_unchanged: hitRatio(
        blocks,
        (a, b) => blockDistance(a, b, opts.cellThreshold) <= opts.maxDistance,
      ),
      thumbnail_unchanged: hitRatio(
        thumbs,
        (a, b) => blockDistance(a, b, opts.cellThreshold) <= opts.maxDistance,
      ),
      phash_unchanged: hitRatio(ph, (a, b) => hamming(a, b) <= opts.hammingMax),
      blockhash_unchanged: hitRatio(bh, (a, b) => hexDistance(a, b) <= opts.hammingMax),
    });
  }
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    size,
    ms_per_frame: {
      block: mean(timing.block),
      thumbnail: mean(timing.thumbnail),
      phash: mean(timing.phash),
      imghash_blockhash: mean(timing.imghash_blockhash),
    },
    clips: rows,
  };
}
