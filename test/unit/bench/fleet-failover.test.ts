import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { doubled, quantile } from '../../../bench/fleet-failover.js';

/** Issue 48, item 6: the fleet section's figures from what a subscriber received. */
describe('bench fleet: figures', () => {
  it('quantile: nearest rank of the sorted values', () => {
    const xs = [9.1, 12.5, 9.4, 10.0, 9.0];
    assert.equal(quantile(xs, 0.5), 9.4);
    assert.equal(quantile(xs, 0.95), 12.5);
    assert.equal(quantile(xs, 0), 9.0);
    assert.ok(Number.isNaN(quantile([], 0.5)));
  });

  it('doubled: camera-seconds in which two boxes published one camera, within the window only', () => {
    const from = 100_000;
    const seen = [
      { camera: 'cam0', box: 'a', at: from + 200 },
      { camera: 'cam0', box: 'b', at: from + 800 }, // second 0: a and b
      { camera: 'cam0', box: 'a', at: from + 1200 }, // second 1: a only
      { camera: 'cam1', box: 'b', at: from + 1500 },
      { camera: 'cam1', box: 'b', at: from + 1600 }, // one box twice: not doubled
      { camera: 'cam2', box: 'a', at: from + 2100 },
      { camera: 'cam2', box: 'c', at: from + 2900 }, // second 2: a and c
      { camera: 'cam2', box: 'b', at: from - 10 }, // before the window
      { camera: 'cam2', box: 'b', at: from + 5000 }, // after it
    ];
    assert.equal(doubled(seen, from, from + 5000), 2);
    assert.equal(doubled(seen, from + 1000, from + 2000), 0);
  });
});
