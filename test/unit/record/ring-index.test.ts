import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planClip } from '../../../src/record/clip.js';
import { RESTAMP_MS, RingIndex, type RunClock, type Segment } from '../../../src/record/ring-index.js';

const T0 = 1_000_000;
/** A stream whose clock maps to the wall clock at T0 (wall = stream time + T0). */
const CLOCK: RunClock = { offset: T0, epoch: 0 };
const UNTIMED: RunClock = { offset: Infinity, epoch: 0 };

function ring(
  over: Partial<{ keepMs: number; maxBytes: number; segmentMs: number; alwaysMs: number }> = {},
): RingIndex {
  return new RingIndex({ dir: '/ring/cam', keepMs: 10_000, maxBytes: 1e6, segmentMs: 2000, ...over });
}

/**
 * Feeds a frame of stream time `ms` (a key frame or not) of run `run`, `bytes` long, arriving at
 * `now`, as the shell does: a cut begins a segment (with a 376-byte header), then the piece is
 * recorded and its bytes counted (the writer's part). Returns what eviction removed.
 */
function feed(
  index: RingIndex,
  o: { ms: number; key?: boolean; run?: number; now?: number; bytes?: number; clock?: RunClock },
): ReturnType<RingIndex['evict']> {
  const { ms, key = false, run = 1, now = T0 + ms, bytes = 1000, clock = CLOCK } = o;
  let evicted: ReturnType<RingIndex['evict']> = [];
  if (index.cuts(key, run, clock.epoch, now)) {
    index.finish();
    index.begin(run, now, 376, 'h264').bytes += 376;
    evicted = index.evict(now);
  } else if (!index.continues(run)) return evicted;
  index.record({ keyframe: key, pts: key ? ms : undefined, dts: [ms] }, clock, now);
  index.current!.bytes += bytes;
  return evicted;
}

/** One key frame a second, a frame every 500 ms, from `from` to `to` (stream ms). */
function stream(index: RingIndex, from: number, to: number, o: { run?: number; bytes?: number } = {}): void {
  for (let ms = from; ms < to; ms += 500) feed(index, { ms, key: ms % 1000 === 0, ...o });
}

const span = (s: Segment): [number, number] => [s.start - T0, s.end - T0];

describe('RingIndex: segments', () => {
  it('cuts at the first key frame after segmentMs, at another run, never before the first key frame', () => {
    const index = ring();
    feed(index, { ms: 0 }); // no key frame yet: nothing
    assert.equal(index.list().length, 0);
    stream(index, 1000, 6000);
    assert.deepEqual(index.list().map(span), [
      [1000, 2500],
      [3000, 4500],
      [5000, 5500],
    ]);
    assert.deepEqual(
      index.list().map((s) => [s.file, s.open]),
      [
        ['/ring/cam/1-0.ts', false],
        ['/ring/cam/1-1.ts', false],
        ['/ring/cam/1-2.ts', true],
      ],
    );
    // Key frames start where the segment's bytes were: after the header, after each frame.
    assert.deepEqual(
      index.list()[0]!.keyframes.map((k) => [k.offset, k.ts - T0]),
      [
        [376, 1000],
        [2376, 2000],
      ],
    );
    // Another run (ffmpeg restarted) starts its own segment at its first key frame, not before.
    feed(index, { ms: 0, run: 2, now: T0 + 6000 });
    assert.equal(index.list().length, 3);
    assert.equal(index.continues(2), false);
    feed(index, { ms: 0, key: true, run: 2, now: T0 + 6000 });
    assert.deepEqual(
      index.list().map((s) => [s.run, s.seq, s.open]),
      [
        [1, 0, false],
        [1, 1, false],
        [1, 2, false],
        [2, 3, true],
      ],
    );
  });

  it('a stream without timestamps is stamped by arrival', () => {
    const index = ring();
    feed(index, { ms: 0, key: true, clock: UNTIMED, now: T0 + 40 });
    feed(index, { ms: 500, clock: UNTIMED, now: T0 + 700 });
    const seg = index.list()[0]!;
    assert.deepEqual([span(seg), seg.keyframes[0]!.ts - T0, seg.offset], [[40, 700], 40, undefined]);
  });

  it("stamps again the run's recent segments of the same epoch when the offset goes down", () => {
    const index = ring({ keepMs: 120_000 });
    stream(index, 0, 40_000, { run: 1 });
    // A frame that came 20 ms sooner after its time than any before: the offset is 20 ms less.
    const lower: RunClock = { offset: T0 - 20, epoch: 0 };
    index.restamp(1, lower, T0 + 40_000);
    const shifted = index.list().map((s) => s.start - T0);
    // Those that ended within RESTAMP_MS are stamped again; the older ones stay as they were.
    const recent = index.list().filter((s) => s.lastDts! + T0 >= T0 + 40_000 - RESTAMP_MS);
    assert.ok(recent.length > 0 && recent.length < index.list().length);
    assert.deepEqual(
      shifted,
      index.list().map((s) => (recent.includes(s) ? s.keyframes[0]!.pts! - 20 : s.keyframes[0]!.pts!)),
    );
    assert.ok(
      recent.every((s) => s.offset === T0 - 20 && s.keyframes.every((k) => k.ts === k.pts! + T0 - 20)),
    );
    // Another run's clock, or another epoch's, restamps nothing of this run's.
    const before = index.list().map((s) => s.start);
    index.restamp(2, { offset: T0 - 500, epoch: 0 }, T0 + 40_000);
    index.restamp(1, { offset: T0 - 500, epoch: 1 }, T0 + 40_000);
    assert.deepEqual(
      index.list().map((s) => s.start),
      before,
    );
  });
});

