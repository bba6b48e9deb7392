import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { backoffDelay, DEFAULT_BACKOFF } from '../../src/backoff.js';

describe('backoff schedule', () => {
  it('doubles from the initial delay up to the cap, with equal jitter', () => {
    const lo = [0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffDelay(n, DEFAULT_BACKOFF, () => 0));
    assert.deepEqual(lo, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    const hi = [0, 1, 6, 20].map((n) => backoffDelay(n, DEFAULT_BACKOFF, () => 0.999999));
    assert.deepEqual(hi, [1000, 2000, 60000, 60000]);
  });

  it('stays within [base/2, base] for any random value (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = backoffDelay(n, DEFAULT_BACKOFF, () => r);
          const b = Math.min(60000, 1000 * 2 ** n);
          assert.ok(d >= b / 2 && d <= b, `${d} for attempt ${n}`);
        },
      ),
    );
  });
});
