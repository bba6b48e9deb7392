import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Picture } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { packPictures, unpackDetections } from '../../../src/kserve/pack.js';
import type { Tensor } from '../../../src/kserve/tensor.js';

/** A 2×2 RGB24 picture whose bytes are start, start+1, … */
const picture = (start: number): Picture => ({
  data: Buffer.from(Array.from({ length: 12 }, (_, i) => start + i)),
  geometry: letterbox(2, 2, 2),
});

describe('packPictures', () => {
  it('FP32: NCHW planes of RGB / 255, picture after picture, spare slots zero', () => {
    const t = packPictures('images', [picture(0), picture(100)], 'FP32', 2, 3);
    assert.deepEqual([t.name, t.datatype, t.shape], ['images', 'FP32', [3, 3, 2, 2]]);
    const f = new Float32Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.length / 4);
    assert.equal(f.length, 3 * 12);
    // Picture 0: pixels (0,1,2) (3,4,5) (6,7,8) (9,10,11): R plane 0,3,6,9; G 1,4,7,10; B 2,5,8,11.
    assert.deepEqual(
      [...f.subarray(0, 12)].map((v) => Math.round(v * 255)),
      [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11],
    );
    assert.equal(Math.round(f[12]! * 255), 100);
    assert.deepEqual([...f.subarray(24)], new Array<number>(12).fill(0), 'the spare slot');
  });

  it('FP16: the same values in half precision', () => {
    const t = packPictures('x', [picture(250)], 'FP16', 2);
    assert.equal(t.bytes.length, 12 * 2);
    // 250/255 = 0.98039…: exponent -1, mantissa 0.96078… × 1024 = 983.8 → 984: 0x3800 + 984.
    assert.equal(t.bytes.readUInt16LE(0), 0x3bd8, '250/255 rounded to half');
    assert.equal(t.bytes.readUInt16LE(2), 0x3bf0, '253/255: the R of the next pixel');
  });

  it('UINT8: the RGB24 bytes as they are, [B, S, S, 3]', () => {
    const t = packPictures('images', [picture(0), picture(20)], 'UINT8', 2);
    assert.deepEqual(t.shape, [2, 2, 2, 3]);
    assert.deepEqual([...t.bytes], [...picture(0).data, ...picture(20).data]);
  });
});

describe('unpackDetections', () => {
  const opts = { conf: 0.25, iou: 0.45, maxDet: 300 };

  it('a raw YOLO output [B, 4+C, N]: decoded with class-aware NMS, per batch item', () => {
    // 2 classes, 3 anchors; item 0: anchor 0 class 1 at 0.9, anchor 1 overlaps it at 0.8 (suppressed).
    const rows = 6;
    const n = 3;
    const data = new Float32Array(2 * rows * n);
    const set = (item: number, anchor: number, values: number[]): void =>
      values.forEach((v, r) => (data[item * rows * n + r * n + anchor] = v));
    set(0, 0, [10, 10, 4, 4, 0.1, 0.9]);
    set(0, 1, [10, 11, 4, 4, 0.1, 0.8]);
    set(1, 2, [20, 20, 2, 2, 0.7, 0.1]);
    const out: Tensor = { name: 'output0', datatype: 'FP32', shape: [2, rows, n], data };
    const plan = {
      kind: 'yolo' as const,
      name: 'output0',
      layout: { kind: 'channels-first' as const, classes: 2, anchors: n },
    };
    const got = unpackDetections([out], plan, 2, opts);
    assert.equal(got[0]!.length, 1);
    assert.deepEqual([got[0]![0]!.classId, got[0]![0]!.box], [1, [8, 8, 12, 12]]);
    assert.ok(Math.abs(got[0]![0]!.score - 0.9) < 1e-6);
    assert.deepEqual(
      got[1]!.map((d) => [d.classId, d.box]),
      [[0, [19, 19, 21, 21]]],
    );
    assert.throws(
      () => unpackDetections([{ ...out, shape: [2, rows, 4] }], plan, 2, opts),
      /expected \[2, 6, 3\]/,
    );
    assert.throws(() => unpackDetections([], plan, 2, opts), /has no output 'output0'/);
  });

  it('post-NMS detections [B, K, 6] with counts: rows beyond the count ignored, conf and max applied', () => {
    const rows = Float32Array.from(
      [
        // item 0: two rows, one under conf
        [1, 2, 3, 4, 0.9, 2],
        [5, 6, 7, 8, 0.1, 0],
        [9, 9, 9, 9, 0.99, 1],
        // item 1: one row, then padding
        [0, 0, 10, 10, 0.5, 1],
        [0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0],
      ].flat(),
    );
    const outputs: Tensor[] = [
      { name: 'num_detections', datatype: 'INT32', shape: [2], data: Int32Array.of(2, 1) },
      { name: 'detections', datatype: 'FP32', shape: [2, 3, 6], data: rows },
    ];
    const plan = {
      kind: 'detections' as const,
      name: 'detections' as const,
      countName: 'num_detections' as const,
    };
    const got = unpackDetections(outputs, plan, 2, opts);
    assert.deepEqual(
      got.map((item) => item.map((d) => [d.classId, d.box])),
      [[[2, [1, 2, 3, 4]]], [[1, [0, 0, 10, 10]]]],
    );
    assert.equal(unpackDetections(outputs, plan, 2, { ...opts, maxDet: 0 })[0]!.length, 0);
  });
});
