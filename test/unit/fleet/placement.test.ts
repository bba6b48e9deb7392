import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { balance, limitOf, loadRatio, movement, place, type Member } from '../../../src/fleet/index.js';

/** Issue 48, item 2: weighted rendezvous hashing with bounded load, and how far a change ripples. */

const camerasOf = (
  n: number,
  requires?: (i: number) => string[] | undefined,
): Record<string, { requires?: string[] }> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`cam${i}`, { requires: requires?.(i) }]));
const boxes = (caps: number[], labels: (i: number) => string[] = () => []): Member[] =>
  caps.map((capacity, i) => ({ name: `box${i}`, capacity, labels: labels(i) }));
const loads = (owners: Map<string, string>): Map<string, number> => {
  const l = new Map<string, number>();
  for (const b of owners.values()) l.set(b, (l.get(b) ?? 0) + 1);
  return l;
};

describe('place', () => {
  it('is the same whatever order the members are listed in (every box computes it alike)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 120 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 12 }),
        (n, caps) => {
          const m = boxes(caps);
          const a = place(camerasOf(n), m);
          const b = place(camerasOf(n), [...m].reverse());
          assert.deepEqual([...a.owners].sort(), [...b.owners].sort());
        },
      ),
    );
  });

  it('places every camera, no box above its limit: ⌊1.1 × fair share by capacity⌋, or ⌈fair⌉ where more', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 300 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 15 }),
        (n, caps) => {
          const m = boxes(caps);
          const p = place(camerasOf(n), m);
          assert.equal(p.owners.size, n);
          assert.deepEqual(p.overflow, []);
          const total = caps.reduce((s, c) => s + c, 0);
          for (const [box, load] of loads(p.owners)) {
            const cap = m.find((x) => x.name === box)!.capacity;
            assert.ok(
              load <= limitOf((n * cap) / total),
              `${box}: ${load} cameras, fair share ${(n * cap) / total}`,
            );
          }
        },
      ),
    );
  });

  it('limitOf: 1.1 × fair share where that is whole or more than ⌈fair⌉', () => {
    assert.equal(limitOf(10), 11);
    assert.equal(limitOf(3), 3);
    assert.equal(limitOf(2.5), 3);
    assert.equal(limitOf(100), 110);
  });

  it('a camera that requires labels goes only to a box that has them; none: unplaced', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 2, max: 8 }), (n, k) => {
        const m = boxes(Array<number>(k).fill(10), (i) => (i % 2 === 0 ? ['gpu'] : []));
        const cams = camerasOf(n, (i) => (i % 3 === 0 ? ['gpu'] : undefined));
        const p = place(cams, m);
        for (const [c, box] of p.owners)
          if (cams[c]!.requires)
            assert.ok(m.find((x) => x.name === box)!.labels.includes('gpu'), `${c} on ${box}`);
        const none = place(
          camerasOf(3, () => ['tpu']),
          m,
        );
        assert.deepEqual(none.unplaced, ['cam0', 'cam1', 'cam2']);
        assert.equal(none.owners.size, 0);
      }),
    );
  });

  // Measured over 750 membership changes (2–16 boxes, 5–40 cameras a box): the mean is within the
  // issue's 1.5 × cameras ÷ boxes, the worst case is not (see docs/fleet.md, bench/fleet.ts).
  it('a box added or removed moves on average at most 1.5 × cameras ÷ boxes, at worst 3 ×', () => {
    const { mean, worst } = movement();
    assert.ok(mean <= 1.5, `mean ${mean.toFixed(2)}`);
    assert.ok(worst <= 3, `worst ${worst.toFixed(2)}`);
  });
});

describe('max ÷ mean load by capacity (issue 48 item 6, bench/fleet.ts)', () => {
  it('loadRatio: the most loaded box (cameras ÷ capacity) over all cameras ÷ all capacity', () => {
    const members = boxes([10, 20]);
    const owners = (a: number, b: number) =>
      new Map([
        ...Array.from({ length: a }, (_, i) => [`a${i}`, 'box0'] as const),
        ...Array.from({ length: b }, (_, i) => [`b${i}`, 'box1'] as const),
      ]);
    assert.equal(loadRatio(owners(10, 20), members), 1, 'by capacity: perfect');
    // 15 on each: box0 at 1.5 a unit of capacity, the fleet at 1.
    assert.equal(loadRatio(owners(15, 15), members), 1.5);
    assert.equal(loadRatio(new Map(), members), 0);
  });

  it('no box above 1.1 × its fair share by capacity where fair shares are 10 cameras or more; the rest from rounding to whole cameras', () => {
    const { mean, worst, worstFrom10, placements } = balance();
    assert.equal(placements, 300);
    assert.ok(worstFrom10 <= 1.1 + 1e-9, `worst from 10: ${worstFrom10.toFixed(3)}`);
    assert.ok(mean <= 1.2, `mean ${mean.toFixed(3)}`);
    // A box of capacity 1 among 3 and 10 with fewer cameras than boxes × 5 gets ⌈fair⌉: at most 2 × here.
    assert.ok(worst < 2, `worst ${worst.toFixed(3)}`);
  });
});
