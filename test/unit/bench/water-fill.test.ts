import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waterFill } from '../../../bench/overload.js';

const close = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) < 1e-9);

describe('bench: waterFill (the weighted share the overload section measures against)', () => {
  it('splits by weight when no one is capped', () => {
    const s = waterFill(11, [
      { weight: 10, cap: 100 },
      { weight: 1, cap: 100 },
    ]);
    assert.ok(close(s, [10, 1]), JSON.stringify(s));
  });

  it('gives a capped contender its cap and shares the rest by weight among the others', () => {
    // The first asks for 2 of its 10/12 × 12 = 10: the other two share 10 as 1 : 1.
    const s = waterFill(12, [
      { weight: 10, cap: 2 },
      { weight: 1, cap: 100 },
      { weight: 1, cap: 100 },
    ]);
    assert.ok(close(s, [2, 5, 5]), JSON.stringify(s));
  });

  it('caps in rounds, owes nothing to a contender that asks for nothing, and never hands out more than all asked', () => {
    const s = waterFill(10, [
      { weight: 5, cap: 1 },
      { weight: 5, cap: 3 },
      { weight: 1, cap: 100 },
      { weight: 10, cap: 0 },
    ]);
    assert.ok(close(s, [1, 3, 6, 0]), JSON.stringify(s));
    assert.ok(close(waterFill(10, [{ weight: 1, cap: 4 }]), [4]));
  });
});
