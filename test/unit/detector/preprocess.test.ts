import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rgbToNchw } from '../../../src/detector/preprocess.js';

describe('rgbToNchw', () => {
  it('writes planes R, G, B scaled to [0, 1] into the given batch slot', () => {
    // 2x1 image: pixel0 = (255, 0, 51), pixel1 = (0, 255, 102)
    const src = new Uint8Array([255, 0, 51, 0, 255, 102]);
    const dst = new Float32Array(2 * 3 * 2).fill(-1);
    rgbToNchw(src, 2, 1, dst, 1);
    assert.deepEqual([...dst.subarray(0, 6)], [-1, -1, -1, -1, -1, -1], 'slot 0 untouched');
    const f = (v: number): number => Math.fround(v / 255);
    assert.deepEqual([...dst.subarray(6)], [1, 0, 0, 1, f(51), f(102)]);
  });

  it('rejects a short frame or a buffer too small for the slot', () => {
    assert.throws(() => rgbToNchw(new Uint8Array(5), 2, 1, new Float32Array(6), 0), RangeError);
    assert.throws(() => rgbToNchw(new Uint8Array(6), 2, 1, new Float32Array(6), 1), RangeError);
  });
});
