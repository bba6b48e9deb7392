import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { concatInput, remuxArgs, remuxClip } from '../../../src/record/clip.js';
import { defaultFfmpegPath } from '../../../src/ingest/ffmpeg-process.js';
import { planClip, type Segment } from '../../../src/record/index.js';
import { TS_PACKET, TsSplitter } from '../../../src/record/mpegts.js';
import { Ring } from '../../../src/record/ring.js';
import { StreamClock } from '../../../src/record/stream-clock.js';
import { waitFor } from '../../helpers/env.js';
import { FakeClock, silentLog } from '../../helpers/fakes.js';

/** A transport-stream packet: PID, unit start, random access, payload (padded with 0xff). */
function packet(pid: number, opts: { start?: boolean; rai?: boolean; payload?: number[] } = {}): Buffer {
  const p = Buffer.alloc(TS_PACKET, 0xff);
  p[0] = 0x47;
  p[1] = (opts.start ? 0x40 : 0) | ((pid >> 8) & 0x1f);
  p[2] = pid & 0xff;
  let at = 4;
  if (opts.rai) {
    p[3] = 0x30; // adaptation field and payload
    p[4] = 1;
    p[5] = 0x40;
    at = 6;
  } else p[3] = 0x10;
  Buffer.from(opts.payload ?? []).copy(p, at);
  return p;
}

/** A PSI section's packet: pointer field 0, then the section (CRC not checked: zeros). */
function psi(pid: number, tableId: number, body: number[]): Buffer {
  const length = 5 + body.length + 4;
  const section = [tableId, 0xb0 | (length >> 8), length & 0xff, 0, 1, 0xc1, 0, 0, ...body, 0, 0, 0, 0];
  return packet(pid, { start: true, payload: [0, ...section] });
}

const PAT = psi(0, 0x00, [0x00, 0x01, 0xf0, 0x00]); // program 1 → PMT PID 0x1000
/** A PMT naming PID 0x100 as the video, of the given stream type. */
const pmt = (type: number): Buffer =>
  psi(0x1000, 0x02, [0xe1, 0x00, 0xf0, 0x00, type, 0xe1, 0x00, 0xf0, 0x00]);
const key = (): Buffer => packet(0x100, { start: true, rai: true });
const inter = (): Buffer => packet(0x100, { start: true });
const more = (): Buffer => packet(0x100);

describe('MPEG-TS splitter', () => {
  it('cuts at key frames of the video PID, whatever the chunks, and keeps the PAT and PMT', () => {
    const stream = Buffer.concat([PAT, pmt(0x1b), key(), more(), inter(), more(), key(), more()]);
    for (const size of [1, 7, 188, 200, 1000, stream.length]) {
      const s = new TsSplitter();
      const pieces = [];
      // As the ring reads: every chunk into the same buffer, the pieces copied before the next
      // read, which then overwrites it (the splitter may keep no view of a chunk).
      const reused = Buffer.alloc(size);
      for (let i = 0; i < stream.length; i += size) {
        const n = stream.copy(reused, 0, i, i + size);
        pieces.push(...s.push(reused.subarray(0, n)).map((p) => ({ ...p, bytes: Buffer.from(p.bytes) })));
        reused.fill(0xff);
      }
      // Glued back together, the pieces are the stream; each key frame starts one.
      assert.deepEqual(Buffer.concat(pieces.map((p) => p.bytes)), stream, `chunks of ${size}`);
      const starts: number[] = [];
      let at = 0;
      for (const p of pieces) {
        if (p.keyframe) starts.push(at / TS_PACKET);
        at += p.bytes.length;
      }
      assert.deepEqual(starts, [2, 6], `chunks of ${size}`);
      assert.equal(s.codec, 'h264');
      assert.deepEqual(s.header(), Buffer.concat([PAT, pmt(0x1b)]));
    }
  });

  it('names the codec from the PMT, and skips bytes out of sync', () => {
    const s = new TsSplitter();
    const pieces = s.push(Buffer.concat([Buffer.from([1, 2, 3]), PAT, pmt(0x24), key()]));
    assert.equal(s.codec, 'hevc');
    assert.equal(s.skipped, 3);
    assert.equal(pieces.filter((p) => p.keyframe).length, 1);
    const mjpeg = new TsSplitter();
    mjpeg.push(Buffer.concat([PAT, pmt(0x06)]));
    assert.equal(mjpeg.codec, 'type 0x6');
  });

  it('finds sync again after bytes out of sync in the middle, wherever the chunks are cut', () => {
    const junk = Buffer.from([1, 2, 3]);
    const before = [PAT, pmt(0x1b), key(), more()];
    const after = [inter(), more(), key(), more()];
    const stream = Buffer.concat([...before, junk, ...after]);
    for (let size = 1; size <= stream.length; size++) {
      const s = new TsSplitter();
      const pieces = [];
      for (let i = 0; i < stream.length; i += size)
        pieces.push(
          ...s.push(stream.subarray(i, i + size)).map((p) => ({ ...p, bytes: Buffer.from(p.bytes) })),
        );
      // Every packet is kept, the junk alone is skipped, and both key frames start a piece.
      assert.deepEqual(
        Buffer.concat(pieces.map((p) => p.bytes)),
        Buffer.concat([...before, ...after]),
        `chunks of ${size}`,
      );
      assert.equal(s.skipped, 3, `chunks of ${size}`);
      assert.equal(pieces.filter((p) => p.keyframe).length, 2, `chunks of ${size}`);
    }
  });

  it('knows no key frame before the tables: a random-access packet on an unknown PID is not one', () => {
    const s = new TsSplitter();
    const pieces = s.push(Buffer.concat([key(), PAT, pmt(0x1b), key()]));
    assert.deepEqual(
      pieces.map((p) => [p.bytes.length / TS_PACKET, p.keyframe]),
      [
        [3, false],
        [1, true],
      ],
    );
  });
});

