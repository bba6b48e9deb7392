import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Histogram } from '../../../src/core/histogram.js';

describe('Histogram', () => {
  it('counts each observation in the first bucket whose bound it does not pass, and above them all in +Inf', () => {
    const h = new Histogram([0.01, 0.1, 1]);
    for (const v of [0, 0.01, 0.011, 0.1, 0.5, 1, 7, -1, Number.NaN]) h.observe(v);
    assert.deepEqual(h.snapshot(), {
      bounds: [0.01, 0.1, 1],
      // 0, 0.01 and -1 (as 0) | 0.011, 0.1 | 0.5, 1 | 7; NaN is not counted
      counts: [3, 2, 2, 1],
      sum: 0 + 0.01 + 0.011 + 0.1 + 0.5 + 1 + 7,
      count: 8,
    });
  });
});
