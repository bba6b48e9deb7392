import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FrameCache } from '../../../src/cache/frame-cache.js';
import type { Frame } from '../../../src/core/frame.js';
import { letterbox } from '../../../src/core/geometry.js';

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

const settings = { enabled: true, max_distance: 2, cell_threshold: 10, max_age_s: 1 };

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
    assert.deepEqual(cache.decide(frame('a', 1001, 50)), { hit: false, reason: 'expired' });
    assert.deepEqual(cache.decide(frame('b', 10, 50)), { hit: false, reason: 'empty' });
  });

  it('lookup answers the stored detections on a hit, nothing on a miss', () => {
    const cache = new FrameCache(settings);
    const dets = [{ label: 'person', score: 0.9, box: [1, 2, 3, 4] as [number, number, number, number] }];
    cache.store(frame('a', 0, 50), dets);
    assert.equal(cache.lookup(frame('a', 10, 52)), dets);
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

  it('disabled: never a hit, stores nothing; forget drops a camera', () => {
    const off = new FrameCache({ ...settings, enabled: false });
    off.store(frame('a', 0, 50), []);
    assert.deepEqual(off.decide(frame('a', 1, 50)), { hit: false, reason: 'disabled' });
    const cache = new FrameCache(settings);
    cache.store(frame('a', 0, 50), []);
    cache.forget('a');
    assert.deepEqual(cache.decide(frame('a', 1, 50)), { hit: false, reason: 'empty' });
  });
});
