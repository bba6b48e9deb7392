/**
 * A clip out of a camera's ring: which segments, from which key frame, to when (`planClip`,
 * pure), and the MP4 made from them by ffmpeg without re-encoding (`remuxArgs`, pure; `remuxClip`).
 */
import { spawn } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import type { Keyframe, RingFault, Segment } from './ring-index.js';
import { StderrRing } from '../stderr-ring.js';

/** Why a clip is shorter than asked (or missing). */
export type ClipShortfall = RingFault | 'camera_reconnected' | 'not_recorded_yet' | 'stream_ended';

export interface ClipPart {
  file: string;
  /** Where to start reading (a key frame's offset in the file); the file's header (PAT, PMT) is always sent first. */
  offset: number;
  headerBytes: number;
}

export interface ClipPlan {
  parts: ClipPart[];
  /** When its first key frame arrived, and when it ends (ms since the epoch). */
  start: number;
  end: number;
  codec: string;
  /** Seconds missing at the start and at the end, and why (none when whole). */
  missing: { start_s: number; end_s: number; reasons: ClipShortfall[] };
}

/** A shortfall under this much is the ring's timing, not a gap. */
const SLACK_MS = 500;
/**
 * A clip's times are kept to the millisecond (the payload's ISO times): a key frame stamped less
 * than this after `from` is the one `from` names.
 */
const STAMP_MS = 1;

/** Runs of segments without a gap: one ffmpeg run, one stretch of its clock, no segment lost between. */
function contiguous(segments: readonly Segment[]): Segment[][] {
  const groups: Segment[][] = [];
  for (const s of segments) {
    const g = groups.at(-1);
    const last = g?.at(-1);
    if (g && last && last.run === s.run && last.epoch === s.epoch && last.seq + 1 === s.seq) g.push(s);
    else groups.push([s]);
  }
  return groups;
}

/**
 * The segments that make the clip of `from`–`to` (ms since the epoch): from the last key frame at
 * or before `from` to `to`, within one run of segments without a gap (a clip never spans a
 * reconnection: the stream's clock starts again there). Where the ring has less, the clip is
 * shorter and says why: `fault` is the ring's last loss (a full disk…), for gaps inside a run.
 * Undefined when the ring holds nothing of that time.
 *
 * Planning a plan's own `start`–`end` again (as its payload names them, to the millisecond) gives
 * the same plan, whatever the ring wrote since: a segment that begins within `SLACK_MS` of `to`
 * and goes on past it adds less than a shortfall is worth and is left out (it would join the plan only once written,
 * and a clip's URL would serve another file); `end` is whole milliseconds, and a key frame less
 * than `STAMP_MS` after `from` is the one `from` names.
 */