/** Segments of 2 s, key frames each second, from `t0` (ms), in run `run`, numbered from `seq`. */
function segments(run: number, seq: number, t0: number, n: number): Segment[] {
  return Array.from({ length: n }, (_, i) => ({
    file: `/ring/${run}-${seq + i}.ts`,
    run,
    seq: seq + i,
    start: t0 + i * 2000,
    end: t0 + i * 2000 + 1960,
    bytes: 3000,
    headerBytes: 376,
    keyframes: [
      { offset: 376, ts: t0 + i * 2000 },
      { offset: 1500, ts: t0 + i * 2000 + 1000 },
    ],
    codec: 'h264',
    open: false,
  }));
}

describe('planClip', () => {
  it('starts at the last key frame at or before the pre-roll and ends at the post-roll', () => {
    const plan = planClip(segments(1, 0, 10_000, 10), 13_500, 21_000)!;
    assert.equal(plan.start, 13_000); // the key frame in the middle of the second segment
    assert.equal(plan.end, 21_000);
    assert.deepEqual(
      plan.parts.map((p) => [p.file, p.offset]),
      [
        ['/ring/1-1.ts', 1500],
        ['/ring/1-2.ts', 0],
        ['/ring/1-3.ts', 0],
        ['/ring/1-4.ts', 0],
        ['/ring/1-5.ts', 0],
      ],
    );
    assert.deepEqual(plan.missing, { start_s: 0, end_s: 0, reasons: [] });
  });

  it('says what is missing: not recorded yet, a reconnection, a lost segment, the stream ended', () => {
    const ring = segments(1, 0, 10_000, 3);
    assert.deepEqual(planClip(ring, 6_000, 14_000)!.missing, {
      start_s: 4,
      end_s: 0,
      reasons: ['not_recorded_yet'],
    });
    assert.deepEqual(planClip(ring, 12_000, 20_000)!.missing, {
      start_s: 0,
      end_s: 4,
      reasons: ['stream_ended'],
    });
    // The camera reconnected at 16 s: the clip keeps the run with the most of its time.
    const two = [...segments(1, 0, 10_000, 3), ...segments(2, 3, 17_000, 3)];
    const plan = planClip(two, 13_000, 22_000)!;
    assert.equal(plan.parts[0]!.file, '/ring/2-3.ts');
    assert.deepEqual(plan.missing.reasons, ['camera_reconnected']);
    assert.equal(plan.missing.start_s, 4);
    assert.equal(planClip(two, 11_000, 21_000)!.parts[0]!.file, '/ring/1-0.ts');
    // Segment 1 lost to a full disk: the gap is named by the ring's fault.
    const lost = segments(1, 0, 10_000, 4).filter((s) => s.seq !== 1);
    assert.deepEqual(planClip(lost, 13_000, 17_500, 'disk_full')!.missing.reasons, ['disk_full']);
  });

  it('plans its own start–end again to the same plan, after a segment that begins at its end is written', () => {
    // Stamps by the stream's clock fall between milliseconds; the payload names them to the millisecond.
    const ring = segments(1, 0, 10_000.4, 4).map((s) => ({
      ...s,
      end: s.end + 0.3,
      keyframes: s.keyframes.map((k) => ({ ...k, ts: k.ts + 0.2 })),
    }));
    const asked = planClip(ring, 13_500, 18_000)!;
    assert.equal(asked.parts.length, 3);
    assert.deepEqual(asked.missing, { start_s: 0, end_s: 0, reasons: [] });
    const start = Date.parse(new Date(asked.start).toISOString());
    const end = Date.parse(new Date(asked.end).toISOString());
    assert.equal(end, asked.end);
    // The next segment, its first key frame a millisecond before the clip's end.
    const next = { ...segments(1, 4, end - 1, 1)[0]!, end: end + 1959 };
    for (const later of [ring, [...ring, next]]) assert.deepEqual(planClip(later, start, end), asked);
    // Asked up to a moment within the slack of that segment's start, the clip leaves it out too.
    assert.deepEqual(planClip([...ring, next], 13_500, end + 300)!.parts, asked.parts);
    // A segment that begins earlier than the slack before the end is the clip's.
    assert.equal(planClip([...ring, next], 13_500, end + 600)!.parts.length, 4);
  });

  it('planned again to its own end, a plan keeps a last segment shorter than the slack (the stream stopped)', () => {
    const ring = segments(1, 0, 0, 5);
    // The stream stopped 300 ms into the next segment.
    const short = {
      ...segments(1, 5, 10_000, 1)[0]!,
      end: 10_300.4,
      keyframes: [{ offset: 376, ts: 10_000.2 }],
    };
    const asked = planClip([...ring, short], 2000, 15_000)!;
    assert.equal(asked.parts.length, 5);
    assert.equal(asked.end, 10_300);
    assert.deepEqual(asked.missing.reasons, ['stream_ended']);
    const again = planClip([...ring, short], asked.start, asked.end)!;
    assert.deepEqual(again.parts, asked.parts);
    assert.equal(again.end, asked.end);
    // A segment that begins at the plan's end is not its, though its description ends there too
    // (a segment cut by a SIGKILL, described again at the next start from its one key frame).
    const cut = {
      ...segments(1, 5, 9960, 1)[0]!,
      end: 9960,
      keyframes: [{ offset: 376, ts: 9960.5 }],
    };
    const upTo = planClip([...ring, cut], asked.start, 9960)!;
    assert.deepEqual(planClip([...ring, cut], upTo.start, upTo.end)!.parts, upTo.parts);
    assert.equal(upTo.parts.length, 4, 'the segments from the key frame at 2000 to the one ending at 9960');
  });

  it('has no plan when the ring holds nothing of that time', () => {
    assert.equal(planClip(segments(1, 0, 10_000, 2), 20_000, 30_000), undefined);
    assert.equal(planClip([], 0, 1), undefined);
  });
});

