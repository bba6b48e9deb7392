import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameStamps, parseProbeLine, STAMP_WAIT_MS, SteadyTime } from '../../../src/ingest/stamps.js';
import { StderrRing } from '../../../src/stderr-ring.js';
import { FakeClock } from '../../helpers/fakes.js';

/** showinfo's lines, as the bundled ffmpeg 4 writes them. */
const at = (probe: string): string => `[showinfo@${probe} @ 0x3fc73140]`;
const config = (probe: string, tb: string): string =>
  `${at(probe)} config in time_base: ${tb}, frame_rate: 5/1`;
const seen = (probe: string, n: number, pts: number | string): string =>
  `${at(probe)} n:${String(n).padStart(4)} pts:${String(pts).padStart(7)} pts_time:0.2     pos:       -1 fmt:yuv420p sar:1/1 s:2x2 i:P iskey:1 type:I checksum:46346A56 plane_checksum:[4A4D665A 9374F06A 1CD21383] mean:[125 127 125 ] stdev:[0.0 0.0 0.0 ]`;
const extra = (probe: string): string =>
  `${at(probe)} color_range:unknown color_space:unknown color_primaries:unknown color_trc:unknown`;

/** A run's stamps, and the times its frames were given, by output index. */
function setup(steadyTime = new SteadyTime()) {
  const clock = new FakeClock();
  const stamps = new FrameStamps(clock, steadyTime);
  const got: [number, number][] = [];
  const steady: number[] = [];
  const frame = (index: number, arrival = clock.now()): void =>
    stamps.frame(index, arrival, (ts, st) => {
      got.push([index, ts]);
      steady.push(st);
    });
  const lines = (...l: string[]): void => l.forEach((x) => assert.equal(stamps.line(x), true, x));
  return { clock, stamps, got, steady, frame, lines };
}

/** A file or lavfi camera at 5 frames/s, its stream on a 1/5 s clock: the probes' time bases. */
const FIVE = [config('source', '1/5'), config('frame', '1/5')];

describe('frame time probes', () => {
  it('reads the probes and leaves every other line', () => {
    assert.deepEqual(parseProbeLine(config('frame', '1/90000')), { probe: 'frame', tb: [1, 90000] });
    assert.deepEqual(parseProbeLine(seen('source', 12, 1080000)), { probe: 'source', n: 12, pts: 1080000 });
    assert.deepEqual(parseProbeLine(seen('paced', 3, 'NOPTS')), { probe: 'paced', n: 3, pts: null });
    assert.deepEqual(parseProbeLine(extra('frame')), { probe: 'frame' });
    assert.deepEqual(parseProbeLine(`${at('frame')} config out time_base: 0/0, frame_rate: 0/0`), {
      probe: 'frame',
    });
    assert.equal(parseProbeLine('[Parsed_showinfo_3 @ 0x1] n:   0 pts:      0'), undefined);
    assert.equal(parseProbeLine('[scale@model @ 0x55] w:810 h:1080 fmt:yuv420p -> w:240 h:320'), undefined);
    assert.equal(parseProbeLine('frame=  100 fps=5'), undefined);
  });

  it("keeps the probes' lines out of the stderr tail, and still gives it the others", () => {
    const { stamps } = setup();
    const ring = new StderrRing(5, ['hunter2'], (l) => stamps.line(l));
    const out = ring.push(
      [config('frame', '1/5'), seen('frame', 0, 0), extra('frame'), 'rtsp://a:hunter2@cam failed', ''].join(
        '\n',
      ),
    );
    assert.deepEqual(out, ['rtsp://a:***@cam failed']);
    for (let n = 1; n < 50; n++) ring.push(`${seen('frame', n, n)}\n${extra('frame')}\n`);
    assert.deepEqual(ring.get(), ['rtsp://a:***@cam failed']);
  });
});

