import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameImages } from '../../../src/ingest/frame-images.js';
import { PnmError, type PnmImage } from '../../../src/ingest/pnm.js';

const img = (format: PnmImage['format'], side: number, fill = 0): PnmImage => {
  const depth = format === 'P5' ? 1 : 3;
  return { format, width: side, height: side, depth, data: Buffer.alloc(side * side * depth, fill) };
};

describe("ffmpeg's images as frames", () => {
  it('without thumbnails, each picture of the model size is a frame', () => {
    const images = new FrameImages(8, false);
    const picture = img('P6', 8, 1);
    assert.deepEqual(images.take(picture), { data: picture.data, index: 0 });
    assert.equal(images.take(picture)!.index, 1);
    assert.throws(() => images.take(img('P7', 32)), PnmError);
    assert.throws(() => images.take(img('P5', 2)), PnmError);
  });

  it('with thumbnails, a thumbnail ends a frame with the last picture; ticks are ignored', () => {
    const images = new FrameImages(8, true);
    assert.equal(images.take(img('P7', 32)), undefined, 'no picture yet (frame 0 of the stream)');
    const first = img('P6', 8, 1);
    assert.equal(images.take(first), undefined);
    const t1 = img('P7', 32, 11);
    assert.deepEqual(images.take(t1), { data: first.data, thumb: t1.data, index: 1 });
    assert.equal(images.take(img('P5', 2)), undefined);
    const t2 = img('P7', 32, 12);
    const frame = images.take(t2)!;
    assert.equal(frame.data, first.data, 'unchanged: the same buffer');
    assert.equal(frame.thumb, t2.data);
    const second = img('P6', 8, 2);
    images.take(second);
    const last = images.take(img('P7', 32))!;
    assert.equal(last.data, second.data);
    assert.equal(last.index, 3, 'every thumbnail counts, ticks do not');
  });

  it('refuses images the stream should not hold', () => {
    const images = new FrameImages(8, true);
    assert.throws(() => images.take(img('P6', 16)), /unexpected P6 image of 16x16/);
    assert.throws(() => images.take({ ...img('P7', 32), depth: 4 }), PnmError);
  });
});