/** A PES header's 5-byte timestamp (`prefix` 2: PTS alone, 3: PTS before a DTS, 1: the DTS). */
function tsBytes(prefix: number, t90: number): number[] {
  return [
    (prefix << 4) | ((Math.floor(t90 / 2 ** 30) & 7) << 1) | 1,
    Math.floor(t90 / 2 ** 22) & 0xff,
    ((Math.floor(t90 / 2 ** 15) & 0x7f) << 1) | 1,
    Math.floor(t90 / 2 ** 7) & 0xff,
    ((t90 & 0x7f) << 1) | 1,
  ];
}

/** A video PES start (a frame) at `ptsMs`, with its DTS when given; a key frame when `rai`. */
function frame(ptsMs: number, o: { rai?: boolean; dtsMs?: number } = {}): Buffer {
  const pts = Math.round(ptsMs * 90) % 2 ** 33;
  const header =
    o.dtsMs === undefined
      ? [0x80, 0x80, 5, ...tsBytes(2, pts)]
      : [0x80, 0xc0, 10, ...tsBytes(3, pts), ...tsBytes(1, Math.round(o.dtsMs * 90) % 2 ** 33)];
  return packet(0x100, { start: true, rai: o.rai, payload: [0, 0, 1, 0xe0, 0, 0, ...header] });
}

describe('MPEG-TS timestamps', () => {
  it("reads each frame's decode time and the key frame's presentation time, across the 33-bit wrap", () => {
    const s = new TsSplitter();
    const near = 2 ** 33 / 90 - 100; // 100 ms before the 90 kHz clock wraps
    const pieces = s.push(
      Buffer.concat([
        PAT,
        pmt(0x1b),
        frame(near - 920, { rai: true, dtsMs: near - 1000 }),
        more(),
        frame(near - 960, { dtsMs: near - 960 }),
        frame(near, { rai: true }),
        frame(near + 200), // after the wrap: 100 ms past it
      ]),
    );
    const keys = pieces.filter((p) => p.keyframe);
    const close = (a: number | undefined, b: number): boolean => a !== undefined && Math.abs(a - b) < 0.02;
    assert.ok(close(keys[0]!.pts, near - 920));
    assert.deepEqual(keys[0]!.dts.length, 2);
    assert.ok(close(keys[0]!.dts[0], near - 1000) && close(keys[0]!.dts[1], near - 960));
    assert.ok(close(keys[1]!.pts, near));
    assert.ok(close(keys[1]!.dts[1], near + 200), `unwrapped past 2^33: ${keys[1]!.dts[1]}`);
  });
});

describe('StreamClock', () => {
  it('maps a burst of held frames back to when they were sent: the least-delayed frame sets the offset', () => {
    const c = new StreamClock();
    // ffmpeg holds 3 s of frames while it starts, then writes them at once at 10 s.
    for (let dts = 0; dts <= 3000; dts += 200) c.see(dts, 10_000);
    assert.equal(c.offset, 7000);
    assert.equal(c.see(3200, 10_260), false, 'a frame 60 ms late lowers nothing');
    assert.equal(c.see(3400, 10_390), true, 'one sent sooner after its time does');
    assert.equal(c.offset, 6990);
  });

  it("follows a camera clock that drifts, and starts an epoch at a jump in the stream's timestamps", () => {
    const c = new StreamClock();
    c.see(0, 1000);
    // This camera's clock runs 1 % slow: after a minute its frames seem to come 0.6 s late.
    for (let t = 0; t <= 60_000; t += 100) c.see(t * 0.99, 1000 + t);
    assert.ok(Math.abs(c.offset - (1000 + 60_000 * 0.01)) < 250, `offset ${c.offset}`);
    const epoch = c.epoch;
    c.see(3_600_000, 61_100); // the stream's clock jumps an hour
    assert.equal(c.epoch, epoch + 1);
    assert.equal(c.offset, 61_100 - 3_600_000);
  });
});

