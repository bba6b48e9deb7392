import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { httpBase, startDaemon, writeDaemonConfig } from '../helpers/daemon.js';
import { tempDir, waitFor } from '../helpers/env.js';

/**
 * Issue 27, item 1: a still scene with a moving corner, through the real daemon. Two cameras
 * watch the same synthetic clip — a grey 640×480 scene with one white square (an object the
 * fixture model sees), and in the top-right corner a 64×64 patch whose grey changes every frame
 * (a swaying tree) — one with `cache_mask` over the patch, one without. The patch changes some
 * fifteen cells of the hash, well over `max_distance`: the unmasked camera has every frame
 * analysed, the masked one is answered from the cache but for a fresh look every `max_age_s`.
 * Then a reload gives the mask to the other camera, and the two swap.
 *
 * ffmpeg sends every frame's picture on both (the patch changes more than `picture_threshold`
 * every frame); what the mask changes is the cache's decision.
 */

const FPS = 5;
/** The patch's grey: 80 ± 40, a new level every frame (sin of the frame number, times two). */
const SCENE =
  `lavfi:color=c=0x303030:s=640x480:r=${FPS}[bg];color=c=white:s=64x64:r=${FPS}[box];` +
  `color=c=black:s=64x64:r=${FPS},format=gray,geq=lum='80+40*sin(2*N)'[patch];` +
  '[bg][box]overlay=x=192:y=112[s];[s][patch]overlay=x=576:y=0';
/** The patch itself, in source pixels: drawn tight, its edge cells covered only in part. */
const MASK = [
  [
    [576, 0],
    [640, 0],
    [640, 64],
    [576, 64],
  ],
];
/** Frames each camera is watched for, per phase: a dozen seconds. */
const WATCH = 60;

type Counts = Record<string, { received: number; analysed: number; cached: number }>;

/** Per camera, the frames received, analysed and answered from the cache so far (GET /metrics). */
async function counts(base: string): Promise<Counts> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out: Counts = {};
  for (const [, kind, camera, value] of text.matchAll(
    /^argus_camera_frames_(received|analysed|cached)_total\{camera="([^"]+)"\} (\S+)$/gm,
  ))
    (out[camera!] ??= { received: 0, analysed: 0, cached: 0 })[kind as 'received'] = Number(value);
  return out;
}

/** Polls the metrics until each camera has received `n` more frames than in `from`. */
async function after(base: string, from: Counts, n: number): Promise<Counts> {
  let now = from;
  const end = Date.now() + 60_000;
  const short = (): string[] =>
    Object.keys(from).filter((c) => (now[c]?.received ?? 0) - from[c]!.received < n);
  while (short().length) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${n} frames of ${short().join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
    now = await counts(base);
  }
  return now;
}

/** Of the frames answered between `a` and `b`, the share the model analysed. */
const analysedShare = (a: Counts, b: Counts, camera: string): number => {
  const analysed = b[camera]!.analysed - a[camera]!.analysed;
  const cached = b[camera]!.cached - a[camera]!.cached;
  return analysed / (analysed + cached);
};

describe('cache_mask: the frame cache ignores a moving corner', () => {
  it(
    'a camera masking the moving patch is answered from the cache, one without is analysed; a reload swaps them',
    { timeout: 180_000 },
    async (t) => {
      const dir = await tempDir(t);
      const cameras = (masked: string) =>
        Object.fromEntries(
          ['left', 'right'].map((n) => [
            n,
            { url: SCENE, fps: FPS, ...(n === masked ? { cache_mask: MASK } : {}) },
          ]),
        );
      const config = await writeDaemonConfig(dir, { cameras: cameras('left') });
      const daemon = startDaemon(t, config);
      const base = await httpBase(daemon.output);
      // Past the first frames (the cache is empty, the scheduler warming up).
      const none = { received: 0, analysed: 0, cached: 0 };
      const warm = await after(base, { left: none, right: none }, 10);
      const first = await after(base, warm, WATCH);
      const masked = analysedShare(warm, first, 'left');
      const plain = analysedShare(warm, first, 'right');
      t.diagnostic(
        `analysed: ${(100 * masked).toFixed(0)} % with the mask, ${(100 * plain).toFixed(0)} % without`,
      );
      assert.ok(plain > 0.7, `without the mask, most frames are analysed: ${(100 * plain).toFixed(0)} %`);
      assert.ok(
        masked < 0.3,
        `with the mask, most frames come from the cache: ${(100 * masked).toFixed(0)} %`,
      );

      await writeDaemonConfig(dir, { cameras: cameras('right') });
      daemon.child.kill('SIGHUP');
      await waitFor('the reload', () => daemon.output().includes('"msg":"configuration reloaded"'), 60_000);
      assert.match(daemon.output(), /"retuned":\["left","right"\]/, 'both kept streaming');
      const reloaded = await counts(base);
      const second = await after(base, reloaded, WATCH);
      const left = analysedShare(reloaded, second, 'left');
      const right = analysedShare(reloaded, second, 'right');
      t.diagnostic(
        `after the reload: ${(100 * right).toFixed(0)} % with the mask, ${(100 * left).toFixed(0)} % without`,
      );
      assert.ok(left > 0.7, `left lost its mask: ${(100 * left).toFixed(0)} % analysed`);
      assert.ok(right < 0.3, `right has it now: ${(100 * right).toFixed(0)} % analysed`);
    },
  );
});
