import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Picture } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { InputPool, rgbToNchw } from '../../../src/detector/preprocess.js';

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

describe('InputPool', () => {
  const picture = (size: number, fill: number): Picture => ({
    data: Buffer.alloc(size * size * 3, fill),
    geometry: letterbox(size, size, size),
  });

  it('packs each picture into its slot as float NCHW', () => {
    const pool = new InputPool(4);
    const buf = pool.pack([picture(4, 255), picture(4, 51)]);
    const plane = pool.frameFloats;
    assert.equal(buf[0], 1);
    assert.equal(buf[plane], Math.fround(51 / 255));
    assert.equal(buf[2 * plane - 1], Math.fround(51 / 255));
  });

  it('reuses released buffers, grown to the largest batch seen', () => {
    const pool = new InputPool(4);
    const one = pool.pack([picture(4, 1)]);
    pool.release(one);
    const two = pool.pack([picture(4, 1), picture(4, 2)]);
    assert.notEqual(two, one, 'a buffer for one picture cannot hold two');
    assert.equal(two.length, 2 * pool.frameFloats);
    pool.release(two);
    for (let i = 0; i < 50; i++)
      pool.release(pool.pack(i % 2 ? [picture(4, i)] : [picture(4, i), picture(4, i)]));
    assert.equal(pool.allocated, 2, 'the too-small buffer was let go; the large one serves every batch');
    // Two batches in flight at once need two buffers.
    const a = pool.pack([picture(4, 1)]);
    const b = pool.pack([picture(4, 1)]);
    assert.notEqual(a, b);
    assert.equal(pool.allocated, 3);
  });

  it('refuses a picture of another size than the model takes', () => {
    assert.throws(() => new InputPool(4).pack([picture(8, 0)]), /picture is 8x8, the model takes 4x4/);
  });
});
