import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keptRanges, JOIN_MS, type KeptOptions } from '../../../src/record/kept.js';
import type { Segment } from '../../../src/record/ring-index.js';

const T0 = 1_800_000_000_000;

/** A whole segment of `run`, number `seq`, from `start` to `end` s after T0, `bytes` long. */
function seg(run: number, seq: number, start: number, end: number, bytes = 100): Segment {
  return {
    file: `/ring/cam/${run}-${seq}.ts`,
    run,
    seq,
    start: T0 + start * 1000,
    end: T0 + end * 1000,
    bytes,
    headerBytes: 0,
    keyframes: [{ offset: 0, ts: T0 + start * 1000 }],
    codec: 'h264',
    open: false,
  };
}

/** Options with nothing recent, no continuous recording, not retired, no footage. */
const opts = (over: Partial<KeptOptions> = {}): KeptOptions => ({
  footage: [],
  recentFrom: Infinity,
  alwaysFrom: Infinity,
  retired: false,
  ...over,
});

/** The ranges as seconds after T0, with their reasons. */
const secs = (r: ReturnType<typeof keptRanges>) =>
  r.map((x) => ({
    s: (x.start - T0) / 1000,
    e: (x.end - T0) / 1000,
    why: x.why,
    events: x.events,
    bytes: x.bytes,
  }));

describe('keptRanges: what a recording holds, and why', () => {
  it("joins a run's consecutive segments kept for the same event into one stretch, with their bytes", () => {
    const segments = [seg(1, 0, 0, 1.9), seg(1, 1, 2, 3.9), seg(1, 2, 4, 5.9)];
    const footage = [{ id: 'e1', range: [T0 - 500, T0 + 10_000] as const }];
    assert.deepEqual(secs(keptRanges(segments, opts({ footage }))), [
      { s: 0, e: 5.9, why: ['event'], events: ['e1'], bytes: 300 },
    ]);
  });

  it('ends a stretch at a gap: a reconnection (another run), a segment lost or freed, a break in time', () => {
    const footage = [{ id: 'e', range: [T0, T0 + 100_000] as const }];
    const segments = [
      seg(1, 0, 0, 1.9),
      seg(1, 1, 2, 3.9),
      // A segment lost (its number missing).
      seg(1, 3, 6, 7.9),
      // ffmpeg reconnected: a new run.
      seg(2, 4, 8, 9.9),
      // The same run and the next number, but the times do not meet.
      seg(2, 5, 10 + JOIN_MS / 1000 + 1, 20),
    ];
    assert.deepEqual(
      secs(keptRanges(segments, opts({ footage }))).map((r) => [r.s, r.e]),
      [
        [0, 3.9],
        [6, 7.9],
        [8, 9.9],
        [16, 20],
      ],
    );
  });

  it("names each stretch's events; overlapping events share one, and where the events change a stretch is cut", () => {
    const segments = [seg(1, 0, 0, 1.9), seg(1, 1, 2, 3.9), seg(1, 2, 4, 5.9), seg(1, 3, 6, 7.9)];
    const footage = [
      { id: 'b', range: [T0 + 2500, T0 + 7000] as const },
      { id: 'a', range: [T0, T0 + 3000] as const },
    ];
    assert.deepEqual(secs(keptRanges(segments, opts({ footage }))), [
      { s: 0, e: 1.9, why: ['event'], events: ['a'], bytes: 100 },
      { s: 2, e: 3.9, why: ['event'], events: ['a', 'b'], bytes: 100 },
      { s: 4, e: 7.9, why: ['event'], events: ['b'], bytes: 200 },
    ]);
  });

  it('says recent for the margin, always for continuous recording, both where both hold, and nothing for what is about to go', () => {
    const segments = [seg(1, 0, 0, 1.9), seg(1, 1, 2, 3.9), seg(1, 2, 4, 5.9), seg(1, 3, 6, 7.9)];
    const r = keptRanges(segments, opts({ recentFrom: T0 + 5000, alwaysFrom: T0 + 3000 }));
    assert.deepEqual(
      secs(r).map((x) => [x.s, x.e, x.why]),
      [
        [0, 1.9, []],
        [2, 3.9, ['always']],
        [4, 7.9, ['recent', 'always']],
      ],
    );
    // An event over the recent margin: both reasons.
    const footage = [{ id: 'e', range: [T0 + 6000, Infinity] as const }];
    assert.deepEqual(secs(keptRanges(segments, opts({ footage, recentFrom: T0 + 5000 }))).at(-1)!.why, [
      'event',
      'recent',
    ]);
  });

  it("a retired camera's recording is kept for its events' footage only: retired, never recent or always", () => {
    const segments = [seg(1, 0, 0, 1.9), seg(1, 1, 2, 3.9)];
    const footage = [{ id: 'e', range: [T0, T0 + 1000] as const }];
    const r = keptRanges(segments, opts({ footage, retired: true, recentFrom: 0, alwaysFrom: 0 }));
    assert.deepEqual(
      secs(r).map((x) => [x.s, x.e, x.why, x.events]),
      [
        [0, 1.9, ['event', 'retired'], ['e']],
        [2, 3.9, ['retired'], []],
      ],
    );
  });

  it('keeps the stretches that overlap the window, whole; leaves out a segment with no key frame yet', () => {
    const footage = [{ id: 'e', range: [T0, T0 + 100_000] as const }];
    const segments = [seg(1, 0, 0, 1.9), seg(1, 1, 2, 3.9), seg(2, 2, 10, 11.9), seg(3, 3, 20, 21.9)];
    const open: Segment = { ...seg(3, 4, 22, 22), keyframes: [], open: true };
    const all = keptRanges([...segments, open], opts({ footage }));
    assert.equal(all.length, 3, 'the open segment without a key frame is not a stretch');
    const window = keptRanges(segments, opts({ footage, from: T0 + 3000, to: T0 + 10_500 }));
    assert.deepEqual(
      secs(window).map((x) => [x.s, x.e]),
      [
        [0, 3.9],
        [10, 11.9],
      ],
    );
    assert.deepEqual(keptRanges(segments, opts({ footage, from: T0 + 4000, to: T0 + 9000 })), []);
  });
});
