import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { Detection } from '../../../src/core/frame.js';
import { LETTERBOX_PAD, letterbox } from '../../../src/core/geometry.js';
import { annotatedJpeg, croppedJpeg, cropRegion, LABEL_PX, labelSize } from '../../../src/draw/jpeg.js';

/** A 640×480 camera seen by a 320 model: 320×240 inside, 40 rows of padding above and below. */
const g = letterbox(640, 480, 320);
const BACKGROUND = [40, 60, 80] as const;

/**
 * The model input: grey padding around a uniform inner image whose top-left 8×8 pixels are
 * white (so a crop in the wrong place shows).
 */
function modelInput(): Buffer {
  const rgb = Buffer.alloc(g.dstW * g.dstH * 3, LETTERBOX_PAD);
  for (let y = 0; y < g.innerH; y++)
    for (let x = 0; x < g.innerW; x++) {
      const i = ((y + g.padTop) * g.dstW + x + g.padLeft) * 3;
      rgb.set(x < 8 && y < 8 ? [255, 255, 255] : BACKGROUND, i);
    }
  return rgb;
}

interface Decoded {
  width: number;
  height: number;
  /** The RGB of pixel (x, y). */
  at(x: number, y: number): number[];
}

async function decode(jpeg: Buffer): Promise<Decoded> {
  assert.equal((await sharp(jpeg).metadata()).format, 'jpeg');
  const { data, info } = await sharp(jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    width: info.width,
    height: info.height,
    at: (x, y) => {
      const i = (y * info.width + x) * info.channels;
      return [...data.subarray(i, i + 3)];
    },
  };
}

/** Within JPEG noise of `rgb`. */
function near(px: number[], rgb: readonly number[], tolerance = 12): boolean {
  return px.every((v, i) => Math.abs(v - rgb[i]!) <= tolerance);
}

/** The first box colour, #ff3838, as it survives JPEG on a 2-pixel line. */
function red(px: number[]): boolean {
  const [r, g, b] = px as [number, number, number];
  return r > 150 && r - g > 60 && r - b > 60;
}

/** Red pixels in the strip above the box (y 50), where its label is written. */
function labelInk(img: Decoded): number {
  let n = 0;
  for (let y = 30; y < 48; y++) for (let x = 50; x < 320; x++) if (red(img.at(x, y))) n++;
  return n;
}

// In source pixels; halved in the 320×240 image: x 50..150, y 50..130.
const person: Detection = { label: 'person', score: 0.91, box: [100, 100, 300, 260] };

