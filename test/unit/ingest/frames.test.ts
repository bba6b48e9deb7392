import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { FrameSplitter } from '../../../src/ingest/frames.js';

describe('frame splitter', () => {
  const frames = (n: number, size: number): Buffer[] =>
    Array.from({ length: n }, (_, k) =>
      Buffer.from(Array.from({ length: size }, (_, i) => (k * 31 + i) & 255)),
    );

  it('reassembles frames across arbitrary chunk boundaries (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 40 }),
        (size, count, cuts) => {
          const src = frames(count, size);
          const stream = Buffer.concat(src);
          const got: Buffer[] = [];
          const s = new FrameSplitter(size, (f) => got.push(Buffer.from(f)));
          let off = 0;
          let i = 0;
          while (off < stream.length) {
            const n = cuts[i++ % cuts.length]!;
            s.push(stream.subarray(off, off + n));
            off += n;
          }
          assert.equal(got.length, count);
          got.forEach((f, k) => assert.ok(f.equals(src[k]!)));
          assert.equal(s.pending, 0);
        },
      ),
    );
  });

  it('hands out views, not copies, of frames that lie inside one chunk', () => {
    const chunk = Buffer.concat(frames(3, 8));
    const got: Buffer[] = [];
    new FrameSplitter(8, (f) => got.push(f)).push(chunk);
    assert.equal(got.length, 3);
    for (const f of got) assert.equal(f.buffer, chunk.buffer);
  });

  it('holds back a partial frame and drops it on reset', () => {
    const got: Buffer[] = [];
    const s = new FrameSplitter(10, (f) => got.push(f));
    s.push(Buffer.alloc(25));
    assert.equal(got.length, 2);
    assert.equal(s.pending, 5);
    s.reset();
    s.push(Buffer.alloc(10));
    assert.equal(got.length, 3);
  });
});