describe('RingIndex: eviction and holds', () => {
  it('removes segments that ended over keepMs ago, oldest first; the newest always stays', () => {
    const index = ring({ keepMs: 5000 });
    stream(index, 0, 6000);
    assert.equal(index.list().length, 3);
    const removed = feed(index, { ms: 8000, key: true });
    // At 8 s, kept from 3 s: the segment that ended at 1.5 s goes; the one ending at 3.5 s stays.
    assert.deepEqual(
      removed.map((e) => [span(e.segment), e.held]),
      [[[0, 1500], false]],
    );
    assert.deepEqual(index.list().map(span), [
      [2000, 3500],
      [4000, 5500],
      [8000, 8000],
    ]);
    // Long after, everything but the newest goes.
    feed(index, { ms: 60_000, key: true });
    assert.deepEqual(index.list().map(span), [[60_000, 60_000]]);
  });

  it('a hold keeps the segments that end at or after its start, until released', () => {
    const index = ring({ keepMs: 5000 });
    stream(index, 0, 6000);
    const hold = index.hold(T0 + 1000);
    assert.deepEqual(feed(index, { ms: 30_000, key: true }), []);
    assert.equal(index.list().length, 4);
    hold.release();
    assert.deepEqual(
      feed(index, { ms: 32_000, key: true }).map((e) => [span(e.segment), e.held]),
      [
        [[0, 1500], false],
        [[2000, 3500], false],
        [[4000, 5500], false],
      ],
    );
  });

  it('over maxBytes the oldest go, held or within keepMs: ring_full', () => {
    // Each segment: a 376-byte header and four 1000-byte frames.
    const index = ring({ keepMs: 60_000, maxBytes: 9000 });
    index.hold(T0);
    stream(index, 0, 4000);
    assert.deepEqual(
      index.list().map((s) => s.bytes),
      [4376, 4376],
    );
    const removed = feed(index, { ms: 4000, key: true });
    assert.deepEqual(
      removed.map((e) => [span(e.segment), e.held]),
      [[[0, 1500], true]],
    );
    assert.equal(index.bytes(), 4376 + 376 + 1000);
    // The segment being written stays, however large.
    const huge = ring({ maxBytes: 100 });
    stream(huge, 0, 4000);
    assert.deepEqual(
      huge.list().map((s) => [span(s), s.open]),
      [[[2000, 3500], true]],
    );
  });
});

