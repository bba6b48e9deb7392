import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockDistance, blockHash, GRID } from '../../../src/cache/block-hash.js';

type Rgb = [number, number, number];

/** A `size`×`size` RGB24 frame whose pixel (x, y) is `paint(x, y)`. */
function frame(size: number, paint: (x: number, y: number) => Rgb): Uint8Array {
  const rgb = new Uint8Array(size * size * 3);
  for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) rgb.set(paint(x, y), (y * size + x) * 3);
  return rgb;
}

/** The hash of a frame painted by `paint`. */
const hashOf = (size: number, paint: (x: number, y: number) => Rgb): Uint8Array =>
  blockHash(frame(size, paint), size);

const black: Rgb = [0, 0, 0];
const white: Rgb = [255, 255, 255];
const grey = (v: number): Rgb => [v, v, v];
const cell = (hash: Uint8Array, cx: number, cy: number): number => hash[cy * GRID + cx]!;

describe('blockHash', () => {
  it('is a 32×32 grid whatever the frame size', () => {
    assert.equal(GRID, 32);
    for (const size of [32, 100, 320, 640]) assert.equal(hashOf(size, () => black).length, 1024);
  });

  it('weighs green twice: brightness ≈ (r + 2g + b) / 4, rounded', () => {
    const colours: [Rgb, number][] = [
      [[255, 0, 0], 64], // 63.75
      [[0, 255, 0], 128], // 127.5
      [[0, 0, 255], 64],
      [[200, 100, 0], 100],
      [[10, 20, 30], 20],
      [white, 255],
    ];
    // At size 32 every pixel is its own cell.
    const hash = hashOf(32, (x) => colours[x % colours.length]![0]);
    for (let x = 0; x < 32; x++) assert.equal(cell(hash, x, 5), colours[x % colours.length]![1], `cell ${x}`);
  });

  it('averages 10×10 blocks at 320', () => {
    // Each cell a different uniform grey: the hash reads it back exactly.
    const uniform = hashOf(320, (x, y) => grey(Math.floor(x / 10) * 7 + Math.floor(y / 10)));
    for (let cy = 0; cy < GRID; cy++)
      for (let cx = 0; cx < GRID; cx++) assert.equal(cell(uniform, cx, cy), cx * 7 + cy);

    // One white pixel in a black frame lights only its own cell, by 255/100.
    for (const [x, y, cx, cy] of [
      [9, 9, 0, 0],
      [10, 0, 1, 0],
      [0, 10, 0, 1],
      [319, 319, 31, 31],
    ] as const) {
      const hash = hashOf(320, (px, py) => (px === x && py === y ? white : black));
      assert.equal(cell(hash, cx, cy), 3, `pixel ${x},${y} in cell ${cx},${cy}`);
      assert.equal(hash.filter((v) => v > 0).length, 1, 'no other cell lit');
    }
  });

  it('averages uneven cells at 100 (3 or 4 pixels a side)', () => {
    // 100 / 32 = 3.125: cell 0 covers x 0..3, cell 1 x 4..6, cell 31 x 97..99.
    const lit = (x: number, y: number): Uint8Array =>
      hashOf(100, (px, py) => (px === x && py === y ? white : black));
    assert.equal(cell(lit(3, 3), 0, 0), 16); // 255 / 16
    assert.equal(cell(lit(4, 0), 1, 0), 21); // 255 / 12
    assert.equal(cell(lit(4, 0), 0, 0), 0);
    assert.equal(cell(lit(99, 99), 31, 31), 28); // 255 / 9
    assert.equal(cell(lit(96, 0), 30, 0), 21); // cell 30 covers x 94..96

    // Vertical stripes of grey 2x: each cell is the mean of its own columns, on every row.
    const columnsOf = (c: number): number[] => {
      const xs: number[] = [];
      for (let x = Math.ceil((100 * c) / 32); x < Math.ceil((100 * (c + 1)) / 32); x++) xs.push(x);
      return xs;
    };
    const stripes = hashOf(100, (x) => grey(2 * x));
    let covered = 0;
    for (let cx = 0; cx < GRID; cx++) {
      const xs = columnsOf(cx);
      covered += xs.length;
      const mean = Math.round(xs.reduce((s, x) => s + 2 * x, 0) / xs.length);
      for (let cy = 0; cy < GRID; cy++) assert.equal(cell(stripes, cx, cy), mean, `cell ${cx},${cy}`);
    }
    assert.equal(covered, 100);
    // The same along y.
    const bands = hashOf(100, (_x, y) => grey(2 * y));
    for (let cy = 0; cy < GRID; cy++) assert.equal(cell(bands, 7, cy), cell(stripes, cy, 7));
  });

  it('refuses frames smaller than the grid', () => {
    assert.throws(() => blockHash(new Uint8Array(31 * 31 * 3), 31), {
      name: 'RangeError',
      message: /31 is below the hash grid of 32/,
    });
    assert.doesNotThrow(() => blockHash(new Uint8Array(32 * 32 * 3), 32));
  });
});

describe('blockDistance', () => {
  const base = hashOf(64, () => grey(100));
  /** The base frame with cell (0, 0) brightened by `by`. */
  const moved = (by: number): Uint8Array => hashOf(64, (x, y) => grey(x < 2 && y < 2 ? 100 + by : 100));

  it('is 0 between a hash and itself', () => {
    assert.equal(blockDistance(base, base, 0), 0);
  });

  it('counts cells that differ by more than the threshold, in either direction', () => {
    assert.equal(blockDistance(base, moved(10), 9), 1);
    assert.equal(blockDistance(moved(10), base, 9), 1);
    assert.equal(blockDistance(base, moved(10), 10), 0, 'a difference equal to the threshold is not counted');
    assert.equal(blockDistance(base, moved(-10), 9), 1);
  });

  it('counts every cell when the whole frame changes', () => {
    const brighter = hashOf(64, () => grey(140));
    assert.equal(blockDistance(base, brighter, 39), 1024);
    assert.equal(blockDistance(base, brighter, 40), 0);
  });

  it('counts a small object as a few cells', () => {
    // A 6×6 white square at 64: 3×3 cells of 2×2 pixels change.
    const square = hashOf(64, (x, y) => (x >= 20 && x < 26 && y >= 30 && y < 36 ? white : grey(100)));
    assert.equal(blockDistance(base, square, 20), 9);
  });
});