describe('FrameStamps', () => {
  it('gives frames their arrival time at once while ffmpeg has not said it probes (an older graph, a fake)', () => {
    const { got, frame } = setup();
    frame(0, 1000);
    frame(1, 1250);
    assert.deepEqual(got, [
      [0, 1000],
      [1, 1250],
    ]);
  });

  it("pairs frames with their lines by count, whichever comes first, and maps the stream's clock to the wall clock", async () => {
    const { clock, got, frame, lines } = setup();
    const t0 = clock.now();
    lines(...FIVE, seen('source', 0, 0), seen('frame', 0, 0), extra('frame'));
    frame(0, t0 + 30);
    assert.deepEqual(got, [[0, t0 + 30]], 'the first frame sets the offset');
    // The frame before its line: held until the line comes, not beyond.
    frame(1, t0 + 230);
    assert.equal(got.length, 1);
    lines(seen('source', 1, 1), seen('frame', 1, 1));
    assert.deepEqual(got[1], [1, t0 + 230]);
    // Lines ahead of their frames wait for them.
    lines(seen('source', 2, 2), seen('frame', 2, 2), seen('source', 3, 3), seen('frame', 3, 3));
    frame(2, t0 + 440);
    frame(3, t0 + 900); // read late (Node was busy): still 200 ms after the one before
    assert.deepEqual(got.slice(2), [
      [2, t0 + 430],
      [3, t0 + 630],
    ]);
    await clock.advance(STAMP_WAIT_MS * 2);
    assert.equal(got.length, 4);
  });

  it('gives a frame whose line does not come its arrival time after the wait, and keeps the next ones paired', async () => {
    const { clock, got, frame, lines } = setup();
    const t0 = clock.now();
    lines(...FIVE);
    for (let n = 0; n < 3; n++) {
      lines(seen('source', n, n), seen('frame', n, n));
      frame(n, t0 + n * 200);
    }
    // Output 3's line is lost; 4 and 5 come in order.
    lines(seen('source', 3, 3), seen('source', 4, 4));
    frame(3, t0 + 620);
    await clock.advance(STAMP_WAIT_MS / 2);
    frame(4, t0 + 800);
    assert.equal(got.length, 3, 'both held');
    await clock.advance(STAMP_WAIT_MS / 2);
    assert.deepEqual(got.slice(3), [[3, t0 + 620]], 'the first given its arrival');
    lines(seen('frame', 4, 4), seen('source', 5, 5), seen('frame', 5, 5));
    // 4 stamped by the stream (800, not after 620 ran ahead); 5 too.
    frame(5, t0 + 1100);
    assert.deepEqual(got.slice(4), [
      [4, t0 + 800],
      [5, t0 + 1000],
    ]);
  });

  it('delivers a held frame at once when a later line shows its own is missing', () => {
    const { got, frame, lines, clock } = setup();
    const t0 = clock.now();
    lines(...FIVE, seen('source', 0, 0), seen('frame', 0, 0));
    frame(0, t0);
    frame(1, t0 + 210);
    lines(seen('source', 1, 1), seen('source', 2, 2), seen('frame', 2, 2));
    assert.deepEqual(got, [
      [0, t0],
      [1, t0 + 210],
    ]);
    frame(2, t0 + 400);
    assert.deepEqual(got[2], [2, t0 + 400]);
  });

  it('ignores garbage and malformed probe lines', () => {
    const { stamps, got, frame, lines, clock } = setup();
    const t0 = clock.now();
    assert.equal(stamps.line('n: 3 pts: 7'), false);
    assert.equal(stamps.line('[showinfo@frame @ 0x1] n:x pts:'), true);
    lines(...FIVE, seen('source', 0, 0), seen('frame', 0, 0), `${at('source')} n:   1 pts:`);
    frame(0, t0);
    assert.deepEqual(got, [[0, t0]]);
  });

  it("times each of fps's frames by the decoded frame it kept, not by the wall-clock slot (RTSP)", () => {
    const { got, frame, lines, clock } = setup();
    lines(config('source', '1/90000'), config('paced', '1/90000'), config('frame', '1/5'));
    // 25 frames/s from the camera (3600 ticks of 90 kHz apart), decoded 13 ms after the graph
    // started and then every 40 ms; fps at 5/s keeps the last frame not past each slot's middle.
    const t0 = clock.now();
    const out: number[] = [];
    let slot = 0;
    for (let n = 0; n < 60; n++) {
      const wall = (13 + n * 40) * 90; // ms → 90 kHz
      lines(seen('source', n, 1_000_000 + n * 3600), seen('paced', n, wall));
      // A slot is sent when a frame rounds past it: its picture, the frame before.
      while (Math.round((wall / 90 / 200) * 1) > slot && n > 0) {
        lines(seen('frame', slot, slot));
        out.push(n - 1);
        frame(slot, t0 + 100 + slot * 200);
        slot++;
      }
    }
    const picked = got.map(([, ts]) => ts - got[0]![1]);
    const truth = out.map((n) => (n - out[0]!) * 40);
    assert.deepEqual(picked, truth);
    // Slots are 200 ms apart; the pictures kept, 5 camera frames (200 ms) apart here too.
    assert.ok(
      truth.every((t, i) => i === 0 || t - truth[i - 1]! === 200),
      String(truth),
    );
  });

  it('gives a duplicated frame (a slot with no new picture) the time of its picture', () => {
    const { got, frame, lines, clock } = setup();
    const t0 = clock.now();
    lines(config('source', '1/1000'), config('frame', '1/5'));
    lines(seen('source', 0, 0), seen('frame', 0, 0));
    frame(0, t0);
    // The next picture comes 600 ms later: fps sends the first again for slots 1 and 2.
    lines(seen('source', 1, 600), seen('frame', 1, 1), seen('frame', 2, 2));
    frame(1, t0 + 610);
    frame(2, t0 + 611);
    lines(seen('source', 2, 800), seen('frame', 3, 3));
    frame(3, t0 + 612);
    assert.deepEqual(
      got.map(([, ts]) => ts - t0),
      [0, 0, 0, 600],
    );
  });

  it('starts counting again when ffmpeg configures its graph again, and maps a jump in the stream anew', () => {
    const { got, frame, lines, clock } = setup();
    const t0 = clock.now();
    lines(...FIVE);
    for (let n = 0; n < 3; n++) {
      lines(seen('source', n, n), seen('frame', n, n));
      frame(n, t0 + n * 200 + 5);
    }
    // The stream's size changed: the graph again, its probes counting from 0; the stream's clock
    // jumped 20 s ahead (the camera restarted).
    lines(...FIVE);
    for (let n = 0; n < 3; n++) {
      lines(seen('source', n, 100 + n), seen('frame', n, 100 + n));
      frame(3 + n, t0 + 600 + n * 200 + 5);
    }
    assert.deepEqual(
      got.map(([i, ts]) => [i, ts - t0]),
      [
        [0, 5],
        [1, 205],
        [2, 405],
        [3, 605],
        [4, 805],
        [5, 1005],
      ],
    );
  });

  it('keeps stamps within a few ms of the true times when frames arrive 0–600 ms late in bursts', async () => {
    const { got, frame, lines, clock } = setup();
    lines(config('source', '1/90000'), config('paced', '1/90000'), config('frame', '1/5'));
    const t0 = clock.now();
    // The camera's frames every 200 ms; each reaches Node 20–25 ms after it, except when the
    // event loop is busy: then all that came in the last 0–600 ms arrive together.
    let seed = 7;
    const random = (): number => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const truth: number[] = [];
    const arrivals: number[] = [];
    let busyUntil = 0;
    for (let n = 0; n < 300; n++) {
      const taken = t0 + n * 200;
      let arrival = taken + 20 + random() * 5;
      if (n % 10 === 5) busyUntil = arrival + random() * 600;
      if (arrival < busyUntil) arrival = busyUntil;
      truth.push(taken);
      arrivals.push(arrival);
    }
    for (let n = 0; n < 300; n++) {
      lines(seen('source', n, 90_000 + n * 18_000), seen('paced', n, n * 18_000), seen('frame', n, n));
      frame(n, arrivals[n]);
      await clock.advance(0);
    }
    assert.equal(got.length, 300);
    const offset = got[0]![1] - truth[0]!;
    const errors = got.map(([n, ts]) => Math.abs(ts - truth[n]! - offset));
    // After the first second (the least delay found), every stamp within 6 ms (the delays' spread: 5) of the truth + a constant.
    assert.ok(Math.max(...errors.slice(5)) < 6, `worst ${Math.max(...errors.slice(5)).toFixed(1)} ms`);
    const late = arrivals.map((a, n) => a - truth[n]!);
    assert.ok(Math.max(...late) > 400, 'the simulated load did delay some frames');
    const gaps = got.slice(6).map(([, ts], i) => ts - got[i + 5]![1]);
    assert.ok(
      gaps.every((g) => Math.abs(g - 200) < 6),
      `intervals ${Math.min(...gaps).toFixed(1)}–${Math.max(...gaps).toFixed(1)} ms`,
    );
  });

  it("a connection's first seconds written at once: their times are squeezed, their steady times keep the stream's intervals (issue 42 item 5)", () => {
    const { got, steady, frame, lines, clock } = setup();
    lines(...FIVE);
    const t0 = clock.now();
    // ffmpeg held the first 3 s (15 frames) and wrote them within 60 ms; then one every 200 ms,
    // 40 ms after it was taken.
    for (let n = 0; n < 30; n++) {
      lines(seen('source', n, n), seen('frame', n, n));
      frame(n, n < 15 ? t0 + 3040 + 4 * n : t0 + n * 200 + 40);
    }
    const times = got.map(([, ts]) => ts);
    const gaps = (t: number[]): number[] => t.slice(1).map((x, i) => x - t[i]!);
    assert.ok(
      gaps(times.slice(0, 15)).every((g) => g < 10),
      `times squeezed while the least delay falls: ${gaps(times).join(' ')}`,
    );
    // Closing on the times by 1 % of each interval at most (the burst put them 3 s behind).
    assert.ok(
      gaps(steady).every((g) => g >= 198 && g <= 200),
      `steady times 200 ms apart (less 1 %), as the stream: ${gaps(steady).join(' ')}`,
    );
  });

  it('the steady clock runs on across runs, jumps and frames without a stream time, never back', () => {
    const steadyTime = new SteadyTime();
    const a = setup(steadyTime);
    const t0 = a.clock.now();
    a.lines(...FIVE);
    for (let n = 0; n < 3; n++) {
      a.lines(seen('source', n, n), seen('frame', n, n));
      a.frame(n, t0 + n * 200 + 5);
    }
    // The stream jumps 20 s ahead within the run (another epoch): the interval of the times.
    for (let n = 3; n < 5; n++) {
      a.lines(seen('source', n, 100 + n), seen('frame', n, 100 + n));
      a.frame(n, t0 + n * 200 + 5);
    }
    // A new run (ffmpeg restarted) 2 s later, its stream from 0 again; then a frame without a
    // time: the last interval (200), closing on its time (3500) by 1 % of it.
    const b = setup(steadyTime);
    b.lines(...FIVE);
    for (let n = 0; n < 2; n++) {
      b.lines(seen('source', n, n), seen('frame', n, n));
      b.frame(n, t0 + 3000 + n * 200);
    }
    b.lines(seen('source', 2, 'NOPTS'), seen('frame', 2, 'NOPTS'));
    b.frame(2, t0 + 3500);
    assert.deepEqual(
      [...a.steady, ...b.steady].map((x) => x - a.steady[0]!),
      [0, 200, 400, 600, 800, 2995, 3195, 3397],
    );
  });

  it('a frame whose line came late is one guess, not a shift of those after it; a small jump of the stream clock is not time', async () => {
    const { got, steady, frame, lines, clock } = setup();
    lines(...FIVE);
    const t0 = clock.now();
    for (let n = 0; n < 3; n++) {
      lines(seen('source', n, n), seen('frame', n, n));
      frame(n, t0 + n * 200 + 20);
    }
    // Frame 3's line comes after the wait (a busy machine): it gets its arrival, 300 ms late.
    frame(3, t0 + 3 * 200 + 320);
    await clock.advance(STAMP_WAIT_MS);
    lines(seen('source', 3, 3), seen('frame', 3, 3));
    for (let n = 4; n < 6; n++) {
      lines(seen('source', n, n), seen('frame', n, n));
      frame(n, t0 + n * 200 + 20);
    }
    // The camera steps its clock 4 s ahead (under the 10 s of a new epoch); frames go on every 200 ms.
    for (let n = 6; n < 8; n++) {
      lines(seen('source', n, n + 20), seen('frame', n, n + 20));
      frame(n, t0 + n * 200 + 20);
    }
    assert.equal(got.length, 8);
    const gaps = steady.slice(1).map((x, i) => x - steady[i]!);
    assert.ok(
      gaps.every((g) => Math.abs(g - 200) <= 4),
      `every steady interval the stream's 200 ms (within 2 %): ${gaps.map((g) => g.toFixed(0)).join(' ')}`,
    );
  });
});
