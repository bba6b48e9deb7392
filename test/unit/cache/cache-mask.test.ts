import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GRID } from '../../../src/cache/block-hash.js';
import { areaInRect, cellMask, type CellMask } from '../../../src/cache/cache-mask.js';
import { letterbox, type Point } from '../../../src/core/geometry.js';

/** The masked cells as "i,j" (column, row), sorted. */
function cells(mask: CellMask | undefined): string[] {
  const out: string[] = [];
  for (let c = 0; c < (mask?.length ?? 0); c++) if (mask![c]) out.push(`${c % GRID},${Math.floor(c / GRID)}`);
  return out.sort();
}

/** The cells of columns i0..i1 and rows j0..j1, as `cells` lists them. */
function block(i0: number, i1: number, j0: number, j1: number): string[] {
  const out: string[] = [];
  for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++) out.push(`${i},${j}`);
  return out.sort();
}

const rect = (x0: number, y0: number, x1: number, y1: number): Point[] => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
];

describe('areaInRect', () => {
  it('is the area of a polygon inside a rectangle, convex or not', () => {
    assert.equal(areaInRect(rect(0, 0, 2, 2), 1, 1, 3, 3), 1);
    assert.equal(areaInRect(rect(0, 0, 2, 2), 2, 0, 3, 2), 0, 'touching an edge is no overlap');
    assert.equal(areaInRect(rect(0, 0, 4, 4), 1, 1, 2, 2), 1, 'the rectangle inside the polygon');
    assert.equal(
      areaInRect(rect(1.2, 1.2, 1.4, 1.4), 1, 1, 2, 2).toFixed(6),
      '0.040000',
      'the polygon inside',
    );
    // An L: the square [0,2]² without its top-right quarter.
    const l: Point[] = [
      [0, 0],
      [1, 0],
      [1, 1],
      [2, 1],
      [2, 2],
      [0, 2],
    ];
    assert.equal(areaInRect(l, 0, 0, 2, 2), 3);
    assert.equal(areaInRect(l, 1, 0, 2, 1), 0, 'the notch');
  });
});

describe('cellMask', () => {
  // 640×480 into 320: scale 0.5, 240 high, 40 px (4 cells of 10 px) of padding on top.
  const vga = letterbox(640, 480, 320);

  it('none without polygons', () => {
    assert.equal(cellMask([], vga), undefined);
  });

  it('maps source pixels through the letterbox; a polygon edge on a cell edge masks nothing beyond it', () => {
    // x 0..60 → 0..30 (cells 0–2), y 0..60 → 40..70 (rows 4–6).
    assert.deepEqual(cells(cellMask([rect(0, 0, 60, 60)], vga)), block(0, 2, 4, 6));
  });

  it('masks a cell the polygon covers only in part, its centre outside', () => {
    // x 0..64 → 0..32: column 3 (30..40) covered by a fifth; rows 4–7 likewise.
    assert.deepEqual(cells(cellMask([rect(0, 0, 64, 64)], vga)), block(0, 3, 4, 7));
    // A thin diagonal sliver through the top-right corner cell (its centre far from it).
    const sliver: Point[] = [
      [620, 0],
      [640, 0],
      [640, 2],
    ];
    assert.deepEqual(cells(cellMask([sliver], vga)), ['31,4']);
  });

  it('follows a concave polygon: the cells of its notch are not masked', () => {
    const l: Point[] = [
      [0, 0],
      [40, 0],
      [40, 40],
      [80, 40],
      [80, 80],
      [0, 80],
    ];
    // Model pixels 0..40 × 40..80: cells 0–3, rows 4–7, without columns 2–3 of rows 4–5.
    const want = block(0, 3, 4, 7).filter((c) => !['2,4', '3,4', '2,5', '3,5'].includes(c));
    assert.deepEqual(cells(cellMask([l], vga)), want);
  });

  it('joins several polygons, and clips one that leaves the picture', () => {
    const mask = cellMask([rect(0, 0, 20, 20), rect(620, 460, 700, 600)], vga);
    assert.deepEqual(cells(mask), ['0,4', '31,27']);
  });

  it('a 16:9 source, letterboxed top and bottom, for the model input and for the thumbnail', () => {
    // 1920×1080 into 320: scale 1/6, 180 high, 70 px of padding on top (7 cells).
    const model = letterbox(1920, 1080, 320);
    assert.deepEqual([model.innerH, model.padTop], [180, 70]);
    const corner = [rect(1680, 840, 1920, 1080)];
    // x 280..320 (cells 28–31), y 140 + 70 = 210..250 (rows 21–24); the bottom padding stays.
    assert.deepEqual(cells(cellMask(corner, model)), block(28, 31, 21, 24));
    // The thumbnail's own letterbox: 18 high, 7 px on top, one pixel per cell; the same cells.
    const thumb = letterbox(1920, 1080, GRID);
    assert.deepEqual([thumb.innerH, thumb.padTop], [18, 7]);
    assert.deepEqual(cells(cellMask(corner, thumb)), block(28, 31, 21, 24));
  });

  it('a portrait source, letterboxed left and right', () => {
    // 1080×1920 into 320: 180 wide, 70 px of padding on the left.
    const g = letterbox(1080, 1920, 320);
    assert.deepEqual(cells(cellMask([rect(0, 0, 60, 60)], g)), ['7,0']);
  });
});
