import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Picture } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';
import { InputPool, NchwBatch, rgbToNchw } from '../../../src/detector/preprocess.js';

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

  it("packs each picture's RGB bytes into its slot", () => {
    const pool = new InputPool(4);
    const buf = pool.pack([picture(4, 255), picture(4, 51)]);
    const slot = pool.frameBytes;
    assert.equal(buf.length, 2 * slot);
    assert.ok(buf.subarray(0, slot).every((v) => v === 255));
    assert.ok(buf.subarray(slot).every((v) => v === 51));
  });

  it('reuses released buffers, grown to the largest batch seen', () => {
    const pool = new InputPool(4);
    const one = pool.pack([picture(4, 1)]);
    pool.release(one);
    const two = pool.pack([picture(4, 1), picture(4, 2)]);
    assert.notEqual(two, one, 'a buffer for one picture cannot hold two');
    assert.equal(two.length, 2 * pool.frameBytes);
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

describe('NchwBatch', () => {
  it("converts a batch's pictures into NCHW floats, zero-padding the slots past them", () => {
    // Two 1×1 pictures: (255, 0, 51) and (0, 255, 102); three slots, as a static batch of 3.
    const rgb = new Uint8Array([255, 0, 51, 0, 255, 102]);
    const batch = new NchwBatch(1);
    const f = (v: number): number => Math.fround(v / 255);
    assert.deepEqual([...batch.convert(rgb, 0, 2, 3)], [1, 0, f(51), 0, 1, f(102), 0, 0, 0]);
    // The second picture alone, as the last chunk of a static batch of 1.
    assert.deepEqual([...batch.convert(rgb, 1, 1, 1)], [0, 1, f(102)]);
  });

  it('reuses its buffer: a smaller batch after a larger one leaves no stale slot', () => {
    const batch = new NchwBatch(1);
    const big = batch.convert(new Uint8Array(6).fill(255), 0, 2, 2);
    const small = batch.convert(new Uint8Array(3), 0, 1, 2);
    assert.equal(small.buffer, big.buffer, 'the same floats');
    assert.deepEqual([...small], [0, 0, 0, 0, 0, 0]);
  });
});
