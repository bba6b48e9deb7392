/**
 * One frame out of a camera's recording (issue 47): an event's snapshot is a frame of the
 * recording, decoded when asked for. Which segments and from which key frame (`planClip` of the
 * one instant), the decode's arguments (`frameArgs`, pure), and the decode (`decodeFrame`).
 */
import { spawn } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import { planClip, tsInputArgs, type ClipPlan } from './clip.js';
import type { Segment } from './ring-index.js';
import { StderrRing } from '../stderr-ring.js';

/** A frame's time may lie this far (ms) past the last frame a segment describes and still be its. */
export const FRAME_SLACK_MS = 1000;

/** The longest a frame's decode may take before it is killed (ms). */
const DECODE_TIMEOUT_MS = 30_000;

/**
 * The stretch of `segments` to decode for the frame at `ts` (ms since the epoch): from the key
 * frame at or before it, to it. Undefined when the segments hold no frame of that time (it is not
 * within a segment, or more than `FRAME_SLACK_MS` after the last frame of one).
 */
export function planFrame(segments: readonly Segment[], ts: number): ClipPlan | undefined {
  const plan = planClip(segments, ts, ts + 1) ?? planClip(segments, ts - FRAME_SLACK_MS, ts + 1);
  return plan && plan.start <= ts + 1 ? plan : undefined;
}

/**
 * How far around a frame's time the frame is looked for when it can be told by its picture
 * (`decodeFrame`'s `score`), in ms: a camera's frame times and its recording's are mapped to the
 * wall clock by two clocks (the decoded frames', which come out of ffmpeg after its decode, and
 * the stream copied to the ring), measured 200 ms apart on vtest.mp4 at 5 frames/s, the frame
 * always the earlier.
 */
export const FRAME_BEFORE_MS = 1000;
export const FRAME_AFTER_MS = 200;

/**
 * ffmpeg's arguments for the frames from `seekS` seconds after the plan's key frame, `durS` long
 * (0: the one frame there), scaled to `w`×`h` as the model's picture is (bilinear), as raw RGB on
 * its standard output, the parts of `sizes` bytes when opened. The seek is after the input: every
 * frame from the key frame is decoded, those from the time kept.
 */
export function frameArgs(
  plan: ClipPlan,
  sizes: readonly number[],
  seekS: number,
  w: number,
  h: number,
  durS = 0,
): string[] {
  return [
    ...tsInputArgs(plan, sizes),
    '-ss',
    Math.max(0, seekS).toFixed(3),
    ...(durS > 0 ? ['-t', durS.toFixed(3)] : ['-frames:v', '1']),
    '-vf',
    `scale=${w}:${h}:flags=bilinear,format=rgb24`,
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

/**
 * The largest side a frame is decoded at (a decode holds `w * h * 3` bytes: 48 MiB at most): the
 * model's picture, whose configured input is at most 4096 (config/models.ts); a model whose fixed
 * input is larger has its snapshots written as files, not drawn from the recording.
 */
export const MAX_FRAME_SIDE = 4096;

/** Whether a frame `w`×`h` may be decoded: whole pixels, each side within MAX_FRAME_SIDE. */
export const frameFits = (w: number, h: number): boolean =>
  [w, h].every((n) => Number.isInteger(n) && n > 0 && n <= MAX_FRAME_SIDE);

/**
 * The frame of `segments` at `ts`, `w`×`h` RGB (`w * h * 3` bytes). With `score`, the frames from
 * FRAME_BEFORE_MS before to FRAME_AFTER_MS after `ts` are decoded and the one `score` rates lowest
 * is kept (one frame held at a time, not all); without, the first at or after `ts`. Rejects,
 * saying why, when the segments hold no such frame or ffmpeg cannot decode it. The files are
 * opened first: a segment removed meanwhile is still read whole.
 */
export async function decodeFrame(
  ffmpegPath: string,
  segments: readonly Segment[],
  ts: number,
  w: number,
  h: number,
  score?: (rgb: Buffer) => number,
): Promise<Buffer> {
  if (!frameFits(w, h))
    throw Object.assign(new Error(`a ${w}×${h} frame is past what is decoded (${MAX_FRAME_SIDE})`), {
      code: 'FRAME_TOO_LARGE',
    });
  const plan = score
    ? (planClip(segments, ts - FRAME_BEFORE_MS, ts + FRAME_AFTER_MS) ?? planFrame(segments, ts))
    : planFrame(segments, ts);
  if (!plan) throw new Error(`the recording holds no frame of ${new Date(ts).toISOString()}`);
  const files: FileHandle[] = [];
  try {
    for (const part of plan.parts) files.push(await open(part.file, 'r'));
    const sizes = await Promise.all(files.map(async (f) => (await f.stat()).size));
    const from = score ? Math.max(plan.start, ts - FRAME_BEFORE_MS) : Math.min(ts, plan.end);
    const durS = score
      ? (Math.max(from + 1, Math.min(plan.end + 100, ts + FRAME_AFTER_MS)) - from) / 1000
      : 0;
    const args = frameArgs(plan, sizes, (from - plan.start) / 1000, w, h, durS);
    const rgb = await runDecode(ffmpegPath, args, files, w * h * 3, score ?? (() => 0));
    if (!rgb)
      throw new Error(
        `ffmpeg decoded no frame of ${new Date(ts).toISOString()} (the recording ends before it)`,
      );
    return rgb;
  } finally {
    for (const file of files) await file.close().catch(() => undefined);
  }
}

/** Runs ffmpeg; of the frames (`frameBytes` each) it writes, the one `score` rates lowest (the first of equals). */
function runDecode(
  ffmpegPath: string,
  args: string[],
  files: readonly FileHandle[],
  frameBytes: number,
  score: (rgb: Buffer) => number,
): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe', ...files.map((f) => f.fd)] });
    const timer = setTimeout(() => child.kill('SIGKILL'), DECODE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    let frame: Buffer = Buffer.alloc(frameBytes);
    let filled = 0;
    let best: { rgb: Buffer; score: number } | undefined;
    child.stdout?.on('data', (d: Buffer) => {
      for (let at = 0; at < d.length;) {
        const n = Math.min(frameBytes - filled, d.length - at);
        d.copy(frame, filled, at, at + n);
        filled += n;
        at += n;
        if (filled < frameBytes) continue;
        const rated = score(frame);
        if (!best || rated < best.score) {
          const spare = best?.rgb;
          best = { rgb: frame, score: rated };
          frame = spare ?? Buffer.alloc(frameBytes);
        }
        filled = 0;
      }
    });
    const stderr = new StderrRing(5);
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(best?.rgb);
      const last = stderr.get().at(-1);
      reject(new Error(last ?? `ffmpeg ${signal ? `killed by ${signal}` : `exited with code ${code}`}`));
    });
  });
}