describe('RingIndex: record: always', () => {
  it('keeps every segment that ended within alwaysMs, events or not, and frees the older ones', () => {
    const index = ring({ keepMs: 5000, alwaysMs: 20_000 });
    stream(index, 0, 6000);
    assert.deepEqual(feed(index, { ms: 20_000, key: true }), [], 'all within 20 s');
    assert.equal(index.list().length, 4);
    // At 24 s, kept from 4 s: the segments that ended at 1.5 s and 3.5 s go, not yet the one at 5.5 s.
    assert.deepEqual(
      feed(index, { ms: 24_000, key: true }).map((e) => [span(e.segment), e.held]),
      [
        [[0, 1500], false],
        [[2000, 3500], false],
      ],
    );
    // What events need stays past alwaysMs, as without it.
    const held = ring({ keepMs: 5000, alwaysMs: 20_000 });
    stream(held, 0, 6000);
    held.hold(T0 + 4000);
    feed(held, { ms: 60_000, key: true });
    assert.deepEqual(held.list().map(span), [
      [4000, 5500],
      [60_000, 60_000],
    ]);
  });

  it('is bounded by maxBytes all the same: the oldest go (ring_full)', () => {
    const index = ring({ keepMs: 1000, alwaysMs: 3600_000, maxBytes: 9000 });
    stream(index, 0, 4000);
    assert.deepEqual(
      feed(index, { ms: 4000, key: true }).map((e) => [span(e.segment), e.held]),
      [[[0, 1500], true]],
    );
  });

  it("says why each byte is kept: an event's footage, the recent margin, or continuous recording", () => {
    const index = ring({ keepMs: 5000, alwaysMs: 60_000 });
    stream(index, 0, 12_000);
    // Six segments of 4376 bytes (ending at 1.5, 3.5 … 11.5 s); an event needs 2–3 s.
    assert.deepEqual(index.bytesBy([[T0 + 2000, T0 + 3000]], T0 + 12_000), {
      held: 4376,
      snapshot: 0,
      recent: 3 * 4376, // ended at or after 7 s
      always: 2 * 4376,
    });
    // Without record: always, nothing is `always` (kept a minute, all of it is recent).
    const plain = ring({ keepMs: 60_000 });
    stream(plain, 0, 12_000);
    assert.deepEqual(plain.bytesBy([[T0 + 2000, T0 + 3000]], T0 + 12_000), {
      held: 4376,
      snapshot: 0,
      recent: 5 * 4376,
      always: 0,
    });
  });
});

describe('RingIndex: losses', () => {
  it('counts a lost segment once, and everything when the directory goes', () => {
    const index = ring();
    stream(index, 0, 6000);
    const [a, b] = index.list();
    assert.equal(index.lose(a!), true);
    assert.equal(index.lose(a!), false, 'not listed any more: not counted again');
    assert.equal(index.has(a!), false);
    assert.deepEqual(index.counters, { segmentsLost: 1, bytesDropped: a!.bytes });
    const dropped = index.dropAll();
    assert.deepEqual(dropped.length, 2);
    assert.deepEqual(index.counters, {
      segmentsLost: 3,
      bytesDropped: a!.bytes + b!.bytes + dropped[1]!.bytes,
    });
    assert.deepEqual(index.list(), []);
  });
});

describe('RingIndex: a time range', () => {
  it('planClip takes a range from the listed segments, from the key frame at or before it', () => {
    const index = ring({ keepMs: 60_000 });
    stream(index, 0, 10_000);
    const plan = planClip(index.list(), T0 + 3500, T0 + 7200)!;
    assert.deepEqual(
      plan.parts.map((p) => [p.file, p.offset]),
      [
        ['/ring/cam/1-1.ts', 2376],
        ['/ring/cam/1-2.ts', 0],
        ['/ring/cam/1-3.ts', 0],
      ],
    );
    assert.deepEqual([plan.start - T0, plan.end - T0, plan.missing.reasons], [3000, 7200, []]);
  });
});