describe('Ring', () => {
  /** A started ring of 2-s segments, its pipe open (`sock`), at `t0` on its fake clock. */
  async function openRing(t: { after(fn: () => unknown): void }) {
    const dir = await mkdtemp(join(tmpdir(), 'argus-ring-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const clock = new FakeClock();
    const ring = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 2000 },
      { clock, log: silentLog },
    );
    await ring.start();
    t.after(() => ring.stop());
    const sock = createWriteStream(ring.input()!);
    t.after(() => sock.destroy());
    await once(sock, 'open');
    return { ring, clock, sock, t0: clock.now() };
  }

  it("stamps key frames with when the camera sent them, not when ffmpeg's start-up burst arrived", async (t) => {
    const { ring, clock, sock, t0 } = await openRing(t);
    // The first 3 s (key frames each second) come at once, at t0; then the stream is live, the next
    // frame 20 ms sooner after its time than the burst's last: it sets the offset.
    const burst = [PAT, pmt(0x1b)];
    for (let ms = 0; ms < 3000; ms += 500) burst.push(frame(ms, { rai: ms % 1000 === 0 }), more());
    sock.write(Buffer.concat(burst));
    await waitFor('three key frames', () => ring.list()[0]?.keyframes.length === 3, 10_000);
    await clock.advance(480);
    sock.write(Buffer.concat([frame(3000, { rai: true }), more()]));
    await waitFor('the live key frame', () => ring.list().flatMap((s) => s.keyframes).length === 4, 10_000);
    const keys = ring.list().flatMap((s) => s.keyframes.map((k) => k.ts - t0));
    assert.deepEqual(keys, [-2520, -1520, -520, 480]);
    assert.equal(ring.list()[0]!.start - t0, -2520);
    await ring.settle();
    // The file holds the tables, then every packet from the first key frame.
    const bytes = await readFile(ring.list()[0]!.file);
    assert.equal(bytes.length, TS_PACKET * (2 + 14));
  });

  it('closed(ts): resolves once the segment holding ts is closed and described (a kill then loses none of it), at once for older footage', async (t) => {
    const { ring, clock, sock, t0 } = await openRing(t);
    sock.write(Buffer.concat([PAT, pmt(0x1b), frame(0, { rai: true }), more()]));
    await waitFor('the first segment', () => ring.list().length === 1, 10_000);
    let closed = false;
    void ring.closed(t0 + 1000).then(() => (closed = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(closed, false, 'its segment is still being written');
    // Two seconds on, a key frame: the first segment closes (and is described), a second opens.
    await clock.advance(2000);
    sock.write(Buffer.concat([frame(2000, { rai: true }), more()]));
    await waitFor('the second segment', () => ring.list().length === 2, 10_000);
    await waitFor('the first described', () => ring.list()[0]!.described === true, 10_000);
    await waitFor('closed(t0 + 1 s) to resolve', () => closed, 10_000);
    assert.equal(ring.list()[1]!.open, true);
    // Footage of the open segment waits for it; footage before it does not.
    let later = false;
    void ring.closed(clock.now()).then(() => (later = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(later, false, 'the open segment holds it');
    let earlier = false;
    await ring.closed(t0 + 500).then(() => (earlier = true));
    assert.ok(earlier);
    // The ring's stop resolves whoever still waits.
    await ring.stop();
    await waitFor('closed(now) to resolve at the stop', () => later, 10_000);
  });

  it("reads each of ffmpeg's runs from the other pipe: a run's end closes its segment, the next starts its own", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-ring-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const ring = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 2000 },
      { clock: new FakeClock(), log: silentLog },
    );
    await ring.start();
    t.after(() => ring.stop());
    const write = async (path: string, bytes: Buffer): Promise<void> => {
      const w = createWriteStream(path);
      await once(w, 'open');
      await new Promise<void>((resolve, reject) => w.end(bytes, () => resolve()).once('error', reject));
    };
    const first = ring.input()!;
    await write(first, Buffer.concat([PAT, pmt(0x1b), frame(0, { rai: true }), more()]));
    await waitFor("the first run's end", () => ring.list()[0]?.open === false, 10_000);
    // The next pipe replaced by a file (ffmpeg makes one where a pipe is missing): made again.
    await rm(join(dir, 'in-b.fifo'));
    await writeFile(join(dir, 'in-b.fifo'), 'not a pipe');
    const second = ring.input()!;
    assert.ok((await stat(second)).isFIFO());
    assert.notEqual(second, first);
    await write(second, Buffer.concat([PAT, pmt(0x1b), frame(0, { rai: true }), more(), more()]));
    await waitFor("the second run's end", () => ring.list()[1]?.open === false, 10_000);
    await ring.settle();
    assert.deepEqual(
      ring.list().map((s) => [s.run, s.bytes / TS_PACKET]),
      [
        [1, 4],
        [2, 5],
      ],
    );
  });
});

describe('Ring: retired (camera removed, or its clips turned off)', () => {
  /** A ring with segments of 1 s each at 0–4 s (key frames each second), its pipe still open. */
  async function ringWithSegments(
    t: { after(fn: () => unknown): void },
    ranges: () => Iterable<readonly [number, number]>,
    maxBytes = 1e8,
    opts: {
      rescue?: (segments: readonly Segment[], final: boolean) => Promise<readonly Segment[]> | undefined;
      /** Done in the camera's directory (made) before the ring starts. */
      before?: (dir: string) => Promise<void>;
    } = {},
  ): Promise<{ ring: Ring; dir: string; clock: FakeClock; t0: number; sock: WriteStream }> {
    const root = await mkdtemp(join(tmpdir(), 'argus-ring-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const dir = join(root, 'cam');
    if (opts.before) {
      await mkdir(dir, { mode: 0o750 });
      await opts.before(dir);
    }
    const clock = new FakeClock();
    const ring = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes, segmentMs: 1000 },
      { clock, log: silentLog, ranges, ...(opts.rescue ? { rescue: opts.rescue } : {}) },
    );
    await ring.start();
    t.after(() => ring.stop());
    const sock = createWriteStream(ring.input()!);
    t.after(() => sock.destroy());
    await once(sock, 'open');
    const t0 = clock.now();
    sock.write(Buffer.concat([PAT, pmt(0x1b), frame(0, { rai: true }), more()]));
    // Segments listed, and lost (`before` may make one fail).
    const made = (): number => ring.list().length + ring.stats().segmentsLost;
    for (let s = 1; s <= 4; s++) {
      await waitFor(`segment ${s}`, () => made() === s, 10_000);
      await clock.advance(1000);
      sock.write(Buffer.concat([frame(s * 1000, { rai: true }), more()]));
    }
    await waitFor('five segments', () => made() === 5, 10_000);
    await ring.settle();
    return { ring, dir, clock, t0, sock };
  }

  /** Shrinks the ring's bound to one segment less and cuts the next: the oldest is removed (returned). */
  async function evictOldest(ring: Ring, clock: FakeClock, sock: WriteStream): Promise<Segment> {
    const oldest = ring.list()[0]!;
    ring.setMaxBytes(ring.list().reduce((n, s) => n + s.bytes, 0) - oldest.bytes - 1);
    await clock.advance(1000);
    sock.write(Buffer.concat([frame(5000, { rai: true }), more()]));
    return oldest;
  }

  /** Another ring of the same camera directory, started (what the next run, or a new ring, lists). */
  async function ringAgain(
    t: { after(fn: () => unknown): void },
    dir: string,
    clock: FakeClock,
  ): Promise<Ring> {
    const next = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 1000 },
      { clock, log: silentLog },
    );
    await next.start();
    t.after(() => next.stop());
    return next;
  }

  it("keeps the footage events still need, frees it as they let it go, then removes the camera's directory", async (t) => {
    let ranges: [number, number][] = [];
    const { ring, dir, clock, t0 } = await ringWithSegments(t, () => ranges);
    // An event's footage: 1–2.5 s of the recording (the segments starting at 1 s and 2 s; each
    // segment here is one packet, at its key frame).
    ranges = [[t0 + 1000, t0 + 2500]];
    await clock.advance(120_000); // long past the recent margin (keepMs)
    assert.equal(await ring.retire(), false, 'footage is still needed');
    assert.equal(ring.isRetired, true);
    const kept = ring.list().map((s) => s.keyframes[0]!.ts - t0);
    assert.deepEqual(kept, [1000, 2000], 'only the segments the event needs');
    for (const s of ring.list()) assert.equal((await stat(s.file)).size, s.bytes, 'their files stay whole');
    const names = (await readdir(dir)).sort();
    assert.deepEqual(
      names,
      ['1-1.json', '1-1.ts', '1-2.json', '1-2.ts'],
      'the others are removed, pipes too',
    );
    assert.equal(await ring.prune(), false, 'still needed: nothing more goes');
    assert.equal(ring.list().length, 2);
    ranges = []; // the event aged out of the history
    assert.equal(await ring.prune(), true);
    assert.deepEqual(ring.list(), []);
    await assert.rejects(stat(dir), { code: 'ENOENT' }, 'the directory goes with the last segment');
  });

  it('review finding 1: a segment whose snapshot frames the history could not keep stays listed, its files on disk, and goes once they are kept', async (t) => {
    let stay = true;
    const asked: Segment[][] = [];
    const { ring, dir } = await ringWithSegments(t, () => [], 1e8, {
      rescue: (segments) => {
        asked.push([...segments]);
        return Promise.resolve(stay ? segments.slice(0, 1) : []);
      },
    });
    assert.equal(await ring.retire(), false, 'a segment stays for its snapshot');
    assert.equal(asked.length, 1);
    const first = asked[0]![0]!;
    assert.deepEqual(ring.list(), [first], 'listed again');
    assert.equal((await stat(first.file)).size, first.bytes);
    assert.ok(
      (await stat(first.file.replace(/\.ts$/, '.json'))).isFile(),
      'its description too (a restart lists it)',
    );
    assert.deepEqual((await readdir(dir)).sort(), ['1-0.json', '1-0.ts']);
    stay = false;
    assert.equal(await ring.prune(), true, 'kept at the next try: it goes');
    assert.deepEqual(asked[1], [first]);
    await assert.rejects(stat(dir), { code: 'ENOENT' });
  });

  it('review finding 3: a closed segment lost because its description cannot be written goes only after its snapshot frames are rescued', async (t) => {
    const asked: { segments: Segment[]; onDisk: boolean }[] = [];
    const { ring, dir } = await ringWithSegments(t, () => [], 1e8, {
      // The first segment's description cannot be written: a folder where its temporary file goes.
      before: (d) => mkdir(join(d, '1-0.json.tmp')),
      rescue: (segments) => {
        asked.push({ segments: [...segments], onDisk: existsSync(segments[0]!.file) });
        return Promise.resolve([]);
      },
    });
    assert.equal(ring.list().length, 4, 'the first is lost');
    assert.equal(ring.stats().segmentsLost, 1);
    assert.equal(asked.length, 1, 'its rescue was asked for');
    assert.equal(asked[0]!.segments.length, 1);
    assert.match(asked[0]!.segments[0]!.file, /1-0\.ts$/);
    assert.equal(asked[0]!.onDisk, true, 'its file is still there to be read');
    await waitFor('its file removed', () => !existsSync(join(dir, '1-0.ts')), 10_000);
  });

  it('second review finding 7: a closed segment whose video could not all be written is never listed again, whatever its rescue says', async (t) => {
    // The first write of video to a segment's file fails (an I/O error): the first segment's,
    // flushed as it closes. Its description and the others' writes go through.
    const probe = await open(join(tmpdir(), `argus-probe-${process.pid}`), 'w');
    const proto = Object.getPrototypeOf(probe) as { write: (...a: unknown[]) => Promise<unknown> };
    await probe.close();
    await rm(join(tmpdir(), `argus-probe-${process.pid}`), { force: true });
    const write = proto.write;
    let fail = 1;
    proto.write = function (this: unknown, ...a: unknown[]) {
      const data = a[0];
      if (fail > 0 && Buffer.isBuffer(data) && data[0] === 0x47) {
        fail--;
        return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
      }
      return write.apply(this, a);
    };
    t.after(() => {
      proto.write = write;
    });
    const asked: Segment[][] = [];
    const finals: boolean[] = [];
    const { ring, dir } = await ringWithSegments(t, () => [], 1e8, {
      rescue: (segments, final) => {
        asked.push([...segments]);
        finals.push(final);
        return Promise.resolve(segments); // "keep them all": the history could not write
      },
    });
    assert.deepEqual(finals, [true], 'told that they go whatever: what cannot be kept is lost, not held');
    assert.equal(fail, 0, 'the write failed');
    assert.equal(ring.stats().segmentsLost, 1);
    assert.equal(asked.length, 1, 'its rescue was asked for (what was written may hold a frame)');
    const lost = asked[0]![0]!;
    assert.match(lost.file, /1-0\.ts$/);
    await waitFor('its file removed', () => !existsSync(lost.file), 10_000);
    assert.ok(!ring.list().includes(lost), 'not listed again: its file is short of its bytes');
    assert.ok(!existsSync(join(dir, '1-0.json')));
  });

  it(
    'review finding 8b: stop(true) does not wait for a rescue: the segment waiting for it stays on disk, and the next start lists it',
    { timeout: 20_000 },
    async (t) => {
      let release: (segments: readonly Segment[]) => void = () => undefined;
      const asked: Segment[][] = [];
      const { ring, clock, sock, dir } = await ringWithSegments(t, () => [], 1e8, {
        rescue: (segments) => {
          asked.push([...segments]);
          return new Promise((resolve) => (release = resolve));
        },
      });
      const oldest = await evictOldest(ring, clock, sock);
      await waitFor('the oldest taken off the list', () => asked.length === 1, 10_000);
      assert.ok(asked[0]!.includes(oldest));
      await ring.stop(true); // the rescue still runs (a decode may take 30 s)
      release([]);
      await new Promise((r) => setImmediate(r));
      assert.equal((await stat(oldest.file)).size, oldest.bytes, 'its file stays');
      const next = await ringAgain(t, dir, clock);
      assert.ok(
        next.list().some((s) => s.file === oldest.file),
        'listed again at the next start (and rescued when it goes)',
      );
    },
  );

  it('second review finding 2: a segment the rescue keeps is listed again in the turn the rescue ends, before the files of the others go', async (t) => {
    let release: (segments: readonly Segment[]) => void = () => undefined;
    let rescue: Promise<readonly Segment[]> | undefined;
    let calls = 0;
    const { ring, clock, sock } = await ringWithSegments(t, () => [], 1e8, {
      rescue: () => {
        calls++;
        return calls > 1 ? Promise.resolve([]) : (rescue = new Promise((resolve) => (release = resolve)));
      },
    });
    const oldest = await evictOldest(ring, clock, sock);
    await waitFor('the oldest taken off the list', () => rescue !== undefined, 10_000);
    assert.ok(!ring.list().includes(oldest));
    release([oldest]);
    // A request waiting for the rescue (the history's, attached after the ring's) runs now.
    await rescue;
    assert.ok(ring.list().includes(oldest), 'listed again: the request is answered from it, not 410');
    await ring.settle();
    assert.equal(calls, 1, JSON.stringify(calls));
    assert.ok(ring.list().includes(oldest));
    assert.equal((await stat(oldest.file)).size, oldest.bytes);
  });

  it('second review finding 9: a segment listed again for a rescue still to come is counted and drawn as kept for a `snapshot`, not as recent', async (t) => {
    let calls = 0;
    // The first removal's oldest segment stays (its snapshot could not be kept yet).
    const { ring, clock, sock, t0 } = await ringWithSegments(t, () => [], 1e8, {
      rescue: (segments) => Promise.resolve(++calls === 1 ? segments.slice(0, 1) : []),
    });
    const oldest = ring.list()[0]!;
    await clock.advance(120_000); // all past the recent margin: removed at the next cut
    sock.write(Buffer.concat([frame(125_000, { rai: true }), more()]));
    await waitFor('the oldest listed again', () => calls >= 1 && ring.list().includes(oldest), 10_000);
    const stats = ring.stats();
    assert.equal(stats.snapshotBytes, oldest.bytes, JSON.stringify(stats));
    const first = ring.kept([])[0]!;
    assert.equal(first.start, t0);
    assert.deepEqual(first.why, ['snapshot'], JSON.stringify(first));
  });

  it('second review finding 5: a closed segment is described once its description is renamed into place; one loaded at start is', async (t) => {
    const { ring, dir, clock } = await ringWithSegments(t, () => []);
    const closed = ring.list().filter((s) => !s.open);
    assert.ok(closed.length >= 4);
    for (const s of closed) {
      assert.equal(s.described, true, s.file);
      assert.ok((await stat(s.file.replace(/\.ts$/, '.json'))).isFile());
    }
    await ring.stop(true);
    const next = await ringAgain(t, dir, clock);
    assert.ok(next.list().length >= 4);
    assert.ok(next.list().every((s) => s.described === true));
  });

  it('a ring handed over (its camera records again) while it is still being retired frees nothing: the new ring lists its files', async (t) => {
    const { ring, dir, clock } = await ringWithSegments(t, () => []);
    await clock.advance(120_000); // nothing needs them: a retire would remove them all
    const retiring = ring.retire(); // still stopping
    await ring.handOver();
    assert.equal(await retiring, false);
    assert.equal(await ring.prune(), false, 'a prune asked for later does nothing');
    assert.ok(
      (await readdir(dir)).some((n) => n.endsWith('.ts')),
      'its files stay for the new ring',
    );
  });

  it(
    "a ring handed over while a rescue of its own runs leaves that rescue's files to the new ring, which lists them",
    { timeout: 20_000 },
    async (t) => {
      let release: (segments: readonly Segment[]) => void = () => undefined;
      let asked = 0;
      const { ring, clock, sock, dir } = await ringWithSegments(t, () => [], 1e8, {
        rescue: () => (asked++ === 0 ? new Promise((resolve) => (release = resolve)) : Promise.resolve([])),
      });
      const oldest = await evictOldest(ring, clock, sock);
      await waitFor('the oldest taken off the list, its rescue running', () => asked === 1, 10_000);
      const retiring = ring.retire(); // a reload turned the camera off…
      const handed = ring.handOver(); // …and the next turned it on again
      release([]); // the rescue ends: the old ring would remove the file now
      await handed;
      assert.equal(await retiring, false);
      const next = await ringAgain(t, dir, clock);
      assert.ok(
        next.list().some((s) => s.file === oldest.file),
        'listed by the new ring',
      );
      assert.equal((await stat(oldest.file)).size, oldest.bytes, 'and its file is there');
    },
  );

  it('a retired ring that no event needs is removed at once', async (t) => {
    const { ring, dir } = await ringWithSegments(t, () => []);
    assert.equal(await ring.retire(), true);
    await assert.rejects(stat(dir), { code: 'ENOENT' });
  });

  it("takes a new bound at once (max_gb's share when cameras come and go): the oldest go at the next segment", async (t) => {
    const { ring, clock, sock } = await ringWithSegments(t, () => []);
    const before = ring.list();
    assert.equal(before.length, 5, 'within keepMs and the old bound, all stay');
    const bytes = before.reduce((n, s) => n + s.bytes, 0);
    const bound = bytes - before[0]!.bytes - 1; // the oldest is one too many
    ring.setMaxBytes(bound);
    assert.equal(ring.maxBytes, bound);
    assert.equal(ring.list().length, 5, 'a running ring evicts at its next segment');
    await clock.advance(1000);
    sock.write(Buffer.concat([frame(5000, { rai: true }), more()]));
    await waitFor(
      'the next segment',
      () => ring.list().at(-1)!.keyframes[0]!.ts === before[0]!.keyframes[0]!.ts + 5000,
      2500,
    );
    const after = ring.list();
    assert.ok(!after.includes(before[0]!), 'the oldest went');
    const closed = after.filter((s) => !s.open).reduce((n, s) => n + s.bytes, 0);
    assert.ok(closed <= bound, `${closed} bytes of closed segments within the new bound ${bound}`);
    assert.equal(ring.lastFault?.fault, 'ring_full');
  });
});

