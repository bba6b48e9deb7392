import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  anchorPoint,
  area,
  distance,
  fromCentre,
  iou,
  letterbox,
  toModel,
  toSource,
  type Box,
} from '../../../src/core/geometry.js';

/** `a` and `b` have the same length, and each element of one is within `eps` of the other's. */
const close = (a: readonly number[], b: readonly number[], eps = 1e-6): void => {
  const what = `${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  assert.equal(a.length, b.length, what);
  a.forEach((v, i) => assert.ok(Math.abs(v - b[i]!) <= eps, what));
};

describe('letterbox geometry', () => {
  it('portrait: bus.jpg 810x1080 into 640 (pillarboxed, centred)', () => {
    const g = letterbox(810, 1080, 640);
    assert.equal(g.scale, 640 / 1080);
    assert.deepEqual([g.innerW, g.innerH, g.padLeft, g.padTop], [480, 640, 80, 0]);
  });

  it('landscape: 1920x1080 into 640 (letterboxed)', () => {
    const g = letterbox(1920, 1080, 640);
    assert.deepEqual([g.innerW, g.innerH, g.padLeft, g.padTop], [640, 360, 0, 140]);
  });

  it('square source fills the input', () => {
    const g = letterbox(1000, 1000, 320);
    assert.deepEqual([g.innerW, g.innerH, g.padLeft, g.padTop], [320, 320, 0, 0]);
  });

  it('an odd padding puts the extra pixel after, as Ultralytics does', () => {
    // 640x481 -> inner 640x481 at scale 1; pad 159 = 79 before + 80 after.
    const g = letterbox(640, 481, 640);
    assert.deepEqual([g.innerH, g.padTop], [481, 79]);
  });

  it('tiny sources are scaled up', () => {
    const g = letterbox(4, 2, 640);
    assert.deepEqual([g.scale, g.innerW, g.innerH, g.padTop], [160, 640, 320, 160]);
    const one = letterbox(1, 1, 32);
    assert.deepEqual([one.innerW, one.innerH, one.padLeft, one.padTop], [32, 32, 0, 0]);
  });

  it('a 1-pixel-high strip keeps at least one row', () => {
    const g = letterbox(10000, 1, 64);
    assert.deepEqual([g.innerW, g.innerH], [64, 1]);
    assert.equal(g.padTop, 31);
  });

  it('huge sources (8K, 16K panorama) are scaled down', () => {
    const g = letterbox(7680, 4320, 640);
    assert.deepEqual([g.innerW, g.innerH, g.padTop], [640, 360, 140]);
    const p = letterbox(16384, 2048, 1280);
    assert.deepEqual([p.innerW, p.innerH, p.padTop], [1280, 160, 560]);
  });

  it('rejects non-positive sizes', () => {
    assert.throws(() => letterbox(0, 10, 640), RangeError);
    assert.throws(() => letterbox(10, 10, -1), RangeError);
  });

  it('maps model boxes back to source pixels and round-trips', () => {
    for (const [w, h, s] of [
      [810, 1080, 640],
      [1920, 1080, 640],
      [640, 480, 320],
      [333, 777, 416],
    ] as const) {
      const g = letterbox(w, h, s);
      const src: Box = [w * 0.1, h * 0.2, w * 0.6, h * 0.9];
      close(toSource(g, toModel(g, src)), src, 1e-6);
    }
  });

  it('maps the padded corner of the input to the source corner', () => {
    const g = letterbox(810, 1080, 640);
    close(toSource(g, [80, 0, 560, 640]), [0, 0, 810, 1080]);
  });

  it('clips boxes to the source image', () => {
    const g = letterbox(810, 1080, 640);
    // A box reaching into the left padding and past the bottom.
    close(toSource(g, [40, 600, 200, 700]), [0, 1012.5, (200 - 80) / (480 / 810), 1080]);
  });
});

describe('iou', () => {
  it('computes hand-checked overlaps', () => {
    assert.equal(iou([0, 0, 10, 10], [0, 0, 10, 10]), 1);
    assert.equal(iou([0, 0, 10, 10], [10, 0, 20, 10]), 0, 'touching boxes do not overlap');
    assert.equal(iou([0, 0, 10, 10], [5, 0, 15, 10]), 50 / 150);
    assert.equal(iou([0, 0, 10, 10], [2, 2, 4, 4]), 4 / 100);
    assert.equal(iou([0, 0, 0, 0], [0, 0, 0, 0]), 0, 'degenerate boxes');
  });
});

describe('box points and sizes', () => {
  const box: Box = [10, 20, 30, 60];

  it('anchors a box at its centre or its bottom centre', () => {
    assert.deepEqual(anchorPoint(box, 'center'), [20, 40]);
    assert.deepEqual(anchorPoint(box, 'bottom_center'), [20, 60]);
  });

  it('turns a centre and a size into corners, and back', () => {
    assert.deepEqual(fromCentre(20, 40, 20, 40), box);
    assert.deepEqual(fromCentre(...anchorPoint(box, 'center'), box[2] - box[0], box[3] - box[1]), box);
  });

  it('measures the distance between two points either way', () => {
    assert.equal(distance([0, 0], [3, 4]), 5);
    assert.equal(distance([3, 4], [0, 0]), 5);
    assert.equal(distance([1, 1], [1, 1]), 0);
  });

  it('gives an empty or inverted box no area', () => {
    assert.equal(area(box), 800);
    assert.equal(area([5, 5, 5, 9]), 0);
    assert.equal(area([30, 60, 10, 20]), 0);
  });
});