export function planClip(
  segments: readonly Segment[],
  from: number,
  to: number,
  fault?: RingFault,
): ClipPlan | undefined {
  const groups = contiguous(segments.filter((s) => s.keyframes.length > 0));
  let best: Segment[] | undefined;
  let bestOverlap = 0;
  for (const g of groups) {
    const overlap = Math.min(to, g.at(-1)!.end) - Math.max(from, g[0]!.keyframes[0]!.ts);
    if (overlap > bestOverlap) [best, bestOverlap] = [g, overlap];
  }
  if (!best) return undefined;
  let i = 0;
  const atOrBefore = (k: Keyframe): boolean => k.ts < from + STAMP_MS;
  while (i + 1 < best.length && atOrBefore(best[i + 1]!.keyframes[0]!)) i++;
  let j = i;
  // A segment is the clip's when it begins before the slack, or begins before `to` and ends by it
  // (the last segment of a plan whose end, to the millisecond, is this `to`: planned again, it
  // stays in). One that begins at or after `to` never is, whatever end its description gives.
  const within = (s: Segment): boolean => {
    const begins = s.keyframes[0]!.ts;
    return begins < to - SLACK_MS || (begins < to && s.end < to + 1);
  };
  while (j + 1 < best.length && within(best[j + 1]!)) j++;
  const first = best[i]!;
  const key = first.keyframes.findLast(atOrBefore) ?? first.keyframes[0]!;
  const start = key.ts;
  const end = Math.floor(Math.min(to, best[j]!.end));
  const why = (other: Segment | undefined, own: Segment): ClipShortfall =>
    other && (other.run !== own.run || other.epoch !== own.epoch)
      ? 'camera_reconnected'
      : (fault ?? 'not_recorded_yet');
  const reasons = new Set<ClipShortfall>();
  const missingStart = Math.max(0, start - from);
  const missingEnd = Math.max(0, to - end);
  if (missingStart > SLACK_MS) {
    const k = groups.indexOf(best);
    reasons.add(k > 0 ? why(groups[k - 1]!.at(-1), first) : 'not_recorded_yet');
  }
  if (missingEnd > SLACK_MS) {
    const k = groups.indexOf(best);
    reasons.add(k < groups.length - 1 ? why(groups[k + 1]![0], best[j]!) : 'stream_ended');
  }
  return {
    parts: best.slice(i, j + 1).map((s, n) => ({
      file: s.file,
      offset: n === 0 ? key.offset : 0,
      headerBytes: s.headerBytes,
    })),
    start,
    end,
    codec: first.codec,
    missing: {
      start_s: round1(missingStart > SLACK_MS ? missingStart / 1000 : 0),
      end_s: round1(missingEnd > SLACK_MS ? missingEnd / 1000 : 0),
      reasons: [...reasons],
    },
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** Codecs a browser plays in MP4: H.264 everywhere; H.265 in some (Safari, Chrome with hardware support). */
export const BROWSER_CODECS: readonly string[] = ['h264'];
/** Codecs that go into an MP4 without re-encoding. */
export const MP4_CODECS: readonly string[] = ['h264', 'hevc', 'mpeg4', 'mpeg2video', 'mpeg1video'];

/**
 * ffmpeg's input for the plan's parts, opened by Argus and handed to ffmpeg as its file
 * descriptors 3, 4, …: one transport stream, the first part from its key frame after its header
 * (ffmpeg's `concat` and `subfile` protocols; `/dev/fd/N` opens a file ffmpeg was given even if the
 * ring has removed it meanwhile). ffmpeg reads the files itself: no byte of them passes through
 * Node. `sizes`: each part's size when opened. A subfile's end is given in full: with `end,0`
 * ("to the end") ffmpeg's concat misjudges its size and stops a part or two early.
 */
export function concatInput(parts: readonly ClipPart[], sizes: readonly number[]): string {
  const inputs = parts.flatMap((p, i) => {
    const fd = `/dev/fd/${3 + i}`;
    return p.offset > p.headerBytes
      ? [
          `subfile,,start,0,end,${p.headerBytes},,:${fd}`,
          `subfile,,start,${p.offset},end,${sizes[i]},,:${fd}`,
        ]
      : [fd];
  });
  return `concat:${inputs.join('|')}`;
}

/**
 * ffmpeg's arguments that read the plan's parts (of `sizes` bytes when opened) as one transport
 * stream (`concatInput`), quietly, its first video stream mapped: what a clip and a frame share.
 */
export function tsInputArgs(plan: ClipPlan, sizes: readonly number[]): string[] {
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
  ];
}

/**
 * ffmpeg's arguments for the plan's clip, `durationS` long at most, to `out`: the parts (of
 * `sizes` bytes when opened) read as one transport stream (`concatInput`), the video copied, not
 * re-encoded, into an MP4 that a browser starts playing before it has the whole file (faststart).
 */
export function remuxArgs(
  plan: ClipPlan,
  sizes: readonly number[],
  out: string,
  durationS: number,
): string[] {
  return [
    ...tsInputArgs(plan, sizes),
    '-c',
    'copy',
    '-t',
    durationS.toFixed(3),
    '-movflags',
    '+faststart',
    // Safari plays H.265 in MP4 only under this tag.
    ...(plan.codec === 'hevc' ? ['-tag:v', 'hvc1'] : []),
    '-f',
    'mp4',
    '-y',
    out,
  ];
}

/** The longest a remux may take before it is killed. */
const REMUX_TIMEOUT_MS = 120_000;

/**
 * Writes the plan's video to `out` as an MP4 (`remuxArgs`), `durationS` long at most. Rejects
 * with ffmpeg's last error line when it fails; `out` may then hold a part of a file, which the
 * caller removes.
 */
export async function remuxClip(
  ffmpegPath: string,
  plan: ClipPlan,
  out: string,
  durationS: number,
): Promise<void> {
  // Every part opened first: the ring may remove a file meanwhile (its bytes bound), and an open
  // file is still read whole.
  const files: FileHandle[] = [];
  try {
    for (const part of plan.parts) files.push(await open(part.file, 'r'));
    const sizes = await Promise.all(files.map(async (f) => (await f.stat()).size));
    await runRemux(ffmpegPath, remuxArgs(plan, sizes, out, durationS), files);
  } finally {
    for (const file of files) await file.close().catch(() => undefined);
  }
}

/**
 * Runs ffmpeg on the opened parts. Spawned directly, not through fluent-ffmpeg, which cannot hand
 * a child more file descriptors than its three standard ones.
 */
function runRemux(ffmpegPath: string, args: string[], files: readonly FileHandle[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'ignore', 'pipe', ...files.map((f) => f.fd)] });
    const timer = setTimeout(() => child.kill('SIGKILL'), REMUX_TIMEOUT_MS);
    // First: a spawn that fails (no ffmpeg, too many open files) says so here, with no stderr.
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const stderr = new StderrRing(5);
    child.stderr?.on('data', (d: Buffer) => stderr.push(d.toString()));
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve();
      const last = stderr.get().at(-1);
      reject(new Error(last ?? `ffmpeg ${signal ? `killed by ${signal}` : `exited with code ${code}`}`));
    });
  });
}
