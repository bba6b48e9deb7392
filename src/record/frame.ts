/**
 * One frame out of a camera's recording (issue 47): an event's snapshot is a frame of the
 * recording, decoded when asked for. Which segments and from which key frame (`planClip` of the
 * one instant), the decode's arguments (`frameArgs`, pure), and the decode (`decodeFrame`).
 */
import { spawn } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import { concatInput, planClip, type ClipPlan } from './clip.js';
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
 * ffmpeg's arguments for the frame `seekS` seconds after the plan's key frame (the parts of
 * `sizes` bytes when opened), scaled to `w`×`h` as the model's picture is (bilinear), as raw RGB
 * on its standard output. The seek is after the input: every frame from the key frame is
 * decoded, the first at or after the time kept.
 */
export function frameArgs(
  plan: ClipPlan,
  sizes: readonly number[],
  seekS: number,
  w: number,
  h: number,
): string[] {
  return [
    '-hide_banner',
    '-nostdin',
    '-loglevel',
    'error',
    '-f',
    'mpegts',
    '-i',
    concatInput(plan.parts, sizes),
    '-map',
    '0:v:0',
    '-ss',
    Math.max(0, seekS).toFixed(3),
    '-frames:v',
    '1',
    '-vf',
    `scale=${w}:${h}:flags=bilinear,format=rgb24`,
    '-f',
    'rawvideo',
    'pipe:1',
  ];
}

/**
 * The frame of `segments` at `ts`, `w`×`h` RGB (`w * h * 3` bytes). Rejects, saying why, when the
 * segments hold no such frame or ffmpeg cannot decode it. The files are opened first: a segment
 * removed meanwhile is still read whole.
 */
export async function decodeFrame(
  ffmpegPath: string,
  segments: readonly Segment[],
  ts: number,
  w: number,
  h: number,
): Promise<Buffer> {
  const plan = planFrame(segments, ts);
  if (!plan) throw new Error(`the recording holds no frame of ${new Date(ts).toISOString()}`);
  const files: FileHandle[] = [];
  try {
    for (const part of plan.parts) files.push(await open(part.file, 'r'));
    const sizes = await Promise.all(files.map(async (f) => (await f.stat()).size));
    const seekS = (Math.min(ts, plan.end) - plan.start) / 1000;
    const rgb = await runDecode(ffmpegPath, frameArgs(plan, sizes, seekS, w, h), files);
    if (rgb.length < w * h * 3)
      throw new Error(
        `ffmpeg decoded no frame of ${new Date(ts).toISOString()} (the recording ends before it)`,
      );
    return rgb.subarray(0, w * h * 3);
  } finally {
    for (const file of files) await file.close().catch(() => undefined);
  }
}

function runDecode(ffmpegPath: string, args: string[], files: readonly FileHandle[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe', ...files.map((f) => f.fd)] });
    const timer = setTimeout(() => child.kill('SIGKILL'), DECODE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const out: Buffer[] = [];
    child.stdout?.on('data', (d: Buffer) => out.push(d));
    const stderr = new StderrRing(5);
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(Buffer.concat(out));
      const last = stderr.get().at(-1);
      reject(new Error(last ?? `ffmpeg ${signal ? `killed by ${signal}` : `exited with code ${code}`}`));
    });
  });
}
