import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameCache, moved } from '../../../src/cache/frame-cache.js';
import type { Detection, Frame } from '../../../src/core/frame.js';
import type { Box } from '../../../src/core/geometry.js';
import { letterbox, type Point } from '../../../src/core/geometry.js';

const SIZE = 32;

/**
 * A frame whose 32×32 hash cells all have brightness `v`, except the first `changed` cells (in
 * the first row of cells), which have brightness `to`.
 */
function frame(camera: string, ts: number, v: number, changed = 0, to = v): Frame {
  const data = Buffer.alloc(SIZE * SIZE * 3, v);
  for (let x = 0; x < changed; x++) data.fill(to, x * 3, x * 3 + 3);
  return { camera, seq: 1, ts, data, geometry: letterbox(SIZE, SIZE, SIZE) };
}

const settings = { enabled: true, max_distance: 2, cell_threshold: 10, max_age_s: 1, analyse_moving: true };

describe('frame cache', () => {
  it('hits within the distance and age, misses outside, and is per camera', () => {
    const cache = new FrameCache(settings);
    assert.deepEqual(cache.decide(frame('a', 0, 50)), { hit: false, reason: 'empty' });
    cache.store(frame('a', 0, 50), []);
    assert.equal(cache.decide(frame('a', 500, 55)).hit, true);
    assert.deepEqual(cache.decide(frame('a', 500, 50, 3, 90)), {
      hit: false,
      reason: 'changed',
      distance: 3,
    });
    assert.equal(cache.decide(frame('a', 500, 50, 2, 90)).hit, true, 'two changed cells are within 2');
    assert.deepEqual(cache.decide(frame('a', 1001, 50)), {
      hit: true,
      detections: [],
      distance: 0,
      age: 1001,
      samePixels: false,
      refresh: true,
    });
    assert.deepEqual(cache.decide(frame('b', 10, 50)), { hit: false, reason: 'empty' });
  });

  it('past max_age_s a scene that looks the same is still answered, and asks for a fresh analysis', () => {
    const cache = new FrameCache(settings);
    const dets = [{ label: 'person', score: 0.9, box: [1, 2, 3, 4] as [number, number, number, number] }];
    cache.store(frame('a', 0, 50), dets);
    assert.deepEqual(
      cache.lookup(frame('a', 1000, 50)),
      { detections: dets, refresh: false },
      'at max_age_s',
    );
    assert.deepEqual(cache.lookup(frame('a', 1001, 50)), { detections: dets, refresh: true }, 'past it');
    assert.equal(cache.lookup(frame('a', 1001, 50, 3, 90)), undefined, 'a changed scene is analysed');
    const fresh = [{ ...dets[0]!, score: 0.8 }];
    cache.store(frame('a', 1001, 50), fresh);
    assert.deepEqual(cache.lookup(frame('a', 1500, 50)), { detections: fresh, refresh: false }, 'refreshed');
    assert.deepEqual(cache.decide(frame('a', 900, 50)), { hit: false, reason: 'older' }, 'older than it');
  });

  it('lookup answers the stored detections on a hit, nothing on a miss', () => {
    const cache = new FrameCache(settings);
    const dets = [{ label: 'person', score: 0.9, box: [1, 2, 3, 4] as [number, number, number, number] }];
    cache.store(frame('a', 0, 50), dets);
    assert.equal(cache.lookup(frame('a', 10, 52))?.detections, dets);
    assert.equal(cache.lookup(frame('a', 10, 150)), undefined);
  });

  it('a whole-scene change (lights) is never a hit', () => {
    const cache = new FrameCache({ ...settings, max_distance: 20, max_age_s: 60 });
    cache.store(frame('a', 0, 40), []);
    assert.equal(cache.decide(frame('a', 10, 120)).hit, false);
  });

  it('ignores results older than the current reference', () => {
    const cache = new FrameCache({ ...settings, max_distance: 0, max_age_s: 60 });
    cache.store(frame('a', 100, 40), []);
    cache.store(frame('a', 50, 200), []);
    assert.equal(cache.decide(frame('a', 150, 40)).hit, true);
  });

  it('hashes a frame once, however often it is looked up and stored', () => {
    const cache = new FrameCache(settings);
    cache.store(frame('a', 0, 50), []);
    const f = frame('a', 10, 50);
    assert.equal(cache.decide(f).hit, true);
    // Changing the pixels after the first look does not change the answer: the hash was kept.
    f.data.fill(200);
    assert.equal(cache.decide(f).hit, true);
  });

  it("hashes a camera's frame by its thumbnail, one pixel per cell, when it has one", () => {
    const cache = new FrameCache(settings);
    const thumb = (v: number, changed = 0, to = v): Buffer => frame('x', 0, v, changed, to).data;
    const big = (ts: number, v: number, t: Buffer): Frame => ({
      ...frame('a', ts, v),
      data: Buffer.alloc(64 * 64 * 3, v),
      geometry: letterbox(64, 64, 64),
      thumb: t,
    });
    cache.store(big(0, 50, thumb(50)), []);
    assert.equal(cache.decide(big(100, 200, thumb(52))).hit, true, 'the pixels are not read');
    assert.deepEqual(cache.decide(big(100, 50, thumb(50, 3, 90))), {
      hit: false,
      reason: 'changed',
      distance: 3,
    });
  });

  it('a frame that carries the analysed pixels themselves reuses the result, whatever its age or motion', () => {
    const person = (x: number): Detection => ({ label: 'person', score: 0.9, box: [x, 0, x + 50, 100] });
    const cache = new FrameCache(settings);
    const first = frame('a', 0, 50);
    cache.store(first, [person(0)]);
    const same = (ts: number): Frame => ({ ...frame('a', ts, 50), data: first.data });
    assert.deepEqual(cache.decide(same(5000)), {
      hit: true,
      detections: [person(0)],
      distance: 0,
      age: 5000,
      samePixels: true,
      refresh: false,
    });
    assert.deepEqual(
      cache.decide(frame('a', 5000, 50)),
      { hit: true, detections: [person(0)], distance: 0, age: 5000, samePixels: false, refresh: true },
      'equal, not the same: due for a fresh look',
    );
    const next = frame('a', 400, 50);
    cache.store(next, [person(40)]);
    assert.deepEqual(cache.decide(frame('a', 600, 50)), { hit: false, reason: 'moving' });
    assert.equal(cache.decide({ ...frame('a', 600, 50), data: next.data }).hit, true, 'the model saw these');
  });

  it('disabled: never a hit, stores nothing; forget drops a camera', () => {
    const off = new FrameCache({ ...settings, enabled: false });
    off.store(frame('a', 0, 50), []);
    assert.deepEqual(off.decide(frame('a', 1, 50)), { hit: false, reason: 'disabled' });
    const cache = new FrameCache(settings);
    cache.store(frame('a', 0, 50), []);
    cache.forget('a');
    assert.deepEqual(cache.decide(frame('a', 1, 50)), { hit: false, reason: 'empty' });
  });

  describe('objects that move', () => {
    const person = (x: number, score = 0.9): Detection => ({
      label: 'person',
      score,
      box: [x, 100, x + 60, 260] as Box,
    });

    it('moved: an object that appears, leaves or shifts over 5 % of its diagonal; not jitter or flicker below 0.5', () => {
      assert.equal(moved([person(100)], [person(100)]), false);
      assert.equal(moved([person(100)], [person(108)]), false, '8 px of a 171-px diagonal: jitter');
      assert.equal(moved([person(100)], [person(110)]), true, '10 px: moved');
      assert.equal(moved([], [person(100)]), true, 'appeared');
      assert.equal(moved([person(100)], []), true, 'left');
      assert.equal(
        moved([person(100), person(400, 0.3)], [person(100)]),
        false,
        'a weak detection flickering',
      );
      assert.equal(moved([person(100)], [{ ...person(100), label: 'dog' }]), true, 'another label');
      assert.equal(
        moved([person(100), person(300)], [person(301), person(99)]),
        false,
        'order does not matter',
      );
    });

    it('a camera whose last two analysed frames moved is analysed on every frame, the hash notwithstanding', () => {
      const cache = new FrameCache({ ...settings, max_age_s: 60 });
      cache.store(frame('a', 0, 50), [person(100)]);
      assert.equal(cache.decide(frame('a', 200, 50)).hit, true, 'one analysed frame: nothing known to move');
      cache.store(frame('a', 400, 50), [person(120)]);
      assert.deepEqual(
        cache.decide(frame('a', 600, 50)),
        { hit: false, reason: 'moving' },
        'same picture, yet moving',
      );
      cache.store(frame('a', 600, 50), [person(140)]);
      assert.deepEqual(cache.decide(frame('a', 800, 50)), { hit: false, reason: 'moving' });
      cache.store(frame('a', 800, 50), [person(141)]);
      assert.equal(cache.decide(frame('a', 1000, 50)).hit, true, 'stopped: two analysed frames agree');
      assert.equal(cache.decide(frame('b', 1000, 50)).hit, false, 'per camera');

      const hashOnly = new FrameCache({ ...settings, max_age_s: 60, analyse_moving: false });
      hashOnly.store(frame('a', 0, 50), [person(100)]);
      hashOnly.store(frame('a', 400, 50), [person(120)]);
      assert.equal(hashOnly.decide(frame('a', 600, 50)).hit, true, 'analyse_moving: false');
    });
  });

  describe('cache_mask', () => {
    // A 640×480 camera into a 320 model input: scale 0.5, 40 px of padding on top.
    const vga = letterbox(640, 480, 320);
    const rect = (x0: number, y0: number, x1: number, y1: number): Point[] => [
      [x0, y0],
      [x1, y0],
      [x1, y1],
      [x0, y1],
    ];
    /** A grey 320×320 model input with the source rectangle `patch` painted `v`. */
    const scene = (ts: number, patch?: [x0: number, y0: number, x1: number, y1: number], v = 0): Frame => {
      const data = Buffer.alloc(320 * 320 * 3, 50);
      if (patch) {
        const [x0, y0, x1, y1] = patch.map((c, i) => Math.round(c / 2 + (i % 2 ? 40 : 0)));
        for (let y = y0!; y < y1!; y++) data.fill(v, (y * 320 + x0!) * 3, (y * 320 + x1!) * 3);
      }
      return { camera: 'a', seq: 1, ts, data, geometry: vga };
    };
    const corner: [number, number, number, number] = [576, 0, 640, 64];
    const masks: Record<string, Point[][]> = { a: [rect(560, 0, 640, 80)] };
    const cache = (): FrameCache => new FrameCache({ ...settings, max_age_s: 60 }, (c) => masks[c]);

    it('a frame that differs from the analysed one only inside the mask is a hit', () => {
      const c = cache();
      c.store(scene(0, corner, 200), []);
      assert.deepEqual(c.decide(scene(200, corner, 0)), {
        hit: true,
        detections: [],
        distance: 0,
        age: 200,
        samePixels: false,
        refresh: false,
      });
      const unmasked = new FrameCache({ ...settings, max_age_s: 60 });
      unmasked.store(scene(0, corner, 200), []);
      // 4 × 4 cells but the corner one: a 25th of it is covered, and moves by less than 10.
      assert.deepEqual(unmasked.decide(scene(200, corner, 0)), {
        hit: false,
        reason: 'changed',
        distance: 15,
      });
    });

    it('a change outside the mask is a miss', () => {
      const c = cache();
      c.store(scene(0), []);
      assert.deepEqual(c.decide(scene(200, [0, 0, 64, 64], 200)), {
        hit: false,
        reason: 'changed',
        distance: 15,
      });
      // Just beside the mask: columns 26–27 of the grid (model x 260..280, source 520..560).
      assert.equal(c.decide(scene(200, [520, 0, 560, 80], 200)).hit, false);
    });

    it('a patch that reaches partly into a cell at the polygon edge does not defeat the mask', () => {
      // Source y 0..66 is model 40..73: row 7 of the grid is three tenths covered, its centre (75) outside.
      const c = new FrameCache({ ...settings, max_age_s: 60 }, () => [rect(566, 0, 640, 66)]);
      c.store(scene(0), []);
      assert.equal(c.decide(scene(200, [566, 0, 640, 66], 200)).hit, true);
    });

    it('a 16:9 camera hashed by its thumbnail: the mask is mapped onto the thumbnail letterbox', () => {
      // 1920×1080: the thumbnail is 18 pixels high with 7 of padding on top.
      const geometry = letterbox(1920, 1080, 320);
      const thumb = (cells: [i: number, j: number][], v: number): Buffer => {
        const t = Buffer.alloc(32 * 32 * 3, 50);
        for (const [i, j] of cells) t.fill(v, (j * 32 + i) * 3, (j * 32 + i) * 3 + 3);
        return t;
      };
      const hd = (ts: number, t: Buffer): Frame => ({ ...frame('a', ts, 50), geometry, thumb: t });
      // The bottom-right corner of the picture: columns 28–31, rows 21–24 of the thumbnail.
      const c = new FrameCache({ ...settings, max_age_s: 60 }, () => [rect(1680, 840, 1920, 1080)]);
      c.store(hd(0, thumb([], 0)), []);
      const inside: [number, number][] = [
        [28, 21],
        [31, 21],
        [28, 24],
        [31, 24],
      ];
      assert.equal(c.decide(hd(200, thumb(inside, 200))).distance, 0);
      const above: [number, number][] = [
        [28, 20],
        [29, 20],
        [30, 20],
      ];
      assert.deepEqual(c.decide(hd(200, thumb(above, 200))), { hit: false, reason: 'changed', distance: 3 });
    });

    it('a reload that changes cache_mask applies from the next frame on', () => {
      const c = cache();
      c.store(scene(0, corner, 200), []);
      assert.equal(c.decide(scene(200, corner, 0)).hit, true);
      masks.a = [rect(0, 0, 80, 80)];
      assert.equal(c.decide(scene(400, corner, 0)).hit, false, 'the mask moved to the other corner');
      assert.equal(c.decide(scene(400, [0, 0, 64, 64], 200)).hit, false, 'the reference still has the patch');
      masks.a = [];
      assert.equal(c.decide(scene(600, corner, 0)).hit, false, 'removed');
      masks.a = [rect(560, 0, 640, 80)];
      assert.equal(c.decide(scene(800, corner, 0)).hit, true, 'back');
    });
  });
});
