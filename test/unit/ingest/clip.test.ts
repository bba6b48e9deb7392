import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planClip, type Segment } from '../../../src/ingest/index.js';
import { TS_PACKET, TsSplitter } from '../../../src/ingest/mpegts.js';

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
const pmt = (type: number): Buffer => psi(0x1000, 0x02, [0xe1, 0x00, 0xf0, 0x00, type, 0xe1, 0x00, 0xf0, 0x00]);
const key = (): Buffer => packet(0x100, { start: true, rai: true });
const inter = (): Buffer => packet(0x100, { start: true });
const more = (): Buffer => packet(0x100);

describe('MPEG-TS splitter', () => {
  it('cuts at key frames of the video PID, whatever the chunks, and keeps the PAT and PMT', () => {
    const stream = Buffer.concat([PAT, pmt(0x1b), key(), more(), inter(), more(), key(), more()]);
    for (const size of [1, 7, 188, 200, 1000, stream.length]) {
      const s = new TsSplitter();
      const pieces = [];
      for (let i = 0; i < stream.length; i += size) pieces.push(...s.push(stream.subarray(i, i + size)));
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

  it('has no plan when the ring holds nothing of that time', () => {
    assert.equal(planClip(segments(1, 0, 10_000, 2), 20_000, 30_000), undefined);
    assert.equal(planClip([], 0, 1), undefined);
  });
});
