import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  decodeYolo,
  LayoutError,
  nms,
  resolveLayout,
  type RawDetection,
} from '../../../src/detector/decode.js';

/** Builds a [1, 4+C, N] output from anchors given as (cx, cy, w, h, ...scores). */
function channelsFirst(anchors: number[][]): Float32Array {
  const rows = anchors[0]!.length;
  const n = anchors.length;
  const out = new Float32Array(rows * n);
  anchors.forEach((a, i) => a.forEach((v, r) => (out[r * n + i] = v)));
  return out;
}

function transposed(anchors: number[][]): Float32Array {
  return Float32Array.from(anchors.flat());
}

describe('resolveLayout', () => {
  it('reads [B, 4+C, N] and [B, N, 4+C] given the class count', () => {
    assert.deepEqual(resolveLayout([1, 84, 8400], 80), {
      kind: 'channels-first',
      classes: 80,
      anchors: 8400,
    });
    assert.deepEqual(resolveLayout(['batch', 8400, 84], 80), {
      kind: 'transposed',
      classes: 80,
      anchors: 8400,
    });
  });
  it('infers the class count from the smaller axis when unknown', () => {
    assert.deepEqual(resolveLayout([1, 6, 100]), { kind: 'channels-first', classes: 2, anchors: 100 });
    assert.deepEqual(resolveLayout([1, 100, 6]), { kind: 'transposed', classes: 2, anchors: 100 });
  });
  it('rejects layouts it does not understand, saying why', () => {
    assert.throws(() => resolveLayout([1, 3549, 85], 80), /does not fit 80 classes.*objectness/);
    assert.throws(() => resolveLayout([1, 600], 2), /not a YOLO detection output/);
    assert.throws(() => resolveLayout([1, 'a', 'b'], 2), LayoutError);
    assert.throws(() => resolveLayout([1, 4, 4]), LayoutError);
  });
});

describe('nms', () => {
  const d = (classId: number, score: number, box: [number, number, number, number]): RawDetection => ({
    classId,
    score,
    box,
  });
  it('keeps the best of overlapping boxes of one class', () => {
    const kept = nms(
      [d(0, 0.6, [1, 0, 11, 10]), d(0, 0.9, [0, 0, 10, 10]), d(0, 0.5, [50, 50, 60, 60])],
      0.45,
    );
    assert.deepEqual(
      kept.map((k) => k.score),
      [0.9, 0.5],
    );
  });
  it('is class-aware: overlapping boxes of different classes both stay', () => {
    const kept = nms([d(0, 0.9, [0, 0, 10, 10]), d(1, 0.8, [0, 0, 10, 10])], 0.45);
    assert.equal(kept.length, 2);
  });
  it('keeps boxes overlapping exactly at the threshold', () => {
    // IoU of these two is 1/3.
    const kept = nms([d(0, 0.9, [0, 0, 10, 10]), d(0, 0.8, [5, 0, 15, 10])], 1 / 3);
    assert.equal(kept.length, 2);
    assert.equal(nms([d(0, 0.9, [0, 0, 10, 10]), d(0, 0.8, [5, 0, 15, 10])], 0.3).length, 1);
  });
  it('caps the result at maxDet, best first', () => {
    const many = Array.from({ length: 10 }, (_, i) => d(0, i / 10, [i * 20, 0, i * 20 + 10, 10]));
    const kept = nms(many, 0.45, 3);
    assert.deepEqual(
      kept.map((k) => k.score),
      [0.9, 0.8, 0.7],
    );
  });
  it('suppression is by kept boxes only (chain A>B>C with A∩C empty keeps C)', () => {
    const kept = nms([d(0, 0.9, [0, 0, 10, 10]), d(0, 0.8, [4, 0, 14, 10]), d(0, 0.7, [8, 0, 18, 10])], 0.3);
    assert.deepEqual(
      kept.map((k) => k.score),
      [0.9, 0.7],
    );
  });
});

describe('decodeYolo', () => {
  // Three anchors, two classes: (cx, cy, w, h, s0, s1)
  const anchors = [
    [50, 40, 20, 10, 0.9, 0.1],
    [52, 40, 20, 10, 0.7, 0.2], // overlaps anchor 0, same class: suppressed
    [10, 10, 4, 4, 0.1, 0.3],
    [90, 90, 10, 10, 0.2, 0.24], // below conf 0.25
  ];
  const layoutCF = resolveLayout([1, 6, 4], 2);
  const layoutT = resolveLayout([1, 4, 6], 2);

  it('decodes centre/size to corners, thresholds and suppresses', () => {
    const dets = decodeYolo(channelsFirst(anchors), layoutCF, 0, { conf: 0.25, iou: 0.45 });
    assert.equal(dets.length, 2);
    assert.deepEqual(dets[0]!.box, [40, 35, 60, 45]);
    assert.equal(dets[0]!.classId, 0);
    assert.ok(Math.abs(dets[0]!.score - 0.9) < 1e-6);
    assert.deepEqual(dets[1]!.box, [8, 8, 12, 12]);
    assert.equal(dets[1]!.classId, 1);
  });

  it('gives the same result for the transposed layout', () => {
    const a = decodeYolo(channelsFirst(anchors), layoutCF, 0, { conf: 0.25, iou: 0.45 });
    const b = decodeYolo(transposed(anchors), layoutT, 0, { conf: 0.25, iou: 0.45 });
    assert.deepEqual(a, b);
  });

  it('reads the right item of a batch', () => {
    const other = anchors.map((a) => [a[0]! + 100, ...a.slice(1)]);
    const batch = new Float32Array([...channelsFirst(anchors), ...channelsFirst(other)]);
    const item1 = decodeYolo(batch, layoutCF, 1, { conf: 0.25, iou: 0.45 });
    assert.deepEqual(item1[0]!.box, [140, 35, 160, 45]);
  });

  it('returns nothing for an empty scene', () => {
    const empty = anchors.map((a) => [...a.slice(0, 4), 0.01, 0.02]);
    assert.deepEqual(decodeYolo(channelsFirst(empty), layoutCF, 0, { conf: 0.25, iou: 0.45 }), []);
  });
});
