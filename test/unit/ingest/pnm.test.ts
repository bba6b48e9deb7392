import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parsePnmHeader, PnmError, PnmSplitter, type PnmImage } from '../../../src/ingest/pnm.js';
import { pnm } from '../../helpers/pnm.js';

/** An image whose bytes differ from image to image and from byte to byte. */
function image(format: 'P5' | 'P6' | 'P7', side: number, k: number): Buffer {
  const img = pnm(format, side);
  const start = img.length - side * side * (format === 'P5' ? 1 : 3);
  for (let i = start; i < img.length; i++) img[i] = (k * 31 + i) & 255;
  return img;
}

describe('PNM stream splitter', () => {
  it('cuts a stream of PGM, PPM and PAM images at arbitrary chunk boundaries (property)', () => {
    const kinds = [
      ['P6', 4],
      ['P7', 32],
      ['P5', 2],
      ['P6', 1],
    ] as const;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: kinds.length - 1 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 40 }),
        (picks, cuts) => {
          const src = picks.map((p, k) => image(kinds[p]![0], kinds[p]![1], k));
          const stream = Buffer.concat(src);
          const got: PnmImage[] = [];
          const s = new PnmSplitter(32 * 32 * 3, (img) => got.push({ ...img, data: Buffer.from(img.data) }));
          for (let off = 0, i = 0; off < stream.length; off += cuts[i++ % cuts.length]!)
            s.push(stream.subarray(off, off + cuts[i % cuts.length]!));
          assert.deepEqual(
            got.map((g) => [g.format, g.width]),
            picks.map((p) => [kinds[p]![0], kinds[p]![1]]),
          );
          got.forEach((g, k) => assert.ok(src[k]!.subarray(src[k]!.length - g.data.length).equals(g.data)));
          assert.equal(s.pending, 0);
        },
      ),
    );
  });

  it('hands out views, not copies, of images that lie inside one chunk', () => {
    const chunk = Buffer.concat([image('P6', 4, 1), image('P7', 32, 2), image('P5', 2, 3)]);
    const got: PnmImage[] = [];
    new PnmSplitter(4096, (img) => got.push(img)).push(chunk);
    assert.deepEqual(
      got.map((g) => [g.format, g.width, g.height, g.depth, g.data.length]),
      [
        ['P6', 4, 4, 3, 48],
        ['P7', 32, 32, 3, 3072],
        ['P5', 2, 2, 1, 4],
      ],
    );
    for (const g of got) assert.equal(g.data.buffer, chunk.buffer);
  });

  it('holds back an incomplete image', () => {
    const got: PnmImage[] = [];
    const s = new PnmSplitter(4096, (img) => got.push(img));
    const img = image('P6', 4, 0);
    s.push(img.subarray(0, 5));
    assert.equal(s.pending, 5);
    s.push(img.subarray(5, 20));
    assert.equal(got.length, 0);
    s.push(img.subarray(20));
    assert.equal(got.length, 1);
    assert.equal(s.pending, 0);
  });

  it('refuses what ffmpeg does not write, and images larger than allowed', () => {
    const push = (bytes: string | Buffer, max = 4096): void =>
      new PnmSplitter(max, () => undefined).push(
        Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes, 'latin1'),
      );
    assert.throws(() => push('GIF89a'), PnmError);
    assert.throws(() => push('P6\n4 4\n65535\n'), /maxval 65535/);
    assert.throws(() => push('P6\n# a comment\n4 4\n255\n'), PnmError);
    assert.throws(() => push(`P7\n${'X'.repeat(200)}`), /ENDHDR/);
    assert.throws(() => push(image('P6', 40, 0)), /40x40 image is larger than expected/);
  });

  it('parses the headers ffmpeg writes, and asks for more bytes of a partial one', () => {
    assert.deepEqual(parsePnmHeader('P6\n640 640\n255\nxyz'), {
      header: { format: 'P6', width: 640, height: 640, depth: 3 },
      length: 15,
    });
    const pam = 'P7\nWIDTH 32\nHEIGHT 32\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n';
    assert.deepEqual(parsePnmHeader(`${pam}\u0000`), {
      header: { format: 'P7', width: 32, height: 32, depth: 3 },
      length: pam.length,
    });
    for (const partial of ['P', 'P6', 'P6\n640', 'P6\n640 640\n255', 'P7\nWIDTH 32\nHEI'])
      assert.equal(parsePnmHeader(partial), undefined, partial);
  });
});
