import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { defaultFfmpegPath } from '../../src/ingest/ffmpeg-process.js';

/** The frame rate of the clips squareClip writes. */
export const FPS = 10;
/** Key frames every second: a clip starts within a second before its pre-roll. */
export const GOP_S = 1;

/**
 * Writes a `seconds`-long 640×480 H.264 MP4 (H.265 with `hevc`) at FPS, a key frame each GOP_S,
 * over a dark grey background, with a white 64×64 square (which the fixture model finds) at
 * (192, 112) shown from `from` to `to` s; `bframes` 0 (Baseline, as many cameras) or 3 (High,
 * reordered). `bitrate`: noise keeps the bit rate up, as a real camera's; `large`: 800×600, the
 * square scaled with it.
 */
export async function squareClip(
  path: string,
  o: {
    bframes: number;
    from: number;
    to: number;
    seconds: number;
    bitrate?: string;
    large?: boolean;
    hevc?: boolean;
  },
): Promise<void> {
  const ffmpeg = await defaultFfmpegPath();
  // `large`: 800×600, the square scaled with it (the same cell of the fixture's grid once letterboxed).
  const [size, square, x, y] = o.large ? ['800x600', 80, 240, 140] : ['640x480', 64, 192, 112];
  const graph =
    `color=c=0x303030:s=${size}:r=${FPS}[bg];color=c=white:s=${square}x${square}:r=${FPS}[a];` +
    // Noise keeps the bit rate of a real camera (and makes the clip take a moment to write).
    `[bg]noise=alls=${o.bitrate ? 40 : 0}:allf=t[n];[n][a]overlay=x=${x}:y=${y}:enable='between(t,${o.from},${o.to})'`;
  const profile = o.hevc
    ? ['-x265-params', `log-level=error:bframes=${o.bframes}`, '-tag:v', 'hvc1']
    : o.bframes
      ? ['-profile:v', 'high', '-bf', String(o.bframes)]
      : ['-profile:v', 'baseline', '-bf', '0'];
  const r = spawnSync(ffmpeg, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    graph,
    '-t',
    String(o.seconds),
    '-c:v',
    o.hevc ? 'libx265' : 'libx264',
    ...profile,
    '-g',
    String(GOP_S * FPS),
    '-keyint_min',
    String(GOP_S * FPS),
    '-sc_threshold',
    '0',
    ...(o.bitrate ? ['-b:v', o.bitrate] : []),
    '-pix_fmt',
    'yuv420p',
    path,
  ]);
  assert.equal(r.status, 0, r.stderr.toString());
}