describe('annotatedJpeg', () => {
  it('is the frame without its letterbox padding, at the inner size', async () => {
    assert.deepEqual([g.innerW, g.innerH, g.padLeft, g.padTop], [320, 240, 0, 40]);
    const img = await decode(await annotatedJpeg(modelInput(), g, []));
    assert.deepEqual([img.width, img.height], [320, 240]);
    assert.ok(
      near(img.at(3, 3), [255, 255, 255]),
      `the white corner at the top left: ${img.at(3, 3).join(',')}`,
    );
    for (const [x, y] of [
      [12, 12],
      [319, 0],
      [0, 239],
      [319, 239],
      [160, 120],
    ] as const)
      assert.ok(near(img.at(x, y), BACKGROUND), `no padding at ${x},${y}: ${img.at(x, y).join(',')}`);
  });

  it('draws the box where the detection is, scaled from source pixels', async () => {
    const img = await decode(await annotatedJpeg(modelInput(), g, [person]));
    assert.deepEqual([img.width, img.height], [320, 240]);
    for (const [x, y] of [
      [140, 50],
      [50, 90],
      [150, 90],
      [100, 130],
    ] as const)
      assert.ok(red(img.at(x, y)), `outline at ${x},${y} is red: ${img.at(x, y).join(',')}`);
    assert.ok(labelInk(img) > 0, 'a label above the box');
    // Inside and outside the box, the frame is untouched.
    for (const [x, y] of [
      [100, 90],
      [75, 75],
      [140, 120],
      [200, 90],
      [100, 180],
      [200, 100],
      [300, 200],
    ] as const)
      assert.ok(near(img.at(x, y), BACKGROUND), `background at ${x},${y}: ${img.at(x, y).join(',')}`);
  });

  it('draws labels with XML special characters', async () => {
    const tricky: Detection = { ...person, label: 'a<b> & "c" \'d\'' };
    const img = await decode(await annotatedJpeg(modelInput(), g, [tricky]));
    assert.deepEqual([img.width, img.height], [320, 240]);
    assert.ok(red(img.at(140, 50)), `the box is still drawn: ${img.at(140, 50).join(',')}`);
    assert.ok(labelInk(img) > 0, 'and its label');
  });

  /** Rows of the label's band above the box's top edge (y = top): red pixels in column x. */
  function bandRows(img: Decoded, x: number, top: number): number {
    let n = 0;
    for (let y = 0; y < top - 2; y++) if (red(img.at(x, y))) n++;
    return n;
  }

  it('drawn for a display width, is scaled down to it (never up), labels LABEL_PX high where shown', async () => {
    // The frame inside the padding is 320×240; the box's top left corner is at (50, 50) there.
    for (const [width, drawn] of [
      [160, 160],
      [320, 320],
      [640, 320],
      [1280, 320],
    ] as const) {
      const img = await decode(await annotatedJpeg(modelInput(), g, [person], { width }));
      assert.deepEqual([img.width, img.height], [drawn, (drawn * 3) / 4]);
      const scale = drawn / 320;
      const rows = bandRows(img, Math.round(50 * scale) + 2, Math.round(50 * scale));
      const expected = Math.round(LABEL_PX * 1.3 * (drawn / width));
      assert.ok(Math.abs(rows - expected) <= 2, `${rows} band rows at width ${width}, not ${expected}`);
    }
    assert.equal(labelSize(320, 640), LABEL_PX / 2);
  });

  it('drawn at the frame size (snapshots), has labels a 32nd of its width, never under LABEL_PX', () => {
    assert.equal(labelSize(640), 20);
    assert.equal(labelSize(320), LABEL_PX);
  });
});

describe('croppedJpeg', () => {
  it('is the box and a margin of 15 % of its size on each side, without padding or drawing', async () => {
    // The box spans x 50..150, y 50..130 in the image; 15 % more: x 35..165, y 38..142.
    assert.deepEqual(cropRegion(g, person.box), { left: 35, top: 38, width: 130, height: 104 });
    const img = await decode(await croppedJpeg(modelInput(), g, person.box));
    assert.deepEqual([img.width, img.height], [130, 104]);
    for (const [x, y] of [
      [0, 0],
      [15, 12],
      [65, 52],
      [129, 103],
    ] as const)
      assert.ok(near(img.at(x, y), BACKGROUND), `frame pixels at ${x},${y}: ${img.at(x, y).join(',')}`);
  });

  it('stays within the picture at its edges', async () => {
    // The white corner (image pixels 0..7) is inside a box at the top left of the source.
    assert.deepEqual(cropRegion(g, [0, 0, 20, 20]), { left: 0, top: 0, width: 12, height: 12 });
    const img = await decode(await croppedJpeg(modelInput(), g, [0, 0, 20, 20]));
    assert.deepEqual([img.width, img.height], [12, 12]);
    assert.ok(
      near(img.at(2, 2), [255, 255, 255]),
      `the white corner, not padding: ${img.at(2, 2).join(',')}`,
    );
    assert.deepEqual(cropRegion(g, [600, 460, 640, 480]), { left: 297, top: 228, width: 23, height: 12 });
    assert.deepEqual(cropRegion(g, [640, 480, 640, 480]), { left: 319, top: 239, width: 1, height: 1 });
  });
});