describe('Ring: a directory deleted under it', () => {
  it('drops the video that went with it and writes the next segment in the directory made again, from the same run', async (t) => {
    const root = await mkdtemp(join(tmpdir(), 'argus-ring-'));
    t.after(() => rm(root, { recursive: true, force: true }));
    const dir = join(root, 'cam');
    const clock = new FakeClock();
    const ring = new Ring(
      'cam',
      { dir, keepMs: 60_000, maxBytes: 1e8, segmentMs: 1000 },
      { clock, log: silentLog },
    );
    await ring.start();
    t.after(() => ring.stop());
    const sock = createWriteStream(ring.input()!);
    t.after(() => sock.destroy());
    await once(sock, 'open');
    sock.write(Buffer.concat([PAT, pmt(0x1b), frame(0, { rai: true }), more()]));
    await waitFor('the first segment', () => ring.list().length === 1, 10_000);
    await ring.settle();
    await rm(dir, { recursive: true });
    // The pipe ffmpeg writes to is open: the stream goes on. The next key frame finds the directory
    // gone (before the periodic check, due at RING_CHECK_MS, could make it again).
    await clock.advance(1000);
    sock.write(Buffer.concat([frame(1000, { rai: true }), more()]));
    await waitFor('the check', () => ring.lastFault?.fault === 'ring_removed', 10_000);
    await ring.check();
    assert.deepEqual(ring.list(), [], 'what the deleted directory held is not listed');
    await clock.advance(2000);
    sock.write(Buffer.concat([frame(3000, { rai: true }), more()]));
    await waitFor('a segment in the new directory', () => ring.list().length === 1, 10_000);
    await ring.settle();
    const seg = ring.list()[0]!;
    assert.equal(seg.run, 1, 'the same run of ffmpeg: no restart');
    assert.equal((await stat(seg.file)).size, seg.bytes);
    const st = ring.stats();
    assert.ok(st.segmentsLost >= 1 && st.bytes === seg.bytes, JSON.stringify(st));
  });
});

