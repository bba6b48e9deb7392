import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { letterbox } from '../../../src/core/geometry.js';
import type { RawDetection } from '../../../src/detector/decode.js';
import { toDetections } from '../../../src/detector/results.js';

/** A 640×480 camera in a 320 model input: scale 0.5, 40 rows of padding on top. */
const g = letterbox(640, 480, 320);
const LABELS = ['person', 'bicycle', 'car'];

const raw = (box: RawDetection['box'], classId = 0, score = 0.9): RawDetection => ({ classId, score, box });

describe('toDetections', () => {
  it('maps boxes from the model input back to source pixels', () => {
    assert.deepEqual(toDetections([raw([50, 90, 150, 170])], g, LABELS), [
      { label: 'person', score: 0.9, box: [100, 100, 300, 260] },
    ]);
  });

  it('clips boxes that reach into the padding to the source image', () => {
    assert.deepEqual(toDetections([raw([-10, 20, 330, 300])], g, LABELS), [
      { label: 'person', score: 0.9, box: [0, 0, 640, 480] },
    ]);
  });

  it('drops boxes left empty: in the padding only, or of no width or height', () => {
    const out = toDetections(
      [
        raw([10, 0, 100, 30]), // above the image
        raw([10, 285, 100, 320]), // below it
        raw([100, 100, 100, 150]), // no width
        raw([100, 120, 150, 120]), // no height
        raw([10, 60, 20, 70], 1),
      ],
      g,
      LABELS,
    );
    assert.deepEqual(out, [{ label: 'bicycle', score: 0.9, box: [20, 40, 40, 60] }]);
  });

  it('labels by class id, class<N> past the end of the labels', () => {
    const out = toDetections([raw([50, 90, 150, 170], 2), raw([50, 90, 150, 170], 7)], g, LABELS);
    assert.deepEqual(
      out.map((d) => d.label),
      ['car', 'class7'],
    );
    assert.equal(toDetections([raw([50, 90, 150, 170], 0)], g, [])[0]!.label, 'class0');
  });

  it('rounds scores to 4 places and box coordinates to 1', () => {
    // 1920×1080 in 640: scale 1/3, 140 rows of padding on top.
    const hd = letterbox(1920, 1080, 640);
    const [d] = toDetections([raw([100.37, 200.11, 300.02, 400.049], 0, 0.876_56)], hd, LABELS);
    assert.deepEqual(d, { label: 'person', score: 0.8766, box: [301.1, 180.3, 900.1, 780.1] });
  });

  it('keeps the order of its input', () => {
    const out = toDetections(
      [raw([50, 90, 150, 170], 2, 0.5), raw([0, 40, 10, 50], 0, 0.95), raw([200, 200, 210, 210], 1, 0.3)],
      g,
      LABELS,
    );
    assert.deepEqual(
      out.map((d) => [d.label, d.score]),
      [
        ['car', 0.5],
        ['person', 0.95],
        ['bicycle', 0.3],
      ],
    );
    assert.deepEqual(toDetections([], g, LABELS), []);
  });
});
