import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ZonePresence, type ZoneArea } from '../../../src/track/zones.js';

const areas = (inertia: number, extra: Partial<ZoneArea> = {}): Map<string, ZoneArea> =>
  new Map([['door', { inertia, ...extra }]]);

/** Feeds a presence one frame every 200 ms from `from`: `true` inside the door, `false` outside. */
function feed(p: ZonePresence, frames: boolean[], a: Map<string, ZoneArea>, from = 0): boolean[] {
  return frames.map((inside, i) => p.update(inside ? ['door'] : [], from + i * 200, a));
}

describe('zone presence (inertia, stays)', () => {
  it('enters after inertia frames in a row inside, counting its stay from the first of them', () => {
    const p = new ZonePresence();
    assert.deepEqual(feed(p, [true, true, true], areas(3)), [false, false, true]);
    assert.deepEqual(p.current, ['door']);
    assert.deepEqual(p.stays.get('door'), { from: 0, to: null });
    assert.equal(p.inFor('door', 1000), 1000);
  });

  it('box jitter at the edge (in, out, in, out) never enters; a broken streak starts again', () => {
    const p = new ZonePresence();
    feed(p, [true, false, true, true, false, true, false, true, false], areas(3));
    assert.deepEqual(p.current, []);
    assert.deepEqual(p.entered, []);
    feed(p, [true, true, true], areas(3), 2000);
    assert.deepEqual(p.stays.get('door'), { from: 2000, to: null }, 'from the streak that entered');
  });

  it('leaves after inertia frames in a row outside, its stay ending at the last frame inside', () => {
    const p = new ZonePresence();
    feed(p, [true, true, true, true], areas(3)); // 0..600 inside
    assert.deepEqual(feed(p, [false, false, true], areas(3), 800), [false, false, false], 'a blip out');
    assert.deepEqual(p.current, ['door']);
    assert.deepEqual(feed(p, [false, false, false], areas(3), 1400), [false, false, true]);
    assert.deepEqual(p.current, []);
    assert.deepEqual(p.stays.get('door'), { from: 0, to: 1200 });
    assert.deepEqual(p.times(3000), Object.assign(Object.create(null), { door: 1.2 }) as object);
    assert.deepEqual(p.entered, ['door'], 'still among the zones of the visit');
  });

  it('inertia 1 enters and leaves at once, as zones did before inertia', () => {
    const p = new ZonePresence();
    assert.deepEqual(feed(p, [true, false, true], areas(1)), [true, true, true]);
  });

  it('a zone the camera no longer has is left at once; an unknown zone is never entered', () => {
    const p = new ZonePresence();
    feed(p, [true], areas(1));
    assert.equal(p.update(['door', 'attic'], 200, new Map()), true);
    assert.deepEqual(p.current, []);
    assert.deepEqual(p.stays.get('door'), { from: 0, to: 0 });
  });

  it('speed_threshold: enters only while faster; once in, a slower object stays', () => {
    const p = new ZonePresence();
    const a = areas(1, { speedThreshold: 5 });
    assert.equal(
      p.update(['door'], 0, a, () => undefined),
      false,
      'no speed yet',
    );
    assert.equal(
      p.update(['door'], 200, a, () => 4),
      false,
      'too slow',
    );
    assert.equal(
      p.update(['door'], 400, a, () => 6),
      true,
    );
    assert.equal(
      p.update(['door'], 600, a, () => 1),
      false,
      'still in',
    );
    assert.deepEqual(p.current, ['door']);
  });
});
