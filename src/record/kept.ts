/**
 * What a camera's recording holds, and why (pure): its segments merged into the stretches the
 * stream ran without a break, each with why it is kept — the events whose footage it is, the
 * recent margin, continuous recording, or a retired camera's footage. GET
 * /api/cameras/<camera>/recording answers it, and the page draws it on its timeline.
 */
import type { Segment, TimeRange } from './ring-index.js';

/** Why a stretch of a recording is kept, as `argus_recording_bytes` names it. */
export type KeptReason = 'event' | 'snapshot' | 'recent' | 'always' | 'retired';

/** A stretch of a recording kept, without a break, for the same reasons (ms since the epoch). */
export interface KeptRange {
  start: number;
  end: number;
  /** Why it is kept; empty: nothing needs it any more, and it goes at the ring's next cut. */
  why: KeptReason[];
  /** The events whose footage it is (with `event` in `why`), in id order. */
  events: string[];
  bytes: number;
}

export interface KeptOptions {
  /** The events' footage of this camera, by event id (`FootageRanges`). */
  footage: Iterable<{ id: string; range: TimeRange }>;
  /** Segments that end at or after this are the recent margin (now − `keepMs`). */
  recentFrom: number;
  /** Segments that end at or after this are kept by continuous recording (Infinity without it). */
  alwaysFrom: number;
  /** The camera no longer records: what is kept is its events' footage only. */
  retired: boolean;
  /** Whether a segment is kept for an event's snapshot frame still to be rescued (`snapshot`). */
  saved?: (s: Segment) => boolean;
  /** Only the stretches that overlap `from`–`to` (whole, not cut to it). */
  from?: number;
  to?: number;
}

/**
 * Consecutive segments of one run (no segment lost or evicted between them) whose times meet
 * within this (ms) are one stretch: the stream did not stop between them.
 */
export const JOIN_MS = 5000;

/**
 * The stretches `segments` (oldest first, as the ring lists them) hold, oldest first: a segment
 * joins the one before when the stream ran on between them (same run, the next number, times
 * within `JOIN_MS`) and it is kept for the same reasons. A gap — a reconnection, a stop, a
 * segment lost or freed — ends a stretch. Segments with no key frame yet (nothing playable) are
 * left out.
 */
export function keptRanges(segments: readonly Segment[], o: KeptOptions): KeptRange[] {
  const from = o.from ?? -Infinity;
  const to = o.to ?? Infinity;
  // Only what the window holds is looked at: the page asks for the last hour every 2 s, of a
  // ring that may keep days (`record: always`).
  const footage = [...o.footage].filter((f) => f.range[1] >= from && f.range[0] <= to);
  const out: KeptRange[] = [];
  let prev: Segment | undefined;
  for (const s of segments) {
    const start = s.keyframes[0]?.ts;
    if (start === undefined) {
      prev = undefined;
      continue;
    }
    const end = Math.max(start, s.end);
    if (end < from - JOIN_MS || start > to) {
      prev = undefined;
      continue;
    }
    const events = footage
      .filter((f) => f.range[0] <= end && f.range[1] >= start)
      .map((f) => f.id)
      .sort();
    const why: KeptReason[] = events.length ? ['event'] : [];
    if (o.saved?.(s)) why.push('snapshot');
    if (o.retired) why.push('retired');
    else {
      if (end >= o.recentFrom) why.push('recent');
      if (end >= o.alwaysFrom) why.push('always');
    }
    const last = out.at(-1);
    const joins =
      last !== undefined &&
      prev !== undefined &&
      prev.run === s.run &&
      s.seq === prev.seq + 1 &&
      Math.abs(start - last.end) <= JOIN_MS &&
      last.why.join() === why.join() &&
      last.events.join('\n') === events.join('\n');
    if (joins) {
      last.end = Math.max(last.end, end);
      last.bytes += s.bytes;
    } else out.push({ start, end, why, events, bytes: s.bytes });
    prev = s;
  }
  return out.filter((r) => r.end >= from && r.start <= to);
}
