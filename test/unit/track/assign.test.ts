import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assign } from '../../../src/track/assign.js';

/** The least total cost over every partial matching that leaves unmatched rows and columns at limit / 2 each. */
function bruteForce(cost: number[][], cols: number, limit: number): number {
  const rows = cost.length;
  const best = (r: number, used: Set<number>): number => {
    if (r === rows) return ((cols - used.size) * limit) / 2;
    let b = limit / 2 + best(r + 1, used);
    for (let c = 0; c < cols; c++) {
      const v = cost[r]![c]!;
      if (used.has(c) || !(v < limit)) continue;
      used.add(c);
      b = Math.min(b, v + best(r + 1, used));
      used.delete(c);
    }
    return b;
  };
  return best(0, new Set());
}

const total = (cost: number[][], cols: number, limit: number, a: ReturnType<typeof assign>): number =>
  a.pairs.reduce((s, [r, c]) => s + cost[r]![c]!, 0) +
  ((a.unmatchedRows.length + a.unmatchedCols.length) * limit) / 2;

describe('assign', () => {
  it('finds the least total cost where greedy best-first would not', () => {
    // Greedy takes (0,0) at 0.1 and leaves row 1 with 0.9; the optimum is 0.2 + 0.3.
    const cost = [
      [0.1, 0.2],
      [0.3, 0.9],
    ];
    assert.deepEqual(assign(cost, 2, 1.5).pairs, [
      [0, 1],
      [1, 0],
    ]);
  });

  it('never pairs at or above the limit, nor a forbidden (non-finite) cost', () => {
    const a = assign(
      [
        [0.5, Infinity],
        [1.2, 0.4],
        [NaN, 1],
      ],
      2,
      1,
    );
    assert.deepEqual(a, {
      pairs: [
        [0, 0],
        [1, 1],
      ],
      unmatchedRows: [2],
      unmatchedCols: [],
    });
    assert.deepEqual(assign([[1.5]], 1, 1), { pairs: [], unmatchedRows: [0], unmatchedCols: [0] });
  });

  it('prefers two matches to one better one when both pairs are under the limit', () => {
    // Leaving row 1 and column 0 unmatched would cost the limit (2): more than 0.9 + 0.9 - 0.1.
    const a = assign(
      [
        [0.1, 0.9],
        [0.9, 5],
      ],
      2,
      2,
    );
    assert.deepEqual(a.pairs, [
      [0, 1],
      [1, 0],
    ]);
  });

  it('handles empty and rectangular problems', () => {
    assert.deepEqual(assign([], 3, 1), { pairs: [], unmatchedRows: [], unmatchedCols: [0, 1, 2] });
    assert.deepEqual(assign([[], []], 0, 1), { pairs: [], unmatchedRows: [0, 1], unmatchedCols: [] });
    assert.deepEqual(assign([[0.9, 0.1, 0.5]], 3, 1), {
      pairs: [[0, 1]],
      unmatchedRows: [],
      unmatchedCols: [0, 2],
    });
  });

  it('is optimal: equals a brute-force search on random small matrices', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 25, maxLength: 25 }),
        (rows, cols, values) => {
          const cost = [...Array(rows).keys()].map((r) => values.slice(r * 5, r * 5 + cols));
          const a = assign(cost, cols, 1.2);
          assert.ok(Math.abs(total(cost, cols, 1.2, a) - bruteForce(cost, cols, 1.2)) < 1e-9);
          assert.equal(a.pairs.length + a.unmatchedRows.length, rows);
          assert.equal(a.pairs.length + a.unmatchedCols.length, cols);
        },
      ),
      { numRuns: 300 },
    );
  });
});