const NONE = { start_s: 0, end_s: 0, reasons: [] };

describe('remuxClip', () => {
  it('names the parts as ffmpeg reads them: the descriptors it is given, the first part from its key frame', () => {
    assert.equal(
      concatInput(
        [
          { file: '/r/1-4.ts', offset: 9024, headerBytes: 376 },
          { file: '/r/1-5.ts', offset: 376, headerBytes: 376 },
        ],
        [50_000, 60_000],
      ),
      'concat:subfile,,start,0,end,376,,:/dev/fd/3|subfile,,start,9024,end,50000,,:/dev/fd/3|/dev/fd/4',
    );
  });

  it("makes ffmpeg's arguments from the plan: its parts as one stream, copied into a faststart MP4, H.265 tagged for Safari", () => {
    // From the key frame at 11 s, in the middle of the first segment, to 13.6 s in the next.
    const plan = planClip(segments(1, 4, 10_000, 2), 11_500, 13_600)!;
    const args = remuxArgs(plan, [50_000, 60_000], '/clips/e.mp4', 2.5);
    assert.deepEqual(args, [
      '-hide_banner',
      '-nostdin',
      '-loglevel',
      'error',
      '-f',
      'mpegts',
      '-i',
      'concat:subfile,,start,0,end,376,,:/dev/fd/3|subfile,,start,1500,end,50000,,:/dev/fd/3|/dev/fd/4',
      '-map',
      '0:v:0',
      '-c',
      'copy',
      '-t',
      '2.500',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      '-y',
      '/clips/e.mp4',
    ]);
    const hevc = remuxArgs({ ...plan, codec: 'hevc' }, [50_000, 60_000], '/clips/e.mp4', 2.5);
    assert.deepEqual(hevc.slice(-6), ['-tag:v', 'hvc1', '-f', 'mp4', '-y', '/clips/e.mp4']);
  });

  it('makes an MP4 with real ffmpeg from a key frame in the middle of the first part, and the parts after it whole', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-remux-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const ffmpegPath = await defaultFfmpegPath();
    // 4 s at 10 frames/s, a key frame each second, in three files as the ring cuts them: 0–2 s, 2–3 s, 3–4 s.
    const made = spawnSync(ffmpegPath, [
      ...[
        '-hide_banner',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        'testsrc=size=160x120:rate=10',
        '-t',
        '4',
      ],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-keyint_min', '10', '-sc_threshold', '0'],
      ...['-f', 'segment', '-segment_times', '2,3', '-segment_format', 'mpegts', join(dir, '1-%d.ts')],
    ]);
    assert.equal(made.status, 0, made.stderr.toString());
    const s = new TsSplitter();
    let at = 0;
    const keys: number[] = [];
    for (const p of s.push(await readFile(join(dir, '1-0.ts')))) {
      if (p.keyframe) keys.push(at);
      at += p.bytes.length;
    }
    assert.equal(keys.length, 2);
    const headerBytes = s.header()!.length;
    const parts = [
      { file: join(dir, '1-0.ts'), offset: keys[1]!, headerBytes },
      { file: join(dir, '1-1.ts'), offset: headerBytes, headerBytes },
      { file: join(dir, '1-2.ts'), offset: headerBytes, headerBytes },
    ];
    const out = join(dir, 'clip.mp4');
    await remuxClip(ffmpegPath, { parts, start: 0, end: 0, codec: 'h264', missing: NONE }, out, 10);
    // From the first part's second key frame to the end: 3 s of the 4, every frame decodes.
    const probe = spawnSync(ffmpegPath, ['-hide_banner', '-i', out, '-f', 'null', '-']);
    const text = probe.stderr.toString();
    assert.equal(probe.status, 0, text);
    assert.match(text, /Duration: 00:00:03\.0/);
    assert.match(text, /frame=\s*30 /);
    assert.doesNotMatch(text, /error|non-existing PPS/i);
  });

  it("rejects with ffmpeg's own words when the input is not a transport stream", async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'argus-remux-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const junk = join(dir, '1-0.ts');
    await writeFile(junk, 'not video');
    await assert.rejects(
      remuxClip(
        await defaultFfmpegPath(),
        {
          parts: [{ file: junk, offset: 0, headerBytes: 0 }],
          start: 0,
          end: 0,
          codec: 'h264',
          missing: NONE,
        },
        join(dir, 'clip.mp4'),
        10,
      ),
      (err: Error) => err.message.length > 0 && !/exited with code/.test(err.message),
    );
  });
});
